"""A visible, escaped list of the values that had to be corrected."""

from __future__ import annotations

import html
from collections.abc import Sequence

import panel as pn

from app.model.state import Notice
from app.model.strings import minus_sign, text
from components.widgets import LiveHTML

#: Longest piece of user input echoed back; the rest is cut (it is only a hint).
ECHO_LIMIT = 40


def _echo(given: str) -> str:
    cut = given if len(given) <= ECHO_LIMIT else given[:ECHO_LIMIT] + "…"
    return html.escape(cut, quote=True)


def notice_line(lang: str, notice: Notice) -> str:
    """One notice as HTML text; the input it echoes is escaped (and cut to ``ECHO_LIMIT``)."""
    return text(lang, f"notice_{notice.reason}", parameter=html.escape(notice.parameter),
                given=_echo(notice.given), used=html.escape(minus_sign(notice.used)))


def notice_html(lang: str, notices: Sequence[Notice]) -> str:
    """The notices as an HTML list; every piece of user input is escaped."""
    items = "".join(f"<li>{notice_line(lang, n)}</li>" for n in notices)
    return f"<strong>{html.escape(text(lang, 'notice_title'))}</strong><ul>{items}</ul>"


def notice_alert(lang: str, notices: Sequence[Notice]) -> pn.viewable.Viewable | None:
    """An alert box listing the notices, or ``None`` when there are none."""
    if not notices:
        return None
    # Markup we escaped ourselves, not Alert: Alert renders Markdown, and escaped text can still
    # carry Markdown syntax (links) that we do not want to interpret. A LiveHTML, not an HTML pane,
    # so that its model carries the name ``notices`` (Panel does not name a pane's Bokeh model).
    return LiveHTML(f'<div class="pe-notice" role="alert">{notice_html(lang, notices)}</div>',
                    sizing_mode="stretch_width", name="notices")
