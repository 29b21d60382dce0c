"""Lesson section «simpler»: the raw number, pos/T and a learned table, each failing; numbers derived by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from components.lesson.simpler import WhyNotSimpler
from tests.helpers import model_property, parsed, press, wait_for_source, wait_until


def score_by_hand(k: float, d_model: int) -> float:
    return math.fsum(math.cos(k / 10000 ** (2 * i / d_model)) for i in range(d_model // 2))


# --------------------------------------------------------------------------
# (a) the raw number
# --------------------------------------------------------------------------

def test_at_position_300_the_coordinate_is_300():
    x = core.raw_position_rows(300, 32)
    assert x[0] == 300 and np.all(np.abs(x[1:]) <= 1)
    rest = math.fsum(v * v for v in x[1:])
    assert core.raw_position_share(300, 32) == pytest.approx(300**2 / (300**2 + rest), rel=1e-14)
    assert core.raw_position_share(300, 32) > 0.999 and core.raw_position_share(0, 32) == 0


@settings(max_examples=40, deadline=None)
@given(d_half=st.integers(1, 512), pos=st.integers(0, 2047))
def test_share_is_the_position_term_of_the_squared_length(d_half, pos):
    x = core.raw_position_rows(pos, 2 * d_half)
    assert core.raw_position_share(pos, 2 * d_half) == pytest.approx(pos * pos / float(x @ x), rel=1e-12, abs=1e-300)


# --------------------------------------------------------------------------
# (b) n / T
# --------------------------------------------------------------------------

def test_lesson_half():
    assert core.relative_position(4, 8) == 0.5 == core.relative_position(150, 300)
    assert core.same_ratio_token(4, 8, 300) == 150


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 2048), length=st.integers(1, 2048), data=st.data())
def test_same_ratio_token_is_the_same_fraction(T, length, data):
    n = data.draw(st.integers(1, T))
    same = core.same_ratio_token(n, T, length)
    assert Fraction(n, T) * length == Fraction(same).limit_denominator(2048)
    if same == int(same):
        assert core.relative_position(int(same), length) == pytest.approx(core.relative_position(n, T))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: core.relative_position(0, 8), "n must be token numbers"),
    (lambda: core.relative_position(9, 8), "n must be token numbers"),
    (lambda: core.same_ratio_token(9, 8, 300), "n must be an integer in 1 .. T"),
    (lambda: core.same_ratio_token(1, 8, 0), "length"),
    (lambda: core.learned_table(0, 8), "rows"),
    (lambda: core.table_dot_scores(np.ones((3, 4)), 0, 3), "q must be rows"),
])
def test_validation(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------
# (c) a learned table
# --------------------------------------------------------------------------

def test_learned_rows_do_not_depend_on_the_length():
    np.testing.assert_array_equal(core.learned_table(30, 16)[:10], core.learned_table(10, 16))


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 70), more_rows=st.integers(0, 70), half=st.integers(1, 100), more_half=st.integers(0, 100),
       seed=st.integers(0, 3))
def test_a_learned_entry_depends_on_its_row_column_and_seed_only(rows, more_rows, half, more_half, seed):
    # A larger table holds every smaller one, whatever the block boundaries (columns are drawn 64 at a time).
    small = core.learned_table(rows, 2 * half, seed)
    large = core.learned_table(rows + more_rows, 2 * (half + more_half), seed)
    np.testing.assert_array_equal(large[:rows, :2 * half], small)
    assert small.shape == (rows, 2 * half)


def test_learned_entries_are_half_normal_and_unrelated():
    table = core.learned_table(400, 256)
    # N(0, 1/2): mean 0, variance 1/2 (102,400 draws: the sample's errors are ~0.002 and ~0.003).
    assert abs(table.mean()) < 0.01 and abs(table.var() - 0.5) < 0.01
    # Columns of different blocks, rows next to each other and seeds: uncorrelated (|r| < 5 / sqrt(n)).
    for a, b in ((table[:, 0], table[:, 64]), (table[:-1].ravel(), table[1:].ravel()),
                 (table.ravel(), core.learned_table(400, 256, seed=1).ravel())):
        assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(a.size)


def test_the_dot_of_one_row_with_many_is_each_dot():
    table = core.learned_table(12, 10)
    got = core.table_dot_scores(table, 3, np.arange(12))
    assert got == pytest.approx([math.fsum(table[3] * table[q]) for q in range(12)], abs=1e-12)
    assert core.table_dot_scores(table, [[0], [1]], [2, 5]).shape == (2, 2)


def test_sinusoid_neighbours_all_alike_learned_ones_noise():
    pe = core.encoding(24, 32)
    np.testing.assert_allclose(core.neighbour_similarity(pe), score_by_hand(1, 32) / 16, atol=1e-12)
    learned = core.neighbour_similarity(core.learned_table(24, 32))
    assert np.abs(learned).max() < 0.8 and np.std(learned) > 0.05


def test_learned_scores_depend_on_the_start_sinusoid_ones_do_not():
    table, pe = core.learned_table(24, 32), core.encoding(24, 32)
    starts = np.array([0, 8, 15, 20])
    learned = core.table_dot_scores(table, starts, starts + 3)
    sinusoid = core.table_dot_scores(pe, starts, starts + 3)
    np.testing.assert_allclose(sinusoid, 12.272398, atol=1e-6)
    np.testing.assert_allclose(sinusoid, score_by_hand(3, 32), atol=1e-12)
    assert np.ptp(learned) > 1.0


# --------------------------------------------------------------------------
# The section without a browser.
# --------------------------------------------------------------------------

def test_a_single_row_has_no_neighbour_to_compare():
    """At T = 1 (or one trained position) the neighbours passage printed "the same cosine, —" and "largest size —"."""
    state = ExplorerState(lang="en", T=1)
    section = WhyNotSimpler(state)
    section.__panel__()
    assert section.passage("neighbours").hidden and "single row" in section.one_row_note.object
    state.T = 24
    assert not section.passage("neighbours").hidden and section.one_row_note.object == ""
    section.choice.trained = 1
    # PE_p · PE_p+1 / (d_model/2) = S(1)/16 = 15.314/16 (the lesson's S(1)) = 0.957 for the sinusoid's rows.
    assert section.passage("neighbours").hidden and "by the cosine 0.957" in section.one_row_note.object
    assert f"{15.314 / 16:.3f}" == "0.957"
    section.choice.trained = 2
    assert not section.passage("neighbours").hidden


def test_section_updates_in_place():
    state = ExplorerState(lang="en", T=24, pos=0, k=3)
    view = WhyNotSimpler(state)
    learned, ratio_marks, raw = view.learned_scores, view.ratio_marks, view.raw_share
    before = learned.data
    assert "has a row for pos = 0" in view.no_row.object
    state.pos = 20
    assert "no row" in view.no_row.object and "0 … 15" in view.no_row.object
    assert view.raw_marker.data["pos"] == [20]
    state.k = 5
    assert learned.data is before  # a k step moves two lines only
    assert [line.location for line in view.k_lines] == [5, 5]
    state.param.update(T=8, pos=3)
    assert view.ratio_marks is ratio_marks and ratio_marks.data["x"] == [0.5, 0.5]
    assert ratio_marks.data["label"][1] == "token 150 of 300 → 0.5"
    assert view.raw_share is raw and raw.data["pos"][-1] == 300
    view.choice.other_length = 301
    assert ratio_marks.data["x"][1:] == [150 / 301, 151 / 301]
    assert ratio_marks.data["label"][1:] == ["between tokens 150 and 151 of 301", ""]
    view.choice.trained = 3
    assert learned.data["p"].max() <= 2 and "no row" in view.no_row.object and "0 … 2" in view.no_row.object
    assert view.live_values()["trained"] == "3" and view.live_values()["last_trained"] == "2"
    sinus = view.sinusoid_scores.data
    np.testing.assert_allclose(sinus["score"], [score_by_hand(k, 32) for k in sinus["k"]], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(d_half=st.integers(1, 512), pos=st.integers(0, 2047))
@example(d_half=16, pos=300)
def test_the_printed_share_never_reads_all_or_nothing_unless_it_is(d_half, pos):
    # The prose says the other coordinates still add something: a share below 1 printed as "100.0 %"
    # would say they add nothing. The text and the marker's label print the same number.
    state = ExplorerState(lang="en", d_model=2 * d_half, T=2048, pos=pos)
    view = WhyNotSimpler(state)
    x = core.raw_position_rows(pos, 2 * d_half)
    share = pos * pos / float(x @ x)
    shown = view.live_values()["share"]
    assert parsed(shown) == pytest.approx(100 * share, abs=0.0051)
    assert (parsed(shown) == 100) == (share == 1) and (parsed(shown) == 0) == (pos == 0)
    assert view.raw_marker.data["label"] == [f"pos = {pos}: {shown} %"]
    if pos == 300:  # "at pos = 300 it is 99.8 %, at 300 it is 99.81 %" said one share two ways
        assert shown == view.live_values()["share_lesson"]


@pytest.mark.parametrize(("T", "pos", "length", "place"), [
    (8, 3, 300, "at token 150"),  # 4 · 300 / 8 = 150
    (8, 3, 301, "between tokens 150 and 151 (at 150.50)"),  # 4 · 301 / 8 = 150.5
    (2048, 0, 2047, "before token 1"),  # 1 · 2047 / 2048 < 1
    (24, 23, 5, "at token 5"),  # the last token is the last token
])
def test_where_the_same_value_falls_in_the_other_text(T, pos, length, place):
    view = WhyNotSimpler(ExplorerState(lang="en", T=T, pos=pos))
    view.choice.other_length = length
    assert view.live_values()["same_place"] == place
    assert WhyNotSimpler(ExplorerState(lang="es", T=8, pos=3)).live_values()["same_place"] == "en el token 150"


@pytest.mark.parametrize("base", [100, 500_000])
def test_the_sinusoid_figures_follow_a_base_step(base):
    """The sinusoid's products, its S(k) curve and its neighbours' similarity use the base: a base step from
    another section's slider (the wavelengths) reaches them (they kept the old base's numbers before)."""
    state = ExplorerState(lang="en", d_model=32, T=24)
    view = WhyNotSimpler(state)
    state.base = base
    sinus = view.sinusoid_scores.data
    expected = [math.fsum(math.cos(k / base ** (2 * i / 32)) for i in range(16)) for k in sinus["k"]]
    np.testing.assert_allclose(sinus["score"], expected, atol=1e-9)
    curve = view.sinusoid_curve.data
    np.testing.assert_allclose(curve["score"], [math.fsum(math.cos(k / base ** (2 * i / 32)) for i in range(16))
                                                for k in curve["k"]], atol=1e-9)
    # Neighbours p, p + 1: the same S(1) for every p, with the new base.
    neighbours = view.neighbours.data["sinusoid"]
    one = math.fsum(math.cos(1 / base ** (2 * i / 32)) for i in range(16)) / 16
    np.testing.assert_allclose(neighbours, one, atol=1e-9)


# --------------------------------------------------------------------------
# In the browser.
# --------------------------------------------------------------------------

@pytest.mark.browser
def test_simpler_page(page, app_url, console_errors):
    page.goto(f"{app_url}/simpler?lang=en&T=8&pos=3&k=3")
    marks = wait_for_source(page, "simpler_ratio_marks", lambda d: len(d["x"]) == 2)
    assert marks["x"].tolist() == [0.5, 0.5]
    share = wait_for_source(page, "simpler_raw_share", lambda d: len(d["pos"]) == 301)
    np.testing.assert_allclose(share["share"], core.raw_position_share(np.arange(301), 32), atol=1e-12)

    press(page, "position pos", "ArrowRight")
    marks = wait_for_source(page, "simpler_ratio_marks", lambda d: d["x"][0] == 0.625)
    # 5/8 of 300 is 187.5: no token of 300 gets it, the two around it are marked
    assert marks["x"].tolist()[1:] == [187 / 300, 188 / 300]
    assert list(marks["label"])[1] == "between tokens 187 and 188 of 300"
    raw = wait_for_source(page, "simpler_raw_marker", lambda d: d["pos"].tolist() == [4])
    assert raw["share"][0] == pytest.approx(float(core.raw_position_share(4, 32)), abs=1e-12)

    sinus = wait_for_source(page, "simpler_sinusoid_scores", lambda d: len(d["k"]) > 0)
    np.testing.assert_allclose(sinus["score"], core.relative_scores(sinus["k"], 32), atol=1e-12)
    press(page, "offset k", "ArrowRight")
    wait_until(lambda: model_property(page, "simpler_learned_k_line", "location") == 4)
    assert console_errors == []
