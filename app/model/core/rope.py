"""Rotary position embedding (RoPE): position applied inside the score, against the additive scheme.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.model.core._checks import _finite, _integer, _scalar, _vector
from app.model.core.attention import head_weights, seeded_word_vector
from app.model.core.ladder import DEFAULT_BASE
from app.model.core.sinusoidal import angles, encoding, rotation

__all__ = [
    "additive_scores",
    "rope_relative",
    "rope_rotate",
    "rope_rotation",
    "rope_scores",
    "seeded_head",
]



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
