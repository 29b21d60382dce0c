"""Past the training length: what each position scheme does at ``T > T_train``, in NumPy.

A model is trained on texts of ``T_train`` positions (``0 .. T_train-1``) and then
read a text of ``T`` positions. This module holds the mathematics of the
explorable's extrapolation section: which pairs meet angles they never met in
training, the frequencies of the published ways of stretching a rotary or
sinusoidal ladder (Position Interpolation, "NTK-aware" scaling, YaRN), the
linear biases of ALiBi, and the scores ``S(k)`` those choices give.

Every function is pure and vectorised, and validates its arguments with a
``ValueError`` naming the argument and the values it accepts; the trained
ladder is ``ladder.frequencies``, the one place its formula is written.

Notation, as in the rest of the core::

    omega_i  = base ** (-2 i / d_model),      i = 0 .. d_model/2 - 1
    lambda_i = 2 pi / omega_i                  (positions per full turn)
    s        = max(1, T / T_train)             (the scale factor)
    S(k)     = sum_i cos(omega_i k)            (score of two positions k apart)

The rotary papers write ``|D|`` for the head dimension and ``b`` for the base;
here they are ``d_model`` and ``base``.

Example::

    >>> from app.model.core import extrapolation as ex
    >>> ex.alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    >>> int(ex.unseen_pairs(32, 128, 64).sum())
    26
    >>> round(ex.ntk_base(32, 128, 64), 2)
    41829.37
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _base, _finite, _integer, _positive_vector, _real
from app.model.core.ladder import DEFAULT_BASE
from app.model.core.ladder import frequencies as _frequencies
from app.model.core.sinusoidal import _cosine_sums

__all__ = [
    "SCHEMES",
    "YARN_ALPHA",
    "YARN_BETA",
    "alibi_biases",
    "alibi_slopes",
    "interpolated_frequencies",
    "learned_defined",
    "ntk_base",
    "ntk_frequencies",
    "rope_head_scores",
    "scale_factor",
    "scores_from_frequencies",
    "scores_range_from_frequencies",
    "training_angles",
    "unseen_pairs",
    "yarn_attention_factor",
    "yarn_frequencies",
    "yarn_ramp",
    "yarn_turns",
]

#: The schemes the section compares, in the order it shows them.
SCHEMES: tuple[str, ...] = ("sinusoidal", "learned", "rope", "interpolation", "ntk", "yarn", "alibi")

#: YaRN's ramp bounds, in turns per training length, that Peng et al. (2023, §3.2) found good for LLaMA.
YARN_ALPHA = 1.0
YARN_BETA = 32.0


def _lengths(T_train: object, T: object) -> tuple[int, int]:
    return _integer("T_train", T_train, 1), _integer("T", T, 1)


# --------------------------------------------------------------------------
# What training has shown each pair.
# --------------------------------------------------------------------------

def scale_factor(T_train: int, T: int) -> float:
    """The scale factor of every stretching scheme: ``s = max(1, T / T_train)``.

    The papers define ``s = L' / L`` (extended over trained length) for ``L' > L``;
    the ``max`` is the rule of Peng et al. (2023, §3.3, "Dynamic Scaling"),
    ``s = max(1, l' / L)``: a text that fits the training length is read with
    the trained frequencies, never compressed.
    """
    T_train, T = _lengths(T_train, T)
    return max(1.0, T / T_train)


def training_angles(T_train: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Largest angle each pair met in training: ``omega_i (T_train - 1)`` radians.

    Positions ``0 .. T_train-1`` turn pair ``i`` through the arc
    ``0 .. omega_i (T_train - 1)``; a pair whose arc is at least ``2 pi`` has been
    all the way round its circle. Shape ``(d_model // 2,)``.
    """
    T_train = _integer("T_train", T_train, 1)
    return (T_train - 1) * _frequencies(d_model, base)


def unseen_pairs(T_train: int, T: int, d_model: int, base: float = DEFAULT_BASE,
                 frequencies: ArrayLike | None = None) -> NDArray[np.bool_]:
    """Which pairs meet, in a text of ``T`` positions, angles training never showed them.

    Pair ``i`` was trained at ``omega_i`` (the ladder of ``d_model`` and ``base``) on
    the arc ``0 .. omega_i (T_train - 1)`` and is read at ``omega'_i`` (``frequencies``;
    the trained ladder when ``None``) on the arc ``0 .. omega'_i (T - 1)``. It meets
    new angles exactly when both hold::

        omega_i (T_train - 1) < 2 pi                    (it never completed a turn)
        omega'_i (T - 1)      > omega_i (T_train - 1)   (it now goes further round)

    A pair that completed a turn has swept the whole circle: every later angle lies
    on an arc it passed through, whatever the length. (The arc swept, not the
    discrete angles the integer positions land on.) With the trained ladder the
    second condition is ``T > T_train``.

    Position Interpolation reads position ``T - 1`` at ``(T - 1) T_train / T``,
    which is past the last trained position ``T_train - 1`` by ``1 - T_train / T``
    (less than one position): with ``interpolated_frequencies`` the pairs that
    never turned are marked, by that fraction of a step. Shape ``(d_model // 2,)``.
    """
    T_train, T = _lengths(T_train, T)
    trained = _frequencies(d_model, base)
    read = trained if frequencies is None else _positive_vector("frequencies", frequencies)
    if read.shape != trained.shape:
        raise ValueError(f"frequencies must have d_model/2 = {trained.size} entries; got {read.size}")
    reach = (T_train - 1) * trained
    return (reach < 2.0 * np.pi) & ((T - 1) * read > reach)


# --------------------------------------------------------------------------
# Stretching the ladder: Position Interpolation, "NTK-aware", YaRN.
# --------------------------------------------------------------------------

def interpolated_frequencies(T_train: int, T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Position Interpolation: every pair slowed by the scale factor, ``omega_i / s``.

    Chen, Wong, Chen & Tian (2023), "Extending Context Window of Large Language
    Models via Positional Interpolation", arXiv:2306.15595: position ``m`` is
    read as ``m T_train / T`` (``f'(x, m) = f(x, m L / L')``), the same as turning
    every pair at ``omega_i T_train / T``. ``s = scale_factor(T_train, T)``, so for
    ``T <= T_train`` the trained ladder comes back unchanged. Shape ``(d_model // 2,)``.
    """
    return _frequencies(d_model, base) / scale_factor(T_train, T)


def ntk_base(T_train: int, T: int, d_model: int, base: float = DEFAULT_BASE) -> float:
    """The base of "NTK-aware" scaling: ``base' = base * s ** (d_model / (d_model - 2))``.

    bloc97, "NTK-Aware Scaled RoPE allows LLaMA models to have extended (8k+)
    context size without any fine-tuning and minimal perplexity degradation",
    Reddit r/LocalLLaMA, June 2023, as written by Peng et al. (2023), "YaRN",
    arXiv:2309.00071, §3.1, Eq. 16: ``b' = b s^(|D| / (|D| - 2))``. The exponent
    makes the slowest pair, ``i = d_model/2 - 1``, exactly ``s`` times slower.
    Needs ``d_model >= 4``: with one pair the exponent is undefined.
    """
    d_model = _integer("d_model", d_model, 4, even=True)
    return _base(base) * scale_factor(T_train, T) ** (d_model / (d_model - 2))


def ntk_frequencies(T_train: int, T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The "NTK-aware" ladder: the trained one with ``base`` changed to ``ntk_base``::

        omega'_i = base' ** (-2i / d_model) = omega_i * s ** (-2i / (d_model - 2))

    (bloc97 2023; Peng et al. 2023, §3.1, Eqs. 15-16). Pair 0 keeps ``omega_0 = 1``;
    the slowdown grows along the ladder up to ``s`` for the slowest pair, whose
    frequency is then Position Interpolation's, ``omega_(d/2-1) / s``. Computed from
    the right-hand form, which cannot overflow where ``base'`` would. With
    ``d_model = 2`` (one pair, ``ntk_base`` undefined) that pair is pair 0 and keeps
    ``omega_0 = 1``. Shape ``(d_model // 2,)``.
    """
    omega = _frequencies(d_model, base)
    s = scale_factor(T_train, T)
    if omega.size == 1:
        return omega
    return omega * s ** (-np.arange(omega.size, dtype=np.float64) / (omega.size - 1))


def _ramp_bounds(alpha: object, beta: object) -> tuple[float, float]:
    alpha = _real("alpha", alpha, 0.0)
    beta = _real("beta", beta, 0.0)
    if beta <= alpha:
        raise ValueError(f"beta must be a finite real number > alpha = {alpha:g}; got {beta}")
    return alpha, beta


def yarn_turns(T_train: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Turns each pair makes over the training length: ``r_i = T_train / lambda_i``.

    Peng et al. (2023), "YaRN", arXiv:2309.00071, §3.2, Eq. 17, ``r(d) = L / lambda_d``,
    with ``lambda_i = 2 pi / omega_i`` of the trained ladder (Eq. 13; Eq. 17 as
    printed writes ``b'`` in ``lambda``, but its ``r = L / lambda`` and every
    implementation use the trained base). Shape ``(d_model // 2,)``.
    """
    T_train = _integer("T_train", T_train, 1)
    return T_train * _frequencies(d_model, base) / (2.0 * np.pi)


def yarn_ramp(T_train: int, d_model: int, base: float = DEFAULT_BASE,
              alpha: float = YARN_ALPHA, beta: float = YARN_BETA) -> NDArray[np.float64]:
    """YaRN's ramp ``gamma(r_i)`` per pair: 0 where it interpolates, 1 where it keeps the pair::

        gamma(r) = 0                          if r < alpha
                   1                          if r > beta
                   (r - alpha) / (beta - alpha)  otherwise

    with ``r_i = yarn_turns(T_train, d_model, base)`` (Peng et al. 2023, §3.2, Eq. 18;
    ``alpha = 1``, ``beta = 32`` are the values the paper found for LLaMA). The
    ramp is linear in ``r``, as the paper writes it. The reference code (the
    paper's repository and Hugging Face's ``_compute_yarn_parameters``,
    ``beta_fast = 32``, ``beta_slow = 1``) instead ramps linearly in the pair index
    between ``floor(i(beta_fast))`` and ``ceil(i(beta_slow))``, where
    ``i(r) = d ln(L / (2 pi r)) / (2 ln base)`` is the pair making ``r`` turns: the
    same 0 and 1 outside the band (up to that rounding outward to whole pairs),
    but inside it linear in ``ln r``, not in ``r``, so not the same numbers.
    Shape ``(d_model // 2,)``, values in ``[0, 1]``.
    """
    alpha, beta = _ramp_bounds(alpha, beta)
    return np.clip((yarn_turns(T_train, d_model, base) - alpha) / (beta - alpha), 0.0, 1.0)


def yarn_frequencies(T_train: int, T: int, d_model: int, base: float = DEFAULT_BASE,
                     alpha: float = YARN_ALPHA, beta: float = YARN_BETA) -> NDArray[np.float64]:
    """YaRN's ("NTK-by-parts") frequencies: interpolate the slow pairs, keep the fast ones::

        h(omega_i) = (1 - gamma(r_i)) omega_i / s + gamma(r_i) omega_i

    Peng, Quesnelle, Fan & Shippole (2023), "YaRN: Efficient Context Window
    Extension of Large Language Models", arXiv:2309.00071, §3.2, Eq. 20, with
    ``gamma = yarn_ramp(T_train, d_model, base, alpha, beta)`` (the paper's form,
    linear in ``r``; see ``yarn_ramp`` for how the reference code differs) and
    ``s = scale_factor(T_train, T)``. A pair making fewer than ``alpha`` turns in
    training is exactly Position Interpolation's; one making more than ``beta``
    keeps ``omega_i``. YaRN also scales the attention logits:
    ``yarn_attention_factor``. Shape ``(d_model // 2,)``.
    """
    gamma = yarn_ramp(T_train, d_model, base, alpha, beta)
    omega = _frequencies(d_model, base)
    return (1.0 - gamma) * omega / scale_factor(T_train, T) + gamma * omega


def yarn_attention_factor(s: float) -> float:
    """YaRN's attention scaling ``sqrt(1/t) = 0.1 ln(s) + 1`` (Peng et al. 2023, §3.4, Eq. 22).

    ``t`` is a softmax temperature: the logits are divided by it,
    ``softmax(q_m . k_n / (t sqrt(|D|)))`` (Eq. 21). YaRN applies it by multiplying
    both the query and the key by ``sqrt(1/t)`` (the rotary cosines and sines are
    scaled), so a score ``q . k`` is multiplied by ``sqrt(1/t) ** 2 = 1/t``. The
    value fitted for LLaMA; it is Hugging Face's ``attention_factor``. ``s >= 1``
    (``scale_factor``); 1 at ``s = 1``.
    """
    s = _real("s", s, 1.0)
    return 0.1 * math.log(s) + 1.0


# --------------------------------------------------------------------------
# ALiBi: no rotation at all, a penalty growing with the distance.
# --------------------------------------------------------------------------

def alibi_slopes(heads: int) -> NDArray[np.float64]:
    """ALiBi's slope ``m_j`` of every head, as the paper's code computes them.

    Press, Smith & Lewis (2022), "Train Short, Test Long: Attention with Linear
    Biases Enables Input Length Extrapolation", ICLR 2022. For ``h`` a power of
    two, the geometric sequence that starts at ``2 ** (-8 / h)`` with that ratio::

        m_j = 2 ** (-8 j / h),   j = 1 .. h        (8 heads: 1/2, 1/4, ..., 1/256)

    For other ``h`` the authors' ``get_slopes`` (ofirpress/attention_with_linear_biases)
    takes the ``n`` slopes of the power of two ``n`` just below ``h``, then the first
    ``h - n`` of every other slope of ``2n`` heads, ``2 ** (-8 j / (2n))`` for
    ``j = 1, 3, 5, ...``. Shape ``(heads,)``.
    """
    heads = _integer("heads", heads, 1)
    n = 1 << (heads.bit_length() - 1)  # the power of two at or just below heads, exact for any size
    first = 2.0 ** (-8.0 * np.arange(1, n + 1) / n)
    between = 2.0 ** (-8.0 * np.arange(1, 2 * (heads - n), 2) / (2 * n))
    return np.concatenate([first, between])


def alibi_biases(k: ArrayLike, slopes: ArrayLike) -> NDArray[np.float64]:
    """The bias ALiBi adds to a score of two positions ``k`` apart: ``-m_j |k|`` per head.

    Press et al. (2022): the logit of query ``i`` and key ``j`` gets ``-m (i - j)``
    (the paper's causal model sees only ``j <= i``); ``|k|`` gives the same for
    either order. ``slopes`` is a vector of ``m_j > 0`` (``alibi_slopes``); ``k``
    any shape. Shape ``slopes.shape + k.shape`` (heads x offsets).
    """
    k = _finite("k", k)
    slopes = _positive_vector("slopes", slopes)
    return -np.multiply.outer(slopes, np.abs(k))


# --------------------------------------------------------------------------
# Scores past the edge.
# --------------------------------------------------------------------------

def scores_from_frequencies(k: ArrayLike, frequencies: ArrayLike) -> NDArray[np.float64]:
    """``S(k) = sum_i cos(omega'_i k)`` for any ladder ``omega'`` (``frequencies``).

    The score of two positions ``k`` apart, ``PE[p] . PE[p + k]``, for an encoding
    whose pair ``i`` turns at ``omega'_i``; with the trained ladder it is the core's
    ``relative_scores``. ``frequencies`` a non-empty vector of numbers > 0; ``k``
    any shape (real values). The result has the shape of ``k``.
    """
    k = _finite("k", k)
    omega = _positive_vector("frequencies", frequencies)
    return np.cos(np.multiply.outer(k, omega)).sum(axis=-1)


def scores_range_from_frequencies(count: int, frequencies: ArrayLike) -> NDArray[np.float64]:
    """``S(k) = sum_i cos(omega'_i k)`` for every ``k = 0 .. count-1``: ``scores_from_frequencies(np.arange(count),
    frequencies)``, faster.

    The same block identity as the core's ``relative_scores_range`` (``k = a + B b``,
    ``cos(x + y) = cos x cos y - sin x sin y``), for any ladder: two matrix products of
    tables of about ``2 sqrt(count) d_model/2`` cosines and sines instead of
    ``count d_model/2``. The same numbers to rounding (within
    ``1e-16 * d_model * (count + d_model)``). Shape ``(count,)``.
    """
    count = _integer("count", count, 1)
    return _cosine_sums(count, _positive_vector("frequencies", frequencies))


def _head_vector(name: str, value: ArrayLike) -> NDArray[np.float64]:
    value = _finite(name, value)
    if value.ndim != 1:
        raise ValueError(f"{name} must be a vector of d_model numbers; got shape {value.shape}")
    if value.size < 2 or value.size % 2:
        raise ValueError(f"{name} must have an even number >= 2 of entries (d_model); got {value.size}")
    return value


def rope_head_scores(q: ArrayLike, kvec: ArrayLike, offsets: ArrayLike, frequencies: ArrayLike) -> NDArray[np.float64]:
    """Rotary score of one query ``q`` and one key ``kvec`` ``d`` positions apart, for any ladder::

        f(d) = sum_i (q_2i k_2i + q_2i+1 k_2i+1) cos(d omega'_i) + (q_2i+1 k_2i - q_2i k_2i+1) sin(d omega'_i)
             = sum_i |q_i| |k_i| cos(d omega'_i + phi_i)

    where ``|q_i|``, ``|k_i|`` are the lengths of pair ``i`` of each vector and
    ``phi_i`` the angle from the query's pair to the key's. The core's
    ``rope_relative(q, k, offsets, base)`` is this with the trained ladder
    ``omega_i = base ** (-2i / d_model)``; pass a stretched ladder
    (``interpolated_frequencies``, ``ntk_frequencies``, ``yarn_frequencies``) to see
    a scheme's scores. YaRN's attention scaling is not included: multiply by
    ``yarn_attention_factor(s) ** 2``. ``q`` and ``kvec`` have ``d_model`` numbers,
    ``frequencies`` ``d_model / 2``; ``offsets`` any shape, the result has that shape.
    """
    q, kvec = _head_vector("q", q), _head_vector("kvec", kvec)
    if q.size != kvec.size:
        raise ValueError(f"kvec must have the length of q, {q.size}; got {kvec.size}")
    omega = _positive_vector("frequencies", frequencies)
    if 2 * omega.size != q.size:
        raise ValueError(f"frequencies must have len(q) / 2 = {q.size // 2} entries; got {omega.size}")
    theta = np.multiply.outer(_finite("offsets", offsets), omega)
    along = q[0::2] * kvec[0::2] + q[1::2] * kvec[1::2]
    across = q[1::2] * kvec[0::2] - q[0::2] * kvec[1::2]
    return np.cos(theta) @ along + np.sin(theta) @ across


def learned_defined(positions: ArrayLike, T_train: int) -> NDArray[np.bool_]:
    """Where a learned position table has a row: ``0 <= pos <= T_train - 1``.

    A learned table holds one trained vector per position seen in training and
    nothing else: past ``T_train - 1`` there is no value to compute, extrapolated
    or otherwise. ``positions`` are whole numbers (any shape); the result has
    their shape. For the score of position 0 with position ``k`` this is
    ``k <= T_train - 1``.
    """
    T_train = _integer("T_train", T_train, 1)
    positions = _finite("positions", positions)
    if not np.all(positions == np.floor(positions)):
        raise ValueError(f"positions must be whole numbers (a table has integer rows); got {positions!r}")
    return (positions >= 0) & (positions <= T_train - 1)
