"""app.core against the first lesson's printed numbers, an independent scalar
implementation, and the algebraic identities the lesson proves (as hypothesis
properties over sizes and bases far from the lesson's)."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core

# The lesson's NumPy cells: d_model = 32, T = 24, base = 10000.
D, T, BASE = 32, 24, 10_000.0

# Two shared cores: keep the number of examples modest.
PROPERTY = settings(max_examples=60, deadline=None)

d_models = st.integers(1, 128).map(lambda half: 2 * half)
lengths = st.integers(1, 200)
bases = st.floats(1.0001, 1e6, allow_nan=False, allow_infinity=False)


def scalar_encoding(T: int, d_model: int, base: float) -> list[list[float]]:
    """PE written the slow way, straight from the paper's formula, one entry at a time."""
    table = []
    for pos in range(T):
        row = []
        for i in range(d_model // 2):
            angle = pos / base ** (2 * i / d_model)
            row += [math.sin(angle), math.cos(angle)]
        table.append(row)
    return table


def scalar_score(k: float, d_model: int, base: float) -> float:
    """S(k) = sum_i cos(k / base^(2i/d)), by a plain loop."""
    return math.fsum(math.cos(k / base ** (2 * i / d_model)) for i in range(d_model // 2))


# --------------------------------------------------------------------------
# The numbers the lesson prints.
# --------------------------------------------------------------------------

class TestLessonNumbers:
    def test_row_zero_is_zero_one_repeated(self):
        pe = core.encoding(T, D)
        assert pe.shape == (T, D)
        assert pe.dtype == np.float64
        np.testing.assert_array_equal(pe[0], np.tile([0.0, 1.0], D // 2))

    def test_first_wavelengths_and_last(self):
        lam = core.wavelengths(D)
        assert lam.shape == (D // 2,)
        assert lam[:3].round(1).tolist() == [6.3, 11.2, 19.9]
        assert round(float(lam[15]), 1) == 35_332.9

    def test_each_wavelength_is_178_times_the_last(self):
        ratios = core.wavelengths(D)[1:] / core.wavelengths(D)[:-1]
        assert np.all(ratios.round(2) == 1.78)

    def test_pair_zero_comes_back_every_two_pi(self):
        assert core.frequencies(D)[0] == 1.0
        assert core.wavelengths(D)[0] == pytest.approx(2 * math.pi, rel=1e-15)
        assert round(float(core.wavelengths(D)[0]), 2) == 6.28
        # "comes back": the pair-0 columns of a row 2*pi positions later are the same.
        again = core.encoding_rows(np.array([1.5, 1.5 + 2 * math.pi]), D)
        np.testing.assert_allclose(again[0, :2], again[1, :2], atol=1e-12)

    def test_last_pair_just_below_two_pi_base(self):
        for d_model in (32, 512):
            last = core.wavelengths(d_model, BASE)[-1]
            assert last < 2 * math.pi * BASE
            # One rung below the top of the ladder: times the ladder's ratio it is exactly 2*pi*base.
            assert last * BASE ** (2 / d_model) == pytest.approx(2 * math.pi * BASE, rel=1e-12)
        # For the paper's width it is the lesson's "some 63 000 positions".
        assert 60_000 < core.wavelengths(512, BASE)[-1] < 2 * math.pi * BASE

    def test_every_row_has_norm_four(self):
        norms = core.row_norms(T, D)
        assert norms.shape == (T,)
        np.testing.assert_allclose(norms, 4.0, rtol=1e-13)
        assert math.sqrt(D / 2) == 4.0

    @pytest.mark.parametrize("k", [3, 1, -3, 7])
    def test_rotation_moves_all_24_positions(self, k):
        pe = core.encoding(T, D)
        # The targets p + k run past the table for some p: compute them directly.
        targets = core.encoding_rows(np.arange(T) + k, D)
        moved = pe @ core.rotation(k, D).T
        assert np.max(np.abs(moved - targets)) < 1e-13
        assert np.max(np.abs(core.rotate(pe, k) - targets)) < 1e-13

    def test_rotation_residual_is_of_order_1e_15(self):
        residual = core.rotation_residual(3, T, D)
        assert isinstance(residual, float)
        assert 0.0 <= residual < 1e-13
        assert core.rotation_residual(T, T, D) == 0.0  # no pair of rows is T apart
        assert core.rotation_residual(-(T - 1), T, D) < 1e-13

    def test_dot_product_three_apart_is_the_same_for_four_starts(self):
        pe = core.encoding(T, D)
        dots = [float(pe[p] @ pe[p + 3]) for p in (0, 5, 12, 20)]
        assert [round(x, 6) for x in dots] == [12.272398] * 4
        # ... and that is the sum of cosines, computed independently.
        assert round(scalar_score(3, D, BASE), 6) == 12.272398
        assert round(float(core.relative_scores(3, D)), 6) == 12.272398

    def test_score_table(self):
        s = core.relative_scores(np.arange(T), D)
        assert s.shape == (T,)
        assert s[0] == 16.0
        assert round(float(s[1]), 3) == 15.314
        assert round(float(s[3]), 3) == 12.272
        # "then goes down slowly, and not monotonically": below S(3) from there on,
        # yet somewhere after k = 3 it goes up again.
        assert np.all(s[4:] < s[3])
        rises = [k for k in range(3, T - 1) if s[k + 1] > s[k]]
        assert rises, "S should not be monotone after k = 3"
        assert 4 in rises  # S(5) = 11.777 > S(4) = 11.662

    def test_module_docstring_examples(self):
        result = doctest.testmod(core, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0
        assert result.failed == 0


# --------------------------------------------------------------------------
# Layout: column 2i is sin, 2i+1 is cos (against a scalar loop).
# --------------------------------------------------------------------------

@pytest.mark.parametrize(("T_", "d_model", "base"), [
    (24, 32, 10_000.0), (1, 2, 10_000.0), (7, 2, 10.0), (50, 128, 1e6), (13, 6, 1.5), (200, 256, 10_000.0),
])
def test_encoding_matches_scalar_formula(T_, d_model, base):
    expected = np.array(scalar_encoding(T_, d_model, base))
    np.testing.assert_allclose(core.encoding(T_, d_model, base), expected, rtol=0, atol=1e-12)


def test_columns_are_sin_then_cos():
    pe = core.encoding(T, D)
    omega = np.array([BASE ** (-2 * i / D) for i in range(D // 2)])
    pos = np.arange(T)[:, None]
    np.testing.assert_allclose(pe[:, 0::2], np.sin(pos * omega), atol=1e-12)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(pos * omega), atol=1e-12)


def test_encoding_rows_accepts_any_shape_and_real_positions():
    positions = np.array([[0.0, -2.5], [3.25, 1e3]])
    rows = core.encoding_rows(positions, 8, 100.0)
    assert rows.shape == (2, 2, 8)
    for index in np.ndindex(positions.shape):
        p = float(positions[index])
        expected = [f(p / 100.0 ** (2 * i / 8)) for i in range(4) for f in (math.sin, math.cos)]
        np.testing.assert_allclose(rows[index], expected, atol=1e-12)
    assert core.encoding_rows(5, 8).shape == (8,)
    assert core.angles(np.arange(3), 8).shape == (3, 4)


# --------------------------------------------------------------------------
# Properties over random sizes and bases.
# --------------------------------------------------------------------------

def test_the_pairs_under_the_ladder_s_T_line_counted_by_hand():
    # d_model 32, base 10 000: lambda_i = 2 pi 10^(i/4) = 6.28, 11.17, 19.87, 35.33, ... (the ladder at T = 20).
    lam = core.wavelengths(32, 10_000)
    assert (core.count_within(lam, 20), core.count_within(lam, 19), core.count_within(lam, 6)) == (3, 2, 0)
    assert core.count_within(lam, 2048) == 11  # up to 2 pi 10^(10/4) = 1986.9; the next is 3533.3
    refuses("T", core.count_within, lam, 0)


@PROPERTY
@given(d_model=d_models, T_=lengths, base=bases)
def test_count_within_counts_the_wavelengths_at_most_T(d_model, T_, base):
    by_hand = sum(1 for i in range(d_model // 2) if 2 * math.pi * base ** (2 * i / d_model) <= T_)
    lam = core.wavelengths(d_model, base)
    # Away from a tie (a wavelength within rounding of T), the count is the hand count.
    if not np.any(np.isclose(lam, T_, rtol=1e-12)):
        assert core.count_within(lam, T_) == by_hand


@PROPERTY
@given(d_model=d_models, T_=lengths, base=bases)
def test_every_row_has_norm_sqrt_half_d(d_model, T_, base):
    norms = core.row_norms(T_, d_model, base)
    assert norms.shape == (T_,)
    np.testing.assert_allclose(norms, math.sqrt(d_model / 2), rtol=1e-12)


@PROPERTY
@given(d_model=d_models, T_=lengths, base=bases, data=st.data())
def test_shift_is_rotation_for_every_start(d_model, T_, base, data):
    k = data.draw(st.integers(-(T_ - 1), T_ - 1), label="k")
    pe = core.encoding(T_, d_model, base)
    m = core.rotation(k, d_model, base)
    starts = range(max(0, -k), min(T_, T_ - k))
    for p in starts:
        np.testing.assert_allclose(m @ pe[p], pe[p + k], rtol=0, atol=1e-11)
    assert core.rotation_residual(k, T_, d_model, base) < 1e-11


@PROPERTY
@given(d_model=d_models, base=bases, k=st.integers(-10**6, 10**6), seed=st.integers(0, 2**32 - 1),
       n=st.integers(1, 5))
def test_rotate_equals_matrix_product(d_model, base, k, seed, n):
    rows = np.random.default_rng(seed).normal(size=(n, d_model))
    expected = rows @ core.rotation(k, d_model, base).T
    np.testing.assert_allclose(core.rotate(rows, k, base), expected, rtol=0, atol=1e-12 * np.abs(rows).max())
    # One row (1-D input) works the same.
    np.testing.assert_allclose(core.rotate(rows[0], k, base), expected[0], rtol=0, atol=1e-12 * np.abs(rows).max())


@PROPERTY
@given(d_model=d_models, base=bases, k=st.integers(-10**6, 10**6))
def test_rotation_is_orthogonal_and_negative_k_is_transpose(d_model, base, k):
    m = core.rotation(k, d_model, base)
    assert m.shape == (d_model, d_model)
    np.testing.assert_allclose(m @ m.T, np.eye(d_model), atol=1e-12)
    np.testing.assert_allclose(core.rotation(-k, d_model, base), m.T, atol=1e-15)
    # Block diagonal: nothing outside the 2x2 blocks of the pairs.
    pair_of = np.arange(d_model) // 2
    assert np.all(m[pair_of[:, None] != pair_of[None, :]] == 0.0)


@PROPERTY
@given(d_model=d_models, base=bases, k=st.integers(-10**6, 10**6))
def test_score_is_even_in_k(d_model, base, k):
    assert core.relative_scores(-k, d_model, base) == pytest.approx(core.relative_scores(k, d_model, base),
                                                                    rel=1e-12, abs=1e-12)


@PROPERTY
@given(d_model=d_models, base=bases, k=st.integers(-10**5, 10**5).filter(bool))
def test_score_at_zero_is_half_d_and_the_maximum(d_model, base, k):
    assert core.relative_scores(0, d_model, base) == d_model / 2
    # Pair 0 turns exactly 1 rad per position and 2*pi is irrational, so no
    # non-zero integer offset brings every clock back at once.
    assert core.relative_scores(k, d_model, base) < d_model / 2
    assert core.relative_scores(k, d_model, base) == pytest.approx(scalar_score(k, d_model, base),
                                                                   rel=1e-9, abs=1e-9 * d_model)


@PROPERTY
@given(d_model=d_models, T_=st.integers(1, 120), base=bases)
def test_gram_is_constant_along_diagonals_and_equals_score(d_model, T_, base):
    g = core.gram(T_, d_model, base)
    assert g.shape == (T_, T_)
    scores = core.relative_scores(np.arange(-(T_ - 1), T_), d_model, base)  # S(-(T-1)) .. S(T-1)
    tol = 1e-9 * d_model
    for offset in range(-(T_ - 1), T_):
        diagonal = np.diagonal(g, offset)  # entries [p, p + offset]
        np.testing.assert_allclose(diagonal, scores[offset + T_ - 1], rtol=1e-9, atol=tol)
    np.testing.assert_allclose(np.diagonal(g), d_model / 2, rtol=1e-12)
    np.testing.assert_allclose(g, g.T, atol=tol)


@PROPERTY
@given(d_model=d_models, base=bases, p=st.integers(-1000, 1000), k=st.integers(-1000, 1000))
def test_squared_distance_is_d_minus_twice_score(d_model, base, p, k):
    a, b = core.encoding_rows(np.array([p, p + k], dtype=float), d_model, base)
    distance2 = float(np.sum((a - b) ** 2))
    expected = d_model - 2 * float(core.relative_scores(k, d_model, base))
    assert distance2 == pytest.approx(expected, rel=1e-9, abs=1e-9 * d_model)


@PROPERTY
@given(d_model=st.integers(1, 1024).map(lambda half: 2 * half), base=bases,
       positions=st.lists(st.one_of(st.integers(-10**5, 10**5), st.floats(-1e5, 1e5)), min_size=1, max_size=40))
def test_float32_rows_are_the_float64_rows_to_within_3e_7(d_model, base, positions):
    positions = np.array(positions, dtype=np.float64)
    rows32 = core.encoding_rows(positions, d_model, base, dtype=np.float32)
    rows64 = core.encoding_rows(positions, d_model, base)
    assert rows32.dtype == np.float32 and rows32.shape == rows64.shape == (positions.size, d_model)
    # The angle's float32 rounding (at most pi * 2**-24 once reduced to -pi .. pi) plus the sine's own.
    assert np.max(np.abs(rows32.astype(np.float64) - rows64)) <= 3e-7
    # Against the scalar formula too, for one position and a few pairs.
    p = float(positions[0])
    for i in range(0, d_model // 2, max(1, d_model // 16)):
        angle = p / base ** (2 * i / d_model)
        assert abs(rows32[0, 2 * i] - math.sin(angle)) <= 3e-7 and abs(rows32[0, 2 * i + 1] - math.cos(angle)) <= 3e-7


def test_float32_rows_reduce_the_angle_before_the_sine():
    # Pair 1 of d_model = 4 at base 1.5 turns 1/sqrt(1.5) rad per position: 1671.37 rad at position 2047,
    # where neighbouring float32 numbers are 1.2e-4 apart. Rounding that angle to float32 would move the
    # sine by ~3e-5; reducing it to -pi .. pi in float64 first keeps float32's own precision.
    angle = 2047 / 1.5 ** 0.5
    assert abs(math.sin(float(np.float32(angle))) - math.sin(angle)) > 1e-5  # what the reduction avoids
    row = core.encoding_rows(np.array([2047.0]), 4, 1.5, dtype=np.float32)[0]
    assert abs(row[2] - math.sin(angle)) <= 3e-7 and abs(row[3] - math.cos(angle)) <= 3e-7
    np.testing.assert_array_equal(core.encoding_rows(np.arange(3), 8, dtype="float32"),
                                  core.encoding_rows(np.arange(3), 8, dtype=np.dtype(np.float32)))
    assert core.encoding_rows(5, 8, dtype=np.float32).shape == (8,)
    # float64 stays the default and exactly what it was.
    np.testing.assert_array_equal(core.encoding_rows(np.arange(24), 32, dtype=np.float64), core.encoding(24, 32))


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 5000), d_model=st.integers(1, 1024).map(lambda half: 2 * half), base=bases,
       data=st.data())
def test_relative_scores_range_is_relative_scores_over_a_range(count, d_model, base, data):
    got = core.relative_scores_range(count, d_model, base)
    assert got.shape == (count,) and got.dtype == np.float64
    assert got[0] == d_model / 2  # exactly: cos 0 = 1 and sin 0 = 0 in every product
    expected = core.relative_scores(np.arange(count), d_model, base)
    # Rounding of the angles (~count * eps each) and of the sums of d_model / 2 terms (~d_model * eps).
    assert np.max(np.abs(got - expected)) <= 1e-16 * d_model * (count + d_model)
    for k in data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=4)):
        assert got[k] == pytest.approx(scalar_score(k, d_model, base), abs=1e-12 * count * d_model)


def test_relative_scores_range_at_the_lesson_and_the_largest_size():
    lesson = core.relative_scores_range(T, D)
    assert lesson[0] == 16.0 and round(float(lesson[3]), 6) == 12.272398 and round(float(lesson[1]), 3) == 15.314
    largest = core.relative_scores_range(2048, 1024)
    for k in (0, 1, 45, 46, 47, 900, 2047):  # around the block edges of B = 46
        assert largest[k] == pytest.approx(scalar_score(k, 1024, BASE), abs=1e-10)
    for bad in (0, -3, 2.0, True, None, "5"):
        refuses("count", core.relative_scores_range, bad, 8)


def test_dot_scores_with_repeated_positions_are_still_row_products():
    p = np.array([3, 3, 3, 7, -2.5, 3])
    q = np.array([3, 5, 3, 7.5, 3, 1000])

    def row(x: float) -> list[float]:
        return [f(x / 100.0 ** (2 * i / 16)) for i in range(8) for f in (math.sin, math.cos)]

    expected = [math.fsum(a * b for a, b in zip(row(x), row(y), strict=True)) for x, y in zip(p, q, strict=True)]
    np.testing.assert_allclose(core.dot_scores(p, q, 16, 100.0), expected, rtol=0, atol=1e-12)
    grid = core.dot_scores(np.arange(5)[:, None], np.arange(5)[None, :], 8)
    assert grid.shape == (5, 5)
    np.testing.assert_allclose(grid, core.gram(5, 8), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.float16, "float16", "nope", object, None, True, complex])
def test_bad_dtype_is_refused(dtype):
    refuses("dtype", core.encoding_rows, np.arange(3), 8, dtype=dtype)


@PROPERTY
@given(d_model=d_models, base=bases)
def test_wavelengths_form_a_geometric_progression(d_model, base):
    lam = core.wavelengths(d_model, base)
    omega = core.frequencies(d_model, base)
    assert lam.shape == omega.shape == (d_model // 2,)
    assert lam[0] == pytest.approx(2 * math.pi, rel=1e-15)
    np.testing.assert_allclose(lam * omega, 2 * math.pi, rtol=1e-14)
    np.testing.assert_allclose(lam[1:] / lam[:-1], base ** (2 / d_model), rtol=1e-9)
    np.testing.assert_allclose(lam[1:] / lam[:-1], core.ladder_step(d_model, base), rtol=1e-9)
    assert core.ladder_step(d_model, base) == pytest.approx(math.exp(2 * math.log(base) / d_model), rel=1e-12)
    assert lam[-1] < 2 * math.pi * base
    np.testing.assert_allclose(lam[-1], 2 * math.pi * base ** (1 - 2 / d_model), rtol=1e-9)


# --------------------------------------------------------------------------
# Validation: every bad argument is refused, and the message names it.
# --------------------------------------------------------------------------

def refuses(name: str, call, *args, **kwargs) -> ValueError:
    with pytest.raises(ValueError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert message.startswith(name), f"message does not start with {name!r}: {message!r}"
    return info.value


BAD_D_MODEL = [31, 1, 0, -2, 2.0, 32.0, "32", True, None, np.float64(32.0)]
BAD_T = [0, -1, 2.0, "24", True, None]
BAD_BASE = [1, 1.0, 0.5, 0, -10, math.nan, math.inf, -math.inf, "10000", True, None]
BAD_K = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("d_model", BAD_D_MODEL, ids=repr)
@pytest.mark.parametrize("call", [
    lambda d: core.frequencies(d),
    lambda d: core.wavelengths(d),
    lambda d: core.encoding(4, d),
    lambda d: core.encoding_rows(np.arange(3), d),
    lambda d: core.angles(np.arange(3), d),
    lambda d: core.row_norms(4, d),
    lambda d: core.rotation(1, d),
    lambda d: core.relative_scores(1, d),
    lambda d: core.relative_scores_range(4, d),
    lambda d: core.gram(4, d),
    lambda d: core.rotation_residual(1, 4, d),
    lambda d: core.ladder_step(d),
], ids=["frequencies", "wavelengths", "encoding", "encoding_rows", "angles", "row_norms", "rotation",
        "relative_scores", "relative_scores_range", "gram", "rotation_residual", "ladder_step"])
def test_bad_d_model_is_refused(call, d_model):
    refuses("d_model", call, d_model)


@pytest.mark.parametrize("T_", BAD_T, ids=repr)
@pytest.mark.parametrize("call", [
    core.encoding, core.row_norms, core.gram, lambda T_, d: core.rotation_residual(1, T_, d),
], ids=["encoding", "row_norms", "gram", "rotation_residual"])
def test_bad_T_is_refused(call, T_):
    refuses("T", call, T_, 8)


@pytest.mark.parametrize("base", BAD_BASE, ids=repr)
@pytest.mark.parametrize("call", [
    lambda b: core.frequencies(8, b),
    lambda b: core.wavelengths(8, b),
    lambda b: core.encoding(4, 8, b),
    lambda b: core.rotation(1, 8, b),
    lambda b: core.rotate(np.ones(8), 1, b),
    lambda b: core.relative_scores(1, 8, b),
    lambda b: core.relative_scores_range(4, 8, b),
    lambda b: core.gram(4, 8, b),
    lambda b: core.ladder_step(8, b),
], ids=["frequencies", "wavelengths", "encoding", "rotation", "rotate", "relative_scores", "relative_scores_range",
        "gram", "ladder_step"])
def test_bad_base_is_refused(call, base):
    refuses("base", call, base)


@pytest.mark.parametrize("k", BAD_K, ids=repr)
@pytest.mark.parametrize("call", [
    lambda k: core.rotation(k, 8),
    lambda k: core.rotate(np.ones(8), k),
    lambda k: core.relative_scores(k, 8),
    lambda k: core.relative_scores(np.array([0.0, k]), 8),
    lambda k: core.rotation_residual(k, 4, 8),
], ids=["rotation", "rotate", "relative_scores", "relative_scores_array", "rotation_residual"])
def test_bad_k_is_refused(call, k):
    refuses("k", call, k)


def test_rotation_residual_needs_a_whole_number_of_positions():
    for k in (1.5, 3.0, True, "3"):
        refuses("k", core.rotation_residual, k, 4, 8)


def test_bad_positions_and_rows_are_refused():
    refuses("positions", core.encoding_rows, [0.0, math.nan], 8)
    refuses("positions", core.angles, math.inf, 8)
    refuses("positions", core.encoding_rows, "abc", 8)
    refuses("rows", core.rotate, np.array([1.0, math.nan]), 1)
    refuses("rows", core.rotate, 1.0, 1)  # no coordinates axis
    refuses("rows.shape[-1] (d_model)", core.rotate, np.ones(3), 1)  # odd width
    refuses("k", core.rotation, [1, 2], 8)  # one matrix per call: k is a scalar
