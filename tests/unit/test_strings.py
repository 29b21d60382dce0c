"""The ES/EN string tables, and the escaping of user input in the notices."""

from __future__ import annotations

import html
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.state import Notice, parse_query
from app.model.strings import EN, ES, TABLES, minus_sign, positions, text
from components.notices import ECHO_LIMIT, notice_html

REASONS = ("not_a_number", "out_of_range", "odd", "not_allowed", "off_grid", "below_from", "sentence_cut", "repeated")
HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "</li></ul><h1>owned</h1>",
    "&lt;already&gt; &amp;",
    "[link](javascript:alert(1))",
]


def fields(template: str) -> set[str]:
    """The placeholder names of a str.format template (format specs ignored)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_tables_have_the_same_keys():
    assert TABLES == {"es": ES, "en": EN}
    assert set(ES) == set(EN), f"only ES: {set(ES) - set(EN)}; only EN: {set(EN) - set(ES)}"


@pytest.mark.parametrize("key", sorted(ES))
def test_same_placeholders_in_both_languages(key):
    assert fields(ES[key]) == fields(EN[key])
    # Positional "{}" would silently depend on argument order: every field is named.
    assert "" not in fields(ES[key])
    assert not any(name.isdigit() for name in fields(ES[key]) | fields(EN[key]))


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_no_empty_strings(lang):
    for key, value in TABLES[lang].items():
        assert isinstance(value, str)
        assert value.strip(), f"{lang}.{key} is empty"
        assert value == value.strip(), f"{lang}.{key} has stray whitespace"


def test_languages_are_really_translated():
    # Identical texts are allowed for symbols and names only (e.g. "base", "T = {T}"),
    # not for a sentence left untranslated.
    same = {key for key in ES if ES[key] == EN[key]}
    for key in same:
        assert len(re.findall(r"[A-Za-zÀ-ÿ]{4,}", re.sub(r"\{[^}]*\}", "", ES[key]))) <= 2, key


def sample_values(template: str) -> dict[str, object]:
    """A value for every field that suits its format spec (others add strings all the time,
    so the values are derived from the template rather than listed by name)."""
    values: dict[str, object] = {}
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is None:
            continue
        if spec and spec[-1] in "bcdoxXn":
            values[name] = 7
        elif spec and spec[-1] == "s":
            values[name] = "x"
        else:
            values[name] = 1.2345  # fits "", ".3f", ".4g", ".1e", ".6g", "%" ...
    return values


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_every_template_formats(lang):
    for key, template in TABLES[lang].items():
        result = text(lang, key, **sample_values(template))
        assert not re.search(r"\{\w+([:!][^}]*)?\}", result), f"{lang}.{key} left a placeholder: {result!r}"
        # The same values format the other language too (same fields, compatible specs).
        other = "en" if lang == "es" else "es"
        text(other, key, **sample_values(template))


def test_text_without_values_returns_the_template():
    assert text("es", "page_title") == ES["page_title"]
    assert text("en", "ladder_T_line", T=24) == "T = 24"
    with pytest.raises(KeyError):
        text("fr", "page_title")


@pytest.mark.parametrize("reason", REASONS)
def test_every_notice_reason_has_a_template(reason):
    for lang in TABLES:
        assert fields(TABLES[lang][f"notice_{reason}"]) == {"parameter", "given", "used"}


# --------------------------------------------------------------------------
# Notices: user input is escaped and cut.
# --------------------------------------------------------------------------

def visible_text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


@pytest.mark.parametrize("lang", sorted(TABLES))
@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("reason", REASONS)
def test_notice_html_escapes_hostile_input(lang, hostile, reason):
    out = notice_html(lang, [Notice("d_model", hostile, "34", reason)])
    # The only tags are the list's own.
    assert set(re.findall(r"</?([a-zA-Z0-9]+)", out)) <= {"strong", "ul", "li"}
    assert "<script" not in out.lower() and "<img" not in out.lower() and "<h1" not in out.lower()
    # Escaped, not dropped: the reader still sees exactly what was typed.
    assert hostile in visible_text(out)
    assert html.escape(hostile, quote=True) in out


def test_notice_html_from_parse_query_escapes_everything():
    args = {"d_model": "<b>", "T": "\"'&", "base": "<i>", "pair": "<u>", "pos": "<s>", "k": "<em>",
            "lang": "<script>alert(1)</script>"}
    _, notices = parse_query(args)
    assert len(notices) == len(args)
    for lang in TABLES:
        out = notice_html(lang, notices)
        assert set(re.findall(r"</?([a-zA-Z0-9]+)", out)) <= {"strong", "ul", "li"}
        assert out.count("<li>") == len(args)
        for value in args.values():
            assert value in visible_text(out)


@pytest.mark.parametrize("length", [ECHO_LIMIT - 1, ECHO_LIMIT, ECHO_LIMIT + 1, 10_000, 1_000_000])
def test_long_input_is_cut(length):
    given = ("<" + "x" * length)[:length]
    out = notice_html("en", [Notice("T", given, "24", "not_a_number")])
    shown = visible_text(out)
    if length <= ECHO_LIMIT:
        assert given in shown and "…" not in shown
    else:
        assert given[:ECHO_LIMIT] + "…" in shown
        assert given[:ECHO_LIMIT + 1] not in shown
        assert len(out) < 1_000


def test_no_notices_renders_an_empty_list():
    out = notice_html("es", [])
    assert "<li>" not in out
    assert html.escape(ES["notice_title"]) in out


@settings(max_examples=60, deadline=None)
@given(given_text=st.text(max_size=200), parameter=st.sampled_from(["d_model", "T", "base", "pair", "pos", "k"]),
       reason=st.sampled_from(REASONS), lang=st.sampled_from(sorted(TABLES)))
def test_notice_html_never_lets_markup_through(given_text, parameter, reason, lang):
    out = notice_html(lang, [Notice(parameter, given_text, "1", reason)])
    assert set(re.findall(r"<\s*/?\s*([a-zA-Z0-9]+)", out)) <= {"strong", "ul", "li"}
    echoed = given_text if len(given_text) <= ECHO_LIMIT else given_text[:ECHO_LIMIT] + "…"
    assert html.escape(echoed, quote=True) in out


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.integers(-10**7, 10**7), st.floats(-1e9, 1e9, allow_nan=False)),
       spec=st.sampled_from(["", ".0f", ".1f", ".3f", ".6f", ",.2f", ".4g", ".1e"]))
def test_a_negative_number_is_printed_with_a_minus_sign(value, spec):
    if isinstance(value, int) and spec and spec[-1] in "fge" and "," not in spec:
        value = float(value)
    plain = format(value, spec)
    shown = minus_sign(plain)
    assert "-" not in shown.split("e")[0]  # no hyphen before an exponent
    if plain.startswith("-") and float(plain.replace(",", "")) != 0:
        assert shown == "\u2212" + plain[1:]
    else:  # a positive number, or one that prints as zero (the sign of a rounded tiny negative goes)
        assert shown == plain.lstrip("-")


@pytest.mark.parametrize("other", ["k=-3", "-", "--3", "a-3", "-3 dB", "−3", "pos - 1", "2026-12-02", ""])
def test_text_that_is_not_a_lone_number_keeps_its_hyphens(other):
    assert minus_sign(other) == other


def test_the_tables_print_negative_numbers_with_a_minus_sign():
    shown = text("en", "describe_distance", k=-3, score=-20.0, maximum=16)
    assert shown.startswith("S(k) at k = \u22123: \u221220.00;")
    assert text("es", "rope_angle", angle=-0.0567, degrees=-3.25, offset=-4).startswith(
        "Ángulo de q a k: \u22120.057 rad = \u22123.2° (n − m = \u22124;")
    assert text("en", "clock_arc_turns", sign="", turns=3, rest=-0.0001) == "= (3 × 2π + 0.000) rad"
    # M with k below, as the board writes it: subscript minus (U+208B), seven (U+2087).
    assert text("en", "block_title", pair=2, k=-7) == "Block 2 of M\u208b\u2087"
    # A value that is text, not a number, is left as it is (it may be an address or the reader's words).
    assert text("en", "block_caption_pos", pos="-7") == "PE at -7"


def test_no_parameter_docstring_reaches_a_page_as_a_tooltip():
    """``from_param`` makes a parameter's docstring (English, for programmers) a hover-only "?" tooltip; on a
    Spanish page the speed menu and the sentence box showed "Animation speed, steps of pos per second."."""
    import panel as pn
    from bokeh.document import Document

    from app.lesson import SECTIONS
    from app.model.state import ExplorerState
    from app.pages import VIEWS
    from components.animation import animation_for

    state = ExplorerState(lang="es")
    parts = [animation_for(state), *(section(state) for section in SECTIONS.values()),
             *(spec.view(state) for spec in VIEWS.values())]
    described = [(type(model).__name__, getattr(model, "title", ""), model.description)
                 for part in parts for model in pn.panel(part).get_root(Document()).references()
                 if getattr(model, "description", None) is not None]
    assert described == []


def test_printed_negative_numbers_in_notices_and_descriptions_carry_a_minus_sign():
    """The value used and the sections' sentences print "−23", as the prose does; what the reader typed is
    echoed as typed ("-500")."""
    from components.lesson.gram import GramMatrix
    from components.lesson.terms import ScoreAsClocks
    from components.notices import notice_line

    _, notices = parse_query({"k": "-500"})
    assert notice_line("en", notices[0]) == "k = -500 is out of range; using \u221223."
    from app.model.state import ExplorerState

    assert ScoreAsClocks(ExplorerState(lang="en", k=-23)).describe().startswith("S(\u221223) = ")
    assert "S(\u22125) = " in GramMatrix(ExplorerState(lang="es", k=-5)).describe()


def test_a_range_of_one_position_is_that_position():
    """A one-row table (T = 1) printed "m, n = 0 … 0" and "(0 … 0)"."""
    assert positions(0) == "0" and positions(10) == "0 … 10"
    assert text("en", "rope_window", positions=positions(0)) == "m, n = 0"
    assert text("es", "rope_window", positions=positions(0)) == "m, n = 0"
    assert text("en", "rope_window", positions=positions(10)) == "m, n = 0 … 10"
    assert text("en", "check_target_inside", target=0, positions=positions(0)).endswith("(0).")
    assert text("en", "check_target_inside", target=10, positions=positions(10)).endswith("(0 … 10).")


@pytest.mark.parametrize("lang", ["es", "en"])
def test_an_exact_zero_in_scientific_notation_is_printed_0(lang):
    """At pos = 0 the big clock's check read "differs from the product by 0.0e+00", a measurement for what is the
    same number; a rounding error keeps its notation."""
    zero = text(lang, "block_check", target=3, sin="0.1411", cos="−0.9900", error=0.0)
    assert zero.endswith(" 0.") and "e+00" not in zero
    assert text(lang, "check_norm", expected=4.0, error=-0.0).endswith(" 0.")
    assert "2.2e-16" in text(lang, "check_norm", expected=4.0, error=2.220446049250313e-16)
