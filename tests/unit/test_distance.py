"""The score-against-distance view, without a browser, plus the core functions it added.

Expected values are derived here independently of app.core: S(k) from a plain
Python sum of cosines, row products from math.sin/math.cos rows, so that a
mistake in the core formulas cannot be copied into the expectation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bokeh.document import Document
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import BASES, ExplorerState
from app.model.strings import text
from components import distance
from components.distance import MAX_TARGETS_PER_START, SAMPLE_STARTS, ScoreCurve
from tests.helpers import row_by_hand


def score_by_hand(k: float, d_model: int, base: float) -> float:
    """S(k) = Σ_i cos(k / base^(2i/d_model)), one term at a time."""
    return math.fsum(math.cos(k / base ** (2 * i / d_model)) for i in range(d_model // 2))




def curve_lookup(view: ScoreCurve) -> dict[int, float]:
    return dict(zip(np.asarray(view.curve.data["k"]).tolist(), np.asarray(view.curve.data["score"]), strict=True))


@pytest.fixture
def lesson() -> tuple[ExplorerState, ScoreCurve]:
    state = ExplorerState(d_model=32, T=24, base=10_000, k=3, lang="es")
    return state, ScoreCurve(state)


# --------------------------------------------------------------------------
# The lesson's numbers (d_model = 32, T = 24).
# --------------------------------------------------------------------------

def test_curve_covers_every_offset_of_the_table(lesson):
    _, view = lesson
    assert set(view.curve.data) == {"k", "score"}
    assert np.asarray(view.curve.data["k"]).tolist() == list(range(-23, 24))


def test_lesson_values_on_the_curve(lesson):
    _, view = lesson
    s = curve_lookup(view)
    assert s[0] == 16.0
    assert round(s[1], 3) == 15.314 and round(s[-1], 3) == 15.314
    assert round(s[3], 6) == 12.272398
    # "baja despacio y sin ser monótona": after k = 3 the scores go up again somewhere.
    tail = np.diff([s[k] for k in range(3, 24)])
    assert (tail > 0).any() and (tail < 0).any()
    assert all(s[0] > s[k] for k in s if k != 0)


def test_curve_matches_a_sum_of_cosines_done_by_hand(lesson):
    _, view = lesson
    for k, score in curve_lookup(view).items():
        assert score == pytest.approx(score_by_hand(k, 32, 10_000), abs=1e-12)


def test_curve_is_symmetric(lesson):
    _, view = lesson
    score = np.asarray(view.curve.data["score"])
    np.testing.assert_allclose(score, score[::-1], rtol=0, atol=1e-12)


def test_marker_shows_the_lesson_value_and_follows_k(lesson):
    state, view = lesson
    assert view.marker.data["k"] == [3]
    assert view.marker.data["label"] == ["S(3) = 12.272398"]
    state.k = -5
    assert view.marker.data["k"] == [-5]
    assert view.marker.data["score"][0] == pytest.approx(score_by_hand(-5, 32, 10_000), abs=1e-12)
    assert view.marker.data["label"] == [f"S(\u22125) = {score_by_hand(-5, 32, 10_000):.6f}"]


def test_maximum_is_drawn_and_labelled(lesson):
    state, view = lesson
    assert view.max_line.location == 16.0
    assert view.max_label.y == 16.0
    assert view.max_label.text == text("es", "distance_max", value="16")
    state.d_model = 64
    assert view.max_line.location == 32.0 and view.max_label.text.endswith("32")
    assert view.figure.y_range.end > 32.0  # room above the peak for its label


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_presented_maximum_is_labelled_briefly(lang):
    """Presented, in type 1.8 times larger beside a legend, the whole sentence was wider than half the frame at
    1280 px, and the k line crossed it on either side; the value and where it is stay."""
    view = ScoreCurve(ExplorerState(d_model=32, T=24, k=3, lang=lang, present=True))
    assert view.max_label.text == text(lang, "distance_max_short", value="16")
    assert view.max_label.text.endswith("S(0) = 16")
    assert len(view.max_label.text) < len(text(lang, "distance_max", value="16")) * 0.7


def test_samples_are_row_products_of_four_starts_and_lie_on_the_curve(lesson):
    _, view = lesson
    data = view.samples.data
    p, k, score = (np.asarray(data[c]) for c in ("p", "k", "score"))
    assert sorted(set(p.tolist())) == [0, 8, 15, 23]
    for start in (0, 8, 15, 23):
        # every valid k for that start: p + k runs over the whole table
        assert sorted(k[p == start].tolist()) == list(range(-start, 24 - start))
    s = curve_lookup(view)
    np.testing.assert_allclose(score, [s[int(v)] for v in k], rtol=0, atol=1e-12)
    # and they really are dot products of rows (built here with math.sin/cos)
    for i in range(0, len(k), 7):
        expected = math.fsum(a * b for a, b in zip(row_by_hand(p[i], 32, 10_000), row_by_hand(p[i] + k[i], 32, 10_000),
                                                   strict=True))
        assert score[i] == pytest.approx(expected, abs=1e-12)
    legends = {(int(a), b) for a, b in zip(p, data["legend"], strict=True)}
    assert legends == {(q, text("es", "distance_samples", starts=q)) for q in (0, 8, 15, 23)}


def test_names_of_figure_and_sources(lesson):
    _, view = lesson
    assert view.figure.name == "distance_plot"
    assert (view.curve.name, view.marker.name, view.samples.name) == ("distance", "distance_marker",
                                                                      "distance_samples")


def test_labels_come_from_the_strings_in_both_languages():
    for lang in ("es", "en"):
        view = ScoreCurve(ExplorerState(lang=lang))
        assert view.figure.title.text == text(lang, "distance_plot_title")
        assert view.figure.xaxis[0].axis_label == text(lang, "distance_x")
        assert view.figure.yaxis[0].axis_label == text(lang, "distance_y")


# --------------------------------------------------------------------------
# Sizes change: ranges follow, k stays clamped, only what changed is sent.
# --------------------------------------------------------------------------

def test_shrinking_T_clamps_k_and_the_curve_range_follows():
    state = ExplorerState(d_model=32, T=24, k=20)
    view = ScoreCurve(state)
    state.T = 10
    assert state.k == 9
    assert np.asarray(view.curve.data["k"]).tolist() == list(range(-9, 10))
    assert view.marker.data["k"] == [9]
    assert view.figure.x_range.start < -9 and view.figure.x_range.end > 9
    assert np.abs(view.samples.data["k"]).max() <= 9


def changes_while(view: ScoreCurve, action) -> list[object]:
    """The Bokeh models a document would send to the browser during ``action``."""
    doc = Document()
    doc.add_root(view.figure)
    changed: list[object] = []
    doc.callbacks.on_change(lambda event: changed.append(event.model))
    action()
    return changed


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 300), data=st.data())
def test_the_maximum_label_stays_off_the_k_line(T, data):
    """Centred over the peak at k = 0, the maximum's label was crossed by the k line for every k near 0. It
    runs from one end of the axis towards the middle, on the half that k is not on (with T = 1, one offset,
    it starts just right of the line)."""
    k = data.draw(st.integers(-(T - 1), T - 1))
    state = ExplorerState(d_model=32, T=T, k=k, lang="en")
    view = ScoreCurve(state)
    label, x_range = view.max_label, view.figure.x_range
    if T == 1:
        assert (label.x, label.text_align) == (k, "left") and label.x_offset > 0
        return
    # The half of the axis the text covers: from the end it is anchored at to the middle.
    covered = (x_range.start, 0) if (label.x, label.text_align) == (x_range.start, "left") else \
        (0, x_range.end) if (label.x, label.text_align) == (x_range.end, "right") else None
    assert covered is not None, (label.x, label.text_align)
    assert not covered[0] < k < covered[1] and (k != 0 or covered[0] < 0)
    # And it follows k across the peak.
    state.k = -k if k else -1
    assert (label.x, label.text_align) != ((x_range.start, "left") if covered[0] < 0 else (x_range.end, "right"))


def test_a_change_of_k_sends_only_the_marker(lesson):
    state, view = lesson
    changed = changes_while(view, lambda: state.param.update(k=7))
    assert changed and all(model is view.marker for model in changed)


def test_a_change_of_T_resends_the_curve(lesson):
    state, view = lesson
    changed = changes_while(view, lambda: state.param.update(T=30))
    assert view.curve in changed and view.samples in changed
    assert np.asarray(view.curve.data["k"]).tolist() == list(range(-29, 30))


def test_largest_table_keeps_the_samples_bounded():
    state = ExplorerState(d_model=1024, T=2048, k=900)
    view = ScoreCurve(state)
    assert len(view.curve.data["k"]) == 4095
    n = len(view.samples.data["k"])
    assert n <= SAMPLE_STARTS * MAX_TARGETS_PER_START
    assert 0 in np.asarray(view.samples.data["k"])  # every start keeps k = 0, the maximum
    s = curve_lookup(view)
    np.testing.assert_allclose(view.samples.data["score"], [s[int(v)] for v in view.samples.data["k"]],
                               rtol=0, atol=1e-9)
    assert view.marker.data["label"] == [f"S(900) = {score_by_hand(900, 1024, 10_000):.6f}"]


def test_one_position_table():
    view = ScoreCurve(ExplorerState(d_model=2, T=1, k=0))
    assert np.asarray(view.curve.data["k"]).tolist() == [0]
    assert view.marker.data["label"] == ["S(0) = 1.000000"]
    assert view.figure.y_range.start < 1 < view.figure.y_range.end
    # The one score is read against 0, not on an axis spanning a few hundredths around it.
    assert view.figure.y_range.start <= 0
    view.state.d_model = 32
    assert view.figure.y_range.start <= 0 < 16 < view.figure.y_range.end


@settings(max_examples=30, deadline=None)
@given(d_model=st.integers(1, 256).map(lambda n: 2 * n), T=st.integers(1, 400),
       base=st.sampled_from(BASES), data=st.data())
def test_curve_and_samples_for_random_sizes(d_model, T, base, data):
    k = data.draw(st.integers(-(T - 1), T - 1))
    state = ExplorerState(d_model=d_model, T=T, base=base, k=k)
    view = ScoreCurve(state)
    ks = np.asarray(view.curve.data["k"])
    assert ks.tolist() == list(range(-(T - 1), T))
    score = np.asarray(view.curve.data["score"])
    for j in data.draw(st.lists(st.integers(0, len(ks) - 1), min_size=1, max_size=5)):
        assert score[j] == pytest.approx(score_by_hand(int(ks[j]), d_model, base), abs=1e-9)
    np.testing.assert_allclose(score, score[::-1], rtol=0, atol=1e-9)
    assert score.max() == pytest.approx(d_model / 2) and score[T - 1] == d_model / 2
    s = dict(zip(ks.tolist(), score, strict=True))
    samples = view.samples.data
    assert len(samples["k"]) <= SAMPLE_STARTS * MAX_TARGETS_PER_START
    assert all(0 <= p + kk < T for p, kk in zip(samples["p"], samples["k"], strict=True))
    np.testing.assert_allclose(samples["score"], [s[int(v)] for v in samples["k"]], rtol=0, atol=1e-9)
    assert view.marker.data["k"] == [k] and view.marker.data["score"][0] == pytest.approx(s[k], abs=1e-9)
    # The marker's label sits at the top of the axis, above the maximum's label, where no point is drawn,
    # beside the offset's line on the side towards the middle.
    y = view.figure.y_range
    top = view.marker.data["label_y"][0]
    assert top == y.end and top > max(score.max(), max(samples["score"], default=0.0))
    assert top - d_model / 2 >= 0.2 * (top - y.start)  # room for two labels above the maximum
    assert view.marker.data["align"] == (["left"] if k < 0 else ["right"])
    assert view.marker.data["x_offset"][0] * (1 if k < 0 else -1) > 0


def test_sample_starts_are_spread_over_the_table():
    assert distance.sample_starts(24).tolist() == [0, 8, 15, 23]
    assert distance.sample_starts(1).tolist() == [0]
    assert distance.sample_starts(2).tolist() == [0, 1]
    targets = distance.sample_targets(2048, 682)
    assert 682 in targets and targets.min() == 0 and targets.max() == 2047
    assert len(targets) <= MAX_TARGETS_PER_START


# --------------------------------------------------------------------------
# Core functions added for these views.
# --------------------------------------------------------------------------

def test_dot_scores_are_row_products():
    got = core.dot_scores([0, 5, 10, 15], [3, 8, 13, 18], 32)
    np.testing.assert_allclose(got, 12.272398, atol=5e-7)
    pe = np.array([row_by_hand(p, 16, 100.0) for p in range(12)])
    gram = pe @ pe.T
    p, q = np.meshgrid(np.arange(12), np.arange(12), indexing="ij")
    np.testing.assert_allclose(core.dot_scores(p, q, 16, 100), gram, rtol=0, atol=1e-12)
    assert core.dot_scores(3, np.arange(4), 8).shape == (4,)


@pytest.mark.parametrize("args", [
    ([0, 1], [1, 2, 3], 8, 10_000),
    (np.nan, 1, 8, 10_000),
    (0, "x", 8, 10_000),
    (0, 1, 7, 10_000),
    (0, 1, 8, 1.0),
])
def test_dot_scores_refuses_bad_arguments(args):
    with pytest.raises(ValueError):
        core.dot_scores(*args)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_view_alone_names_what_it_shows_and_what_a_trained_score_adds(lang, monkeypatch):
    """The curve is PE_p · PE_(p+k), not a trained model's score: its title says so, and on its own page (an
    iframe, with no lesson around it) one line says what a trained score has besides."""
    import panel as pn

    from app import pages

    title = text(lang, "distance_title")
    assert ("producto escalar" if lang == "es" else "dot product") in title and "k" in title.split()
    monkeypatch.setattr(pages, "session_state", lambda: (ExplorerState(lang=lang), []))
    alone = pages.view_page("distance")()
    notes = [pane for pane in alone.select(pn.pane.HTML) if pane.name == "distance_alone_note"]
    assert len(notes) == 1
    for term in ("e·e", "e·p", "p·e", "W_Q", "W_K"):
        assert term in notes[0].object
    # A view with nothing left unsaid has no such line; /explore's curve sits among the other views.
    assert not [pane for pane in pages.view_page("clocks")().select(pn.pane.HTML) if pane.name.endswith("_alone_note")]
    assert not [pane for pane in pages.explore_page().select(pn.pane.HTML) if pane.name.endswith("_alone_note")]
