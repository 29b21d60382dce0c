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
    "count_within",
    "dot_scores",
    "encoding",
    "encoding_rows",
    "expected_row_norm",
    "frequencies",
    "gram",
    "ladder_step",
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


def ladder_step(d_model: int, base: float = DEFAULT_BASE) -> float:
    """The factor between consecutive wavelengths: ``base ** (2 / d_model)``.

    ``wavelengths(d_model, base)[i + 1] / wavelengths(d_model, base)[i]`` for every
    ``i``; defined for one pair too (``d_model = 2``: ``base``), where the ladder has
    one rung and the factor is that of the next rung it would have.
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    return float(_base(base) ** (2.0 / d_model))


def count_within(wavelengths: ArrayLike, T: int) -> int:
    """How many of ``wavelengths`` are at most ``T``: ``#{i : lambda_i <= T}``.

    The ladder's bars drawn under its ``T`` line (pairs, ``wavelengths``, or
    columns, ``column_wavelengths``). A wavelength with ``T - 1 < lambda <= T``
    counts, though its full turn needs one row more than the table's rows
    ``0 .. T-1`` hold.
    """
    T = _integer("T", T, 1)
    return int(np.count_nonzero(_finite("wavelengths", wavelengths) <= T))


def angles(positions: ArrayLike, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Angle of every pair at every position: ``pos * omega_i``.

    ``positions`` may be a scalar or an array of any shape (any real values,
    negative too); the result has shape ``positions.shape + (d_model // 2,)``.
    """
    positions = _finite("positions", positions)
    return np.multiply.outer(positions, frequencies(d_model, base))


def encoding_rows(positions: ArrayLike, d_model: int, base: float = DEFAULT_BASE,
                  dtype: DTypeLike = np.float64, mistake: str = "none") -> NDArray[np.floating]:
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

    ``mistake`` (default ``"none"``, the correct encoding) builds instead one
    of the published bugs of ``MISTAKES``; see ``mistake_columns`` for their
    exact column formulas.
    """
    dtype = _float_dtype(dtype)
    if mistake != "none":
        return _mistaken_rows(positions, d_model, base, dtype, mistake)
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


def encoding(T: int, d_model: int, base: float = DEFAULT_BASE, mistake: str = "none") -> NDArray[np.float64]:
    """The positional-encoding matrix ``PE`` of shape ``(T, d_model)``, float64.

    Row ``pos`` (``pos = 0 .. T-1``) is the vector added to the embedding of
    the token at that position::

        PE[pos, 2i]   = sin(pos * base ** (-2i / d_model))
        PE[pos, 2i+1] = cos(pos * base ** (-2i / d_model))

    Row 0 is ``(0, 1, 0, 1, ...)``: every angle is zero there. ``mistake``
    (default ``"none"``) builds one of the bugs of ``MISTAKES`` instead
    (``mistake_columns``).
    """
    T = _integer("T", T, 1)
    return encoding_rows(np.arange(T, dtype=np.float64), d_model, base, mistake=mistake)


def row_norms(T: int, d_model: int, base: float = DEFAULT_BASE, mistake: str = "none") -> NDArray[np.float64]:
    """Euclidean length of every row of ``PE``; each equals ``sqrt(d_model / 2)``.

    (Each pair contributes ``sin^2 + cos^2 = 1``.) Shape ``(T,)``. Under a
    ``mistake`` other than ``"none"`` (``mistake_columns``) the lengths of that
    table, which vary with the position for every bug but ``split_layout``.
    """
    return row_norms_of(encoding(T, d_model, base, mistake))


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
    return _block_rotations(np.cos(theta), np.sin(theta))


def _block_rotations(c: NDArray[np.float64], s: NDArray[np.float64]) -> NDArray[np.float64]:
    """The block-diagonal matrix whose block ``i`` is ``[[c_i, s_i], [-s_i, c_i]]`` (a scaled rotation).

    With ``c_i = r cos(phi)``, ``s_i = r sin(phi)`` it maps a pair ``(sin a, cos a)`` to
    ``r (sin(a + phi), cos(a + phi))``: the convention of ``rotation``.
    """
    m = np.zeros((2 * c.size, 2 * c.size), dtype=np.float64)
    even = np.arange(0, 2 * c.size, 2)
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


def dot_scores(p: ArrayLike, q: ArrayLike, d_model: int, base: float = DEFAULT_BASE,
               mistake: str = "none") -> NDArray[np.float64]:
    """``PE[p] . PE[q]`` computed from the encoding rows themselves.

    The dot product of the two ``d_model``-long rows, not the closed form
    ``relative_scores(q - p)``: the two agree (to rounding) and that agreement
    is what the explorable shows. ``p`` and ``q`` are positions (any real
    values) that broadcast against each other; the result has their
    broadcast shape. Costs ``O(d_model)`` per pair, so it stays cheap for a
    few hundred pairs where ``gram`` would build a ``T x T`` matrix; the row
    of a position that occurs several times is computed once. Under a
    ``mistake`` (``mistake_columns``) the rows are that bug's, and the products
    then depend on ``p`` as well as on ``q - p`` (but for ``split_layout``).
    """
    p, q = _finite("p", p), _finite("q", q)
    try:
        p, q = np.broadcast_arrays(p, q)
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    # A few starts against a grid of targets repeat positions many times: sines once per position.
    positions, index = np.unique(np.concatenate([p.ravel(), q.ravel()]), return_inverse=True)
    rows = encoding_rows(positions, d_model, base, mistake=mistake)
    return np.einsum("...j,...j->...", rows[index[:p.size].reshape(p.shape)], rows[index[p.size:].reshape(q.shape)])


def gram(T: int, d_model: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """All pairwise scores ``PE @ PE.T``, shape ``(T, T)``.

    Entry ``[p, q]`` equals ``S(q - p)``: the matrix is constant along every
    diagonal (a Toeplitz matrix), with ``d_model / 2`` on the main one.
    """
    pe = encoding(T, d_model, base)
    return pe @ pe.T


# ==========================================================================
# Lesson sections «hands», «quiz», «question»: a word's vector with its position added.
# ==========================================================================

__all__ += ["add_position", "seeded_word_vector"]


def seeded_word_vector(d_model: int, seed: int = 0, scale: float = 0.5) -> NDArray[np.float64]:
    """A stand-in for a word's embedding ``e``, the same for the same arguments.

    ``e = scale * z`` with ``z`` drawn from the standard normal distribution by
    ``numpy.random.default_rng(seed)``: ``d_model`` coordinates, nothing learned.
    Shape ``(d_model,)``.
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    seed = _integer("seed", seed, 0)
    scale = _scalar("scale", scale)
    if scale <= 0:
        raise ValueError(f"scale must be a finite real number > 0; got {scale}")
    return scale * np.random.default_rng(seed).standard_normal(d_model)


def add_position(embedding: ArrayLike, pos: float, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The vector the first layer receives: ``x = e + PE[pos]``.

    ``embedding`` is ``e``, a vector of even length ``d_model``; the position is
    added once, coordinate by coordinate, before any attention. Shape ``(d_model,)``.
    """
    e = _finite("embedding", embedding)
    if e.ndim != 1 or e.size < 2 or e.size % 2:
        raise ValueError(f"embedding must be a vector of even length >= 2; got shape {e.shape}")
    return e + encoding_rows(_scalar("pos", pos), e.size, base)


# ==========================================================================
# Lesson sections «score» (what a score can see) and «sum» (sum or concatenate).
# ==========================================================================
#
# The layer does not score PE_m . PE_n: it scores q . k with q = W_Q x_m,
# k = W_K x_n and x = e + PE, so a score splits into four terms. The token
# embeddings e and the weights W_Q, W_K below are seeded random stand-ins
# (nothing is trained here): the same seed gives the same numbers everywhere.

__all__ += [
    "EMBEDDING_SEED",
    "HEADS",
    "HEAD_SEED",
    "SCORE_TERMS",
    "concatenated_scores",
    "concatenated_wavelengths",
    "cross_term_spread",
    "cross_terms_by_start",
    "cross_terms_by_start_of",
    "embeddings",
    "head_weights",
    "position_term_by_start",
    "position_term_by_start_of",
    "qk_terms",
    "qk_terms_of",
    "query_key_matrix",
]

#: Seed of the stand-in token embeddings ``e_t``, and of the query/key weights.
EMBEDDING_SEED = 2017
HEAD_SEED = 1706
#: How the query and key weights are drawn.
HEADS = ("random", "aligned")
#: The four terms of a score, in the order ``qk_terms`` returns them.
SCORE_TERMS = ("ee", "ep", "pe", "pp")


def _heads(heads: object) -> str:
    if heads not in HEADS:
        raise ValueError(f"heads must be one of {HEADS}; got {heads!r}")
    return str(heads)
# Lesson sections «order» and «simpler»: attention reads a bag of words, and
# the three easy ways of writing position (the raw number, pos/T, a learned
# table) each fail. Added as one block; see the two sections' prose.
# ==========================================================================

__all__ += [
    "attention_head",
    "learned_table",
    "match_occurrences",
    "neighbour_similarity",
    "order_differences",
    "raw_position_rows",
    "raw_position_share",
    "relative_position",
    "same_ratio_token",
    "self_attention",
    "table_dot_scores",
    "word_embeddings",
]

import functools as _functools  # noqa: E402  (kept inside this section's block)
import zlib as _zlib  # noqa: E402
from collections.abc import Sequence as _Sequence  # noqa: E402


def _seed(seed: object) -> int:
    return _integer("seed", seed, 0)


def _half_normal_rows(name: str, rows: object, d_model: object, seed: list[int]) -> NDArray[np.float64]:
    """``rows`` (called ``name``) rows of ``d_model`` independent ``N(0, 1/2)`` entries, drawn row after row by
    a generator seeded with ``seed + [d_model]``: row ``t`` does not depend on how many rows are drawn."""
    rows = _integer(name, rows, 1)
    d_model = _integer("d_model", d_model, 2, even=True)
    return np.random.default_rng([*seed, d_model]).standard_normal((rows, d_model)) * math.sqrt(0.5)


def embeddings(T: int, d_model: int, seed: int = EMBEDDING_SEED) -> NDArray[np.float64]:
    """Stand-in token embeddings ``e_t`` for positions ``t = 0 .. T-1``, shape ``(T, d_model)``.

    Every entry is drawn independently from ``N(0, 1/2)`` by a generator seeded
    with ``(seed, d_model)``, row after row, so that::

        E |e_t|^2 = d_model / 2 = |PE_t|^2

    (a meaning as large as a position, on average), and the row of position
    ``t`` does not depend on ``T``: ``embeddings(T, d)[t] == embeddings(T', d)[t]``.
    """
    return _half_normal_rows("T", T, d_model, [_seed(seed)])


def _scaled_rotations(d_model: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Block diagonal ``B``: block ``i`` is ``s_i R(phi_i)``, ``s_i`` in [0.5, 1.5], ``phi_i`` in [-pi, pi]."""
    pairs = d_model // 2
    s = rng.uniform(0.5, 1.5, pairs)
    phi = rng.uniform(-np.pi, np.pi, pairs)
    # The convention of ``rotation``: R(phi) (sin a, cos a) = (sin(a + phi), cos(a + phi)).
    return _block_rotations(s * np.cos(phi), s * np.sin(phi))


def head_weights(d_model: int, heads: str = "random",
                 seed: int = HEAD_SEED) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Seeded query and key weights ``(W_Q, W_K)``, each ``(d_model, d_model)``.

    ``heads = "random"``: every entry of both drawn from ``N(0, 1/d_model)``
    (so ``|W x|`` is about ``|x|``); ``W_Q^T W_K`` then mixes every pair with
    every other and the position-position term is not a function of ``n - m``.

    ``heads = "aligned"``: ``W_Q = R``, a random orthogonal matrix (the Q of the
    QR factorisation of a Gaussian matrix), and ``W_K = R B`` with ``B`` block
    diagonal, block ``i`` the scaled rotation::

        s_i [[ cos phi_i,  sin phi_i],
             [-sin phi_i,  cos phi_i]]

    so ``W_Q^T W_K = R^T R B = B`` and, pair by pair,
    ``PE_m^T B PE_n = sum_i s_i cos(omega_i (n - m) + phi_i)``: a function of
    ``n - m`` only, whatever ``base``.
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    heads = _heads(heads)
    rng = np.random.default_rng([_seed(seed), d_model, HEADS.index(heads)])
    if heads == "random":
        w = rng.standard_normal((2, d_model, d_model)) / math.sqrt(d_model)
        return w[0], w[1]
    q, r = np.linalg.qr(rng.standard_normal((d_model, d_model)))
    q *= np.where(np.diag(r) < 0, -1.0, 1.0)  # the sign convention that makes Q uniformly distributed
    b = _scaled_rotations(d_model, rng)
    return q, q @ b


def query_key_matrix(d_model: int, heads: str = "random", seed: int = HEAD_SEED) -> NDArray[np.float64]:
    """``A = W_Q^T W_K`` of ``head_weights``, shape ``(d_model, d_model)``: a score is ``x_m^T A x_n``."""
    w_q, w_k = head_weights(d_model, heads, seed)
    return w_q.T @ w_k


def _square(name: str, a: ArrayLike, d_model: int) -> NDArray[np.float64]:
    a = _finite(name, a)
    if a.shape != (d_model, d_model):
        raise ValueError(f"{name} must have shape ({d_model}, {d_model}); got {a.shape}")
    return a


def _position(name: str, value: object, T: int) -> int:
    value = _integer(name, value, 0)
    if value >= T:
        raise ValueError(f"{name} must be an integer in 0 .. T-1 = {T - 1}; got {value}")
    return value


def qk_terms(m: int, n: int, T: int, d_model: int, heads: str = "random", base: float = DEFAULT_BASE,
                embedding_seed: int = EMBEDDING_SEED, head_seed: int = HEAD_SEED) -> NDArray[np.float64]:
    """The four terms of the score of position ``m`` (query) against ``n`` (key).

    With ``x_t = e_t + PE_t`` (``embeddings``, ``encoding``) and
    ``A = W_Q^T W_K`` (``query_key_matrix``)::

        q^T k = (W_Q x_m)^T (W_K x_n) = x_m^T A x_n
              = e_m^T A e_n + e_m^T A PE_n + PE_m^T A e_n + PE_m^T A PE_n
                (ee)          (ep)           (pe)           (pp)

    Returns ``[ee, ep, pe, pp]`` (the order of ``SCORE_TERMS``); their sum is
    ``q^T k``. ``m`` and ``n`` are rows of the table, ``0 .. T-1``.
    """
    T = _integer("T", T, 1)
    m, n = _position("m", m, T), _position("n", n, T)
    return qk_terms_of(embeddings(T, d_model, embedding_seed), encoding(T, d_model, base),
                          query_key_matrix(d_model, heads, head_seed), m, n)


def qk_terms_of(e: ArrayLike, pe: ArrayLike, a: ArrayLike, m: int, n: int) -> NDArray[np.float64]:
    """``qk_terms`` from tables the caller keeps: ``e`` and ``pe`` ``(T, d_model)``, ``a = W_Q^T W_K``.

    ``[e_m^T A e_n, e_m^T A PE_n, PE_m^T A e_n, PE_m^T A PE_n]``; costs two
    vector-matrix products (``2 d_model^2``), nothing per position.
    """
    pe = _table(pe)
    T, d_model = pe.shape
    e = _finite("e", e)
    if e.shape != pe.shape:
        raise ValueError(f"e must have the shape of pe, {pe.shape}; got {e.shape}")
    a = _square("a", a, d_model)
    m, n = _position("m", m, T), _position("n", n, T)
    left = np.stack([e[m], pe[m]]) @ a  # e_m^T A, PE_m^T A
    right = np.stack([e[n], pe[n]])
    both = left @ right.T  # [[ee, ep], [pe, pp]]
    return both.reshape(-1)


def position_term_by_start(k: int, T: int, d_model: int, heads: str = "random", base: float = DEFAULT_BASE,
                           head_seed: int = HEAD_SEED) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The position-position term ``PE_m^T A PE_(m+k)`` for every start ``m`` at offset ``k``.

    ``A = W_Q^T W_K`` (``query_key_matrix``). The starts are every ``m`` with
    ``0 <= m`` and ``m + k <= T-1`` (none when ``|k| >= T``). Returns
    ``(starts, values)``. With ``A`` the identity this is ``S(k)`` for every
    start; with aligned heads it is ``sum_i s_i cos(omega_i k + phi_i)`` for
    every start; with random heads it changes with ``m``.
    """
    T = _integer("T", T, 1)
    pe = encoding(T, d_model, base)
    return position_term_by_start_of(pe @ query_key_matrix(d_model, heads, head_seed), pe, k)


def _starts(k: int, T: int) -> NDArray[np.int64]:
    """Every ``m`` with ``0 <= m`` and ``0 <= m + k <= T-1``, in order (empty when ``|k| >= T``)."""
    return np.arange(max(0, -k), max(max(0, -k), T - max(0, k)), dtype=np.int64)


def _rows(starts: NDArray[np.int64], k: int) -> tuple[slice, slice]:
    """Rows ``m`` and ``m + k`` of the starts as slices: views, where an index array would copy the rows."""
    first = int(starts[0]) if starts.size else 0
    return slice(first, first + starts.size), slice(first + k, first + k + starts.size)


def _start_rows(name: str, table: ArrayLike, pe: ArrayLike, k: int
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], slice, slice]:
    """``table`` (called ``name``) and ``pe`` checked to be finite tables of one shape, the starts for ``k``
    (``_starts``) and the rows ``m`` and ``m + k`` of those starts (``_rows``)."""
    pe = _table(pe)
    table = _finite(name, table)
    if table.shape != pe.shape:
        raise ValueError(f"{name} must have the shape of pe, {pe.shape}; got {table.shape}")
    k = _offset(k)
    starts = _starts(k, pe.shape[0])
    here, there = _rows(starts, k)
    return table, pe, starts, here, there


def position_term_by_start_of(pe_a: ArrayLike, pe: ArrayLike, k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``position_term_by_start`` from ``pe_a = PE A`` and ``pe = PE`` (both ``(T, d_model)``), kept by the caller.

    Row ``m`` of ``PE A`` is ``PE_m^T A``, so each start costs one dot product
    of length ``d_model`` (``O(T d_model)`` in all), not a matrix product: a
    change of ``k`` alone stays cheap at any size.
    """
    pe_a, pe, starts, here, there = _start_rows("pe_a", pe_a, pe, k)
    return starts, np.einsum("ij,ij->i", pe_a[here], pe[there])


def cross_terms_by_start(k: int, T: int, d_model: int, base: float = DEFAULT_BASE,
                         embedding_seed: int = EMBEDDING_SEED) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The cross terms of ``x_m . x_(m+k)`` with ``x = e + PE`` (no weights), for every start ``m``.

    ``x_m . x_n = e_m . e_n + (e_m . PE_n + PE_m . e_n) + PE_m . PE_n``; this
    returns the middle part, which concatenating ``[e; PE]`` instead of summing
    removes by construction. With ``e`` from ``embeddings`` (entries
    ``N(0, 1/2)``) it has mean 0 and variance ``d_model / 2`` for ``k != 0``
    (``2 d_model / 2 = d_model`` at ``k = 0``), against ``PE_m . PE_n = S(k) <= d_model / 2``.
    Starts as in ``position_term_by_start``; returns ``(starts, values)``.
    """
    T = _integer("T", T, 1)
    return cross_terms_by_start_of(embeddings(T, d_model, embedding_seed), encoding(T, d_model, base), k)


def cross_terms_by_start_of(e: ArrayLike, pe: ArrayLike, k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``cross_terms_by_start`` from tables the caller keeps (``e`` and ``pe``, both ``(T, d_model)``)."""
    e, pe, starts, here, there = _start_rows("e", e, pe, k)
    return starts, np.einsum("ij,ij->i", e[here], pe[there]) + np.einsum("ij,ij->i", pe[here], e[there])


def concatenated_wavelengths(reserve: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The ladder ``reserve`` coordinates kept for position can hold: ``wavelengths(reserve, base)``.

    ``reserve / 2`` pairs, from ``2 pi`` up to ``2 pi base^(1 - 2/reserve)``,
    each ``base^(2/reserve)`` times the last; an empty array for ``reserve = 0``.
    """
    reserve = _integer("reserve", reserve, 0, even=True)
    return wavelengths(reserve, base) if reserve else np.empty(0, dtype=np.float64)


def concatenated_scores(k: ArrayLike, reserve: int, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """``PE_p . PE_(p+k)`` when the encoding has only the ``reserve`` coordinates kept for it.

    ``S_r(k) = sum_(i < r/2) cos(k base^(-2i/r))`` = ``relative_scores(k, reserve, base)``:
    at most ``reserve / 2`` (at ``k = 0``); 0 for ``reserve = 0`` (an empty sum).
    Same shape as ``k``.
    """
    reserve = _integer("reserve", reserve, 0, even=True)
    k = _finite("k", k)
    return relative_scores(k, reserve, base) if reserve else np.zeros(k.shape, dtype=np.float64)


def cross_term_spread(k: int, d_model: int) -> float:
    """Standard deviation of one start's cross terms ``e_m . PE_(m+k) + PE_m . e_(m+k)`` (``embeddings``' e).

    Each entry of ``e`` is ``N(0, 1/2)`` and ``|PE_t|^2 = d_model / 2``, so
    ``e_m . PE_n`` has variance ``d_model / 4``. For ``k != 0`` the two terms
    use independent rows: variance ``d_model / 2``, spread ``sqrt(d_model / 2)``.
    At ``k = 0`` they are the same term twice: ``2 e_m . PE_m``, spread
    ``sqrt(d_model)``. Against a positional term of at most ``d_model / 2``
    the ratio is ``sqrt(2 / d_model)``: smaller, never zero, as the width grows.
    """
    k = _offset(k)
    d_model = _integer("d_model", d_model, 2, even=True)
    return math.sqrt(d_model) if k == 0 else math.sqrt(d_model / 2)
def _words(name: str, words: object) -> list[str]:
    if isinstance(words, str) or not isinstance(words, _Sequence) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{name} must be a sequence of words (strings), not a single string; got {words!r}")
    if not all(w.strip() for w in words):
        raise ValueError(f"{name} must hold non-empty words; got {list(words)!r}")
    return [w.strip() for w in words]


def word_embeddings(words: _Sequence[str], d_model: int, seed: int = 0) -> NDArray[np.float64]:
    """One seeded random embedding per word, every value uniform in ``[-1, 1]``.

    Row ``j`` is drawn from ``numpy.random.default_rng([crc32(lower(w_j)), seed])``:
    it depends only on the word (case ignored), ``d_model`` and ``seed``, the same
    in every process (``zlib.crc32``, not Python's salted ``hash``), and the same
    word gives the same row wherever it stands. Shape ``(len(words), d_model)``.
    """
    words = _words("words", words)
    d_model = _integer("d_model", d_model, 2, even=True)
    seed = _seed(seed)
    rows = np.empty((len(words), d_model), dtype=np.float64)
    for j, word in enumerate(words):
        rng = np.random.default_rng([_zlib.crc32(word.lower().encode("utf-8")), seed])
        rows[j] = rng.uniform(-1.0, 1.0, d_model)
    return rows


@_functools.lru_cache(maxsize=4)
def _head(d_model: int, seed: int) -> tuple[NDArray[np.float64], ...]:
    rng = np.random.default_rng([0x5EED, seed, d_model])
    weights = tuple(rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(3))
    for w in weights:
        w.flags.writeable = False
    return weights


def attention_head(d_model: int, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Seeded random weights ``(W_Q, W_K, W_V)`` of one attention head, each ``(d_model, d_model)``.

    Entries are independent ``N(0, 1/d_model)``, so ``x @ W`` keeps the scale of
    ``x``. The arrays are read-only and shared between callers (built once per
    ``(d_model, seed)``: ~30 ms at d_model = 1024).
    """
    d_model = _integer("d_model", d_model, 2, even=True)
    return _head(d_model, _seed(seed))


def self_attention(x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike) -> NDArray[np.float64]:
    """One head of self-attention: ``softmax(Q K^T / sqrt(d)) V`` with ``Q = x W_Q``, ``K = x W_K``, ``V = x W_V``.

    ``x`` is ``(T, d_model)``, one row per token; the weights are ``(d_model, d)``;
    ``d`` is the keys' width; softmax runs along each row. No mask and no position:
    for any permutation ``P`` of the rows, ``attention(P x) = P attention(x)``
    (the scores become ``P S P^T``, the softmax acts row by row, and
    ``P^T P = I``), so a token's output does not depend on where it stands.
    Shape ``(T, d)``.
    """
    x = _finite("x", x)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"x must be a 2-D table (T, d_model) with T >= 1; got shape {x.shape}")
    mats = [_finite(name, w) for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v))]
    for name, w in zip(("w_q", "w_k", "w_v"), mats, strict=True):
        if w.ndim != 2 or w.shape[0] != x.shape[1]:
            raise ValueError(f"{name} must be (d_model, d) with d_model = {x.shape[1]}; got shape {w.shape}")
    if mats[0].shape[1] != mats[1].shape[1]:
        raise ValueError(f"w_q and w_k must have the same width; got {mats[0].shape[1]} and {mats[1].shape[1]}")
    q, k, v = x @ mats[0], x @ mats[1], x @ mats[2]
    scores = q @ k.T / math.sqrt(k.shape[1])
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v


def match_occurrences(original: _Sequence[str], current: _Sequence[str]) -> NDArray[np.int64]:
    """Where each word of ``original`` stands in ``current``, a reordering of it.

    ``result[i] = j`` when word ``i`` of ``original`` is word ``j`` of ``current``
    (case ignored); a word that occurs several times is matched occurrence by
    occurrence, in order (the first "the" with the first "the"). ``ValueError``
    when ``current`` is not a reordering of ``original``.
    """
    original, current = _words("original", original), _words("current", current)
    if sorted(w.lower() for w in original) != sorted(w.lower() for w in current):
        raise ValueError(f"current must be a reordering of original; got {original!r} and {current!r}")
    places: dict[str, list[int]] = {}
    for j, word in enumerate(current):
        places.setdefault(word.lower(), []).append(j)
    taken: dict[str, int] = {}
    result = np.empty(len(original), dtype=np.int64)
    for i, word in enumerate(original):
        key = word.lower()
        result[i] = places[key][taken.get(key, 0)]
        taken[key] = taken.get(key, 0) + 1
    return result


def order_differences(original: _Sequence[str], current: _Sequence[str], d_model: int,
                      base: float = DEFAULT_BASE, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """How much each word's attention output changes when the sentence is reordered.

    With ``e`` the words' embeddings (``word_embeddings``), one head
    (``attention_head(d_model, seed)``, ``self_attention``) and ``m =
    match_occurrences(original, current)``, returns, for every word ``i`` of
    ``original``::

        without_pe[i] = || y(e_original)[i] - y(e_current)[m[i]] ||
        with_pe[i]    = || y(e_original + PE)[i] - y(e_current + PE)[m[i]] ||

    (Euclidean norms; ``PE`` the rows ``0 .. T-1`` of ``encoding``). Without PE
    self-attention is permutation equivariant, so ``without_pe`` is zero up to
    rounding (~1e-16); with PE it is not. Two arrays of shape ``(len(original),)``.
    """
    match = match_occurrences(original, current)
    e_original = word_embeddings(original, d_model, seed)
    e_current = e_original[np.argsort(match)]  # row m[i] of the current order is word i's embedding
    w_q, w_k, w_v = attention_head(d_model, seed)
    pe = encoding_rows(np.arange(len(match), dtype=np.float64), d_model, base)
    result = []
    for add in (0.0, pe):
        y_original = self_attention(e_original + add, w_q, w_k, w_v)
        y_current = self_attention(e_current + add, w_q, w_k, w_v)
        result.append(np.linalg.norm(y_original - y_current[match], axis=1))
    return result[0], result[1]


def _token_row(d_model: int, seed: int) -> NDArray[np.float64]:
    return np.random.default_rng([0x70C, seed]).uniform(-1.0, 1.0, d_model)


def raw_position_rows(positions: ArrayLike, d_model: int, seed: int = 0) -> NDArray[np.float64]:
    """A token's vector with its raw position number written into coordinate 0.

    ``x_pos = (pos, e_1, ..., e_{d_model-1})``, where ``e`` is one seeded random
    embedding, every value uniform in ``[-1, 1]`` (the same ``e`` for every
    position). Shape ``positions.shape + (d_model,)``.
    """
    positions = _finite("positions", positions)
    d_model = _integer("d_model", d_model, 2, even=True)
    rows = np.broadcast_to(_token_row(d_model, _seed(seed)), (*positions.shape, d_model)).copy()
    rows[..., 0] = positions
    return rows


def raw_position_share(positions: ArrayLike, d_model: int, seed: int = 0) -> NDArray[np.float64]:
    """The raw position's share of the vector's squared length (its dot product with itself).

    ``share(pos) = pos^2 / ||x_pos||^2 = pos^2 / (pos^2 + sum_{j>=1} e_j^2)``
    with ``x_pos`` from ``raw_position_rows``: 0 at position 0, and close to 1
    as soon as ``pos^2`` outgrows the rest (about ``(d_model - 1)/3``). Same shape as ``positions``.
    """
    positions = _finite("positions", positions)
    d_model = _integer("d_model", d_model, 2, even=True)
    rest = float(np.sum(_token_row(d_model, _seed(seed))[1:] ** 2))
    square = positions ** 2
    return square / (square + rest)


def relative_position(n: ArrayLike, T: int) -> NDArray[np.float64]:
    """The position divided by the length: ``n / T`` for the token numbered ``n`` (from 1) of ``T``.

    ``n`` counts tokens from 1 (the app's ``pos`` plus one), so the values are
    ``1/T, 2/T, ..., 1``: token 4 of 8 and token 150 of 300 both get ``0.5``.
    ``n`` must be integers in ``1 .. T``. Same shape as ``n``.
    """
    T = _integer("T", T, 1)
    n = _finite("n", n)
    if np.any(n != np.round(n)) or np.any(n < 1) or np.any(n > T):
        raise ValueError(f"n must be token numbers, integers in 1 .. T = {T}; got {n.tolist()!r}")
    return n / T


def same_ratio_token(n: int, T: int, length: int) -> float:
    """Which token of a text of ``length`` tokens gets the value of token ``n`` of ``T``: ``n * length / T``.

    Token numbers count from 1. The result is a whole number exactly when
    ``n * length`` is a multiple of ``T`` (``same_ratio_token(4, 8, 300) = 150``);
    otherwise no token of that length gets exactly the value ``n / T``.
    """
    T = _integer("T", T, 1)
    length = _integer("length", length, 1)
    n = _integer("n", n, 1)
    if n > T:
        raise ValueError(f"n must be an integer in 1 .. T = {T}; got {n}")
    return n * length / T


def learned_table(rows: int, d_model: int, seed: int = 0) -> NDArray[np.float64]:
    """A learned position table as it starts: one seeded random row per trained position.

    Entries are independent ``N(0, 1/2)``, so a row's expected squared length
    is ``d_model/2``, that of every row of ``PE``. Row ``p`` does not depend on
    ``rows`` (a longer table adds rows and keeps the others), and nothing
    relates row ``p`` to row ``p + 1``. There is no row ``rows`` or past it.
    Shape ``(rows, d_model)``.
    """
    return _half_normal_rows("rows", rows, d_model, [0x7AB1E, _seed(seed)])


def table_dot_scores(table: ArrayLike, p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """``table[p] . table[q]`` for positions ``p`` and ``q`` that broadcast together.

    For ``table = encoding(T, d_model)`` this is ``dot_scores`` (and so
    ``S(q - p)``); for a ``learned_table`` it depends on ``p`` and ``q``
    separately. Positions must be rows of the table (integers ``0 .. T-1``).
    """
    table = _table(table)
    p, q = _finite("p", p), _finite("q", q)
    for name, v in (("p", p), ("q", q)):
        if np.any(v != np.round(v)) or np.any(v < 0) or np.any(v >= table.shape[0]):
            raise ValueError(f"{name} must be rows of the table, integers in 0 .. {table.shape[0] - 1}")
    try:
        p, q = np.broadcast_arrays(p.astype(np.int64), q.astype(np.int64))
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    return np.einsum("...j,...j->...", table[p], table[q])


def neighbour_similarity(table: ArrayLike) -> NDArray[np.float64]:
    """Cosine similarity of each row with the next: ``t_p . t_{p+1} / (||t_p|| ||t_{p+1}||)``, ``p = 0 .. T-2``.

    For ``PE`` every value is ``S(1) / (d_model/2)``, the same for every ``p``;
    for a ``learned_table`` it is noise around 0 (of size ``1/sqrt(d_model)``).
    Shape ``(T - 1,)`` (empty for a single row).
    """
    table = _table(table)
    norms = np.linalg.norm(table, axis=1)
    return np.einsum("pj,pj->p", table[:-1], table[1:]) / (norms[:-1] * norms[1:])
# Lesson sections «fingerprint» (3: one wave is ambiguous, many are a
# fingerprint) and «shift» (6: a fixed shift is a fixed rotation).
# ==========================================================================

__all__ += ["fingerprint_distance", "fingerprint_distances", "nearest_other", "rotation_corner"]


def _pair_range(pairs_from: int, pairs_to: int | None, d_model: int) -> tuple[int, int]:
    """``(pairs_from, pairs_to)`` checked against ``0 <= from <= to <= d_model/2 - 1``."""
    last = d_model // 2 - 1
    pairs_from = _integer("pairs_from", pairs_from, 0)
    pairs_to = last if pairs_to is None else _integer("pairs_to", pairs_to, 0)
    if pairs_from > last:
        raise ValueError(f"pairs_from must be an integer in 0 .. d_model/2 - 1 = {last}; got {pairs_from}")
    if not pairs_from <= pairs_to <= last:
        raise ValueError(f"pairs_to must be an integer in pairs_from = {pairs_from} .. d_model/2 - 1 = {last}; "
                         f"got {pairs_to}")
    return pairs_from, pairs_to


def fingerprint_distance(p: ArrayLike, q: ArrayLike, d_model: int, base: float = DEFAULT_BASE,
                         pairs_from: int = 0, pairs_to: int | None = None) -> NDArray[np.float64]:
    """Distance between ``PE[p]`` and ``PE[q]`` seen through the pairs ``pairs_from .. pairs_to`` only.

    The Euclidean distance over the columns ``2*pairs_from .. 2*pairs_to + 1``.
    Pair ``i`` contributes ``(sin a - sin b)^2 + (cos a - cos b)^2
    = 2 - 2 cos(a - b) = 4 sin^2((a - b) / 2)`` with ``a - b = omega_i (p - q)``, so::

        dist(p, q) = 2 * sqrt( sum_{i = from .. to} sin^2(omega_i (p - q) / 2) )

    computed in that form (no cancellation between two nearly equal rows). It
    depends on ``p - q`` only; it is 0 for ``p = q`` and at most
    ``2 sqrt(to - from + 1)``. ``pairs_to`` defaults to the last pair. ``p``
    and ``q`` are positions (any real values) that broadcast together; the
    result has their broadcast shape.
    """
    omega = frequencies(d_model, base)
    first, last = _pair_range(pairs_from, pairs_to, 2 * omega.size)
    p, q = _finite("p", p), _finite("q", q)
    try:
        gap = np.subtract(p, q)
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    half = np.sin(np.multiply.outer(gap, omega[first:last + 1] / 2.0))
    return 2.0 * np.sqrt(np.einsum("...i,...i->...", half, half))


def fingerprint_distances(pos: int, T: int, d_model: int, base: float = DEFAULT_BASE,
                          pairs_from: int = 0, pairs_to: int | None = None) -> NDArray[np.float64]:
    """``||PE[pos] - PE[q]||`` over the pairs ``pairs_from .. pairs_to``, for every ``q = 0 .. T-1``.

    ``fingerprint_distance(pos, arange(T), ...)``: the same as slicing the
    columns ``2*pairs_from .. 2*pairs_to + 1`` of ``encoding(T, d_model, base)``
    and taking the norm of row ``pos`` minus every row. ``pos`` is an integer
    ``0 .. T-1``. Shape ``(T,)``; entry ``pos`` is 0.
    """
    T = _integer("T", T, 1)
    pos = _integer("pos", pos, 0)
    if pos >= T:
        raise ValueError(f"pos must be an integer in 0 .. T-1 = {T - 1}; got {pos}")
    return fingerprint_distance(pos, np.arange(T, dtype=np.float64), d_model, base, pairs_from, pairs_to)


def nearest_other(distances: ArrayLike, pos: int) -> tuple[int, float] | None:
    """The position closest to ``pos`` other than ``pos`` itself, and its distance.

    ``distances[q]`` is the distance from ``pos`` to ``q`` (as returned by
    ``fingerprint_distances``). Ties go to the smaller ``q``. ``None`` when
    there is no other position (a table of one row).
    """
    distances = _finite("distances", distances)
    if distances.ndim != 1 or distances.size < 1:
        raise ValueError(f"distances must be a 1-D array with at least one entry; got shape {distances.shape}")
    pos = _integer("pos", pos, 0)
    if pos >= distances.size:
        raise ValueError(f"pos must be an integer in 0 .. len(distances)-1 = {distances.size - 1}; got {pos}")
    if distances.size == 1:
        return None
    others = distances.copy()
    others[pos] = np.inf
    q = int(np.argmin(others))
    return q, float(others[q])


def rotation_corner(k: float, d_model: int, base: float = DEFAULT_BASE, size: int = 64) -> NDArray[np.float64]:
    """The top-left ``size x size`` corner of ``M_k`` (the whole matrix when ``d_model <= size``).

    Equal to ``rotation(k, d_model, base)[:size, :size]`` without building the
    ``d_model x d_model`` matrix: the blocks of pairs ``0 .. size/2 - 1``::

        [[ cos(omega_i k),  sin(omega_i k)],
         [-sin(omega_i k),  cos(omega_i k)]]   on the diagonal, zeros elsewhere,

    with ``omega_i = base ** (-2i / d_model)`` of the full ``d_model``. ``size``
    is an even integer >= 2. Shape ``(min(size, d_model),) * 2``.
    """
    size = _integer("size", size, 2, even=True)
    k = _scalar("k", k)
    theta = k * frequencies(d_model, base)[:size // 2]
    c, s = np.cos(theta), np.sin(theta)
    n = 2 * theta.size
    m = np.zeros((n, n), dtype=np.float64)
    even = np.arange(0, n, 2)
    m[even, even] = c
    m[even, even + 1] = s
    m[even + 1, even] = -s
    m[even + 1, even + 1] = c
    return m
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

    ``e = seeded_word_vector(d_model, seed, scale=1)`` and ``(W_Q, W_K) = head_weights(d_model,
    "random", seed)``: ``e`` has standard normal coordinates (length about ``sqrt(d_model)``, comparable to a
    row of PE, ``sqrt(d_model / 2)``); ``W_Q`` and ``W_K`` have normal entries of variance
    ``1 / d_model``, so they keep lengths about the same. The same ``seed`` always
    gives the same numbers (NumPy's PCG64).
    """
    w_q, w_k = head_weights(d_model, "random", seed)
    return seeded_word_vector(d_model, seed, scale=1.0), w_q, w_k


# Section «mistakes»: bugs that published code has shipped, as explicit variants.
# Every function of this block takes ``mistake``; "none" is the correct encoding.
# ==========================================================================

#: The correct encoding ("none") and four published bugs (``mistake_columns`` has their formulas).
MISTAKES: tuple[str, ...] = ("none", "dim_index", "cos_exponent", "split_layout", "sin_only")


def _mistake_name(mistake: object) -> str:
    if not isinstance(mistake, str) or mistake not in MISTAKES:
        allowed = ", ".join(repr(m) for m in MISTAKES)
        raise ValueError(f"mistake must be one of {allowed}; got {mistake!r}")
    return mistake


def mistake_columns(d_model: int, base: float = DEFAULT_BASE,
                    mistake: str = "none") -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Angular speed of every column and whether it is a sine, for the encoding or one of its bugs.

    Column ``j`` (``0 .. d_model-1``) of the table is ``sin(pos * speed_j)``
    where ``sine_j`` holds, ``cos(pos * speed_j)`` elsewhere. With
    ``omega_i = base ** (-2 i / d_model)`` and ``h = d_model / 2``:

    * ``"none"`` (the paper): ``PE[pos, 2i] = sin(pos omega_i)``,
      ``PE[pos, 2i+1] = cos(pos omega_i)``.
    * ``"dim_index"``: the ``i`` of the formula read as the column index ``j``:
      ``PE[pos, j] = sin(pos * base ** (-2j / d_model))`` for even ``j``,
      ``cos(pos * base ** (-2j / d_model))`` for odd ``j``. The speeds fall
      twice as fast along the columns (the slowest is ``base ** (-2 + 2/d)``),
      and the sine and cosine of one pair turn at different speeds.
    * ``"cos_exponent"``: ``PE[pos, 2i] = sin(pos * base ** (-2i / d_model))``,
      ``PE[pos, 2i+1] = cos(pos * base ** (-(2i+1) / d_model))``: the exponent
      written with the column index, ``base ** (-j / d_model)`` for every
      column; the pair's cosine is slower than its sine by ``base ** (1/d)``.
    * ``"split_layout"``: every sine first, then every cosine:
      ``PE[pos, i] = sin(pos omega_i)``, ``PE[pos, h + i] = cos(pos omega_i)``,
      ``i = 0 .. h-1``; a permutation of the correct columns.
    * ``"sin_only"``: the cosine line replaced by a copy of the sine line:
      ``PE[pos, 2i] = PE[pos, 2i+1] = sin(pos omega_i)`` (the same speeds as
      the paper, no cosine at all; row 0 is all zeros).

    Returns ``(speed, sine)``, two arrays of shape ``(d_model,)``.
    """
    mistake = _mistake_name(mistake)
    omega = frequencies(d_model, base)
    d_model = omega.size * 2
    columns = np.arange(d_model)
    sine = columns % 2 == 0
    if mistake == "dim_index":
        speed = _base(base) ** (-2.0 * columns / d_model)
    elif mistake == "cos_exponent":
        speed = _base(base) ** (-1.0 * columns / d_model)
    elif mistake == "split_layout":
        speed = np.concatenate([omega, omega])
        sine = columns < omega.size
    else:  # "none" and "sin_only": pair i turns at omega_i in both its columns
        speed = np.repeat(omega, 2)
        if mistake == "sin_only":
            sine = np.ones(d_model, dtype=bool)
    return speed, sine


def column_wavelengths(d_model: int, base: float = DEFAULT_BASE, mistake: str = "none") -> NDArray[np.float64]:
    """Positions each column needs to repeat: ``2 pi / speed_j`` (``mistake_columns``). Shape ``(d_model,)``.

    For ``"none"`` each pair's ``wavelengths`` value, twice (its sine and its
    cosine column); for ``"dim_index"`` ``2 pi base ** (2j / d_model)``, up to
    ``2 pi base ** (2 - 2/d_model)``.
    """
    return 2.0 * np.pi / mistake_columns(d_model, base, mistake)[0]


def mistake_pair_columns(d_model: int, mistake: str = "none") -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The two columns that play pair ``i``'s sine and cosine: ``(first, second)``, each ``(d_model/2,)``.

    ``(2i, 2i+1)`` for every variant but ``"split_layout"``, where they are
    ``(i, d_model/2 + i)``. Under ``"none"`` and ``"split_layout"`` the two
    columns are ``(sin a, cos a)`` of one angle ``a = pos omega_i``; under the
    other bugs they are not (different speeds, or no cosine).
    """
    mistake = _mistake_name(mistake)
    half = _integer("d_model", d_model, 2, even=True) // 2
    pairs = np.arange(half)
    if mistake == "split_layout":
        return pairs, pairs + half
    return 2 * pairs, 2 * pairs + 1


def _mistaken_rows(positions: ArrayLike, d_model: int, base: float, dtype: np.dtype,
                   mistake: str) -> NDArray[np.floating]:
    """``encoding_rows`` under a bug: every column from its speed and its kind (``mistake_columns``)."""
    speed, sine = mistake_columns(d_model, base, mistake)
    positions = _finite("positions", positions)
    if dtype == np.float64:
        theta = np.multiply.outer(positions, speed)
    else:  # whole turns removed in float64, as encoding_rows does for the correct table
        turns = np.multiply.outer(positions, speed / (2.0 * np.pi))
        turns -= np.rint(turns)
        turns *= 2.0 * np.pi
        theta = turns.astype(np.float32)
    rows = np.empty(theta.shape, dtype=dtype)
    rows[..., sine] = np.sin(theta[..., sine])
    rows[..., ~sine] = np.cos(theta[..., ~sine])
    return rows


def fitted_rotation_residual_of(pe: ArrayLike, k: int, mistake: str = "none") -> float:
    """How well ONE block rotation, the same for every ``p``, carries row ``p`` to row ``p + k``.

    The table's pairs are the columns of ``mistake_pair_columns(d_model,
    mistake)``; write pair ``i`` of row ``p`` as the complex number
    ``z_p = PE[p, second_i] + 1j * PE[p, first_i]`` (``cos a + i sin a = e^(ia)``
    for the correct table, where ``M_k`` multiplies it by ``e^(i omega_i k)``).
    The angle of each pair is fitted by least squares over every ``p`` with
    ``p + k`` in the table::

        theta_i = arg( sum_p conj(z_p) * z_(p+k) )     (0 where that sum is 0)

    which minimises ``sum_p |e^(i theta_i) z_p - z_(p+k)|^2`` over all angles,
    and the result is the largest coordinate error of that best rotation,
    ``max_p,i |e^(i theta_i) z_p - z_(p+k)|`` taken on the real and imaginary
    parts (the two columns) separately. A block rotation, not any matrix: a
    general ``d_model x d_model`` map fits ``T <= d_model`` rows exactly
    whatever they hold, which would prove nothing.

    For the correct table the fitted angle is ``omega_i k`` and the result is
    of the order of 1e-15, like ``rotation_residual_of``; likewise for
    ``"split_layout"`` (the same rotation on permuted columns). For the other
    bugs no single block rotation exists and the result is of the order of
    the values themselves. ``pe`` must be a table of ``encoding(T, d_model,
    base, mistake)``; 0.0 when ``|k| >= T``.
    """
    pe = _table(pe)
    k = _offset(k)
    first, second = mistake_pair_columns(pe.shape[1], mistake)
    T = pe.shape[0]
    if abs(k) >= T:
        return 0.0
    z = pe[:, second] + 1j * pe[:, first]
    start, stop = (0, T - k) if k >= 0 else (-k, T)
    source, target = z[start:stop], z[start + k:stop + k]
    fit = np.einsum("pi,pi->i", source.conj(), target)
    size = np.abs(fit)
    turn = np.divide(fit, size, out=np.ones_like(fit), where=size > 0)
    diff = source * turn - target
    return float(max(np.max(np.abs(diff.real)), np.max(np.abs(diff.imag))))


__all__ += ["MISTAKES", "column_wavelengths", "fitted_rotation_residual_of", "mistake_columns",
            "mistake_pair_columns"]
