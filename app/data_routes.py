"""Data downloads: ``/data/<name>.csv?<the page's query>`` (filled in below)."""

from __future__ import annotations


def patterns() -> list[tuple]:
    """Tornado routes for ``pn.serve(extra_patterns=...)``."""
    return []
