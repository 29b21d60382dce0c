"""The sinusoidal encoding itself: the ladder of frequencies, the table, its rotations and the scores it gives.

``omega_i = base ** (-2 i / d_model)``; ``PE[pos, 2i] = sin(pos omega_i)``, ``PE[pos, 2i+1] = cos(pos omega_i)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from app.model.core._checks import _base, _finite, _float_dtype, _integer, _offset, _scalar, _table
from app.model.core.ladder import DEFAULT_BASE, frequencies
from app.model.core.mistakes import _mistaken_rows

__all__ = [
    "angles",
    "band_terms",
    "dot_scores",
    "encoding",
    "encoding_distances",
    "encoding_rows",
    "expected_row_norm",
    "fingerprint_distance",
    "fingerprint_distances",
    "gram",
    "gram_sampled",
    "nearest_other",
    "nearest_others",
    "pair_bands",
    "relative_scores",
    "relative_scores_range",
    "rotate",
    "rotation",
    "rotation_block",
    "rotation_corner",
    "rotation_residual",
    "rotation_residual_of",
    "row_norms",
    "row_norms_of",
    "score_terms",
]



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
    (0.1 M instead of 1 M at ``count = 2048``, ``d_model = 1024``), read off
    the powers of ``e^(i omega_i)`` and ``e^(i B omega_i)``. The same
    numbers to rounding: within ``1e-16 * d_model * (count + d_model)`` of
    ``relative_scores`` (the angles' rounding and the sums'; ~1e-12 at that
    size). ``S(0)`` is exactly ``d_model / 2``. Shape ``(count,)``.
    """
    return _cosine_sums(_integer("count", count, 1), frequencies(d_model, base))


def _cosine_sums(count: int, omega: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_i cos(omega_i k)`` for ``k = 0 .. count-1``, by the blocks of ``relative_scores_range``."""
    block = math.isqrt(count - 1) + 1  # B, with B * B >= count
    # Row a of fine is e^(i a omega), row b of coarse e^(i B b omega): powers, so two exponentials per pair
    # and products, not a sine and a cosine of every angle (those were two thirds of the time).
    fine = _powers(np.exp(1j * omega), block)
    coarse = _powers(np.exp(1j * (block * omega)), -(-count // block))
    # [b, a] is S(B*b + a) = Re(coarse[b] . fine[a]): one complex product through BLAS (the servers run one
    # BLAS thread, app.blas). Copying the real and imaginary parts into one real product of [cos | -sin] by
    # [cos | sin] cost three times the product itself (0.4 of 0.14 ms at 2048 x 512 pairs).
    return (coarse @ fine.T).real.reshape(-1)[:count]


def _powers(z: NDArray[np.complex128], rows: int) -> NDArray[np.complex128]:
    """``z ** n`` for ``n = 0 .. rows-1`` (one row per n), by doubling: rows ``m .. 2m-1`` are rows ``0 .. m-1``
    times ``z ** m``.

    Row 0 is exactly 1. Each row is a chain of at most ~2 log2(rows) products of unit numbers, so its
    rounding stays within a few units of ``n * |error of z|``, what ``exp(i n omega)`` itself carries
    from rounding the angle ``n * omega``.
    """
    out = np.empty((rows, z.size), dtype=np.complex128)
    out[0] = 1
    done = 1
    while done < rows:
        step = out[done - 1] * z  # z ** done
        more = min(done, rows - done)
        np.multiply(out[:more], step, out=out[done:done + more])
        done += more
    return out


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
    found = nearest_others(distances, pos)
    return None if found is None else (found[0][0], found[1])


def nearest_others(distances: ArrayLike, pos: int) -> tuple[tuple[int, ...], float] | None:
    """Every position other than ``pos`` at the smallest distance from it (ascending), and that distance.

    ``distances[q]`` is the distance from ``pos`` to ``q``. Through the
    encoding the distance depends on the offset alone,
    ``||PE_p - PE_q||² = Σ_i 4 sin²((p - q) ω_i / 2)``, so ``pos - j`` and
    ``pos + j`` are always equally close; ``fingerprint_distances`` computes it
    so, and gives the two the same value, bit for bit: both are returned
    whenever both are in the table. Only exact ties count. ``None`` when there
    is no other position (a table of one row).
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
    smallest = float(others.min())
    return tuple(int(q) for q in np.flatnonzero(others == smallest)), smallest


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
