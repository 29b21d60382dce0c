"""The published bugs of the encoding (app.core's ``mistake`` variants) and the «mistakes» section, without a browser.

Every expected table is built here with math.sin/math.cos from the bug's own formula, written out
column by column, not from app.core; the "what breaks" claims of the prose are checked numerically.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from components.distance import samples_data
from components.ladder import WavelengthLadder, heatmap_codes, heatmap_data, ladder_data
from components.lesson.mistakes import CommonMistakes

PROPERTY = settings(max_examples=40, deadline=None)
BUGS = ("dim_index", "cos_exponent", "split_layout", "sin_only")


def value_by_hand(mistake: str, pos: float, j: int, d: int, base: float) -> float:
    """Column j of row pos, from the bug's formula as the prose states it."""
    i, half = j // 2, d // 2
    if mistake == "none":
        return (math.sin if j % 2 == 0 else math.cos)(pos / base ** (2 * i / d))
    if mistake == "dim_index":
        return (math.sin if j % 2 == 0 else math.cos)(pos / base ** (2 * j / d))
    if mistake == "cos_exponent":
        exponent = 2 * i / d if j % 2 == 0 else (2 * i + 1) / d
        return (math.sin if j % 2 == 0 else math.cos)(pos / base ** exponent)
    if mistake == "split_layout":
        return math.sin(pos / base ** (2 * j / d)) if j < half else math.cos(pos / base ** (2 * (j - half) / d))
    assert mistake == "sin_only"
    return math.sin(pos / base ** (2 * i / d))


def table_by_hand(mistake: str, T: int, d: int, base: float = 10_000) -> np.ndarray:
    return np.array([[value_by_hand(mistake, pos, j, d, base) for j in range(d)] for pos in range(T)])


# --------------------------------------------------------------------------
# The core
# --------------------------------------------------------------------------

@pytest.mark.parametrize("mistake", core.MISTAKES)
@pytest.mark.parametrize(("T", "d", "base"), [(24, 32, 10_000), (7, 6, 100), (3, 2, 2)])
def test_tables_match_the_formulas_written_out(mistake, T, d, base):
    expected = table_by_hand(mistake, T, d, base)
    np.testing.assert_allclose(core.encoding(T, d, base, mistake), expected, rtol=0, atol=1e-12)
    positions = np.array([0.5, 3.0, 17.25])
    by_hand = np.array([[value_by_hand(mistake, p, j, d, base) for j in range(d)] for p in positions])
    np.testing.assert_allclose(core.encoding_rows(positions, d, base, mistake=mistake), by_hand, rtol=0, atol=1e-12)
    # float32 for drawing: within the documented ~3e-7
    np.testing.assert_allclose(core.encoding_rows(np.arange(T), d, base, np.float32, mistake), expected,
                               rtol=0, atol=5e-7)


def test_the_default_is_the_correct_encoding_everywhere():
    np.testing.assert_array_equal(core.encoding(24, 32), core.encoding(24, 32, mistake="none"))
    np.testing.assert_array_equal(core.row_norms(24, 32), core.row_norms(24, 32, 10_000, "none"))
    np.testing.assert_allclose(core.encoding(24, 32), table_by_hand("none", 24, 32), rtol=0, atol=1e-12)
    assert ExplorerState().mistake == "none"


def test_column_wavelengths_and_pairs():
    lam = core.column_wavelengths(32, 10_000, "dim_index")
    # column j: 2 pi base^(2j/d); from j = d/2 on, at least 2 pi base (the prose's claim)
    np.testing.assert_allclose(lam, [2 * math.pi * 10_000 ** (2 * j / 32) for j in range(32)], rtol=1e-12)
    assert lam[16] == pytest.approx(2 * math.pi * 10_000) and np.all(lam[16:] >= 2 * math.pi * 10_000 * (1 - 1e-12))
    assert np.all(lam[16:] > core.wavelengths(32).max())
    np.testing.assert_allclose(core.column_wavelengths(32), np.repeat(core.wavelengths(32), 2), rtol=1e-15)
    np.testing.assert_allclose(core.column_wavelengths(8, 100, "cos_exponent"),
                               [2 * math.pi * 100 ** (j / 8) for j in range(8)], rtol=1e-12)
    first, second = core.mistake_pair_columns(8, "split_layout")
    assert first.tolist() == [0, 1, 2, 3] and second.tolist() == [4, 5, 6, 7]
    first, second = core.mistake_pair_columns(8, "sin_only")
    assert first.tolist() == [0, 2, 4, 6] and second.tolist() == [1, 3, 5, 7]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: core.encoding(4, 8, mistake="dim"), "mistake must be one of 'none', 'dim_index'"),
    (lambda: core.encoding_rows([1.0], 8, mistake=None), "mistake must be one of"),
    (lambda: core.mistake_columns(8, mistake="SIN_ONLY"), "got 'SIN_ONLY'"),
    (lambda: core.mistake_columns(7, mistake="sin_only"), "d_model must be an even integer"),
    (lambda: core.mistake_pair_columns(8, "x"), "mistake must be one of"),
    (lambda: core.fitted_rotation_residual_of(np.ones((3, 4)), 1.5), "k must be an integer"),
    (lambda: core.fitted_rotation_residual_of(np.ones((3, 3)), 1), "d_model"),
    (lambda: core.fitted_rotation_residual_of(np.ones((3, 4)), 1, "bad"), "mistake must be one of"),
    (lambda: core.dot_scores(0, 1, 8, mistake="bad"), "mistake must be one of"),
    (lambda: core.row_norms(4, 8, mistake="bad"), "mistake must be one of"),
])
def test_bad_arguments_name_themselves(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call()


def norms_by_hand(mistake: str, T: int = 24, d: int = 32) -> np.ndarray:
    return np.array([math.sqrt(sum(v * v for v in row)) for row in table_by_hand(mistake, T, d)])


def test_what_breaks_the_row_norms():
    assert np.ptp(norms_by_hand("none")) < 1e-13
    np.testing.assert_allclose(core.row_norms(24, 32, mistake="split_layout"), 4.0, rtol=0, atol=1e-13)
    for mistake in ("dim_index", "cos_exponent"):
        norms = core.row_norms(24, 32, mistake=mistake)
        np.testing.assert_allclose(norms, norms_by_hand(mistake), rtol=0, atol=1e-12)
        assert norms[0] == pytest.approx(4.0, abs=1e-15)  # every angle is 0: (0, 1, 0, 1, ...)
        assert np.max(np.abs(norms - 4.0)) > 0.1  # sin^2 a + cos^2 b != 1 when a != b
    # sines only: row 0 is the zero vector
    norms = core.row_norms(24, 32, mistake="sin_only")
    assert norms[0] == 0.0 and np.max(norms) < 4.0
    np.testing.assert_allclose(norms, norms_by_hand("sin_only"), rtol=0, atol=1e-12)


def rotation_error_by_hand(pe: np.ndarray, k: int, first: list[int], second: list[int]) -> float:
    """Per pair, try angles on a fine grid and refine: the least-squares angle, found without the complex formula."""
    worst = 0.0
    rows = range(max(0, -k), pe.shape[0] - max(0, k))
    for a, b in zip(first, second, strict=True):
        src = [(pe[p, a], pe[p, b]) for p in rows]
        dst = [(pe[p + k, a], pe[p + k, b]) for p in rows]

        def cost(t, src=src, dst=dst):
            c, s = math.cos(t), math.sin(t)
            return sum((c * x + s * y - u) ** 2 + (-s * x + c * y - v) ** 2
                       for (x, y), (u, v) in zip(src, dst, strict=True))

        grid = np.linspace(-math.pi, math.pi, 721)
        t = grid[int(np.argmin([cost(g) for g in grid]))]
        step = grid[1] - grid[0]
        for _ in range(60):  # halve the step around the best angle so far
            left, right = t - step, t + step
            t = min((left, t, right), key=cost)
            step /= 2
        c, s = math.cos(t), math.sin(t)
        for (x, y), (u, v) in zip(src, dst, strict=True):
            worst = max(worst, abs(c * x + s * y - u), abs(-s * x + c * y - v))
    return worst


@pytest.mark.parametrize("mistake", core.MISTAKES)
def test_fitted_rotation_residual_against_a_search_by_hand(mistake):
    pe = table_by_hand(mistake, 12, 8, 100)
    first, second = core.mistake_pair_columns(8, mistake)
    expected = rotation_error_by_hand(pe, 3, first.tolist(), second.tolist())
    got = core.fitted_rotation_residual_of(pe, 3, mistake)
    assert got == pytest.approx(expected, abs=1e-6)
    if mistake in ("none", "split_layout"):
        assert got < 1e-13
    else:
        assert got > 0.1


def test_what_breaks_the_rotation_at_the_lesson_size():
    for mistake in core.MISTAKES:
        pe = core.encoding(24, 32, mistake=mistake)
        residual = core.fitted_rotation_residual_of(pe, 3, mistake)
        assert (residual < 1e-13) == (mistake in ("none", "split_layout")), mistake
        assert mistake in ("none", "split_layout") or residual > 1.0
    # the fitted rotation of the correct table is M_k: same residual order as the lesson's check
    assert core.fitted_rotation_residual_of(core.encoding(24, 32), 3) < 1e-14
    # the lesson's interleaved M_k, as it is, does not fit the split layout
    assert core.rotation_residual_of(core.encoding(24, 32, mistake="split_layout"), 3) > 1.0
    assert core.fitted_rotation_residual_of(core.encoding(5, 8), 5) == 0.0  # |k| >= T: no pair of rows


def test_what_breaks_the_scores():
    p = np.repeat([0, 8, 15, 23], 24)
    q = np.tile(np.arange(24), 4)
    for mistake in core.MISTAKES:
        table = table_by_hand(mistake, 24, 32)
        by_hand = np.array([table[a] @ table[b] for a, b in zip(p, q, strict=True)])
        scores = core.dot_scores(p, q, 32, mistake=mistake)
        np.testing.assert_allclose(scores, by_hand, rtol=0, atol=1e-12)
        off_curve = np.max(np.abs(scores - core.relative_scores(q - p, 32)))
        assert (off_curve < 1e-12) == (mistake in ("none", "split_layout")), mistake
    # sines only at k = 0, p = 0: the zero vector scores 0 against itself
    assert core.dot_scores(0, 0, 32, mistake="sin_only") == 0.0


@PROPERTY
@given(T=st.integers(1, 60), half=st.integers(1, 40), base=st.sampled_from([2, 10, 100, 10_000, 1_000_000]))
def test_split_layout_is_a_permutation_of_the_columns(T, half, base):
    d = 2 * half
    right, split = core.encoding(T, d, base), core.encoding(T, d, base, "split_layout")
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    np.testing.assert_array_equal(split, right[:, order])
    np.testing.assert_allclose(core.row_norms_of(split), core.row_norms_of(right), rtol=0, atol=1e-12)
    np.testing.assert_allclose(split @ split.T, core.gram(T, d, base), rtol=0, atol=1e-12)
    if T > 1:
        k = T // 2
        assert core.fitted_rotation_residual_of(split, k, "split_layout") < 1e-12 * max(1, T)


@PROPERTY
@given(T=st.integers(1, 60), half=st.integers(1, 40), base=st.sampled_from([2, 10, 100, 10_000]),
       mistake=st.sampled_from(core.MISTAKES))
def test_norms_are_bounded_and_match_their_rows(T, half, base, mistake):
    d = 2 * half
    pe = core.encoding(T, d, base, mistake)
    assert np.all(np.abs(pe) <= 1.0)  # every bug keeps the values in [-1, 1]
    norms = core.row_norms(T, d, base, mistake)
    np.testing.assert_allclose(norms, np.sqrt(np.sum(pe * pe, axis=1)), rtol=1e-12, atol=1e-15)
    assert np.all(norms <= math.sqrt(d) + 1e-12)
    # the first rows do not depend on T (T is nowhere in the formula)
    np.testing.assert_array_equal(pe, core.encoding(T + 3, d, base, mistake)[:T])
    if mistake in ("none", "split_layout"):
        np.testing.assert_allclose(norms, math.sqrt(half), rtol=1e-12)


# --------------------------------------------------------------------------
# The views and the section
# --------------------------------------------------------------------------

def test_heatmap_ladder_and_samples_follow_the_mistake():
    codes = heatmap_data(24, 32, 10_000, "dim_index")["image"][0]
    np.testing.assert_array_equal(codes, heatmap_codes(table_by_hand("dim_index", 24, 32)))
    bars = ladder_data(32, 10_000, "cos_exponent")
    assert bars["x"].tolist() == [j + 0.5 for j in range(32)] and bars["pair"].tolist() == [j // 2 for j in range(32)]
    np.testing.assert_allclose(bars["wavelength"], [2 * math.pi * 10_000 ** (j / 32) for j in range(32)], rtol=1e-12)
    assert ladder_data(8, 100, "split_layout")["pair"].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    samples = samples_data(24, 32, 10_000, "en", "sin_only")
    table = table_by_hand("sin_only", 24, 32)
    np.testing.assert_allclose(samples["score"], [table[p] @ table[p + k] for p, k in
                                                  zip(samples["p"], samples["k"], strict=True)], rtol=0, atol=1e-12)


def test_the_ladder_and_heatmap_name_what_their_columns_hold():
    # Under a bug the ladder draws one bar per column, and in two of the bugs column 2i is not a sine
    # nor 2i+1 a cosine: the title, the axes and the heatmap's hover say so, and say it again when undone.
    state = ExplorerState(lang="en", d_model=8, T=24)
    view = WavelengthLadder(state)
    title, ladder_x, heatmap_x = view.ladder_figure.title, view.ladder_figure.xaxis[0], view.heatmap_figure.xaxis[0]
    expected = {
        "none": ("Wavelength of every pair (log scale)", "pair i", "coordinate (column 2i = sine, 2i+1 = cosine)"),
        "dim_index": ("Wavelength of every column (log scale)", "column j",
                      "coordinate (column 2i = sine, 2i+1 = cosine)"),
        "split_layout": ("Wavelength of every column (log scale)", "column j",
                         "coordinate (every sine first, then every cosine)"),
        "sin_only": ("Wavelength of every column (log scale)", "column j", "coordinate (every column a sine)"),
    }
    for mistake in ("dim_index", "split_layout", "sin_only", "none"):
        state.mistake = mistake
        assert (title.text, ladder_x.axis_label, heatmap_x.axis_label) == expected[mistake], mistake
        # The ticks: pair i at column 2i + 1 (the middle of its two), column j at j + 0.5.
        ticks = ladder_x.ticker.ticks
        assert ticks == ([1.0, 3.0, 5.0, 7.0] if mistake == "none" else [j + 0.5 for j in range(8)])
        assert ladder_x.formatter.args == {"columns": mistake != "none"}
    # Each column's kind, from the bugs' own formulas (core.mistake_columns is checked against them above).
    for mistake, layout, half in (("none", "pairs", 0), ("cos_exponent", "pairs", 0), ("split_layout", "split", 4),
                                  ("sin_only", "sines", 0)):
        state.mistake = mistake
        assert (view._column_hover.args["layout"], view._column_hover.args["half"]) == (layout, half)


def test_section_norms_and_checks_follow_the_switch():
    state = ExplorerState(d_model=32, T=24, k=3, lang="en")
    section = CommonMistakes(state)
    source = section.norms
    assert source.name == "mistake_norms"
    np.testing.assert_allclose(source.data["norm"], 4.0, rtol=0, atol=1e-13)
    assert source.data["pos"].tolist() == list(range(24))
    assert section.live_values()["norm_low"] == "4.0000"

    state.mistake = "dim_index"
    assert section.norms is source
    np.testing.assert_allclose(source.data["norm"], norms_by_hand("dim_index"), rtol=0, atol=1e-12)
    values = section.live_values()
    assert values["mistake"] == "i read as column j"
    assert values["norm_low"] == f"{norms_by_hand('dim_index').min():.4f}" == "3.8484"
    assert values["norm_high"] == "4.2455"
    assert "3.8484 to 4.2455" in section.checks.norm.object
    assert "p = 0 … 20" in section.checks.rotation.object and 'class="ck rm"' in section.checks.rotation.object

    state.mistake = "split_layout"
    np.testing.assert_allclose(source.data["norm"], 4.0, rtol=0, atol=1e-13)
    error = float(section.checks.rotation.object.split("up to ")[1].rstrip(".</p>"))
    assert error < 1e-13 and 'class="ck"' in section.checks.rotation.object
    assert section.ladder.pair_outline.data["left"] == [0, 16]  # pair 0 is columns 0 and 16

    state.param.update(mistake="sin_only", T=30)
    assert source.data["norm"][0] == 0.0 and len(source.data["norm"]) == 30
    state.mistake = "none"
    assert "Every row has length √(d_model/2) = 4:" in section.checks.norm.object
    assert section.ladder.ladder.data["x"].tolist() == [2.0 * i + 1 for i in range(16)]


def test_spanish_labels():
    state = ExplorerState(lang="es", mistake="sin_only")
    section = CommonMistakes(state)
    assert section.live_values()["mistake"] == "solo senos"
    assert "Con esta variante las filas miden de 0.0000" in section.checks.norm.object
