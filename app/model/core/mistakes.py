"""Bugs that published code has shipped, as explicit variants of the encoding (``mistake``);
``"none"`` is the correct encoding.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _base, _finite, _integer, _offset, _table
from app.model.core.ladder import DEFAULT_BASE, frequencies

__all__ = [
    "MISTAKES",
    "column_wavelengths",
    "fitted_rotation_residual_of",
    "mistake_columns",
    "mistake_pair_columns",
]



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
