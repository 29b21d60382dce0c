"""The site map: every page's path, in reading order. Data, so that a room can check a page it is sent to
without importing the pages (``app.pages`` builds exactly these; a test holds the two together)."""

from __future__ import annotations

__all__ = ["BEYOND_SLUGS", "LESSON_SLUGS", "VIEW_NAMES", "page_paths"]

#: The lessons' sections, in reading order (``app.lesson.LESSON``).
LESSON_SLUGS: tuple[str, ...] = ("order", "simpler", "fingerprint", "wavelengths", "hands", "shift", "score", "sum",
                                 "quiz", "question")
#: Past the lessons, in reading order (``app.lesson.BEYOND``).
BEYOND_SLUGS: tuple[str, ...] = ("terms", "gram", "rope", "extrapolation", "mistakes")
#: The single views (``app.pages.VIEWS``); ``/explore`` shows them all.
VIEW_NAMES: tuple[str, ...] = ("ladder", "clocks", "distance", "checks")


def page_paths() -> frozenset[str]:
    """The path of every page of the app: ``/``, one per section, ``/explore`` and one per view."""
    return frozenset(("/", "/explore", *(f"/{name}" for name in (*LESSON_SLUGS, *BEYOND_SLUGS, *VIEW_NAMES))))
