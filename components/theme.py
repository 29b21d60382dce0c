"""Colours and figure styling shared by every view: readable from the back of a room."""

from __future__ import annotations

import html
from collections.abc import Iterable

import numpy as np
import panel as pn
from bokeh.models import AdaptiveTicker, CustomJS, Label, NoOverlap, Span
from bokeh.plotting import figure as Figure

from app.model.strings import text
from components.stylesheets import STYLESHEET

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

TICK_SIZE = "13pt"
#: A short note under a figure (a LiveHTML's ``css``; its markup is ``<p class="nt">…</p>``).
NOTE_CSS = ".nt { font-size: 1.2rem; line-height: 1.45; margin: 0.2rem 0; }"


#: Below this frame width (px) a figure is on a phone: keys go under it, its labels in smaller type.
NARROW_FRAME_PX = 560


def centres_wide_and_narrow(count: int, one_row: int, step: float,
                            row_step: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The centres (x, y) of ``count`` marks (dials, clocks) ``step`` apart from the left, placed twice: in one row
    (suffix ``""``, a desktop) and for a phone (``"_narrow"``, the twins ``columns_when_narrow`` reads): all in one
    row up to ``one_row`` of them, else in two, the first the longer, ``row_step`` apart downwards from y = 0."""
    j = np.arange(count)
    placed = {}
    for suffix, per_row in (("", count), ("_narrow", count if count <= one_row else -(-count // 2))):
        per_row = max(per_row, 1)
        placed[suffix] = step * (j % per_row), row_step * -(j // per_row)
    return placed


def smaller_type_when_narrow(fig: Figure, models: list, size: str, name: str) -> None:
    """Set the type of ``models`` (text glyphs or labels) in ``size`` while ``fig``'s frame is narrower than
    ``NARROW_FRAME_PX`` (a phone), as set otherwise. Decided in the browser, which knows the width, and only on
    crossing it, so that another restyle (presentation mode's) is never undone."""
    fig.js_on_change("inner_width", CustomJS(args={"models": models}, name=name, code=f"""
const narrow = cb_obj.inner_width > 0 && cb_obj.inner_width < {NARROW_FRAME_PX};
for (const model of models) {{
  // Its own mark: a glyph may also switch columns (``columns_when_narrow``) on the same crossing.
  if (narrow === Boolean(model.__pe_narrow_type)) continue;
  if (narrow) model.__pe_wide = model.text_font_size;
  model.__pe_narrow_type = narrow;
  // A glyph's size is a data spec ({{value}}), a label's a plain string.
  const spec = typeof model.__pe_wide === "object";
  model.text_font_size = narrow ? (spec ? {{value: "{size}"}} : "{size}") : model.__pe_wide;
}}
"""))


def columns_when_narrow(fig: Figure, switches: Iterable[tuple[object, dict[str, str]]], name: str) -> None:
    """Feed each glyph's properties (``switches``: a glyph and its property → column map) from each column's
    ``_narrow`` twin while ``fig``'s frame is narrower than ``NARROW_FRAME_PX`` (a phone), from the column itself
    otherwise, keeping a transform of it: a figure that sends both, placed for each width, is drawn for the width it
    has. Decided in the browser, only on crossing the width; one callback for the figure, one change (``setv``) per
    glyph."""
    glyphs, columns = zip(*switches, strict=True)
    fig.js_on_change("inner_width", CustomJS(args={"glyphs": list(glyphs), "columns": list(columns)}, name=name,
                                             code=f"""
const narrow = cb_obj.inner_width > 0 && cb_obj.inner_width < {NARROW_FRAME_PX};
glyphs.forEach((glyph, j) => {{
  if (narrow === Boolean(glyph.__pe_narrow_columns)) return;
  glyph.__pe_narrow_columns = narrow;
  const fields = {{}};
  for (const [property, column] of Object.entries(columns[j])) {{
    // A transform of the column (``dodge``: a label a set distance from its mark) goes with it.
    const transform = glyph[property]?.transform;
    const field = narrow ? `${{column}}_narrow` : column;
    fields[property] = transform == null ? {{field}} : {{field, transform}};
  }}
  glyph.setv(fields);
}});
"""))


def wrapped_when_narrow(fig: Figure, label: Label, name: str) -> None:
    """Break ``label``'s text after its first ": " while ``fig``'s frame is narrower than ``NARROW_FRAME_PX`` (a
    phone), its new texts too, and join it again when wider: "√(d_model/2) = 4: the correct encoding" ran 130 px
    past a 360 px phone's figure. Decided in the browser, which knows the width."""
    wrap = CustomJS(args={"fig": fig, "label": label}, name=name, code=f"""
const narrow = fig.inner_width > 0 && fig.inner_width < {NARROW_FRAME_PX};
const text = !narrow ? label.text.replace(":\\n", ": ")
  : label.text.includes("\\n") ? label.text : label.text.replace(": ", ":\\n");
if (text !== label.text) label.text = text;
""")
    fig.js_on_change("inner_width", wrap)
    label.js_on_change("text", wrap)


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
    for axis in fig.xaxis:
        # Where the labels of a fixed ticker do not fit (sixteen pairs on a phone's ladder ran together as
        # "9101112131415"), Bokeh draws every other one, or fewer, instead of letting them overlap. Not on the y
        # axes: there BokehJS 3.9 dropped every word of /order's rows and every pair number of /terms' after the
        # first, which did not overlap.
        axis.major_label_policy = NoOverlap(min_distance=6)
    fig.outline_line_color = None
    fig.toolbar.logo = None
    return fig


def html_pane(markup: str, **params) -> pn.pane.HTML:
    """An HTML pane that carries the app's stylesheet into its shadow root."""
    return pn.pane.HTML(markup, stylesheets=[STYLESHEET], **params)


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
