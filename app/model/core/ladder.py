"""The ladder of frequencies: one angular speed and one wavelength per pair.

``omega_i = base ** (-2 i / d_model)``, ``lambda_i = 2 pi / omega_i``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _base, _finite, _integer

__all__ = [
    "DEFAULT_BASE",
    "count_within",
    "frequencies",
    "ladder_step",
    "wavelengths",
]


DEFAULT_BASE = 10000.0


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
