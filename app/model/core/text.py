"""Words: a sentence's words as seeded vectors, and which word of one order is which of another.
"""

from __future__ import annotations

import zlib as _zlib
from collections.abc import Sequence as _Sequence

import numpy as np
from numpy.typing import NDArray

from app.model.core._checks import _integer, _seed, _words

__all__ = [
    "match_occurrences",
    "word_embeddings",
]



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
