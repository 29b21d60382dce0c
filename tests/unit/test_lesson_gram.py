"""Section «gram»: G = PE·PEᵀ and the distances it holds, against rows built here with math.sin/cos."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import BASES, ExplorerState
from components.lesson.gram import GramMatrix
from tests.helpers import model_property, press, row_by_hand, wait_for_source, wait_until


def dot_by_hand(p: float, q: float, d_model: int, base: float) -> float:
    return math.fsum(a * b for a, b in zip(row_by_hand(p, d_model, base), row_by_hand(q, d_model, base), strict=True))


def distance_by_hand(p: float, q: float, d_model: int, base: float) -> float:
    a, b = row_by_hand(p, d_model, base), row_by_hand(q, d_model, base)
    return math.fsum((x - y) ** 2 for x, y in zip(a, b, strict=True))


def test_lesson_distance():
    # 32 - 2 * 12.272398 (the lesson's S(3)): every row has squared length 16.
    assert float(core.encoding_distances(0, 3, 32)) == pytest.approx(7.455204, abs=1e-6)
    assert float(core.encoding_distances(11, 14, 32)) == pytest.approx(distance_by_hand(11, 14, 32, 1e4), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 40), d_model=st.integers(1, 40).map(lambda h: 2 * h), base=st.sampled_from(BASES))
def test_gram_is_constant_along_diagonals_and_matches_the_rows(T, d_model, base):
    values, stride = core.gram_sampled(T, d_model, base)
    assert stride == 1 and values.shape == (T, T)
    for offset in range(-(T - 1), T):
        diagonal = np.diagonal(values, offset)
        assert np.ptp(diagonal) <= 1e-9 * d_model
    p, q = T // 3, T - 1
    assert values[p, q] == pytest.approx(dot_by_hand(p, q, d_model, base), abs=1e-9 * d_model)
    assert np.allclose(np.diagonal(values), d_model / 2, atol=1e-12)
    assert values.max() <= d_model / 2 + 1e-9


@settings(max_examples=40, deadline=None)
@given(p=st.integers(0, 2047), q=st.integers(0, 2047), d_model=st.integers(1, 64).map(lambda h: 2 * h),
       base=st.sampled_from(BASES))
def test_distance_is_d_model_minus_twice_the_score(p, q, d_model, base):
    assert float(core.encoding_distances(p, q, d_model, base)) == pytest.approx(
        distance_by_hand(p, q, d_model, base), abs=1e-9 * d_model)


def test_the_description_calls_the_squared_distance_squared():
    # At d_model 32, k = 3: |PE_0 - PE_3|^2 = 32 - 2 S(3) = 32 - 2 · 12.272398 = 7.455 (its root is 2.73).
    sentence = GramMatrix(ExplorerState(lang="en", d_model=32, T=24, k=3)).describe()
    assert "the squared distance to pos + k = 3 is 7.455" in sentence
    assert "la distancia al cuadrado a pos + k = 3 es 7.455" in GramMatrix(
        ExplorerState(lang="es", d_model=32, T=24, k=3)).describe()


def test_long_tables_are_sampled_with_a_stated_stride():
    values, stride = core.gram_sampled(600, 16, most=256)
    assert stride == 3 and values.shape == (200, 200)
    assert values[4, 50] == pytest.approx(dot_by_hand(12, 150, 16, 1e4), abs=1e-10)
    with pytest.raises(ValueError, match="T must be an integer >= 1"):
        core.gram_sampled(0, 16)
    with pytest.raises(ValueError, match="p and q must broadcast"):
        core.encoding_distances([1, 2], [1, 2, 3], 16)


def test_section_image_rows_and_marks():
    state = ExplorerState(d_model=32, T=24, pos=0, k=3, lang="en")
    view = GramMatrix(state)
    image = view.image.data["image"][0]
    assert image.shape == (24, 24) and view.image.data["stride"] == [1]
    assert float(image[5, 17]) == pytest.approx(dot_by_hand(5, 17, 32, 1e4), abs=1e-5)  # float32
    curve, curve_data = view.curve, view.curve.data
    assert np.asarray(curve_data["offset"]).tolist() == list(range(-23, 24))
    np.testing.assert_allclose(curve_data["distance"], [distance_by_hand(0, x, 32, 1e4) for x in range(-23, 24)],
                               atol=1e-12)
    assert view.distance_marks.data["distance"] == [0.0, pytest.approx(7.455204, abs=1e-6)]

    state.pos = 7
    assert view.curve is curve and view.curve.data is curve_data  # a pos step does not resend the curve
    assert view.shift.args == {"pos": 7, "last": 23}
    assert view.marks.data["p"].tolist() == [7] and view.marks.data["q"].tolist() == [10]
    assert view.distance_marks.data["q"] == [7, 10]
    state.pos = 22  # pos + k = 25 is outside the table: no column, no second mark
    assert math.isnan(view.marks.data["q"][0]) and view.distance_marks.data["q"] == [22]
    assert view.live_values()["distance"] == "7.4552"

    state.T = 300
    assert view.image.data["stride"] == [2] and view.image.data["image"][0].shape == (150, 150)
    assert "One position in 2 shown (150 × 150 of 300 × 300)" in view.note.object


@pytest.mark.browser
def test_gram_page_follows_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/gram?lang=en&d_model=32&T=24&pos=0&k=3")
    data = wait_for_source(page, "gram", lambda d: d["image"] is not None and np.size(d["image"][0]) == 576)
    image = np.asarray(data["image"][0]).reshape(24, 24)
    expected = np.array([[dot_by_hand(p, q, 32, 1e4) for q in range(24)] for p in range(24)])
    np.testing.assert_allclose(image, expected, atol=1e-5)
    page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("gram");
        if (m) { window.__gramSends = 0; m.properties.data.change.connect(() => window.__gramSends++); }
      }
    }""")
    press(page, "position pos", "ArrowRight")
    marks = wait_for_source(page, "gram_distance_marks", lambda d: d["q"].tolist() == [1, 4])
    assert marks["distance"].tolist() == pytest.approx([0.0, distance_by_hand(1, 4, 32, 1e4)], abs=1e-9)
    wait_until(lambda: model_property(page, "gram_row_shift", "args") == {"pos": 1, "last": 23},
               message="the row did not shift")
    # The page places offset x at pos + x, and nowhere outside the table (the line stops at q = 0 and q = 23).
    placed = page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("gram_row_shift");
        if (m) return Array.from(m.v_compute([-2, -1, 0, 22, 23]), (v) => Number.isNaN(v) ? null : v);
      }
    }""")
    assert placed == [None, 0, 1, 23, None]
    press(page, "offset k", "ArrowRight")
    marks = wait_for_source(page, "gram_distance_marks", lambda d: d["q"].tolist() == [1, 5])
    assert marks["distance"][1] == pytest.approx(distance_by_hand(0, 4, 32, 1e4), abs=1e-9)
    assert page.evaluate("window.__gramSends") == 0
    assert console_errors == []


def test_at_k_0_the_two_marks_are_one_point_with_one_label():
    """pos and pos + k coincide at k = 0 (always at T = 1): two labels were printed one over the other."""
    section = GramMatrix(ExplorerState(lang="en", T=1))
    assert section.distance_marks.data["q"] == [0] and len(section.distance_marks.data["label"]) == 1
    section.state.T = 24
    section.state.k = 3
    assert section.distance_marks.data["q"] == [0, 3]
