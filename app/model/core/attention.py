"""One attention layer's view of position: a word's vector plus its encoding, seeded query/key
weights, the four terms of a score, and summing against concatenating.

Nothing is trained here: embeddings and weights are seeded random stand-ins, the same seed
giving the same numbers everywhere.
"""

from __future__ import annotations

import functools as _functools
import math
from collections.abc import Sequence as _Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _finite, _integer, _offset, _position, _scalar, _seed, _square, _table
from app.model.core.ladder import DEFAULT_BASE, wavelengths
from app.model.core.sinusoidal import _block_rotations, encoding, encoding_rows, relative_scores
from app.model.core.text import match_occurrences, word_embeddings

__all__ = [
    "EMBEDDING_SEED",
    "HEADS",
    "HEAD_SEED",
    "SCORE_TERMS",
    "add_position",
    "attention_head",
    "concatenated_scores",
    "concatenated_wavelengths",
    "cross_term_spread",
    "cross_terms_by_start",
    "cross_terms_by_start_of",
    "embeddings",
    "head_weights",
    "order_differences",
    "position_term_by_start",
    "position_term_by_start_of",
    "qk_terms",
    "qk_terms_of",
    "query_key_matrix",
    "seeded_word_vector",
    "self_attention",
]



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
