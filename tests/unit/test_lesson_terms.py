"""Section «terms»: S(k) as a sum of one cosine per pair, checked against sums written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import BASES, ExplorerState
from components.lesson.terms import MAX_SHOWN, ScoreAsClocks
from tests.helpers import model_property, press, source_data, wait_for_source, wait_until


def term_by_hand(k: float, i: int, d_model: int, base: float) -> float:
    return math.cos(k / base ** (2 * i / d_model))


def score_by_hand(k: float, d_model: int, base: float) -> float:
    return math.fsum(term_by_hand(k, i, d_model, base) for i in range(d_model // 2))


def test_lesson_number_is_the_sum_of_the_terms():
    terms = core.score_terms(3, 32)
    assert terms.shape == (16,)
    assert [round(t, 12) for t in terms] == [round(term_by_hand(3, i, 32, 10_000), 12) for i in range(16)]
    assert float(terms.sum()) == pytest.approx(12.272398, abs=5e-7)  # the first lesson's printed S(3)


@settings(max_examples=40, deadline=None)
@given(d_model=st.integers(1, 256).map(lambda h: 2 * h), most=st.integers(1, 40), k=st.integers(-2047, 2047),
       base=st.sampled_from(BASES))
def test_bands_cover_every_pair_once_and_keep_the_sum(d_model, most, k, base):
    starts = core.pair_bands(d_model, most)
    pairs = d_model // 2
    assert starts[0] == 0 and np.all(np.diff(starts) > 0) and starts[-1] < pairs
    assert starts.size <= most and (starts.size == pairs or pairs > most)
    bands = core.band_terms(k, d_model, base, starts)
    assert bands.shape == (starts.size,)
    assert float(bands.sum()) == pytest.approx(score_by_hand(k, d_model, base), abs=1e-9 * d_model)
    edges = [*starts.tolist(), pairs]
    for b in range(starts.size):
        expected = math.fsum(term_by_hand(k, i, d_model, base) for i in range(edges[b], edges[b + 1]))
        assert bands[b] == pytest.approx(expected, abs=1e-9 * d_model)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="d_model must be an even integer"):
        core.pair_bands(33)
    with pytest.raises(ValueError, match="most must be an integer >= 1"):
        core.pair_bands(32, 0)
    with pytest.raises(ValueError, match="starts must be increasing integers from 0"):
        core.band_terms(3, 32, starts=[1, 4])
    with pytest.raises(ValueError, match="starts must be increasing"):
        core.band_terms(3, 32, starts=[0, 16])


@pytest.fixture
def lesson():
    state = ExplorerState(d_model=32, T=24, k=3, lang="en")
    return state, ScoreAsClocks(state)


def test_section_rows_are_the_terms(lesson):
    _, view = lesson
    data = view.ridges.data
    assert data["pair"].tolist() == list(range(16)) and data["size"].tolist() == [1] * 16
    assert "k" not in data  # each row's offsets are -(n-1)/2 … (n-1)/2 for its n terms, made in the browser
    for row in (0, 5, 15):
        expected = [term_by_hand(x, row, 32, 10_000) for x in range(-23, 24)]
        np.testing.assert_allclose(data["term"][row], expected, atol=1e-6)  # float32 for drawing
    bars = view.bars.data["term"]
    assert bars.tolist() == pytest.approx([term_by_hand(3, i, 32, 10_000) for i in range(16)], abs=1e-12)
    assert view.live_values()["S_k"] == "12.2724"


def test_k_and_pair_update_in_place(lesson):
    state, view = lesson
    ridges, bars, ridge_data = view.ridges, view.bars, view.ridges.data
    state.k = -7
    assert view.bars is bars and view.ridges.data is ridge_data  # the big source untouched
    assert bars.data["term"].tolist() == pytest.approx([term_by_hand(-7, i, 32, 10_000) for i in range(16)],
                                                       abs=1e-12)
    assert view.k_lines[0].location == -7 and view.marker.data["score"] == [pytest.approx(score_by_hand(-7, 32, 1e4))]
    state.pair = 9
    assert view.selected_ridge.indices == [9] and view.selected_bar.indices == [9]
    assert ridges is view.ridges


def test_a_click_on_a_row_selects_its_pair(lesson):
    state, view = lesson
    view.bars.selected.indices = [6]
    assert state.pair == 6 and view.bars.selected.indices == []
    state.d_model = 256  # 128 pairs: bands of 4
    view.ridges.selected.indices = [5]
    assert state.pair == 20 and view.selected_bar.indices == [5]


def test_wide_and_long_tables_are_grouped_and_windowed():
    state = ExplorerState(d_model=1024, T=2048, k=700, lang="en")
    view = ScoreAsClocks(state)
    data = view.ridges.data
    assert len(data["row"]) == 32 and set(data["size"].tolist()) == {16}
    assert len(data["term"][0]) == 2 * MAX_SHOWN + 1  # k = -511 … 511, each band the sum of its 16 pairs
    for column, k in ((0, -MAX_SHOWN), (MAX_SHOWN, 0), (2 * MAX_SHOWN, MAX_SHOWN)):
        assert data["term"][31][column] == pytest.approx(
            math.fsum(term_by_hand(k, i, 1024, 10_000) for i in range(496, 512)), abs=1e-4)
    assert float(view.bars.data["term"].sum()) == pytest.approx(score_by_hand(700, 1024, 10_000), abs=1e-9)
    assert "band of up to 16" in view.note.object and "−511 … 511" in view.note.object
    # 33 pairs: 32 rows is the limit, ceil(33/32) = 2 pairs per band, so 17 bands, the last of one pair.
    state.d_model = 66
    assert "33 pairs do not fit in 32 rows: each of the 17 rows is a band of up to 2 consecutive pairs" in (
        view.note.object)
    state.d_model = 64
    assert "One row per pair (d_model/2 = 32)" in view.note.object


def test_the_figures_say_when_a_row_is_a_band_s_sum():
    # A band's row and bar sum several cosines and can leave [-1, 1]: "cos(ωᵢ·k)" on them would be wrong.
    state = ExplorerState(d_model=64, T=24, k=3, lang="es")
    view = ScoreAsClocks(state)
    one = (view.ridge_figure.title.text, view.bars_figure.xaxis[0].axis_label, view.bars_hover.tooltips[0][0])
    assert one[0].startswith("Un término por pareja") and one[1] == one[2] == "cos(ωᵢ·k)"
    state.d_model = 66  # 33 pairs: bands of 2
    assert view.ridge_figure.title.text.startswith("Una fila por banda de parejas")
    assert view.bars_figure.xaxis[0].axis_label == view.bars_hover.tooltips[0][0] == (
        "Σ cos(ωᵢ·k) sobre las parejas de la fila")
    state.d_model = 64
    assert (view.ridge_figure.title.text, view.bars_figure.xaxis[0].axis_label,
            view.bars_hover.tooltips[0][0]) == one


@pytest.mark.browser
def test_terms_page_follows_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/terms?lang=en&d_model=32&T=24&k=3&pair=0")
    ridges = wait_for_source(page, "score_terms", lambda d: len(d["row"]) == 16)
    np.testing.assert_allclose(ridges["term"][3], [term_by_hand(x, 3, 32, 10_000) for x in range(-23, 24)],
                               atol=1e-6)
    bars = wait_for_source(page, "terms_bars", lambda d: len(d["term"]) == 16)
    assert float(np.sum(bars["term"])) == pytest.approx(12.272398, abs=5e-7)
    page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("score_terms");
        if (m) { window.__ridgeSends = 0; m.properties.data.change.connect(() => window.__ridgeSends++); }
      }
    }""")
    press(page, "offset k", "ArrowRight")
    bars = wait_for_source(page, "terms_bars", lambda d: abs(d["term"][0] - term_by_hand(4, 0, 32, 1e4)) < 1e-9)
    np.testing.assert_allclose(bars["term"], [term_by_hand(4, i, 32, 10_000) for i in range(16)], atol=1e-12)
    assert source_data(page, "terms_marker")["k"].tolist() == [4]
    press(page, "pair i", "ArrowRight")
    wait_until(lambda: model_property(page, "terms_selected_bar", "indices") == [1], message="pair 1 not selected")
    assert page.evaluate("window.__ridgeSends") == 0
    # What a TapTool does on a click: select the bar of row 6; the server makes it the state's pair.
    page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("terms_bars");
        if (m) m.selected.indices = [6];
      }
    }""")
    wait_until(lambda: model_property(page, "terms_selected_ridge", "indices") == [6], message="a tap did not select")
    assert console_errors == []


def test_one_position_says_why_the_rows_have_no_curve():
    """At T = 1 each row's cos(ω_i·k) is one point (k = 0): the figure drew nothing and said nothing."""
    section = ScoreAsClocks(ExplorerState(lang="en", d_model=2, T=1))
    assert "single point, cos 0 = 1" in section.note.object
    section.state.T = 2
    assert "single point" not in section.note.object


#: What the page draws: each ridge's x (the offsets, made in the browser from the row's terms), and the left and
#: right edges of the curve's and the ridges' frames (px in the page).
_DRAWN_JS = """() => {
  const out = {xs: null, frames: {}};
  const seen = new Set();
  const visit = (view) => {
    if (!view || seen.has(view)) return;
    seen.add(view);
    for (const [model, renderer] of view.renderer_views ?? []) {
      if (model.name === "terms_ridges") {
        const xs = renderer.glyph.xs;
        out.xs = Array.from({length: xs.length}, (_, i) => Array.from(xs.get(i)));
      }
    }
    if (["terms_score_plot", "terms_plot"].includes(view.model?.name) && view.frame) {
      const box = view.el.getBoundingClientRect(), frame = view.frame.bbox;
      out.frames[view.model.name] = [box.left + frame.left, box.left + frame.right];
    }
    for (const child of view.child_views ?? []) visit(child);
  };
  for (const view of Object.values(Bokeh.index)) visit(view);
  return out;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("present", [False, True])
def test_the_ridges_are_drawn_at_their_offsets_under_the_curve(page, app_url, present, console_errors):
    """Each ridge is drawn over k = -(T-1) … T-1 (made in the page from its terms), and the curve's k axis lies
    over the ridges' one: the two dashed k lines are one line. In presentation at 1280 × 720 the bars beside the
    ridges are wider, and the room beside the curve followed them only when the page was built (71 px apart)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/terms?lang=en&d_model=32&T=24&k=3" + ("&present=1" if present else ""))
    wait_for_source(page, "score_terms", lambda d: len(d["row"]) == 16)

    def drawn_at(last: int) -> bool:
        xs = page.evaluate(_DRAWN_JS)["xs"]
        return xs is not None and len(xs) == 16 and all(row == list(range(-last, last + 1)) for row in xs)

    wait_until(lambda: drawn_at(23), timeout=15, message="the ridges are not drawn over k = -23 … 23")
    if present:  # fitted to the window: less than 1.5 × its reading width
        wait_until(lambda: model_property(page, "terms_bars_plot", "width") < 495, timeout=15,
                   message="the presented figures were never fitted to the window")

    def aligned() -> bool:
        frames = page.evaluate(_DRAWN_JS)["frames"]
        return len(frames) == 2 and frames["terms_score_plot"] == pytest.approx(frames["terms_plot"], abs=1)

    wait_until(aligned, timeout=15, message=f"the k axes are not one over the other: {page.evaluate(_DRAWN_JS)}")
    press(page, "T (positions)", "ArrowRight")
    wait_until(lambda: drawn_at(24), timeout=15, message="a T step did not redraw the ridges over k = -24 … 24")
    assert console_errors == []
