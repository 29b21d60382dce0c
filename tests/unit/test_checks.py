"""The live checks view, without a browser, plus the core functions it added.

The expected numbers come from the lesson (norm 4 at d_model = 32, a rotation
error of order 1e-15) and from a table built here with math.sin/math.cos and
2x2 rotations written out by hand, not from app.core.
"""

from __future__ import annotations

import math
import re
import threading

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.document.events import ModelChangedEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import BASES, ExplorerState
from app.model.strings import text
from components import checks
from components.checks import LiveChecks
from tests.helpers import printed

NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def table_by_hand(T: int, d_model: int, base: float) -> np.ndarray:
    return np.array([[f(pos / base ** (2 * (c // 2) / d_model)) for c, f in
                      zip(range(d_model), [math.sin, math.cos] * (d_model // 2), strict=True)]
                     for pos in range(T)])


def shifted_by_hand(row: np.ndarray, k: int, d_model: int, base: float) -> np.ndarray:
    """Each pair (sin a, cos a) turned by the angle k·ω into (sin(a+kω), cos(a+kω))."""
    out = np.empty_like(row)
    for i in range(d_model // 2):
        theta = k / base ** (2 * i / d_model)
        c, s = math.cos(theta), math.sin(theta)
        out[2 * i] = c * row[2 * i] + s * row[2 * i + 1]
        out[2 * i + 1] = -s * row[2 * i] + c * row[2 * i + 1]
    return out


def numbers_in(markup: str) -> list[float]:
    return [float(x) for x in re.findall(NUMBER, re.sub("<[^>]+>", " ", markup))]


@pytest.fixture
def lesson() -> tuple[ExplorerState, LiveChecks]:
    state = ExplorerState(d_model=32, T=24, k=3, pos=0, lang="es")
    return state, LiveChecks(state)


def test_norm_check_shows_four_at_the_lesson_size(lesson):
    _, view = lesson
    assert "√(d_model/2) = 4:" in view.norm.object
    error = numbers_in(view.norm.object)[-1]
    assert error < 1e-13
    # the same bound from a table built by hand
    assert np.max(np.abs(np.linalg.norm(table_by_hand(24, 32, 10_000), axis=1) - 4.0)) < 1e-13


def test_rotation_check_is_of_order_1e_15_and_counts_positions(lesson):
    state, view = lesson
    count, error = numbers_in(view.rotation.object.split(":")[-2])[-1], numbers_in(view.rotation.object)[-1]
    assert count == 21  # p = 0 .. 20 have p + 3 inside 0 .. 23
    assert error < 1e-13
    pe = table_by_hand(24, 32, 10_000)
    by_hand = max(np.max(np.abs(shifted_by_hand(pe[p], 3, 32, 10_000) - pe[p + 3])) for p in range(21))
    assert by_hand < 1e-13
    state.k = -23
    assert "en la única posición posible, p = 23:" in view.rotation.object  # p = 23, p + k = 0


def test_target_inside_and_outside(lesson):
    state, view = lesson
    assert view.target.object == checks.check_card("es", "check_target_inside", target=3, positions="0 … 23")
    state.param.update(pos=20, k=10)
    assert "30" in view.target.object and view.target.object.startswith('<p class="ck rm">')
    assert view.target.object == checks.check_card("es", "check_target_outside", remark=True, target=30,
                                                   positions="0 … 23")
    state.param.update(pos=2, k=-5)
    assert view.target.object == checks.check_card("es", "check_target_outside", remark=True, target=-3,
                                                   positions="0 … 23")


def test_no_pair_of_rows_when_k_reaches_T(lesson):
    # The state never allows |k| >= T; widen the bound to reach the branch the view still handles.
    state, view = lesson
    state.param.k.bounds = (-100, 100)
    state.k = 30
    assert view.rotation.object == checks.check_card("es", "check_rotation_none", remark=True)


def test_pane_names_and_english():
    view = LiveChecks(ExplorerState(d_model=32, T=24, lang="en"))
    assert (view.norm.name, view.rotation.name, view.target.name) == ("check_norm", "check_rotation", "check_target")
    assert "Every row has length √(d_model/2) = 4:" in view.norm.object


def test_text_is_escaped_html_in_a_short_card():
    view = LiveChecks(ExplorerState(d_model=32, T=24, lang="en"))
    assert view.target.object == '<p class="ck">pos + k = 3 is a row of the table (0 … 23).</p>'
    assert view.norm.object.startswith('<p class="ck">Every row has length') and view.norm.object.endswith(".</p>")
    hostile = checks.check_card("en", "check_target_outside", remark=True, target="<script>x</script>", positions='"&')
    assert "<script" not in hostile and "&lt;script&gt;x&lt;/script&gt;" in hostile and "&quot;&amp;" in hostile
    assert hostile.startswith('<p class="ck rm">') and hostile.endswith("</p>")


def test_only_changed_cards_are_sent(lesson):
    state, view = lesson
    # What a served document would send: every change event of the view's Bokeh models.
    doc = Document()
    doc.add_root(pn.panel(view).get_root(doc))
    assigned: list[str] = []
    # The cards only: the view's spoken description (checks_description) follows the state on its own.
    doc.on_change(lambda event: assigned.append(event.model.name)
                  if isinstance(event, ModelChangedEvent) and str(event.model.name).startswith("check_") else None)
    state.pos = 5  # only the target's sentence depends on pos
    assert assigned == ["check_target"]
    assigned.clear()
    state.k = 4  # count changes, so rotation and target; the norm does not depend on k
    assert sorted(assigned) == ["check_rotation", "check_target"]
    assigned.clear()
    before = view.norm.object
    state.T = 30  # the count changes; the norm sentence is resent only if its deviation printed differently
    assert "check_rotation" in assigned
    assert assigned.count("check_norm") == (view.norm.object != before)


def test_table_is_built_once_per_size_and_residuals_are_remembered(lesson, monkeypatch):
    state, _ = lesson
    built, rotated = [], []
    real_encoding, real_residual = core.encoding, core.rotation_residual_of
    monkeypatch.setattr(checks.core, "encoding", lambda *a, **kw: built.append(a) or real_encoding(*a, **kw))
    monkeypatch.setattr(checks.core, "rotation_residual_of",
                        lambda *a, **kw: rotated.append(a[1]) or real_residual(*a, **kw))
    for k in (4, 5, 4, 3, 5):
        state.k = k
    assert built == [] and rotated == [4, 5]  # 3 was computed at start-up
    state.T = 40
    assert len(built) == 1
    state.k = 4
    assert rotated[-1] == 4  # a new table forgets the old residuals


# --------------------------------------------------------------------------
# Large tables: the whole-table work goes through run_later, and a late result is checked.
# --------------------------------------------------------------------------

@pytest.fixture
def large(monkeypatch) -> tuple[ExplorerState, LiveChecks, list]:
    """A view of a table above SMALL_TABLE, with run_later replaced by a queue the test empties by hand."""
    assert checks.SMALL_TABLE < 1024 * 300
    state = ExplorerState(d_model=1024, T=300, k=3, pos=0, lang="en")
    view = LiveChecks(state)  # the page build checks inline
    jobs: list = []
    monkeypatch.setattr(checks, "run_later", lambda work, apply: jobs.append((work, apply)))
    return state, view, jobs


def run_next(jobs: list) -> None:
    work, apply = jobs.pop(0)
    apply(work())


def rotation_count(markup: str) -> int:
    return int(re.search(r"over (\d+) positions", markup).group(1))


def test_large_table_checks_are_left_to_run_later(large):
    state, view, jobs = large
    assert rotation_count(view.rotation.object) == 297
    state.k = 10
    assert len(jobs) == 1
    assert rotation_count(view.rotation.object) == 297  # not computed in the update
    assert view.target.object == checks.check_card("en", "check_target_inside", target=10,
                                                   positions="0 … 299")  # inline
    run_next(jobs)
    assert rotation_count(view.rotation.object) == 290 and jobs == []
    error = numbers_in(view.rotation.object)[-1]
    by_hand = max(np.max(np.abs(shifted_by_hand(row, 10, 1024, 10_000) - pe_k))
                  for row, pe_k in zip(core.encoding(290, 1024), core.encoding(300, 1024)[10:], strict=True))
    assert error == pytest.approx(by_hand, rel=0.05) and error < 1e-11
    state.k = 3  # checked before: answered from the kept residuals, in the update
    assert jobs == [] and rotation_count(view.rotation.object) == 297


def test_a_late_result_for_an_old_k_is_dropped_and_the_current_k_follows(large):
    state, view, jobs = large
    before = view.rotation.object
    state.k = 10
    state.k = 20  # while the run for k = 10 is out: no second run yet
    assert len(jobs) == 1
    work, apply = jobs.pop()
    stale = work()
    assert stale.k == 10  # computed for the state it was scheduled in
    apply(stale)
    assert view.rotation.object == before  # k = 10's sentence is never shown
    assert len(jobs) == 1  # a run for the current k follows
    run_next(jobs)
    assert rotation_count(view.rotation.object) == 280 and jobs == []


def test_a_late_result_for_an_old_table_is_dropped(large):
    state, view, jobs = large
    old_norm = view.norm.object
    assert "= 22.6274:" in old_norm  # √(1024/2)
    state.T = 310
    state.d_model = 1000  # √(1000/2) = 22.36068
    assert len(jobs) == 1
    run_next(jobs)  # checked the 310 x 1024 table: nothing of it is shown
    assert view.norm.object == old_norm and rotation_count(view.rotation.object) == 297
    run_next(jobs)
    assert "= 22.3607:" in view.norm.object and rotation_count(view.rotation.object) == 307 and jobs == []


def test_a_result_for_the_right_table_shows_its_norm_even_if_k_moved_on(large):
    state, view, jobs = large
    state.T = 310
    state.k = 5
    assert len(jobs) == 1
    work, apply = jobs.pop()
    result = work()
    assert (result.T, result.k) == (310, 3)
    apply(result)
    assert numbers_in(view.norm.object)[-1] == pytest.approx(result.norm_error, rel=0.05)
    assert rotation_count(view.rotation.object) == 297 and len(jobs) == 1  # k = 5 is still to come
    run_next(jobs)
    assert rotation_count(view.rotation.object) == 305


def test_a_failed_check_is_logged_and_the_next_change_is_checked(large, monkeypatch, caplog):
    state, view, jobs = large
    real = checks.core.encoding
    monkeypatch.setattr(checks.core, "encoding", lambda *a: 1 / 0)
    state.T = 310
    run_next(jobs)
    assert "live checks failed" in caplog.text and rotation_count(view.rotation.object) == 297
    monkeypatch.setattr(checks.core, "encoding", real)
    state.T = 320
    assert len(jobs) == 1  # not stuck waiting for the failed run
    run_next(jobs)
    assert rotation_count(view.rotation.object) == 317


def test_run_later_without_a_session_runs_now_in_this_thread():
    seen: list = []
    checks.run_later(lambda: (threading.current_thread(), 42), seen.append)
    assert seen == [(threading.current_thread(), 42)]


@settings(max_examples=25, deadline=None)
@given(d_model=st.integers(1, 128).map(lambda n: 2 * n), T=st.integers(1, 300),
       base=st.sampled_from(BASES), data=st.data())
def test_checks_for_random_sizes(d_model, T, base, data):
    k = data.draw(st.integers(-(T - 1), T - 1))
    pos = data.draw(st.integers(0, T - 1))
    view = LiveChecks(ExplorerState(d_model=d_model, T=T, base=base, k=k, pos=pos, lang="en"))
    expected = math.sqrt(d_model / 2)
    shown, error = numbers_in(view.norm.object.split("=")[-1])[:2]
    assert shown == pytest.approx(expected, rel=1e-5) and 0 <= error < 1e-12
    if T - abs(k) > 1:
        count, residual = numbers_in(view.rotation.object.split("over")[-1])
        assert count == T - abs(k)
    else:  # one position p: it is named (p = 0, or T - 1 for a negative k)
        only, residual = numbers_in(view.rotation.object.split("position p")[-1])
        assert only == max(0, -k)
    assert residual == pytest.approx(core.rotation_residual(k, T, d_model, base), rel=0.05, abs=1e-300)
    assert residual < 1e-11
    shown = view.target.object
    assert printed(pos + k) in shown and (('class="ck rm"' in shown) == (not 0 <= pos + k < T))


# --------------------------------------------------------------------------
# Core functions added for this view.
# --------------------------------------------------------------------------

def test_rotation_residual_of_agrees_with_rotation_residual():
    for T, d, base, k in [(24, 32, 10_000, 3), (24, 32, 10_000, -7), (5, 8, 2, 4), (5, 8, 2, 5), (1, 2, 10, 0),
                          (300, 64, 100, 299), (300, 2048, 10_000, 17)]:
        pe = core.encoding(T, d, base)
        assert core.rotation_residual_of(pe, k, base) == core.rotation_residual(k, T, d, base)
    assert core.rotation_residual_of(core.encoding(4, 8), 9) == 0.0


def test_rotation_residual_of_sees_a_wrong_table():
    pe = core.encoding(24, 32)
    pe[10, 5] += 1e-3
    assert core.rotation_residual_of(pe, 3) == pytest.approx(1e-3, rel=1e-6)


@pytest.mark.parametrize(("pe", "k", "base"), [
    (np.zeros((3, 3)), 1, 10_000),
    (np.zeros(4), 1, 10_000),
    (np.zeros((0, 4)), 1, 10_000),
    (np.full((3, 4), np.nan), 1, 10_000),
    (np.zeros((3, 4)), 1.5, 10_000),
    (np.zeros((3, 4)), True, 10_000),
    (np.zeros((3, 4)), 1, 0.5),
    ([["a"]], 1, 10_000),
])
def test_rotation_residual_of_refuses_bad_arguments(pe, k, base):
    with pytest.raises(ValueError):
        core.rotation_residual_of(pe, k, base)


def test_row_norms_of_and_expected_row_norm():
    assert core.expected_row_norm(32) == 4.0
    np.testing.assert_allclose(core.row_norms_of(table_by_hand(24, 32, 10_000)), 4.0, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(core.row_norms(24, 32), core.row_norms_of(core.encoding(24, 32)))
    for bad in (7, 0, 2.0, True):
        with pytest.raises(ValueError):
            core.expected_row_norm(bad)
    with pytest.raises(ValueError):
        core.row_norms_of(np.ones((2, 3)))


@pytest.mark.parametrize(("k", "only"), [(23, 0), (-23, 23)])
def test_a_single_position_is_named_not_counted(k, only):
    # |k| = T - 1: p and p + k are both rows of the table for one p only (0, or T - 1 when k < 0).
    view = LiveChecks(ExplorerState(d_model=32, T=24, k=k, lang="en"))
    assert "positions" not in view.rotation.object
    assert f"only possible position, p = {only}:" in view.rotation.object


# -- the worker thread in a served session ----------------------------------------------------------

@pytest.mark.parametrize("fault", ["slow", "failing"])
def test_a_slow_or_failing_check_never_holds_up_a_slider(monkeypatch, fault):
    """A served /explore at a large size: while the checks' worker is held (or raises), k still moves the views.

    Not timed: the worker is held on an event that is only released after the slider's new data has
    arrived, so the data can only have come past the check.
    """
    import asyncio
    from urllib.parse import urlparse

    from app.server import serving
    from bench.protocol import BokehClient
    from tests.helpers import LogRecorder, run_coroutine

    held, started = threading.Event(), threading.Event()
    real = LiveChecks.check

    def check(self, *inputs):
        if not threading.current_thread().name.startswith("live-checks"):
            return real(self, *inputs)  # the page's first check, inline in its build
        started.set()
        if fault == "failing":
            raise RuntimeError("a check that fails")
        assert held.wait(60), "the test never released the worker"
        return real(self, *inputs)

    monkeypatch.setattr(LiveChecks, "check", check)
    try:
        with serving() as (url, _server), LogRecorder() as log:
            port = urlparse(url).port

            async def scenario() -> list[int]:
                query = {"lang": "en", "d_model": "1024", "T": "300", "k": "3"}
                client = BokehClient("127.0.0.1", port, "/explore", query)
                await client.open(expect=("distance_marker", "check_rotation"))
                k_id = client.slider_id(text("en", "k"))
                answers = []
                for k in (4, 5, 6):
                    await client.set_value(k_id, k)
                    await client.until_data(30.0)  # the distance marker's new data, with the worker still busy
                    answers.append(k)
                    assert started.wait(30), "the large table's check never went to the worker"
                assert not held.is_set()
                client.close()
                return answers

            assert run_coroutine(asyncio.wait_for(scenario(), 120)) == [4, 5, 6]
            held.set()
        if fault == "failing":  # logged by the checks, one failure per run, and nothing else went wrong
            failures = log.failures()
            assert failures and all("live checks failed" in line for line in failures)
    finally:
        held.set()


@settings(max_examples=40, deadline=None)
@given(T=st.integers(2, 2048), d_model=st.integers(1, 512).map(lambda half: 2 * half),
       base=st.sampled_from(BASES), data=st.data())
def test_the_rotation_check_s_error_is_rounding_that_grows_with_the_table(T, d_model, base, data):
    # What the shift section says of the check's largest error: rounding, about 1e-15 at T = 24 and 1e-13 at
    # T = 2048. An angle pos * omega (at most T) is rounded to within half an ulp of T, about T * 1.1e-16, and
    # a residual compares two rows: its error grows with T. The bound, 4 T * 1e-16, is about twice the largest
    # seen (1.85 T * 1e-16 over every T < 40 and 600 random sizes up to 2048 x 1024).
    k = data.draw(st.integers(1, T - 1))
    assert core.rotation_residual(k, T, d_model, base) <= 4 * T * 1e-16


def test_the_rotation_check_s_error_at_the_printed_sizes():
    assert 1e-16 < core.rotation_residual(3, 24, 32) < 1e-14
    assert 1e-14 < core.rotation_residual(3, 2048, 1024) < 1e-12


def test_a_mistake_that_keeps_every_row_s_length_says_one_length():
    """The split layout permutes coordinates: every row keeps √(d_model/2) = 4, and "the rows measure 4.0000 to
    4.0000" said one number as a range."""
    view = LiveChecks(ExplorerState(lang="en", mistake="split_layout"))
    assert "every row measures 4.0000" in view.norm.object and " to " not in view.norm.object
    assert np.allclose(np.linalg.norm(table_by_hand(24, 32, 10_000), axis=1), 4.0)
    view = LiveChecks(ExplorerState(lang="en", mistake="sin_only"))
    assert "the rows measure 0.0000 to" in view.norm.object
