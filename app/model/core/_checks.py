"""Argument checks shared by the core: one message format, naming the argument and what it accepts.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Sequence as _Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray


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


def _real(name: str, value: object, minimum: float, *, strict: bool = False) -> float:
    """Return ``value`` as a finite float ``>= minimum`` (``> minimum`` if ``strict``), or raise."""
    allowed = f"a finite real number {'>' if strict else '>='} {minimum:g}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < minimum or (strict and number == minimum):
        raise ValueError(f"{name} must be {allowed}; got {number}")
    return number


def _positive_vector(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """``value`` as a non-empty 1-D array of finite numbers > 0, or a ``ValueError``."""
    array = _finite(name, value)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty vector (1-D); got shape {array.shape}")
    if not np.all(array > 0):
        raise ValueError(f"{name} must hold numbers > 0 only; got {value!r}")
    return array


def _scalar(name: str, value: object) -> float:
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single finite real number; got shape {np.shape(value)}")
    return float(_finite(name, value))


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


def _table(pe: ArrayLike) -> NDArray[np.float64]:
    """``pe`` as a finite float64 ``(T, d_model)`` array, or a ``ValueError``."""
    pe = _finite("pe", pe)
    if pe.ndim != 2 or pe.shape[0] < 1:
        raise ValueError(f"pe must be a 2-D table (T, d_model) with T >= 1; got shape {pe.shape}")
    _integer("pe.shape[1] (d_model)", pe.shape[1], 2, even=True)
    return pe


def _offset(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"k must be an integer (a whole number of positions); got {k!r}")
    return int(k)


def _seed(seed: object) -> int:
    return _integer("seed", seed, 0)


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


def _words(name: str, words: object) -> list[str]:
    if isinstance(words, str) or not isinstance(words, _Sequence) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{name} must be a sequence of words (strings), not a single string; got {words!r}")
    if not all(w.strip() for w in words):
        raise ValueError(f"{name} must hold non-empty words; got {list(words)!r}")
    return [w.strip() for w in words]


def _vector(name: str, value: ArrayLike) -> NDArray[np.float64]:
    value = _finite(name, value)
    if value.ndim != 1:
        raise ValueError(f"{name} must be a vector of d_model numbers; got shape {value.shape}")
    _integer(f"len({name}) (d_model)", value.size, 2, even=True)
    return value
