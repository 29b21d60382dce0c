"""Colours and figure styling shared by every view: readable from the back of a room."""

from __future__ import annotations

import html
from pathlib import Path

import panel as pn
from bokeh.models import Div, InlineStyleSheet
from bokeh.plotting import figure as Figure

from app.strings import text

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
#: Panel renders each component in its own shadow root, so the page's CSS is
#: handed to every component that shows our own markup.
STYLESHEET = (STATIC_DIR / "app.css").read_text(encoding="utf-8")
WIDGET_STYLESHEET = (STATIC_DIR / "widgets.css").read_text(encoding="utf-8")

#: Okabe-Ito colours (colour-blind safe); each role means the same in every view.
COLORS: dict[str, str] = {
    "pos": "#0072B2",       # the first position and its hand
    "target": "#D55E00",    # pos + k and its hand
    "selected": "#009E73",  # the selected pair
    "bar": "#999999",       # the other pairs
    "curve": "#332288",     # S(k)
    "ink": "#222222",
}

TITLE_SIZE = "17pt"
LABEL_SIZE = "15pt"
TICK_SIZE = "13pt"


def style_figure(fig: Figure) -> Figure:
    """Large type and a quiet frame for a Bokeh figure; returns it."""
    fig.title.text_font_size = TITLE_SIZE
    fig.title.text_color = COLORS["ink"]
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.axis_label_text_font_size = LABEL_SIZE
        axis.axis_label_text_font_style = "normal"
        axis.major_label_text_font_size = TICK_SIZE
    fig.outline_line_color = None
    fig.toolbar.logo = None
    return fig


def html_pane(markup: str, **params) -> pn.pane.HTML:
    """An HTML pane that carries the app's stylesheet into its shadow root."""
    return pn.pane.HTML(markup, stylesheets=[STYLESHEET], **params)


#: Bokeh wraps a Div's text in a ``.bk-clearfix`` with an inline ``display: inline-block``
#: (hence ``!important``); as a block, the text spans the Div's width as a Panel pane's does.
LIVE_HTML_CSS = ".bk-clearfix { display: block !important; }\n"


class LiveHTML(pn.viewable.Viewer):
    """Markup that changes on a slider move, in a bare Bokeh ``Div``.

    For text on the hot path (a key press on k, pos or pair): Panel's HTML
    pane costs ~1.4 ms of server time per change (parameter machinery, theme
    look-ups, property validation) and sends its markup HTML-escaped, a third
    longer; a ``Div``'s ``text`` is one Bokeh property. Markup equal to what
    the page shows is not sent again.

    The markup must already be safe: build it with ``readout`` or
    ``html.escape`` (the Div renders it as HTML). ``css`` is added to the
    app's stylesheet inside the Div's shadow root.
    """

    def __init__(self, markup: str = "", *, name: str, css: str = "", **layout: object):
        super().__init__(name=name)
        sheets = [InlineStyleSheet(css=STYLESHEET + LIVE_HTML_CSS + css)]
        layout.setdefault("margin", (5, 10))  # Panel's default for panes, so the texts line up
        self._div = Div(text=markup, name=name, stylesheets=sheets, **layout)
        self._pane = pn.pane.Bokeh(self._div, sizing_mode=layout.get("sizing_mode"))

    @property
    def object(self) -> str:
        """The markup on the page."""
        return self._div.text

    @object.setter
    def object(self, markup: str) -> None:
        if markup != self._div.text:
            self._div.text = markup

    def __panel__(self) -> pn.viewable.Viewable:
        return self._pane


def readout(lang: str, key: str, **values: object) -> str:
    """A sentence from the string table as escaped HTML in the readout style."""
    return f'<div class="pe-readout">{html.escape(text(lang, key, **values))}</div>'
