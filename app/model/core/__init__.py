"""The sinusoidal positional encoding of the Transformer, in NumPy.

This package is the whole mathematics of the explorable and a public API: a
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

    >>> from app.model import core
    >>> core.wavelengths(32)[:3].round(1)
    array([ 6.3, 11.2, 19.9])
    >>> float(core.relative_scores(3, 32)).__round__(6)
    12.272398

The package is split by topic; every public name is also here, so
``from app.model import core`` (or ``from app import core``) answers every call:

    ladder        frequencies and wavelengths of the pairs
    sinusoidal    the table, its rotations, the scores it gives, fingerprints, the Gram matrix
    text          words as seeded vectors, and which word is which after a reorder
    attention     one attention layer's view: embeddings plus position, the four terms of a score
    alternatives  the raw position number, pos/T and a learned table
    rope          rotary position embedding against the additive scheme
    mistakes      published bugs as explicit variants of the encoding
    extrapolation past the training length: PI, NTK-aware, YaRN, ALiBi, the learned table's end
"""

from __future__ import annotations

from app.model.core import alternatives, attention, extrapolation, ladder, mistakes, rope, sinusoidal, text
from app.model.core.alternatives import *  # noqa: F403
from app.model.core.attention import *  # noqa: F403
from app.model.core.extrapolation import *  # noqa: F403
from app.model.core.ladder import *  # noqa: F403
from app.model.core.mistakes import *  # noqa: F403
from app.model.core.rope import *  # noqa: F403
from app.model.core.sinusoidal import *  # noqa: F403
from app.model.core.text import *  # noqa: F403

__all__ = [
    *ladder.__all__,
    *sinusoidal.__all__,
    *text.__all__,
    *attention.__all__,
    *alternatives.__all__,
    *rope.__all__,
    *mistakes.__all__,
    *extrapolation.__all__,
]
