"""Hostile query strings on every route: hypothesis writes the URLs, the server in this process answers.

Every parameter of ``app.model.state.URL_PARAMETERS`` (read when the test runs, so parameters other
branches add are fuzzed too) gets huge, negative, zero, NaN, inf, fractional, empty, 10 kB, HTML and
script values, every language code, repeated and unknown keys, percent-encoded, double-encoded and
invalid UTF-8. The page's GET builds its session's document on the server (Panel runs the page
function then), so a failure would show as a 500 or in the log. Each page must answer 200, hold a
state that is valid as it stands (its own address parses without a notice), show the notice when a
value was certainly wrong, and log no traceback or error.

Quick suite: ``PE_FUZZ_EXAMPLES`` examples (200 by default). The long run (documented in
docs/reliability.md): ``PE_FUZZ_EXAMPLES=1000 python -m pytest -q tests/unit/test_fuzz_urls.py``.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from urllib.parse import parse_qs, quote, quote_from_bytes

import param
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.model import state as app_state
from app.pages import routes
from app.server import serving
from tests.helpers import LogRecorder

EXAMPLES = int(os.environ.get("PE_FUZZ_EXAMPLES", "200"))

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "'><svg onload=window.__pwned=1>",
    "javascript:window.__pwned=1",
    "{{7*7}}",
    "</script><script>window.__pwned=1</script>",
    "&lt;b&gt;",
]
#: Values that no number and no choice of the explorable accepts: each must bring a notice.
CERTAINLY_BAD = ["", " ", "NaN", "nan", "-nan", "inf", "-inf", "Infinity", "1e999", "abc", "0x10", "1,5",
                 "\x00", "x" * 10_000, *PAYLOADS]
#: Numbers outside every integer parameter's range.
HUGE = ["1e12", "-1e12", "1e300", "-1e300", "99999999999999999999999999"]
#: Plausible and borderline values: no claim about a notice.
OTHER = ["0", "-0", "1", "-1", "2", "3", "23", "24", "-24", "32", "33", "3.5", "1e3", "+5", " 7 ", "１２",
         "es", "en", "fr", "EN", " es ", "en-US", "random", "aligned", "none", "sin_only", "1024", "2048",
         "10000", "1e4", "0.5", "a b c", "uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece"]


def kind(name: str) -> str:
    """``number``, ``choice`` or ``other``: which certainly-bad values must bring a notice for ``name``."""
    parameter = app_state.ExplorerState.param[name]
    if isinstance(parameter, param.Integer | param.Number):
        return "number"
    if isinstance(parameter, param.Selector):
        return "choice"
    return "other"


def certainly_bad(name: str, value: str) -> bool:
    if name not in app_state.URL_PARAMETERS:
        return False
    if kind(name) == "number":
        return value in CERTAINLY_BAD or value in HUGE
    if kind(name) == "choice":
        return value in CERTAINLY_BAD
    return value == "x" * 10_000  # a string parameter: one 10 kB word is cut, with a notice


values = st.one_of(
    st.sampled_from(CERTAINLY_BAD), st.sampled_from(HUGE), st.sampled_from(OTHER),
    st.integers(-10**15, 10**15).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=30),
)


@st.composite
def queries(draw) -> tuple[str, list[tuple[str, str]]]:
    """A raw query string, and the (key, value) pairs it stands for (None: invalid UTF-8)."""
    names = list(app_state.URL_PARAMETERS)
    keys = st.one_of(st.sampled_from(names), st.sampled_from(names).map(str.upper),
                     st.text(min_size=1, max_size=12))
    pairs = draw(st.lists(st.tuples(keys, values), max_size=8))
    if draw(st.booleans()) and pairs:  # a repeated key, with another value
        pairs.append((pairs[0][0], draw(values)))
    parts, meant = [], []
    for key, value in pairs:
        how = draw(st.sampled_from(["plain", "plus", "double", "bad_utf8", "bare"]))
        if how == "bad_utf8":
            raw = value.encode() + draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80"]))
            parts.append(f"{quote(key, safe='')}={quote_from_bytes(raw, safe='')}")
            meant.append((key, None))
        elif how == "double":
            parts.append(f"{quote(key, safe='')}={quote(quote(value, safe=''), safe='')}")
            meant.append((key, quote(value, safe="")))
        elif how == "bare" and value == "":
            parts.append(quote(key, safe=""))
            meant.append((key, ""))
        else:
            encoded = quote(value, safe="")
            parts.append(f"{quote(key, safe='')}={encoded.replace('%20', '+') if how == 'plus' else encoded}")
            meant.append((key, value))
    return "&".join(parts), meant


@pytest.fixture(scope="module")
def server():
    # Sessions that a GET builds and no websocket ever joins are reaped within a few seconds here: long
    # enough for the test to read the new one on a busy machine, short enough that few are alive at once.
    with serving(unused_session_lifetime_milliseconds=8_000, check_unused_sessions_milliseconds=1_000) as served:
        yield served


def session_ids(bokeh_server) -> set[str]:
    return {s.id for s in bokeh_server.get_sessions()}


def fetch(url: str, language: str) -> int:
    request = urllib.request.Request(url, headers={"Accept-Language": language})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(sorted(routes())), query=queries(),
       language=st.sampled_from(["", "en", "es", "fr", "zz;q=0.5, en", "EN-us", "*"]))
def test_every_route_answers_a_hostile_query_with_a_valid_state_and_a_notice(server, route, query, language):
    url, bokeh_server = server
    raw, meant = query
    path = "/" if route == "/" else f"/{route}"
    before = session_ids(bokeh_server)
    with LogRecorder() as log:
        status = fetch(f"{url}{path}?{raw}", language)
    assert status == 200, f"{path}?{raw[:300]}"
    assert log.failures() == [], f"{path}?{raw[:300]}"
    (session,) = [s for s in bokeh_server.get_sessions(path) if s.id not in before]
    doc = session.document

    # The page's state, as its own address: valid as it stands.
    address = doc.get_model_by_name("address_bar").query
    written = {key: values[0] for key, values in parse_qs(address, keep_blank_values=True).items()}
    assert set(written) <= set(app_state.URL_PARAMETERS)
    _values, notices = app_state.parse_query(written)
    assert notices == [], f"{path}?{raw[:300]} -> {address[:300]}: {notices}"

    # A certainly wrong value (the first of its key counts) brings the visible notice.
    first: dict[str, str | None] = {}
    for key, value in meant:
        first.setdefault(key, value)
    wrong = [k for k, v in first.items() if v is not None and certainly_bad(k, v)]
    shown = [m.text for m in doc.models if m.name == "notices"]
    if wrong:
        assert shown, f"{path}?{raw[:300]}: no notice for {wrong}"
    for text in shown:  # the markup the browser puts in the page (innerHTML): no markup from the address in it
        rendered = text.lower()
        assert not any(tag in rendered for tag in ("<script", "<img", "<svg")), rendered[:300]


@pytest.mark.parametrize("raw", ["theme=%FF", "d_model=&d_model=&d_model=&theme=%FF", "theme=sin_only%C3",
                                 "lang=%FF&theme=dark%ED%A0%80"])
def test_a_value_that_is_not_utf8_is_mended_on_every_kind_of_page(server, raw):
    """Found by the fuzz above: Panel decodes ``theme`` strictly while it builds a page."""
    url, _ = server
    for path in ("/", "/score", "/explore", "/wavelengths"):
        with LogRecorder() as log:
            assert fetch(f"{url}{path}?{raw}", "") == 200, f"{path}?{raw}"
        assert log.failures() == [], f"{path}?{raw}"


@pytest.mark.parametrize("raw", ["d_model=%C2%B2", "T=%C2%B3&pos=%E2%91%A0", "k=%D9%A3&zzz=%C2%B2"])
def test_a_value_of_digits_that_int_refuses_is_answered(server, raw):
    """Found by the fuzz above: '²'.isdigit() is true and int('²') fails, in Panel's own query parser
    (its Location model, which the app no longer adds: components.address writes the address)."""
    url, _ = server
    for path in ("/", "/score", "/explore", "/wavelengths"):
        with LogRecorder() as log:
            assert fetch(f"{url}{path}?{raw}", "") == 200, f"{path}?{raw}"
        assert log.failures() == [], f"{path}?{raw}"


def test_a_parameter_added_later_is_fuzzed_too():
    """The fuzz reads ``URL_PARAMETERS`` when it runs: every parameter has a kind and takes part."""
    assert {kind(name) for name in app_state.URL_PARAMETERS} <= {"number", "choice", "other"}
    assert len(app_state.URL_PARAMETERS) >= 13
