"""The app's own CSS, read once: the page's and the widgets' stylesheets (``static/``)."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
#: Panel renders each component in its own shadow root, so the page's CSS is
#: handed to every component that shows our own markup.
STYLESHEET = (STATIC_DIR / "app.css").read_text(encoding="utf-8")
WIDGET_STYLESHEET = (STATIC_DIR / "widgets.css").read_text(encoding="utf-8")
