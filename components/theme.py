"""Colours and figure styling shared by every view: readable from the back of a room."""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

import panel as pn
import param
from bokeh.models import AdaptiveTicker, Label, Span
from bokeh.plotting import figure as Figure

from app.fastsync import FastDiscreteSlider, push_property
from app.strings import text
from components.plainjs import PlainJSComponent

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
#: Panel renders each component in its own shadow root, so the page's CSS is
#: handed to every component that shows our own markup.
STYLESHEET = (STATIC_DIR / "app.css").read_text(encoding="utf-8")
WIDGET_STYLESHEET = (STATIC_DIR / "widgets.css").read_text(encoding="utf-8")
#: ``styles`` of a ``pn.Row`` whose items go onto a next line when they do not fit (a narrow iframe,
#: presentation mode's double type). Panel gives a row the sum of its children's widths as its
#: min_width, so an item that should wrap sets its width in CSS (a ``flex`` basis), not in Panel.
WRAP = {"flex-wrap": "wrap"}

#: Okabe-Ito colours (colour-blind safe); each role means the same in every view.
COLORS: dict[str, str] = {
    "pos": "#0072B2",       # the first position and its hand
    "target": "#D55E00",    # pos + k and its hand
    "selected": "#009E73",  # the selected pair
    "bar": "#999999",       # the other pairs
    "curve": "#332288",     # S(k)
    "ink": "#222222",
    # Text in the roles' colours: the same hues, darker, so that text on white reaches 4.5:1 (WCAG AA).
    "pos_text": "#0072B2",       # 5.2:1
    "target_text": "#B34E00",    # 5.2:1 (the glyphs' #D55E00 is 3.9:1)
    "selected_text": "#007A5A",  # 5.3:1 (the glyphs' #009E73 is 3.4:1)
}

TITLE_SIZE = "17pt"
LABEL_SIZE = "15pt"

#: The ``level`` of the glyphs and labels that move with a step of k, pos or pair. BokehJS draws a
#: figure on two canvases: everything else on the first, this level on the second, above it. When only
#: renderers of this level change, it repaints the second canvas alone, so a step redraws the hands and
#: markers but not the axes, grids, curves, faces or images beneath them. Static renderers drawn above
#: a moving one get it too where the order shows (the clocks' pins over their hands); the S(k) figure's
#: dotted k line, once under its curve, now crosses over it.
MOVING = "overlay"

#: JavaScript: ``find(root, id)``, the element with that id under ``root`` or in any shadow root below it
#: (Panel draws every part of a page in a shadow root, where ``document.getElementById`` does not look).
FIND_BY_ID_JS = """
const find = (root, id) => {
  const hit = root.getElementById?.(id);
  if (hit) return hit;
  for (const el of root.querySelectorAll("*")) {
    const inner = el.shadowRoot && find(el.shadowRoot, id);
    if (inner) return inner;
  }
  return null;
};
"""
TICK_SIZE = "13pt"
#: A short note under a figure (a LiveHTML's ``css``; its markup is ``<p class="nt">…</p>``).
NOTE_CSS = ".nt { font-size: 1.2rem; line-height: 1.45; margin: 0.2rem 0; }"


def style_figure(fig: Figure, counts: str = "") -> Figure:
    """Large type and a quiet frame for a Bokeh figure; returns it.

    ``counts``: the axes (``"x"``, ``"y"``, ``"xy"``) whose values are whole numbers (positions, offsets,
    pairs, coordinates). They tick on whole numbers only: at T = 1 or d_model = 2 the default ticker
    would label a position 0.2 or a coordinate 1.5.
    """
    for axis in (*(fig.xaxis if "x" in counts else ()), *(fig.yaxis if "y" in counts else ())):
        if isinstance(axis.ticker, AdaptiveTicker):
            axis.ticker.min_interval = 1
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


class LiveHTML(PlainJSComponent):
    """Markup that changes on a slider move: the text of one element, replaced in the browser.

    For text on the hot path (a key press on k, pos or pair). A Panel HTML
    pane costs ~1.4 ms of server time per change and sends its markup
    HTML-escaped, a third longer; a Bokeh ``Div`` is cheap to send but
    re-renders itself and relays the page out in the browser, 10-25 ms per
    change. Here a change is one property of the component's data model, set
    directly (``app.fastsync.push_property``), and the browser only assigns
    the element's ``innerHTML``. Markup equal to what the page shows is not
    sent again.

    The markup must already be safe: build it with ``readout`` or
    ``html.escape``. ``css`` is added to the app's stylesheet inside the
    component's shadow root. ``object`` reads and sets the markup. In the
    page, the model named after the component is its data model, whose
    ``text`` is the markup.
    """

    text = param.String(default="", doc="The markup shown (trusted: escaped by whoever built it).")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-live";
      box.innerHTML = model.text;
      model.on("text", () => { box.innerHTML = model.text; });
      return box;
    }
    """

    def __init__(self, markup: str = "", *, name: str, css: str = "", **layout: object):
        layout.setdefault("margin", (5, 10))  # Panel's default for panes, so the texts line up
        super().__init__(text=markup, name=name, stylesheets=[STYLESHEET + css], **layout)

    @property
    def object(self) -> str:
        """The markup on the page."""
        return self.text

    @object.setter
    def object(self, markup: str) -> None:
        if markup != self.text:
            push_property(self, "text", markup)


class SliderTitle(LiveHTML):
    """The title a discrete slider shows above its handle ("base: <b>10000</b>"), as ``LiveHTML``.

    ``app.fastsync.FastDiscreteSlider`` puts it where Panel's ``DiscreteSlider``
    has a ``StaticText``: a Bokeh ``Div``, which re-renders and lays the whole
    page out again each time its text changes (twice per step: the browser's
    own link, then the server's echo). ``value`` is the title's markup, as on
    a ``StaticText``; the page shows it inside ``WRAP`` (its class tells
    ``components.a11y`` to name the slider after it), set by the browser's
    link as by the server.
    """

    #: The element around the title's markup (``{}``), in Python and in the browser's link.
    WRAP = FastDiscreteSlider.TITLE_WRAP

    def __init__(self, markup: str = "", *, name: str, **layout: object):
        # No margin or stylesheet of its own: Panel's ``DiscreteSlider._update_style`` gives the title the
        # slider's (its rules are in static/widgets.css, ``.pe-slider-title``).
        super().__init__(self.WRAP.format(markup), name=name, **layout)

    @property
    def value(self) -> str:
        """The title's markup (the name ``DiscreteSlider`` uses), without ``WRAP``."""
        head, tail = self.WRAP.split("{}")
        return self.text.removeprefix(head).removesuffix(tail)

    @value.setter
    def value(self, markup: str) -> None:
        self.object = self.WRAP.format(markup)


def readout(lang: str, key: str, **values: object) -> str:
    """A sentence from the string table as escaped HTML in the readout style."""
    return f'<div class="pe-readout">{html.escape(text(lang, key, **values))}</div>'


#: After a number in a label: a word joiner, invisible and of no width. BokehJS sets a label made only of digits and
#: ", . + − e" by its cap height and any other by the font's ascent, so in a row "λ = 6.3", "11.2", "19.9" … the
#: named first label sat 3–5 px below the numbers; with it every label of the row is set alike.
SET_AS_TEXT = "\u2060"


def named_once(first: str, numbers: Iterable[str]) -> list[str]:
    """Labels for a row of marks: ``first`` names the quantity ("λ = 6.3"), then the numbers alone, all level."""
    return [first, *(f"{number}{SET_AS_TEXT}" for number in numbers)]


def level_line(fig: Figure, name: str, label_name: str, **label: object) -> tuple[Span, Label]:
    """A dashed horizontal line at a level the figure compares against (a maximum, an expected value) and its
    label on a light box, both added to ``fig``; the caller moves them (``location``, ``y``, ``text``)."""
    line = Span(dimension="width", location=0, line_color=COLORS["ink"], line_width=2, line_dash="dashed",
                name=name)
    caption = Label(x=0, y=0, text="", text_font_size=LABEL_SIZE, text_color=COLORS["ink"],
                    background_fill_color="white", background_fill_alpha=0.85, name=label_name, **label)
    fig.add_layout(line)
    fig.add_layout(caption)
    return line, caption
