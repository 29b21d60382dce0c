"""The ladder's data functions (components/ladder.py, module level), without a view or a browser.

The heatmap's colour codes are computed from float32 rows. The expected codes
are derived here from float64 values (a table written with math.sin/math.cos,
or NumPy's float64 sin/cos on angles built here) and the colour mapper's
binning restated: floor((v + 1) / 2 * 256), the top value in the last bin. A
code may differ from that by one, and only where the float64 value lies within
1e-6 of a bin edge (float32 is within 3e-7 of it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.state import BASES
from components.ladder import HEATMAP_LEVELS, heatmap_data, heatmap_stride, heatmap_values, ladder_data

EDGE = 1e-6


def bins(values: np.ndarray) -> np.ndarray:
    """The bin a LinearColorMapper(low=-1, high=1) with 256 colours puts each float64 value in."""
    return np.clip(np.floor((values + 1.0) / 2.0 * HEATMAP_LEVELS), 0, HEATMAP_LEVELS - 1).astype(int)


def table_by_hand(positions, d_model: int, base: float) -> np.ndarray:
    return np.array([[f(p / base ** (2 * (c // 2) / d_model)) for c, f in
                      zip(range(d_model), [math.sin, math.cos] * (d_model // 2), strict=True)] for p in positions])


def table_float64(positions: np.ndarray, d_model: int, base: float) -> np.ndarray:
    omega = base ** (-(np.arange(d_model) // 2 * 2) / d_model)  # one speed per column
    angles = np.multiply.outer(positions, omega)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def assert_codes_match(codes: np.ndarray, values: np.ndarray) -> int:
    """Each code is the float64 value's bin, or, for a value within EDGE of an edge, the bin on the
    edge's other side (``bins(v - EDGE) .. bins(v + EDGE)``); returns how many differ from the bin."""
    codes = codes.astype(int)
    assert np.all(bins(values - EDGE) <= codes) and np.all(codes <= bins(values + EDGE))
    return int(np.count_nonzero(codes != bins(values)))


@pytest.mark.parametrize(("T", "d_model", "base"), [(24, 32, 10_000), (300, 64, 10), (1, 2, 2), (77, 18, 1_000_000)])
def test_heatmap_codes_against_a_table_by_hand(T, d_model, base):
    data = heatmap_data(T, d_model, base)
    codes = data["image"][0]
    assert codes.dtype == np.uint8 and codes.shape == (T, d_model) and data["stride"] == [1]
    assert_codes_match(codes, table_by_hand(range(T), d_model, base))
    # Decoded (what the hover prints), every value is within half a bin (+ the float32 slack) of the truth.
    assert np.all(np.abs(heatmap_values(codes) - table_by_hand(range(T), d_model, base)) <= 1.0 / 256 + EDGE)


def test_heatmap_codes_at_the_largest_size():
    data = heatmap_data(2048, 1024, 10_000)
    codes, stride = data["image"][0], data["stride"][0]
    assert stride == 2 and codes.shape == (1024, 1024) and data["dh"] == [2048]
    values = table_float64(np.arange(0, 2048, 2, dtype=np.float64), 1024, 10_000)
    differing = assert_codes_match(codes, values)
    assert differing <= 1024 * 1024 // 1000  # rare: a value within 3e-7 of one of 255 edges
    assert list(codes[0, :4]) == [128, 255, 128, 255]  # row 0 is (0, 1, 0, 1, ...)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 2048), d_model=st.integers(1, 512).map(lambda n: 2 * n), base=st.sampled_from(BASES))
def test_heatmap_codes_for_random_sizes(T, d_model, base):
    data = heatmap_data(T, d_model, base)
    stride = heatmap_stride(T)
    positions = np.arange(0, T, stride, dtype=np.float64)
    codes = data["image"][0]
    assert codes.shape == (positions.size, d_model) and data["dw"] == [d_model]
    assert_codes_match(codes, table_float64(positions, d_model, base))


def test_an_edge_value_may_move_by_one_bin_and_no_more():
    # The check itself: a code one bin off is accepted only next to an edge.
    edge = -1.0 + 100 / 128  # the edge between bins 99 and 100
    values = np.array([edge + 1e-7, edge - 1e-7, edge + 1e-3])
    assert assert_codes_match(np.array([99, 100, 100], dtype=np.uint8), values) == 2
    with pytest.raises(AssertionError):
        assert_codes_match(np.array([100, 99, 99], dtype=np.uint8), values)
    with pytest.raises(AssertionError):
        assert_codes_match(np.array([101, 99, 100], dtype=np.uint8), values)


def test_ladder_data_bars_over_their_pairs():
    data = ladder_data(32, 10_000)
    assert data["pair"].tolist() == list(range(16))
    assert data["x"].tolist() == [2 * i + 1 for i in range(16)]
    assert data["wavelength"][:3].round(1).tolist() == [6.3, 11.2, 19.9]


def test_the_count_under_the_ladder_follows_a_size_step_in_one_text_change():
    # λ_i = 2π · base^(2i/d_model). d_model 32, base 10 000: 2π, 2π·10^0.25 ≈ 11.2, 2π·10^0.5 ≈ 19.9, then
    # 2π·10^0.75 ≈ 35.3 > 24: three of sixteen pairs have λ ≤ T = 24. d_model 16: 2π, 2π·10^0.5
    # ≈ 19.9, then 2π·10 ≈ 62.8: two of eight.
    from bokeh.document import Document

    from app.model.state import ExplorerState
    from components.ladder import WavelengthLadder

    state = ExplorerState(d_model=32, T=24, base=10_000, lang="en")
    ladder = WavelengthLadder(state)
    root = ladder.__panel__().get_root(Document())
    [model] = root.select({"name": "ladder_count"})
    assert "Pairs with a wavelength of at most T = 24 (the dashed line): 3 of 16." in model.text
    sent: list[str] = []
    model.on_change("text", lambda _attr, _old, new: sent.append(new))
    state.d_model = 16
    assert len(sent) == 1 and "Pairs with a wavelength of at most T = 24 (the dashed line): 2 of 8." in sent[0]
    assert ladder.count.object == model.text


def test_the_lessons_ladder_passage_gives_way_to_one_rung_at_d_model_2():
    """With one pair there is no later pair and no ladder: "slower by base^(2/d) = 10000.00 … up to 6.3" went."""
    from app.model.state import ExplorerState
    from components.lesson.wavelengths import LadderSection

    state = ExplorerState(d_model=2, lang="en")
    section = LadderSection(state)
    section.__panel__()
    assert section.passage("steps").hidden and "single rung, 2π ≈ 6.28" in section.steps_note.object
    assert f"{2 * math.pi:.2f}" == "6.28"
    state.d_model = 4
    assert not section.passage("steps").hidden and section.steps_note.object == ""
