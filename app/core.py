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
