"""The sinusoidal positional encoding of the Transformer, in NumPy.

This module is the whole mathematics of the explorable and a public API: a
teacher can import it in a notebook and get exactly the numbers the app draws.
Every function is pure and vectorised (no Python loop over positions or pairs)
and validates its arguments, raising ``ValueError`` with a message that names
the argument and the values it accepts. Nothing is coerced silently.

Notation (as in "Attention is all you need"):

    omega_i        = base ** (-2 i / d_model),           i = 0 .. d_model/2 - 1
    PE[pos, 2i]    = sin(pos * omega_i)
    PE[pos, 2i+1]  = cos(pos * omega_i)

Coordinates come in pairs; pair ``i`` holds columns ``2i`` and ``2i+1`` and
turns by ``omega_i`` radians per position, so its wavelength (how many
positions it needs to come back to where it was) is ``2 pi / omega_i``.

Example::

    >>> from app import core
    >>> core.wavelengths(32)[:3].round(1)
    array([ 6.3, 11.2, 19.9])
    >>> float(core.relative_scores(3, 32)).__round__(6)
    12.272398
"""

from __future__ import annotations

import contextlib
import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = [
    "DEFAULT_BASE",
    "angles",
    "dot_scores",
    "encoding",
    "encoding_rows",
    "expected_row_norm",
    "frequencies",
    "gram",
    "relative_scores",
    "relative_scores_range",
    "rotate",
    "rotation",
    "rotation_block",
    "rotation_residual",
    "rotation_residual_of",
    "row_norms",
    "row_norms_of",
    "wavelengths",
]

DEFAULT_BASE = 10000.0


# --------------------------------------------------------------------------
# Argument checks: one message format for every function.
# --------------------------------------------------------------------------

def _integer(name: str, value: object, minimum: int, *, even: bool = False) -> int:
    """Return ``value`` as an int, or raise naming ``name`` and its range."""
    allowed = f"an even integer >= {minimum}" if even else f"an integer >= {minimum}"
    # bool is an Integral, but d_model=True is a bug, not a size.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    value = int(value)
    if value < minimum or (even and value % 2):
        raise ValueError(f"{name} must be {allowed}; got {value}")
    return value


def _base(base: object) -> float:
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise ValueError(f"base must be a finite real number > 1; got {base!r}")
    value = float(base)
    if not math.isfinite(value) or value <= 1.0:
        raise ValueError(f"base must be a finite real number > 1; got {value}")
    return value


def _finite(name: str, value: ArrayLike) -> NDArray[np.float64]:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number or an array of them; got {value!r}") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity); got {value!r}")
    return array


def _scalar(name: str, value: object) -> float:
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single finite real number; got shape {np.shape(value)}")
    return float(_finite(name, value))


# --------------------------------------------------------------------------
# The ladder of frequencies.
# --------------------------------------------------------------------------

def frequencies(d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Angular speed of every pair, in radians per position.

    ``omega_i = base ** (-2 i / d_model)`` for ``i = 0 .. d_model/2 - 1``:
    pair 0 turns one radian per position, and each later pair is slower by
    the constant factor ``base ** (2 / d_model)``.

    Returns an array of shape ``(d_model // 2,)``.
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    base = _base(base)
    return base ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def wavelengths(d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Positions each pair needs for one full turn: ``2 pi / omega_i``.

    A geometric progression from ``2 pi`` (pair 0) up to just below
    ``2 pi * base`` (the last pair). Shape ``(d_model // 2,)``.
    """
    return 2.0 * np.pi / frequencies(d_model, base)


def angles(positions: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Angle of every pair at every position: ``pos * omega_i``.

    ``positions`` may be a scalar or an array of any shape (any real values,
    negative too); the result has shape ``positions.shape + (d_model // 2,)``.
    """
    positions = _finite("positions", positions)
    return np.multiply.outer(positions, frequencies(d_model, base))


def encoding_rows(positions: ArrayLike, d_model: int, base: float = DEFAULT_BASE,
                  dtype: DTypeLike = np.float64) -> NDArray[np.floating]:
    """Encoding vectors ``PE[pos]`` for arbitrary positions.

    Column ``2i`` is ``sin(pos * omega_i)`` and column ``2i+1`` is
    ``cos(pos * omega_i)`` (interleaved, as in the paper). The result has
    shape ``positions.shape + (d_model,)``.

    ``dtype`` is ``np.float64`` (the default) or ``np.float32``, for drawing.
    In float32 the angles are still computed in float64 and reduced to
    ``-pi .. pi`` (whole turns removed) in float64; only the sines and cosines
    of the reduced angles are float32 (about 4x faster for a 1024 x 1024
    block). Every value is then within ~3e-7 of the float64 one (the float32
    rounding of the angle and of the result). Float32 sines of the unreduced
    angles would be off by up to ~1e-4 at position 2048.
    """
    dtype = _float_dtype(dtype)
    if dtype == np.float64:
        theta = angles(positions, d_model, base)
    else:
        turns = np.multiply.outer(_finite("positions", positions), frequencies(d_model, base) / (2.0 * np.pi))
        turns -= np.rint(turns)  # the whole turns, removed exactly in float64
        turns *= 2.0 * np.pi
        theta = turns.astype(np.float32)
    rows = np.empty((*theta.shape[:-1], 2 * theta.shape[-1]), dtype=dtype)
    rows[..., 0::2] = np.sin(theta)
    rows[..., 1::2] = np.cos(theta)
    return rows


def _float_dtype(dtype: object) -> np.dtype:
    """``dtype`` as ``np.dtype`` float64 or float32, or a ``ValueError``."""
    value = None
    # np.dtype(None) is float64: a missing dtype is a bug, not a choice.
    if dtype is not None and not isinstance(dtype, bool):
        with contextlib.suppress(TypeError):
            value = np.dtype(dtype)
    if value is None or value.type not in (np.float64, np.float32):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}")
    return np.dtype(value.type)  # native byte order


def encoding(T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The positional-encoding matrix ``PE`` of shape ``(T, d_model)``, float64.

    Row ``pos`` (``pos = 0 .. T-1``) is the vector added to the embedding of
    the token at that position::

        PE[pos, 2i]   = sin(pos * base ** (-2i / d_model))
        PE[pos, 2i+1] = cos(pos * base ** (-2i / d_model))

    Row 0 is ``(0, 1, 0, 1, ...)``: every angle is zero there.
    """
    T = _integer("T", T, 1)
    return encoding_rows(np.arange(T, dtype=np.float64), d_model, base)


def row_norms(T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Euclidean length of every row of ``PE``; each equals ``sqrt(d_model / 2)``.

    (Each pair contributes ``sin^2 + cos^2 = 1``.) Shape ``(T,)``.
    """
    return row_norms_of(encoding(T, d_model, base))


def row_norms_of(pe: ArrayLike) -> NDArray[np.float64]:
    """Euclidean length of every row of an already computed table ``pe``.

    The same as ``row_norms`` for ``pe = encoding(T, d_model, base)``, for a
    caller that keeps the table and should not pay for building it again.
    ``pe`` must be 2-D, ``(T, d_model)``, with ``T >= 1`` and ``d_model`` even.
    Shape ``(T,)``.
    """
    pe = _table(pe)
    return np.linalg.norm(pe, axis=1)


def expected_row_norm(d_model: int) -> float:
    """The length every row of ``PE`` has, whatever the position: ``sqrt(d_model / 2)``.

    Each of the ``d_model / 2`` pairs is ``(sin a, cos a)``, a unit vector, so
    the squared length is ``d_model / 2`` (4.0 for ``d_model = 32``).
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    return math.sqrt(d_model / 2)


def _table(pe: ArrayLike) -> NDArray[np.float64]:
    """``pe`` as a finite float64 ``(T, d_model)`` array, or a ``ValueError``."""
    pe = _finite("pe", pe)
    if pe.ndim != 2 or pe.shape[0] < 1:
        raise ValueError(f"pe must be a 2-D table (T, d_model) with T >= 1; got shape {pe.shape}")
    _integer("pe.shape[1] (d_model)", pe.shape[1], 2, even=True)
    return pe


# --------------------------------------------------------------------------
# A fixed shift is a fixed rotation.
# --------------------------------------------------------------------------

def rotation(k: float, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The matrix ``M_k`` with ``PE[pos + k] = M_k @ PE[pos]`` for every ``pos``.

    ``M_k`` is block diagonal; the block of pair ``i`` (rows and columns
    ``2i, 2i+1``) is the rotation::

        [[ cos(omega_i k),  sin(omega_i k)],
         [-sin(omega_i k),  cos(omega_i k)]]

    It depends on the offset ``k`` only, never on ``pos``. ``k`` may be any
    real number, negative too (``M_-k`` is the inverse, and the transpose, of
    ``M_k``). Shape ``(d_model, d_model)``.
    """
    k = _scalar("k", k)
    theta = k * frequencies(d_model, base)
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    even = np.arange(0, d_model, 2)
    m[even, even] = c
    m[even, even + 1] = s
    m[even + 1, even] = -s
    m[even + 1, even + 1] = c
    return m


def rotation_block(pair: int, k: float, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The 2x2 block of ``M_k`` that turns pair ``pair`` (rows/columns ``2i, 2i+1``)::

        [[ cos(omega_i k),  sin(omega_i k)],
         [-sin(omega_i k),  cos(omega_i k)]]

    Equal to ``rotation(k, d_model, base)[2i:2i+2, 2i:2i+2]`` without building
    the ``d_model x d_model`` matrix; ``block @ (PE[pos, 2i], PE[pos, 2i+1])``
    is ``(PE[pos+k, 2i], PE[pos+k, 2i+1])`` for every ``pos``. ``pair`` is an
    integer ``0 .. d_model/2 - 1``; ``k`` any real number. Shape ``(2, 2)``.
    """
    omega = frequencies(d_model, base)
    pair = _integer("pair", pair, 0)
    if pair >= omega.size:
        raise ValueError(f"pair must be an integer in 0 .. d_model/2 - 1 = {omega.size - 1}; got {pair}")
    theta = _scalar("k", k) * omega[pair]
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]], dtype=np.float64)


def rotate(rows: ArrayLike, k: float, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Apply ``M_k`` to encoding vectors without building the matrix.

    ``rows`` has shape ``(..., d_model)``; the result equals
    ``rows @ rotation(k, d_model, base).T`` but costs ``O(d_model)`` per row
    instead of ``O(d_model**2)``, because each pair turns on its own.
    """
    k = _scalar("k", k)
    rows = _finite("rows", rows)
    if rows.ndim == 0:
        raise ValueError("rows must have at least one dimension (the d_model coordinates)")
    d_model = _integer("rows.shape[-1] (d_model)", rows.shape[-1], 2, even=True)
    theta = k * frequencies(d_model, base)
    c, s = np.cos(theta), np.sin(theta)
    sin_col, cos_col = rows[..., 0::2], rows[..., 1::2]
    out = np.empty_like(rows)
    out[..., 0::2] = c * sin_col + s * cos_col
    out[..., 1::2] = c * cos_col - s * sin_col
    return out


def rotation_residual(k: int, T: int, d_model: int, base: float = DEFAULT_BASE) -> float:
    """Largest error of the shift identity over the whole table.

    ``max |M_k PE[p] - PE[p + k]|`` over every ``p`` with both ``p`` and
    ``p + k`` in ``0 .. T-1`` (0.0 when no such ``p`` exists, ``|k| >= T``).
    In exact arithmetic it is zero; in float64 it is of the order of 1e-15.
    """
    T = _integer("T", T, 1)
    k = _offset(k)
    return rotation_residual_of(encoding(T, d_model, base), k, base)


#: Rows of the table rotated per step of ``rotation_residual_of``: about 64k
#: numbers, so the rotated block and its difference stay in the CPU cache
#: (measured ~20 % faster than one pass over a 2048 x 1024 table).
_RESIDUAL_BLOCK = 1 << 16


def _offset(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"k must be an integer (a whole number of positions); got {k!r}")
    return int(k)


def rotation_residual_of(pe: ArrayLike, k: int, base: float = DEFAULT_BASE) -> float:
    """``rotation_residual`` for a table the caller already has.

    ``max |M_k PE[p] - PE[p + k]|`` over every row ``p`` of ``pe`` whose
    ``p + k`` is also a row (0.0 when none is, ``|k| >= T``). ``pe`` must be
    ``encoding(T, d_model, base)`` for the same ``base`` for the result to mean
    anything; it is not recomputed, which is the point: a view that keeps the
    table pays only for the rotation when ``k`` changes.
    """
    pe = _table(pe)
    k = _offset(k)
    base = _base(base)
    T, d_model = pe.shape
    if abs(k) >= T:
        return 0.0
    start, stop = (0, T - k) if k >= 0 else (-k, T)
    step = max(1, _RESIDUAL_BLOCK // d_model)
    worst = 0.0
    for first in range(start, stop, step):
        last = min(stop, first + step)
        diff = rotate(pe[first:last], k, base)
        diff -= pe[first + k:last + k]
        worst = max(worst, float(np.max(np.abs(diff, out=diff))))
    return worst


# --------------------------------------------------------------------------
# What a dot product can see.
# --------------------------------------------------------------------------

def relative_scores(k: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Score of two positions ``k`` apart: ``S(k) = sum_i cos(omega_i k)``.

    Equals ``PE[p] . PE[p + k]`` for every start ``p`` (by
    ``cos(A - B) = cos A cos B + sin A sin B`` pair by pair), so it depends on
    the distance only. ``S(0) = d_model / 2`` is the maximum, ``S(-k) = S(k)``,
    and S is not monotone in ``|k|``. ``k`` may be a scalar or an array of
    any shape (real values); the result has the same shape.
    """
    k = _finite("k", k)
    return np.cos(np.multiply.outer(k, frequencies(d_model, base))).sum(axis=-1)


def relative_scores_range(count: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """``S(k)`` for every offset ``k = 0 .. count-1``: ``relative_scores(np.arange(count), ...)``, faster.

    Write ``k = a + B*b`` with ``B`` about ``sqrt(count)``, ``0 <= a < B``. By
    ``cos(x + y) = cos x cos y - sin x sin y`` pair by pair::

        S(a + B b) = sum_i cos(omega_i B b) cos(omega_i a) - sin(omega_i B b) sin(omega_i a)

    so the whole range is two matrix products of ``(count/B, d_model/2)`` and
    ``(d_model/2, B)`` tables of cosines and sines: about
    ``2 sqrt(count) d_model`` of them instead of ``count d_model / 2``
    (0.1 M instead of 1 M at ``count = 2048``, ``d_model = 1024``). The same
    numbers to rounding: within ``1e-16 * d_model * (count + d_model)`` of
    ``relative_scores`` (the angles' rounding and the sums'; ~1e-12 at that
    size). ``S(0)`` is exactly ``d_model / 2``. Shape ``(count,)``.
    """
    count = _integer("count", count, 1)
    omega = frequencies(d_model, base)
    block = math.isqrt(count - 1) + 1  # B, with B * B >= count
    fine = np.multiply.outer(np.arange(block, dtype=np.float64), omega)  # angles of a = 0 .. B-1
    coarse = np.multiply.outer(np.arange(0, count, block, dtype=np.float64), omega)  # of B*b
    # [b, a] is S(B*b + a). einsum, not @: at these sizes OpenBLAS splits a product over two threads,
    # and on a busy 2-core server the caller waits for the second one's turn and its spinning slows
    # what follows (a size change at 2048 x 1024, in process under load: ~50-75 ms with @, ~15 ms
    # with einsum, whose loop stays in this thread: ~0.6 ms here).
    scores = (np.einsum("bi,ai->ba", np.cos(coarse), np.cos(fine))
              - np.einsum("bi,ai->ba", np.sin(coarse), np.sin(fine)))
    return scores.reshape(-1)[:count]


def dot_scores(p: ArrayLike, q: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """``PE[p] . PE[q]`` computed from the encoding rows themselves.

    The dot product of the two ``d_model``-long rows, not the closed form
    ``relative_scores(q - p)``: the two agree (to rounding) and that agreement
    is what the explorable shows. ``p`` and ``q`` are positions (any real
    values) that broadcast against each other; the result has their
    broadcast shape. Costs ``O(d_model)`` per pair, so it stays cheap for a
    few hundred pairs where ``gram`` would build a ``T x T`` matrix; the row
    of a position that occurs several times is computed once.
    """
    p, q = _finite("p", p), _finite("q", q)
    try:
        p, q = np.broadcast_arrays(p, q)
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    # A few starts against a grid of targets repeat positions many times: sines once per position.
    positions, index = np.unique(np.concatenate([p.ravel(), q.ravel()]), return_inverse=True)
    rows = encoding_rows(positions, d_model, base)
    return np.einsum("...j,...j->...", rows[index[:p.size].reshape(p.shape)], rows[index[p.size:].reshape(q.shape)])


def gram(T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """All pairwise scores ``PE @ PE.T``, shape ``(T, T)``.

    Entry ``[p, q]`` equals ``S(q - p)``: the matrix is constant along every
    diagonal (a Toeplitz matrix), with ``d_model / 2`` on the main one.
    """
    pe = encoding(T, d_model, base)
    return pe @ pe.T


# ==========================================================================
# Past the lesson: sections «terms» (the score as a sum of clocks), «gram»
# (the Gram matrix and distances between encodings) and «rope» (rotary
# position embedding against the additive scheme).
# ==========================================================================

__all__ += [
    "additive_scores",
    "band_terms",
    "encoding_distances",
    "gram_sampled",
    "pair_bands",
    "rope_relative",
    "rope_rotate",
    "rope_rotation",
    "rope_scores",
    "score_terms",
    "seeded_head",
]


def score_terms(k: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Every pair's term of the score: ``cos(omega_i k)``, shape ``k.shape + (d_model // 2,)``.

    Their sum over the last axis is ``S(k) = sum_i cos(omega_i k)`` (``relative_scores``).
    Fast pairs (small ``i``) swing between -1 and 1 within a few positions; slow pairs stay
    near 1 for many, which is what holds ``S`` up far from ``k = 0``.
    """
    return np.cos(angles(k, d_model, base))


def pair_bands(d_model: int, most: int = 32) -> NDArray[np.int64]:
    """Where each band of consecutive pairs starts, when at most ``most`` rows can be drawn.

    Every pair is its own band while ``d_model / 2 <= most``; beyond, bands of
    ``ceil((d_model/2) / most)`` consecutive pairs (the last one possibly shorter).
    Returns the first pair of every band, increasing, starting at 0; band ``b``
    holds pairs ``starts[b] .. starts[b+1] - 1`` (the last up to ``d_model/2 - 1``).
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    most = _integer("most", most, 1)
    size = -(-(d_model // 2) // most)
    return np.arange(0, d_model // 2, size, dtype=np.int64)


def band_terms(k: ArrayLike, d_model: int, base: float = DEFAULT_BASE,
               starts: ArrayLike | None = None) -> NDArray[np.float64]:
    """Sum of ``cos(omega_i k)`` over the pairs of each band, shape ``k.shape + (bands,)``.

    ``starts`` are the bands' first pairs (``pair_bands``; default: one band per pair).
    Band ``b`` holds ``sum_{i = starts[b]}^{starts[b+1] - 1} cos(omega_i k)``, so the bands
    still add up to ``S(k)`` exactly (to rounding): nothing is left out, only grouped.
    """
    terms = score_terms(k, d_model, base)
    if starts is None:
        return terms
    starts = np.asarray(starts)
    pairs = d_model // 2
    if (starts.ndim != 1 or starts.size == 0 or starts[0] != 0 or np.any(np.diff(starts) <= 0)
            or starts[-1] >= pairs or not np.issubdtype(starts.dtype, np.integer)):
        raise ValueError(f"starts must be increasing integers from 0, each below d_model/2 = {pairs}; got {starts!r}")
    return np.add.reduceat(terms, starts, axis=-1)


def encoding_distances(p: ArrayLike, q: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Squared distance between two encodings: ``|PE_p - PE_q|^2 = d_model - 2 S(q - p)``.

    Every row has squared length ``d_model / 2`` (each pair is a unit vector), so
    ``|PE_p - PE_q|^2 = |PE_p|^2 + |PE_q|^2 - 2 PE_p . PE_q = d_model - 2 S(q - p)``:
    zero for ``p = q``, the same for every two positions the same distance apart.
    ``p`` and ``q`` broadcast together; the result has their broadcast shape.
    """
    p, q = _finite("p", p), _finite("q", q)
    try:
        offsets = np.subtract(q, p)
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    d_model = _integer("d_model", d_model, 2, even=True)
    return d_model - 2.0 * relative_scores(offsets, d_model, base)


def gram_sampled(T: int, d_model: int, base: float = DEFAULT_BASE,
                 most: int = 256) -> tuple[NDArray[np.float64], int]:
    """The Gram matrix ``PE @ PE.T`` at every ``stride``-th position: ``(G, stride)``.

    ``stride = ceil(T / most)`` (1 while ``T <= most``, then ``G`` is ``gram(T, ...)``);
    entry ``[a, b]`` is ``G[a stride, b stride] = S((b - a) stride)``: exact values at the
    positions ``0, stride, 2 stride, ...`` (nothing averaged), so with ``stride > 1`` pairs
    faster than the stride are sampled, not smoothed. Shape ``(n, n)``, ``n = ceil(T / stride)``.
    Built from the ``n`` distinct scores of a Toeplitz matrix, not from ``PE``.
    """
    T = _integer("T", T, 1)
    most = _integer("most", most, 1)
    stride = -(-T // most)
    n = -(-T // stride)
    index = np.arange(n)
    scores = relative_scores(stride * np.arange(-(n - 1), n, dtype=np.float64), d_model, base)
    return scores[index[None, :] - index[:, None] + (n - 1)], stride


def rope_rotation(m: float, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The rotary embedding's matrix ``R_m``: block diagonal, pair ``i`` turned by ``m omega_i``::

        [[cos(m omega_i), -sin(m omega_i)],
         [sin(m omega_i),  cos(m omega_i)]]

    (Su et al. 2021, "RoFormer", pairs of neighbouring coordinates, the same ladder
    ``omega_i = base ** (-2i / d_model)`` as the encoding). ``R_m^T R_n = R_{n-m}``, so
    ``(R_m q) . (R_n k) = q^T R_{n-m} k`` depends on ``n - m`` alone. Beware the
    orientation: ``rotation(k)`` moves ``PE[p]`` (pairs stored as ``(sin, cos)``) to
    ``PE[p + k]`` and equals ``R_{-k}``. Shape ``(d_model, d_model)``.
    """
    return rotation(-_scalar("m", m), d_model, base)


def rope_rotate(x: ArrayLike, positions: ArrayLike, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """``R_m x`` for vectors ``x`` (shape ``(..., d_model)``) at positions ``m``, without the matrix.

    Pair ``i`` of ``x``, ``(x_2i, x_2i+1)``, becomes
    ``(x_2i cos(m omega_i) - x_2i+1 sin(m omega_i), x_2i sin(m omega_i) + x_2i+1 cos(m omega_i))``.
    ``positions`` broadcasts against ``x.shape[:-1]``.
    """
    x = _finite("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension (the d_model coordinates)")
    d_model = _integer("x.shape[-1] (d_model)", x.shape[-1], 2, even=True)
    theta = angles(positions, d_model, base)
    try:
        shape = np.broadcast_shapes(theta.shape, x[..., 0::2].shape)
    except ValueError:
        raise ValueError(f"positions must broadcast against x.shape[:-1] = {x.shape[:-1]}; "
                         f"got shape {np.shape(positions)}") from None
    c, s = np.cos(theta), np.sin(theta)
    first, second = x[..., 0::2], x[..., 1::2]
    out = np.empty((*shape[:-1], d_model), dtype=np.float64)
    out[..., 0::2] = first * c - second * s
    out[..., 1::2] = first * s + second * c
    return out


def _vector(name: str, value: ArrayLike) -> NDArray[np.float64]:
    value = _finite(name, value)
    if value.ndim != 1:
        raise ValueError(f"{name} must be a vector of d_model numbers; got shape {value.shape}")
    _integer(f"len({name}) (d_model)", value.size, 2, even=True)
    return value


def rope_scores(q: ArrayLike, k: ArrayLike, count: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Rotary scores ``score[m, n] = (R_m q) . (R_n k)`` for ``m, n = 0 .. count-1``.

    The same query ``q`` and key ``k`` (vectors of ``d_model`` numbers) at every
    position, turned by their positions. Equals ``rope_relative(q, k, n - m)``: every
    diagonal is constant. Shape ``(count, count)``.
    """
    q, k = _vector("q", q), _vector("k", k)
    if q.size != k.size:
        raise ValueError(f"q and k must have the same length; got {q.size} and {k.size}")
    count = _integer("count", count, 1)
    positions = np.arange(count, dtype=np.float64)
    return rope_rotate(q, positions, base) @ rope_rotate(k, positions, base).T


def rope_relative(q: ArrayLike, k: ArrayLike, offsets: ArrayLike, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """``f(n - m) = q^T R_{n-m} k``, the rotary score as a function of the offset alone::

        f(d) = sum_i (q_2i k_2i + q_2i+1 k_2i+1) cos(d omega_i) + (q_2i+1 k_2i - q_2i k_2i+1) sin(d omega_i)

    ``offsets`` any shape; the result has that shape.
    """
    q, k = _vector("q", q), _vector("k", k)
    if q.size != k.size:
        raise ValueError(f"q and k must have the same length; got {q.size} and {k.size}")
    theta = angles(offsets, q.size, base)
    along = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    across = q[1::2] * k[0::2] - q[0::2] * k[1::2]
    return np.cos(theta) @ along + np.sin(theta) @ across


def additive_scores(e: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, count: int,
                    base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Scores of the additive scheme, the same word ``e`` at every position::

        score[m, n] = (W_Q (e + PE_m)) . (W_K (e + PE_n))
                    = e'Ae + e'A PE_n + PE_m'A e + PE_m'A PE_n,   A = W_Q^T W_K

    for ``m, n = 0 .. count-1``. Only the last term sees both positions, and it depends
    on ``n - m`` alone only for special ``A`` (e.g. a scaled rotation per pair); the two
    cross terms depend on ``m`` and on ``n`` separately. Shape ``(count, count)``.
    """
    e = _vector("e", e)
    d_model = e.size
    w_q, w_k = _finite("w_q", w_q), _finite("w_k", w_k)
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        if w.shape != (d_model, d_model):
            raise ValueError(f"{name} must be a (d_model, d_model) = ({d_model}, {d_model}) matrix; got {w.shape}")
    x = e + encoding(count, d_model, base)
    return (x @ w_q.T) @ (x @ w_k.T).T


def seeded_head(d_model: int, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """A reproducible word and attention head: ``(e, W_Q, W_K)``.

    ``e`` has standard normal coordinates (length about ``sqrt(d_model)``, comparable to a
    row of PE, ``sqrt(d_model / 2)``); ``W_Q`` and ``W_K`` have normal entries of variance
    ``1 / d_model``, so they keep lengths about the same. The same ``seed`` always
    gives the same numbers (NumPy's PCG64).
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    seed = _integer("seed", seed, 0)
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(d_model)
    scale = 1.0 / math.sqrt(d_model)
    return e, rng.standard_normal((d_model, d_model)) * scale, rng.standard_normal((d_model, d_model)) * scale
