"""Lesson section «fingerprint»: the restricted distances, their core functions and the section's data.

Expected values are derived here independently of the formula under test: the
distances by slicing the columns of ``core.encoding`` (or of rows built with
math.sin/math.cos) and taking a plain norm, not the closed form 2·sqrt(Σ sin²).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.prose import section_prose
from app.model.state import BASES, ExplorerState
from components.lesson.fingerprint import MAX_DIALS, Fingerprint, dial_pairs, short
from tests.helpers import row_by_hand


def sliced_distances(pos: int, T: int, d_model: int, base: float, first: int, last: int) -> np.ndarray:
    pe = core.encoding(T, d_model, base)[:, 2 * first:2 * last + 2]
    return np.linalg.norm(pe - pe[pos], axis=1)




# --------------------------------------------------------------------------
# Core.
# --------------------------------------------------------------------------

def test_three_against_three_hundred_with_the_slowest_pair_is_almost_the_same_point():
    slow, everything = (float(core.fingerprint_distance(3, 300, 32, 10_000, f, 15)) for f in (15, 0))
    a, b = row_by_hand(3, 32, 10_000), row_by_hand(300, 32, 10_000)
    assert slow == pytest.approx(math.dist(a[30:], b[30:]), abs=1e-12)
    assert everything == pytest.approx(math.dist(a, b), abs=1e-12)
    assert slow < 0.06 < 5 < everything  # 0.0528 of at most 2, against 5.24 of at most 8


def test_fastest_pair_alone_nearly_repeats_after_44_positions():
    # Pair 0 turns 1 rad per position, and 44 = 7·2π + 0.0177: a fast wheel comes back close.
    near = float(core.fingerprint_distance(0, 44, 32, 10_000, 0, 0))
    assert near == pytest.approx(math.dist(row_by_hand(0, 32, 10_000)[:2], row_by_hand(44, 32, 10_000)[:2]))
    assert near < 0.02


def test_nearest_other_with_the_lesson_sizes():
    # All pairs: a neighbour; fastest pair alone: 22 (19 = 3·2π + 0.15); slowest alone: a neighbour, very close.
    for (first, last), q in {(0, 15): 2, (0, 0): 22, (15, 15): 2}.items():
        expected = sliced_distances(3, 24, 32, 10_000, first, last)
        found = core.nearest_other(core.fingerprint_distances(3, 24, 32, 10_000, first, last), 3)
        assert found[0] == q
        assert found[1] == pytest.approx(np.sort(expected)[1], abs=1e-12)
    assert core.nearest_other([0.0], 0) is None
    assert core.nearest_other([1.0, 0.0, 1.0], 1) == (0, 1.0)  # ties: the smaller q


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_try_passages_hint_names_the_two_closest_positions(lang):
    # "With the fastest pair alone and pos = 3, look near 3 + 6 and 3 + 19": pair 0 alone puts q at
    # 2|sin((q - 3)/2)| from 3, smallest for q = 22 (0.150) and q = 9 (0.282) in a table of 24 rows.
    hint = section_prose("fingerprint", lang).parts["try"].html
    assert ">3 + 6</span>" in hint and ">3 + 19</span>" in hint and r"\pm" not in hint
    by_hand = {q: 2 * abs(math.sin((q - 3) / 2)) for q in range(24) if q != 3}
    assert sorted(by_hand, key=by_hand.get)[:2] == [3 + 19, 3 + 6]
    np.testing.assert_allclose(core.fingerprint_distances(3, 24, 32, 10_000, 0, 0),
                               [2 * abs(math.sin((q - 3) / 2)) for q in range(24)], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 300), d_half=st.integers(1, 80), base=st.sampled_from(BASES), data=st.data())
def test_distances_equal_the_sliced_table(T, d_half, base, data):
    d_model = 2 * d_half
    pos = data.draw(st.integers(0, T - 1))
    first = data.draw(st.integers(0, d_half - 1))
    last = data.draw(st.integers(first, d_half - 1))
    got = core.fingerprint_distances(pos, T, d_model, base, first, last)
    assert got.shape == (T,) and got[pos] == 0
    np.testing.assert_allclose(got, sliced_distances(pos, T, d_model, base, first, last), rtol=0, atol=1e-9)
    assert np.all(got <= 2 * math.sqrt(last - first + 1) + 1e-12)


@settings(max_examples=60, deadline=None)
@given(T=st.integers(2, 400), d_half=st.integers(1, 80), base=st.sampled_from(BASES), data=st.data())
def test_the_closest_positions_come_in_mirror_pairs(T, d_half, base, data):
    """Every position as close as the closest is returned, and with q its mirror 2·pos − q whenever the table
    holds it: ‖PE_pos − PE_q‖ depends on |pos − q| only, so the figure marks both, not one of the two."""
    pos = data.draw(st.integers(0, T - 1))
    first = data.draw(st.integers(0, d_half - 1))
    last = data.draw(st.integers(first, d_half - 1))
    ties, distance = core.nearest_others(core.fingerprint_distances(pos, T, 2 * d_half, base, first, last), pos)
    by_slicing = sliced_distances(pos, T, 2 * d_half, base, first, last)
    others = np.delete(by_slicing, pos)
    assert list(ties) == sorted(ties) and pos not in ties
    assert all(abs(by_slicing[q] - others.min()) <= 1e-9 for q in ties)
    assert distance == pytest.approx(others.min(), abs=1e-9)
    assert {2 * pos - q for q in ties if 0 <= 2 * pos - q < T} <= set(ties)
    assert core.nearest_other(by_slicing, pos)[0] in range(T)
    assert core.nearest_others([1.0, 0.0, 1.0, 0.5], 1) == ((3,), 0.5)
    assert core.nearest_others([0.5, 0.0, 0.5], 1) == ((0, 2), 0.5)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(-5000, 5000), q=st.integers(-5000, 5000), shift=st.integers(-5000, 5000))
def test_distance_depends_on_the_gap_only(p, q, shift):
    assert float(core.fingerprint_distance(p, q, 64)) == pytest.approx(
        float(core.fingerprint_distance(p + shift, q + shift, 64)), abs=1e-9)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"pairs_from": 16}, "pairs_from must be an integer in 0 .. d_model/2 - 1 = 15"),
    ({"pairs_from": -1}, "pairs_from must be an integer >= 0"),
    ({"pairs_from": 5, "pairs_to": 4}, "pairs_to must be an integer in pairs_from = 5 .. d_model/2 - 1 = 15"),
    ({"pairs_to": 16}, "pairs_to must be an integer in pairs_from = 0"),
    ({"pairs_to": 2.5}, "pairs_to must be an integer"),
    ({"pos": 24}, "pos must be an integer in 0 .. T-1 = 23"),
    ({"T": 0}, "T must be an integer >= 1"),
    ({"d_model": 31}, "d_model must be an even integer"),
])
def test_fingerprint_distances_validates(kwargs, message):
    args = {"pos": 3, "T": 24, "d_model": 32, "base": 10_000.0} | kwargs
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        core.fingerprint_distances(**args)


def test_nearest_other_validates():
    with pytest.raises(ValueError, match="pos must be an integer in 0"):
        core.nearest_other([0.0, 1.0], 2)
    with pytest.raises(ValueError, match="distances must be a 1-D array"):
        core.nearest_other([[0.0]], 0)
    with pytest.raises(ValueError, match="distances must be finite"):
        core.nearest_other([0.0, float("nan")], 0)


# --------------------------------------------------------------------------
# The section.
# --------------------------------------------------------------------------

@pytest.fixture
def section() -> Fingerprint:
    return Fingerprint(ExplorerState(d_model=32, T=24, base=10_000, pos=3, lang="en"))


def test_sources_follow_the_state_in_place(section):
    s = section.state
    source = section.distances
    assert set(source.data) == {"q", "distance"}
    np.testing.assert_allclose(source.data["distance"], sliced_distances(3, 24, 32, 10_000, 0, 15), atol=1e-12)
    s.pos = 10
    assert section.distances is source
    np.testing.assert_allclose(source.data["distance"], sliced_distances(10, 24, 32, 10_000, 0, 15), atol=1e-12)
    s.param.update(pairs_from=4, pairs_to=7)
    np.testing.assert_allclose(source.data["distance"], sliced_distances(10, 24, 32, 10_000, 4, 7), atol=1e-12)
    top = 2 * math.sqrt(4)  # the largest distance through four pairs
    assert top < section.plot.y_range.end <= 1.4 * top
    # The closest position's label floats above every bar (it lay over the bars beside q), inside the figure.
    label_y = section.marks.data["label_y"][1]
    assert max(source.data["distance"]) < label_y < section.plot.y_range.end
    s.T = 40
    assert list(source.data["q"]) == list(range(40))


def test_a_width_step_that_moves_the_last_pair_computes_each_reading_once(section, monkeypatch):
    """With every pair chosen, a d_model step moves pairs_to too: the state sets pairs_to (its watchers run
    with the new d_model already in place), then d_model's own watchers run. The distances are computed
    once for the figure, once for the live numbers and once for the description, all at the new width:
    not a second time for the second event."""
    section.__panel__()  # the passages and the description are built with the layout
    calls = []
    real = core.fingerprint_distances
    monkeypatch.setattr(core, "fingerprint_distances", lambda *args: calls.append(args) or real(*args))
    section.state.d_model = 34
    assert section.state.pairs_to == 16
    assert [c[2] for c in calls] == [34, 34, 34]
    np.testing.assert_allclose(section.distances.data["distance"], sliced_distances(3, 24, 34, 10_000, 0, 16),
                               atol=1e-12)


@pytest.mark.parametrize("pos", [0, 1, 11, 12, 22, 23])
def test_labels_keep_clear_of_the_pos_line_and_the_edges(section, pos):
    """The maximum's label sits at the edge away from pos (the dashed line at pos never crosses it); the
    pos label and the closest position's label read towards the middle when their point is near an edge."""
    s = section.state
    s.pos = pos
    T = s.T
    right_half = pos >= (T - 1) / 2
    label = section.max_label
    assert (label.x, label.text_align) == ((-0.5, "left") if right_half else (T - 0.5, "right"))
    assert section.pos_label.text_align == ("right" if right_half else "left")
    marks = section.marks.data
    q = marks["q"][1]
    assert abs(q - pos) == 1  # all pairs: the closest other position is a neighbour
    edge_room = q if marks["align"][1] == "right" else T - 1 - q  # columns between the label and its edge
    assert edge_room >= 0.25 * T
    assert marks["dx"][1] == (-12 if marks["align"][1] == "right" else 12)


def test_presets_set_the_pair_range(section):
    s = section.state
    section.slowest_only()
    assert (s.pairs_from, s.pairs_to) == (15, 15)
    marks = section.marks.data
    # The slowest pair: everything is near; 2 and 4 are equally close to 3, both marked, the label names both.
    assert marks["q"] == [3, 2, 4] and marks["distance"][1] == marks["distance"][2] < 1e-3
    neighbour = short(2 * math.sin(10_000 ** (-30 / 32) / 2))  # one step of the slowest wave: 2 sin(ω_15 / 2)
    assert marks["label"][1] == f"closest: q = 2 and 4 ({neighbour})"
    # One pair is named, not counted ("pairs 15 … 15 (1 in all)").
    assert section.live_values()["chosen_pairs"] in ("pair 15 alone", "la pareja 15 sola")
    section.fastest_only()
    assert (s.pairs_from, s.pairs_to) == (0, 0)
    assert section.marks.data["q"][1] == 22
    s.d_model = 64
    section.all_pairs()
    assert (s.pairs_from, s.pairs_to) == (0, 31)
    assert section.live_values()["chosen_pairs"] in ("pairs 0 … 31 (32 in all)", "las parejas 0 … 31 (32 en total)")


def test_dials_are_the_chosen_pairs_hands(section):
    s = section.state
    data = section.dials.data
    assert list(data["pair"]) == list(range(16))
    row = row_by_hand(3, 32, 10_000)
    # A hand drawn by Bokeh's angle (anticlockwise from 3 o'clock) points at (x, y) = (PE[pos, 2i], PE[pos, 2i+1]).
    np.testing.assert_allclose(np.cos(data["pos_angle"]), row[0::2], atol=1e-5)
    np.testing.assert_allclose(np.sin(data["pos_angle"]), row[1::2], atol=1e-5)
    near = row_by_hand(section.marks.data["q"][1], 32, 10_000)
    np.testing.assert_allclose(np.cos(data["near_angle"]), near[0::2], atol=1e-5)
    np.testing.assert_allclose(np.sin(data["near_angle"]), near[1::2], atol=1e-5)
    assert np.array_equal(data["cy"], np.zeros(16)) and np.all(np.diff(data["cx"]) > 2)  # one row on a desktop
    # A phone's twins: two rows of eight, the first above the second.
    cx, cy = np.asarray(data["cx_narrow"]), np.asarray(data["cy_narrow"])
    assert np.array_equal(cx[:8], cx[8:]) and np.all(np.diff(cx[:8]) > 2)  # apart by more than a diameter
    assert len(set(cy[:8])) == len(set(cy[8:])) == 1 and cy[0] - cy[8] > 2
    frame = section.dials_frame.data
    assert frame["left_narrow"][0] < cx.min() - 1 and frame["right_narrow"][0] > cx.max() + 1
    # The numbers hang under the centres by the labels' own offset (a dodge of the centres' column).
    labels = section.dials_plot.select_one({"name": "fingerprint_dial_labels"}).glyph
    assert labels.y.field == "cy"
    assert frame["bottom_narrow"][0] < cy.min() + labels.y.transform.value < cy.min() - 1
    s.pairs_from, s.pairs_to = 2, 6  # five dials: one row on a phone too
    assert len(set(section.dials.data["cy_narrow"])) == 1
    s.pairs_from, s.pairs_to = 0, 10  # eleven: six over five
    assert sorted(Counter(section.dials.data["cy_narrow"]).values()) == [5, 6]
    s.pairs_to = 15
    s.d_model = 512  # all 256 pairs chosen: MAX_DIALS of them drawn, from the first to the last
    assert list(section.dials.data["pair"])[::len(section.dials.data["pair"]) - 1] == [0, 255]
    assert len(section.dials.data["pair"]) == MAX_DIALS
    assert "16 of the 256" in section.dials_note.object
    assert list(dial_pairs(3, 5)) == [3, 4, 5]


def test_one_row_table_has_no_other_position():
    section = Fingerprint(ExplorerState(d_model=32, T=1, lang="es"))
    assert section.marks.data["q"] == [0]
    values = section.live_values()
    assert values["nearest_q"] == "—"
    assert section.near_hands.visible is False  # no second hand
    [near] = [item for item in section.dials_plot.legend[0].items if item.label.value == "aguja en q"]
    assert near.visible is False  # nor a legend entry for it
    # The passage about the closest other position gives way to a sentence that says there is none.
    section.__panel__()
    assert section.passage("closest").hidden is True
    assert "no hay otra posición" in section.alone_note.object
    section.state.T = 24
    assert section.passage("closest").hidden is False and section.alone_note.object == ""
    assert near.visible is True and section.near_hands.visible is True


def test_live_values_cover_the_prose_and_state_the_numbers(section):
    for lang in ("es", "en"):
        assert section_prose("fingerprint", lang).keys() <= set(section.live_values())
    values = section.live_values()
    assert values["slow_3_300"] == "0.053" and values["all_3_300"] == "5.24"
    assert values["nearest_q"] == "2" and values["nearest_distance"] == "1.17"
    assert "outside" in section.far_note.object
    section.state.T = 400
    assert "is in this table" in section.far_note.object


def test_short_formats():
    assert short(5.2381) == "5.24" and short(0.0528) == "0.053" and short(0.000177) == "0.00018" and short(0) == "0"


@settings(max_examples=40, deadline=None)
@given(d_model=st.integers(1, 64).map(lambda half: 2 * half), base=st.sampled_from(BASES),
       pos=st.integers(1, 400), data=st.data())
def test_positions_the_same_distance_before_and_after_pos_are_equally_close(d_model, base, pos, data):
    # What the section says of its closest position: pos - j and pos + j always tie (so it names one of two).
    # From rows written out by hand: each pair's part is 2 - 2 cos(omega j), even in j.
    j = data.draw(st.integers(1, pos))
    here = row_by_hand(pos, d_model, base)
    before = np.linalg.norm(here - row_by_hand(pos - j, d_model, base))
    after = np.linalg.norm(here - row_by_hand(pos + j, d_model, base))
    assert before == pytest.approx(after, rel=1e-9, abs=1e-9)
    distances = core.fingerprint_distances(pos, pos + j + 1, d_model, base)
    assert distances[pos - j] == pytest.approx(before, rel=1e-9, abs=1e-9)
    assert distances[pos + j] == pytest.approx(after, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("d_model", [2, 32, 512])
def test_the_claim_about_3_and_300_names_the_lessons_slowest_wavelength_at_any_size(d_model):
    """At d_model = 2 the passage said "the wavelength is far longer than 297" beside a wavelength of 6.3:
    the claim is about the lesson's sizes, so it prints theirs, 2π·10000^(30/32)."""
    values = Fingerprint(ExplorerState(d_model=d_model, lang="en")).live_values()
    assert values["lesson_slow_wavelength"] == f"{2 * math.pi * 10_000 ** (30 / 32):,.1f}".replace(",", "\u202f")


def test_dials_name_i_once_then_print_numbers():
    section = Fingerprint(ExplorerState(d_model=32, T=24, pairs_from=3, pairs_to=9, lang="en"))
    assert section.dials.data["label"] == ["i = 3", *(f"{i}\u2060" for i in range(4, 10))]


def test_every_pair_is_counted_only_when_there_are_several():
    from components.lesson.fingerprint import Fingerprint

    assert Fingerprint(ExplorerState(lang="en")).live_values()["every_pair"] == "every pair (16 in all)"
    assert "(1 in all)" not in Fingerprint(ExplorerState(lang="en", d_model=2)).live_values()["every_pair"]
