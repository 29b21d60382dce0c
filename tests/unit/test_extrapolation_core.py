"""app.model.core.extrapolation against the papers' printed values, their formulas written
out one number at a time with ``math``, and properties over sizes far from the section's.

Nothing here calls the module to compute an expected value: the reference numbers come from
scalar loops, the printed tables of the papers, or a NumPy line written inline.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import core
from app.model.core import extrapolation as ex

# Two shared cores: keep the number of examples modest.
PROPERTY = settings(max_examples=40, deadline=None)

d_models = st.integers(1, 64).map(lambda half: 2 * half)
d_models_ntk = st.integers(2, 64).map(lambda half: 2 * half)
lengths = st.integers(1, 4096)
bases = st.floats(1.5, 1e6, allow_nan=False, allow_infinity=False)


def omega(i: int, d_model: int, base: float) -> float:
    return base ** (-2 * i / d_model)


def pairs(d_model: int) -> range:
    return range(d_model // 2)


# --------------------------------------------------------------------------
# What training has shown each pair.
# --------------------------------------------------------------------------

class TestTraining:
    def test_training_angles_are_the_last_trained_position_times_omega(self):
        d, T_train, base = 32, 24, 10_000.0
        expected = [(T_train - 1) * omega(i, d, base) for i in pairs(d)]
        np.testing.assert_allclose(ex.training_angles(T_train, d, base), expected, rtol=1e-14)
        assert ex.training_angles(T_train, d, base)[0] == 23.0  # pair 0 turns one radian per position

    def test_one_trained_position_shows_no_angle(self):
        np.testing.assert_array_equal(ex.training_angles(1, 8), np.zeros(4))

    def test_scale_factor(self):
        assert ex.scale_factor(32, 128) == 4.0
        assert ex.scale_factor(32, 48) == 1.5
        assert ex.scale_factor(32, 32) == 1.0
        assert ex.scale_factor(32, 8) == 1.0  # a short text is never compressed

    def test_unseen_pairs_by_hand(self):
        d, T_train, T, base = 64, 32, 128, 10_000.0
        expected = [(T_train - 1) * omega(i, d, base) < 2 * math.pi and T_train < T for i in pairs(d)]
        got = ex.unseen_pairs(T_train, T, d, base)
        assert got.dtype == np.bool_
        assert got.tolist() == expected
        # 31 omega_i >= 2 pi for omega_i >= 0.2027: pairs 0 .. 5 have turned, the 26 others have not.
        assert got.tolist() == [False] * 6 + [True] * 26

    def test_nothing_is_unseen_within_the_training_length(self):
        for T in (1, 16, 32):
            assert not ex.unseen_pairs(32, T, 64).any()

    def test_a_pair_that_turned_once_is_never_unseen(self):
        # Pair 0 (omega = 1) turns within 7 positions; at any length it sees old angles only.
        assert not ex.unseen_pairs(8, 10**6, 64)[0]

    def test_a_turn_exactly_completed_counts_as_completed(self):
        # d_model = 2: one pair, omega = 1; T_train - 1 = 7 > 2 pi, 6 < 2 pi.
        assert not ex.unseen_pairs(8, 100, 2)[0]
        assert ex.unseen_pairs(7, 100, 2)[0]

    def test_with_a_scheme_the_reading_frequencies_decide(self):
        d, T_train, T = 64, 32, 128
        # Position Interpolation reads T-1 = 127 at 127 * 32/128 = 31.75 > 31: a quarter step past training.
        pi_freqs = [omega(i, d, 10_000.0) * T_train / T for i in pairs(d)]
        got = ex.unseen_pairs(T_train, T, d, frequencies=pi_freqs)
        assert got.tolist() == [False] * 6 + [True] * 26
        # Read slower, so that position 127 reaches no further than 30 trained positions, nothing is new.
        slower = [omega(i, d, 10_000.0) * 30 / 127 for i in pairs(d)]
        assert not ex.unseen_pairs(T_train, T, d, frequencies=slower).any()

    @PROPERTY
    @given(d_model=d_models, T_train=lengths, T=lengths, base=bases)
    def test_unseen_pairs_property(self, d_model, T_train, T, base):
        got = ex.unseen_pairs(T_train, T, d_model, base)
        for i in pairs(d_model):
            reach = (T_train - 1) * omega(i, d_model, base)
            assert got[i] == (reach < 2 * math.pi and T_train < T)
        # The fast pairs turn first: the unseen ones are a tail of the ladder.
        assert got.tolist() == sorted(got.tolist())


# --------------------------------------------------------------------------
# Position Interpolation.
# --------------------------------------------------------------------------

class TestInterpolation:
    def test_every_pair_slowed_by_the_scale_factor(self):
        d, T_train, T, base = 32, 512, 2048, 10_000.0
        expected = [omega(i, d, base) * T_train / T for i in pairs(d)]
        np.testing.assert_allclose(ex.interpolated_frequencies(T_train, T, d, base), expected, rtol=1e-14)

    def test_position_scaling_equals_frequency_scaling(self):
        # Chen et al.: f'(x, m) = f(x, m L / L'); the angle of pair i at m is the same either way.
        d, T_train, T = 16, 10, 25
        freqs = ex.interpolated_frequencies(T_train, T, d)
        for m in range(T):
            for i in pairs(d):
                assert m * freqs[i] == pytest.approx((m * T_train / T) * omega(i, d, 10_000.0), rel=1e-13)

    def test_within_training_length_the_ladder_is_unchanged(self):
        expected = [omega(i, 32, 10_000.0) for i in pairs(32)]
        np.testing.assert_allclose(ex.interpolated_frequencies(64, 64, 32), expected, rtol=1e-15)
        np.testing.assert_allclose(ex.interpolated_frequencies(64, 10, 32), expected, rtol=1e-15)


# --------------------------------------------------------------------------
# "NTK-aware" scaling.
# --------------------------------------------------------------------------

class TestNTK:
    def test_base_change_by_hand(self):
        d, T_train, T, base = 64, 32, 128, 10_000.0
        expected_base = base * 4.0 ** (64 / 62)
        assert ex.ntk_base(T_train, T, d, base) == pytest.approx(expected_base, rel=1e-14)
        expected = [expected_base ** (-2 * i / d) for i in pairs(d)]
        np.testing.assert_allclose(ex.ntk_frequencies(T_train, T, d, base), expected, rtol=1e-12)

    @PROPERTY
    @given(d_model=d_models_ntk, T_train=st.integers(1, 512), T=st.integers(1, 8192), base=bases)
    def test_first_pair_kept_last_pair_interpolated(self, d_model, T_train, T, base):
        s = max(1.0, T / T_train)
        freqs = ex.ntk_frequencies(T_train, T, d_model, base)
        assert freqs[0] == 1.0
        last = d_model // 2 - 1
        assert freqs[-1] == pytest.approx(omega(last, d_model, base) / s, rel=1e-12)
        # The same slowest frequency as Position Interpolation's.
        assert freqs[-1] == pytest.approx(ex.interpolated_frequencies(T_train, T, d_model, base)[-1], rel=1e-12)

    @PROPERTY
    @given(d_model=d_models_ntk, T_train=st.integers(1, 512), T=st.integers(1, 8192), base=bases)
    def test_between_the_trained_ladder_and_interpolation(self, d_model, T_train, T, base):
        s = max(1.0, T / T_train)
        freqs = ex.ntk_frequencies(T_train, T, d_model, base)
        original = np.array([omega(i, d_model, base) for i in pairs(d_model)])
        assert np.all(freqs <= original * (1 + 1e-12))
        assert np.all(freqs >= original / s * (1 - 1e-12))
        assert np.all(np.diff(freqs) < 0)  # still a ladder, fastest first

    def test_one_pair_keeps_its_frequency_and_has_no_ntk_base(self):
        np.testing.assert_array_equal(ex.ntk_frequencies(8, 64, 2), [1.0])
        with pytest.raises(ValueError, match="d_model"):
            ex.ntk_base(8, 64, 2)


# --------------------------------------------------------------------------
# YaRN.
# --------------------------------------------------------------------------

def ramp_by_hand(r: float, alpha: float, beta: float) -> float:
    if r < alpha:
        return 0.0
    if r > beta:
        return 1.0
    return (r - alpha) / (beta - alpha)


class TestYaRN:
    # LLaMA-like: head dimension 128, trained on 4096, read at 32768 (s = 8).
    D, T_TRAIN, T, BASE = 128, 4096, 32_768, 10_000.0

    def test_turns_by_hand(self):
        expected = [self.T_TRAIN / (2 * math.pi / omega(i, self.D, self.BASE)) for i in pairs(self.D)]
        np.testing.assert_allclose(ex.yarn_turns(self.T_TRAIN, self.D, self.BASE), expected, rtol=1e-13)

    def test_ramp_by_hand(self):
        gamma = ex.yarn_ramp(self.T_TRAIN, self.D, self.BASE)
        for i in pairs(self.D):
            r = self.T_TRAIN * omega(i, self.D, self.BASE) / (2 * math.pi)
            assert gamma[i] == pytest.approx(ramp_by_hand(r, 1.0, 32.0), abs=1e-13)
        # The three regimes all occur at this size.
        assert (gamma == 1).any() and (gamma == 0).any() and ((gamma > 0) & (gamma < 1)).any()

    def test_fast_pairs_kept_slow_pairs_interpolated(self):
        s = self.T / self.T_TRAIN
        freqs = ex.yarn_frequencies(self.T_TRAIN, self.T, self.D, self.BASE)
        for i in pairs(self.D):
            w = omega(i, self.D, self.BASE)
            r = self.T_TRAIN * w / (2 * math.pi)
            if r > 32:
                assert freqs[i] == pytest.approx(w, rel=1e-15)
            elif r < 1:
                assert freqs[i] == pytest.approx(w / s, rel=1e-14)
            else:
                g = (r - 1) / 31
                assert freqs[i] == pytest.approx((1 - g) * w / s + g * w, rel=1e-13)

    def test_other_ramp_bounds(self):
        gamma = ex.yarn_ramp(self.T_TRAIN, self.D, self.BASE, alpha=0.5, beta=4.0)
        for i in pairs(self.D):
            r = self.T_TRAIN * omega(i, self.D, self.BASE) / (2 * math.pi)
            assert gamma[i] == pytest.approx(ramp_by_hand(r, 0.5, 4.0), abs=1e-13)

    @PROPERTY
    @given(d_model=d_models, T_train=lengths, T=st.integers(1, 65_536), base=bases,
           alpha=st.floats(0, 10), width=st.floats(0.01, 100))
    def test_between_interpolation_and_the_trained_ladder(self, d_model, T_train, T, base, alpha, width):
        s = max(1.0, T / T_train)
        freqs = ex.yarn_frequencies(T_train, T, d_model, base, alpha, alpha + width)
        original = np.array([omega(i, d_model, base) for i in pairs(d_model)])
        assert np.all(freqs <= original * (1 + 1e-12))
        assert np.all(freqs >= original / s * (1 - 1e-12))
        assert np.all(np.diff(freqs) < 0)
        gamma = ex.yarn_ramp(T_train, d_model, base, alpha, alpha + width)
        assert np.all((gamma >= 0) & (gamma <= 1)) and np.all(np.diff(gamma) <= 0)

    def test_attention_factor(self):
        assert ex.yarn_attention_factor(1) == 1.0
        assert ex.yarn_attention_factor(math.exp(10)) == pytest.approx(2.0, rel=1e-15)
        assert ex.yarn_attention_factor(8) == pytest.approx(0.1 * math.log(8) + 1)  # ~1.208, s = 8


# --------------------------------------------------------------------------
# ALiBi.
# --------------------------------------------------------------------------

def get_slopes_reference(n: int) -> list[float]:
    """ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, ``get_slopes``, transcribed."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes_reference(2 * closest_power_of_2)[0::2][
        : n - closest_power_of_2]


class TestALiBi:
    def test_eight_heads_as_printed(self):
        # Press et al. 2022, §3: "1/2^1, 1/2^2, ..., 1/2^8".
        printed = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
        np.testing.assert_array_equal(ex.alibi_slopes(8), printed)

    def test_sixteen_heads_interpolate_the_eight(self):
        # "starts at 1/2^0.5 and has the ratio of 1/2^0.5": 1/sqrt2, 1/2, 1/(2 sqrt2), ..., 1/256.
        expected = [1 / math.sqrt(2) ** j for j in range(1, 17)]
        slopes = ex.alibi_slopes(16)
        np.testing.assert_allclose(slopes, expected, rtol=4e-15)
        np.testing.assert_array_equal(slopes[1::2], ex.alibi_slopes(8))
        # Each inserted slope is the geometric mean of its neighbours.
        np.testing.assert_allclose(slopes[2::2], np.sqrt(slopes[1:-1:2] * slopes[3::2]), rtol=1e-15)

    def test_twelve_heads_written_out(self):
        r2 = math.sqrt(2)
        expected = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256,
                    1 / r2, 1 / (2 * r2), 1 / (4 * r2), 1 / (8 * r2)]
        np.testing.assert_allclose(ex.alibi_slopes(12), expected, rtol=1e-15)

    def test_one_head(self):
        np.testing.assert_array_equal(ex.alibi_slopes(1), [1 / 256])

    @PROPERTY
    @given(heads=st.integers(1, 300))
    def test_matches_the_papers_code(self, heads):
        np.testing.assert_allclose(ex.alibi_slopes(heads), get_slopes_reference(heads), rtol=1e-13)

    def test_biases(self):
        slopes = [0.5, 0.25]
        k = [0, 1, -3, 10]
        got = ex.alibi_biases(k, slopes)
        assert got.shape == (2, 4)
        expected = [[-m * abs(x) for x in k] for m in slopes]
        np.testing.assert_array_equal(got, expected)
        assert ex.alibi_biases(5, slopes).tolist() == [-2.5, -1.25]


# --------------------------------------------------------------------------
# Scores past the edge.
# --------------------------------------------------------------------------

class TestScores:
    def test_scores_by_hand(self):
        freqs = [1.0, 0.3, 0.01]
        k = np.array([[0, 1, 2], [7, -5, 100]])
        got = ex.scores_from_frequencies(k, freqs)
        assert got.shape == k.shape
        for index in np.ndindex(k.shape):
            assert got[index] == pytest.approx(math.fsum(math.cos(w * k[index]) for w in freqs), abs=1e-13)

    @PROPERTY
    @given(d_model=d_models, base=bases, count=st.integers(1, 300))
    def test_trained_ladder_gives_the_cores_scores(self, d_model, base, count):
        freqs = [omega(i, d_model, base) for i in pairs(d_model)]
        k = np.arange(count)
        np.testing.assert_allclose(ex.scores_from_frequencies(k, freqs), core.relative_scores(k, d_model, base),
                                   atol=1e-12 * d_model)

    @PROPERTY
    @given(count=st.integers(1, 3000), freqs=st.lists(st.floats(1e-6, 3.0), min_size=1, max_size=40))
    def test_a_range_of_scores_is_the_written_out_sum(self, count, freqs):
        # Any ladder, not only a geometric one: the blocks must not lean on the ladder's shape.
        k = np.arange(count, dtype=np.float64)
        by_hand = np.cos(k[:, None] * np.asarray(freqs)[None, :]).sum(axis=1)
        got = ex.scores_range_from_frequencies(count, freqs)
        assert got.shape == (count,)
        np.testing.assert_allclose(got, by_hand, rtol=0, atol=1e-15 * len(freqs) * (count + len(freqs)) + 1e-13)

    def test_a_range_of_scores_for_the_stretched_ladders_at_the_largest_size(self):
        for freqs in (ex.interpolated_frequencies(32, 2048, 1024, 10_000), ex.ntk_frequencies(32, 2048, 1024, 10_000),
                      ex.yarn_frequencies(32, 2048, 1024, 10_000)):
            by_hand = np.array([math.fsum(math.cos(w * step) for w in freqs) for step in (0, 1, 777, 2047)])
            got = ex.scores_range_from_frequencies(2048, freqs)[[0, 1, 777, 2047]]
            np.testing.assert_allclose(got, by_hand, rtol=0, atol=1e-9)

    @PROPERTY
    @given(d_model=d_models, base=bases, seed=st.integers(0, 2**32 - 1))
    def test_rope_head_scores_equal_the_cores_rope_relative(self, d_model, base, seed):
        rng = np.random.default_rng(seed)
        q, kvec = rng.normal(size=d_model), rng.normal(size=d_model)
        offsets = rng.integers(-3000, 3000, size=(3, 5))
        freqs = [omega(i, d_model, base) for i in pairs(d_model)]
        np.testing.assert_allclose(ex.rope_head_scores(q, kvec, offsets, freqs),
                                   core.rope_relative(q, kvec, offsets, base), atol=1e-10)

    def test_rope_head_scores_amplitude_and_phase_form(self):
        # sum_i |q_i| |k_i| cos(d w_i + phi_i): q turned by d w_i against k, pair by pair, with complex numbers.
        rng = np.random.default_rng(46)
        q, kvec = rng.normal(size=8), rng.normal(size=8)
        freqs = [0.9, 0.2, 0.05, 0.001]
        for d in (0, 1, 5, -17, 4000):
            expected = 0.0
            for i, w in enumerate(freqs):
                zq = complex(q[2 * i], q[2 * i + 1])
                zk = complex(kvec[2 * i], kvec[2 * i + 1])
                phi = math.atan2(zk.imag, zk.real) - math.atan2(zq.imag, zq.real)
                expected += abs(zq) * abs(zk) * math.cos(d * w + phi)
            assert ex.rope_head_scores(q, kvec, d, freqs) == pytest.approx(expected, abs=1e-12)

    def test_learned_table_is_defined_on_trained_rows_only(self):
        got = ex.learned_defined([-1, 0, 5, 31, 32, 1000], 32)
        assert got.tolist() == [False, True, True, True, False, False]
        assert ex.learned_defined(np.arange(64).reshape(8, 8), 32).sum() == 32


# --------------------------------------------------------------------------
# The section's default size, against NumPy written inline.
# --------------------------------------------------------------------------

def test_d64_trained_32_read_128():
    d, T_train, T, base = 64, 32, 128, 10_000.0
    s = T / T_train
    i = np.arange(d // 2)
    w = 1.0 / base ** (2 * i / d)
    np.testing.assert_allclose(ex.training_angles(T_train, d, base), 31 * w, rtol=1e-14)
    np.testing.assert_allclose(ex.interpolated_frequencies(T_train, T, d, base), w / 4, rtol=1e-14)
    new_base = base * s ** (d / (d - 2))
    np.testing.assert_allclose(ex.ntk_frequencies(T_train, T, d, base), 1.0 / new_base ** (2 * i / d), rtol=1e-12)
    r = T_train * w / (2 * np.pi)
    gamma = np.where(r < 1, 0.0, np.where(r > 32, 1.0, (r - 1) / 31))
    np.testing.assert_allclose(ex.yarn_ramp(T_train, d, base), gamma, atol=1e-15)
    yarn = (1 - gamma) * w / s + gamma * w
    np.testing.assert_allclose(ex.yarn_frequencies(T_train, T, d, base), yarn, rtol=1e-14)
    k = np.arange(T)
    for freqs in (w / 4, yarn):
        np.testing.assert_allclose(ex.scores_from_frequencies(k, freqs), np.cos(np.outer(k, freqs)).sum(1),
                                   atol=1e-12)
    # A few numbers to the printed precision: NTK's base, pair 5's turns, YaRN's factor.
    assert round(ex.ntk_base(T_train, T, d, base), 2) == round(10_000 * 4 ** (32 / 31), 2) == 41829.37
    assert round(float(ex.yarn_turns(T_train, d, base)[5]), 4) == round(32 * 10_000 ** (-10 / 64) / (2 * math.pi), 4)
    assert ex.yarn_attention_factor(s) == pytest.approx(1 + 0.1 * math.log(4))
    # No pair makes 32 turns in 32 positions, so YaRN keeps none whole; pairs 0 .. 5 make more than one.
    assert (gamma > 0).tolist() == [True] * 6 + [False] * 26


# --------------------------------------------------------------------------
# The module's surface and its argument checks.
# --------------------------------------------------------------------------

def test_module_example():
    result = doctest.testmod(ex)
    assert result.attempted > 0 and result.failed == 0


def test_schemes_and_exports():
    assert ex.SCHEMES == ("sinusoidal", "learned", "rope", "interpolation", "ntk", "yarn", "alibi")
    for name in ex.__all__:
        assert hasattr(ex, name), name


@pytest.mark.parametrize(("call", "name"), [
    (lambda: ex.training_angles(0, 32), "T_train"),
    (lambda: ex.training_angles(True, 32), "T_train"),
    (lambda: ex.training_angles(32, 31), "d_model"),
    (lambda: ex.training_angles(32, 32, 1.0), "base"),
    (lambda: ex.training_angles(32, 32, float("nan")), "base"),
    (lambda: ex.scale_factor(32, 0), "T"),
    (lambda: ex.scale_factor(32, 64.0), "T"),
    (lambda: ex.unseen_pairs(32, 64, 8, frequencies=[1, 2, 3]), "frequencies"),
    (lambda: ex.unseen_pairs(32, 64, 8, frequencies=[1, 2, 3, -4]), "frequencies"),
    (lambda: ex.interpolated_frequencies(-1, 64, 32), "T_train"),
    (lambda: ex.ntk_frequencies(32, 64, 0), "d_model"),
    (lambda: ex.ntk_base(32, 64, 32, 0.5), "base"),
    (lambda: ex.yarn_ramp(32, 32, alpha=-1), "alpha"),
    (lambda: ex.yarn_ramp(32, 32, alpha=2, beta=2), "beta"),
    (lambda: ex.yarn_frequencies(32, 64, 32, beta=float("inf")), "beta"),
    (lambda: ex.yarn_attention_factor(0.5), "s"),
    (lambda: ex.yarn_attention_factor("2"), "s"),
    (lambda: ex.alibi_slopes(0), "heads"),
    (lambda: ex.alibi_slopes(8.0), "heads"),
    (lambda: ex.alibi_biases([1, 2], [0.5, 0.0]), "slopes"),
    (lambda: ex.alibi_biases([1, np.nan], [0.5]), "k"),
    (lambda: ex.scores_from_frequencies([1, 2], [[1.0]]), "frequencies"),
    (lambda: ex.scores_from_frequencies("x", [1.0]), "k"),
    (lambda: ex.scores_range_from_frequencies(0, [1.0]), "count"),
    (lambda: ex.scores_range_from_frequencies(4, [1.0, -0.5]), "frequencies"),
    (lambda: ex.rope_head_scores([1, 2, 3, 4], [1, 2], 0, [1.0, 0.1]), "kvec"),
    (lambda: ex.rope_head_scores([1, 2, 3], [1, 2, 3], 0, [1.0]), "q"),
    (lambda: ex.rope_head_scores([1, 2, 3, 4], [1, 2, 3, 4], 0, [1.0]), "frequencies"),
    (lambda: ex.rope_head_scores([1, 2], [1, 2], [np.inf], [1.0]), "offsets"),
    (lambda: ex.learned_defined([0.5], 32), "positions"),
    (lambda: ex.learned_defined([1], 0), "T_train"),
])
def test_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
