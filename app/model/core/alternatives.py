"""The easy ways of writing position that fail: the raw number, pos/T and a learned table.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _finite, _integer, _seed, _table

__all__ = [
    "learned_table",
    "learned_table_shape",
    "neighbour_similarity",
    "raw_position_rows",
    "raw_position_share",
    "relative_position",
    "same_ratio_token",
    "table_dot_scores",
]



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


#: Columns of a learned table drawn by one generator (see ``learned_table``).
LEARNED_BLOCK = 64


def learned_table_shape(rows: int, d_model: int) -> tuple[int, int]:
    """``(rows, d_model)`` checked as ``learned_table`` checks them: ``rows >= 1``, ``d_model >= 2`` and even.

    For a cache of tables (``app.model.datasets.learned_rows``) that slices a larger table than asked: the
    request is checked, with the same messages, before anything is sliced.
    """
    return _integer("rows", rows, 1), _integer("d_model", d_model, 2, even=True)


def learned_table(rows: int, d_model: int, seed: int = 0) -> NDArray[np.float64]:
    """A learned position table as it starts: one seeded random row per trained position.

    Entries are independent ``N(0, 1/2)``, so a row's expected squared length
    is ``d_model/2``, that of every row of ``PE``. Entry ``(p, c)`` depends on
    ``seed``, ``p`` and ``c`` only: a longer or wider table adds rows or
    columns and keeps the others (the columns are drawn in blocks of
    ``LEARNED_BLOCK``, each block by its own generator, row after row), and
    nothing relates row ``p`` to row ``p + 1``. There is no row ``rows`` or
    past it. Shape ``(rows, d_model)``.
    """
    rows, d_model = learned_table_shape(rows, d_model)
    table = np.empty((rows, d_model))
    for start in range(0, d_model, LEARNED_BLOCK):
        block = np.random.default_rng([0x7AB1E, _seed(seed), start // LEARNED_BLOCK]).standard_normal(
            (rows, LEARNED_BLOCK))
        np.multiply(block[:, :d_model - start], math.sqrt(0.5), out=table[:, start:start + LEARNED_BLOCK])
    return table


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
        np.broadcast_shapes(p.shape, q.shape)
    except ValueError:
        raise ValueError(f"p and q must broadcast together; got shapes {p.shape} and {q.shape}") from None
    # Each side's rows gathered at its own shape: a single p is one row against every q, not q.size copies of it.
    return np.einsum("...j,...j->...", table[p.astype(np.int64)], table[q.astype(np.int64)])


def neighbour_similarity(table: ArrayLike) -> NDArray[np.float64]:
    """Cosine similarity of each row with the next: ``t_p . t_{p+1} / (||t_p|| ||t_{p+1}||)``, ``p = 0 .. T-2``.

    For ``PE`` every value is ``S(1) / (d_model/2)``, the same for every ``p``;
    for a ``learned_table`` it is noise around 0 (of size ``1/sqrt(d_model)``).
    Shape ``(T - 1,)`` (empty for a single row).
    """
    table = _table(table)
    norms = np.linalg.norm(table, axis=1)
    return np.einsum("pj,pj->p", table[:-1], table[1:]) / (norms[:-1] * norms[1:])
