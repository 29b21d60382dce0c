"""The dark theme and presentation sizes for the Bokeh figures, applied to the figures in place.

The views build their figures once, in the light theme at reading size, and never
rebuild them; this module restyles the models a page already has:

* **dark theme**: every colour property of a figure's own models (background,
  border, axes, ticks, labels, grid, titles, annotations, glyph colours given
  as a value) is mapped by ``dark_color``: greys swap lightness (white paper
  becomes the dark background, dark ink becomes light ink), hues are lifted to
  at least ``DARK_MIN_LIGHTNESS`` so that they stand out on the dark ground.
  A colour mapper's palette is data and is left alone; a source's colour
  columns (a role's colour sent as data) get the same lift, also when a view
  sends them again.
* **presentation**: every font size of a figure becomes at least
  ``PRESENT_MIN_FONT_PX`` px (about twice the reading size), every line of a
  glyph at least ``PRESENT_MIN_LINE`` px wide, every marker ``PRESENT_GROWTH``
  times larger, and the figures (their fixed sizes, or the width a stretching
  one may reach) grow by ``PRESENT_GROWTH``
  to carry the larger type, but no larger than the browser's window
  (``FigureStyler.fit``, told by the page when it knows the window's size): on a
  1280 × 720 projector a figure grown to 900 px was taller than the screen. A
  figure keeps its shape (a fixed width shrinks with its height) and never goes
  below its reading size. A size a view sets later (a figure that grows with its
  rows) is presented the same way.

``FigureStyler`` does it for a whole session: once for the page's first
render, by listening to the document's changes (a new root, new children of a
layout), and for a part shown later by whoever shows it (``restyle_part``). A
model is restyled once.

The document's change callbacks do not hear every change: once the browser has
the page, Panel applies a layout's new children inside a hold and writes the
held events to the browser itself (``panel.io.document.unlocked``), so neither
``Document.on_change`` nor a model's ``on_change`` callbacks see them. A
presented slide reached by Next or PageDown kept its reading size until a
reload (issue 45): ``components.present.Presentation`` now passes each slide
it shows to ``restyle_part``, in the same message as the slide, and so do the
parts that a reading page adds after its first draw (``components.lazy.LazyPart``,
``app.pages.LaterViews`` and ``LaterParts``, through ``page_styler``): before,
in the dark theme their figures stayed light.
"""

from __future__ import annotations

import colorsys
import re
import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary, WeakSet

import panel as pn
from bokeh.colors import named
from bokeh.core.property.vectorization import Field, Value
from bokeh.document import Document
from bokeh.document.events import (
    ColumnDataChangedEvent,
    ColumnsPatchedEvent,
    DocumentChangedEvent,
    ModelChangedEvent,
    RootAddedEvent,
)
from bokeh.model import Model
from bokeh.models import (
    Annotation,
    ColorMapper,
    ColumnDataSource,
    ContinuousTicker,
    Legend,
    Plot,
    Scatter,
)
from bokeh.models.glyph import Glyph

from components.legend import two_columns_if_they_fit

if TYPE_CHECKING:
    from app.model.state import ExplorerState

#: The dark theme's background: Panel's own dark design's, so figures and widgets sit on one ground.
DARK_BACKGROUND = "#212529"
#: Lightest a hue may stay in the dark theme (HLS lightness), so that it stands out on the dark ground.
DARK_MIN_LIGHTNESS = 0.62
#: Contrast a hue reaches against the dark ground (a little above WCAG's 4.5:1 for text, for rounding).
DARK_MIN_CONTRAST = 4.6
#: Presentation mode: smallest font size of a figure (px), thinnest line (px), growth of a figure's size.
PRESENT_MIN_FONT_PX = 30
PRESENT_FONT_SCALE = 1.8
PRESENT_MIN_LINE = 3
PRESENT_GROWTH = 1.5
#: The fewest ticks a presented axis asks for.
PRESENT_MIN_TICKS = 3
#: A legend's gaps and swatch sizes, grown with its labels in presentation mode.
LEGEND_GAPS = ("spacing", "label_standoff", "glyph_width", "glyph_height", "padding")
#: The least gap (px) between two entries of a presented legend.
PRESENT_LEGEND_SPACING = 18

#: Room (px) a presented figure leaves in the browser's window, above and below it or beside it.
PRESENT_WINDOW_MARGIN = 40


@dataclass(frozen=True)
class ReadingSize:
    """A figure's size as its view set it, in px (``None``: not set)."""

    width: int | None
    height: int | None
    max_width: int | None
    #: Whether ``width`` is the figure's width on screen (else it stretches, up to ``max_width`` if set).
    fixed: bool

    @classmethod
    def of(cls, plot: Plot) -> ReadingSize:
        return cls(plot.width, plot.height, plot.max_width, plot.sizing_mode in (None, "fixed", "stretch_height"))

    def scale(self, window: tuple[int, int] | None) -> float:
        """How much the figure grows in presentation mode: ``PRESENT_GROWTH``, less where it would not fit
        ``window`` (width, height; ``None``: not known yet) with ``PRESENT_WINDOW_MARGIN`` to spare; never
        below 1 (the reading size)."""
        scale = PRESENT_GROWTH
        if window is not None:
            room_width, room_height = (max(side - PRESENT_WINDOW_MARGIN, 1) for side in window)
            if self.height:
                scale = min(scale, room_height / self.height)
            if self.width and self.fixed:
                scale = min(scale, room_width / self.width)
        return max(scale, 1.0)

    def presented(self, window: tuple[int, int] | None) -> dict[str, int]:
        """The sizes to set for presentation mode in ``window``: every one set, scaled together (a fixed
        figure keeps its shape; a stretching one's bound grows as a fixed width would)."""
        scale = self.scale(window)
        sizes = {"height": self.height, "width": self.width if self.fixed else None, "max_width": self.max_width}
        return {name: round(size * scale) for name, size in sizes.items() if size}

_SIZE = re.compile(r"^\s*([0-9.]+)\s*(px|pt|em|rem)?\s*$")
_PX_PER = {"px": 1.0, "pt": 4 / 3, "em": 16.0, "rem": 16.0, None: 1.0}


def _rgb(color: str) -> tuple[float, float, float] | None:
    text = color.strip().lower()
    if text.startswith("#") and len(text) in (4, 7):
        digits = text[1:] if len(text) == 7 else "".join(ch * 2 for ch in text[1:])
        try:
            return tuple(int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]
        except ValueError:
            return None
    known = getattr(named, text, None)
    if known is not None and hasattr(known, "r"):
        return known.r / 255, known.g / 255, known.b / 255
    return None


def dark_color(color: str) -> str:
    """``color`` for the dark theme: greys swap lightness, hues are lifted; unknown text comes back as is."""
    rgb = _rgb(color)
    if rgb is None:
        return color
    hue, lightness, saturation = colorsys.rgb_to_hls(*rgb)
    if saturation < 0.15 or lightness > 0.95 or lightness < 0.05:
        if lightness >= 0.97:
            return DARK_BACKGROUND  # paper
        # Dark ink -> light ink; greys in between keep their distance from the ground.
        lightness = 0.14 + (1 - lightness) * 0.82
        return _hex(colorsys.hls_to_rgb(hue, lightness, saturation))
    # A hue: lifted until it reads as text on the dark ground (WCAG 4.5:1), keeping its hue.
    lightness = max(lightness, DARK_MIN_LIGHTNESS)
    ground = _luminance(_rgb(DARK_BACKGROUND))  # type: ignore[arg-type]
    while lightness < 0.95:
        rgb = colorsys.hls_to_rgb(hue, lightness, saturation)
        if (_luminance(rgb) + 0.05) / (ground + 0.05) >= DARK_MIN_CONTRAST:
            break
        lightness += 0.02
    return _hex(colorsys.hls_to_rgb(hue, lightness, saturation))


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(round(v * 255) for v in rgb))


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def present_font_size(size: str) -> str:
    """A figure's font size for presentation: ``PRESENT_FONT_SCALE`` times larger, at least ``PRESENT_MIN_FONT_PX``."""
    match = _SIZE.match(size)
    if match is None:
        return size
    px = float(match.group(1)) * _PX_PER[match.group(2)]
    return f"{max(PRESENT_MIN_FONT_PX, round(px * PRESENT_FONT_SCALE))}px"


def _value(current: object) -> tuple[object, bool]:
    """The plain value of a property, and whether it was written as ``value(...)``."""
    if isinstance(current, Value):
        return current.value, True
    if isinstance(current, dict) and set(current) == {"value"}:
        return current["value"], True
    return current, False


def restyle_model(model: Model, *, dark: bool, present: bool) -> None:
    """Restyle one model of a figure (never a source or a colour mapper: their colours are data)."""
    if isinstance(model, ColumnDataSource | ColorMapper):
        return
    # The values the view set, else the class's defaults: never a theme's (Panel's dark design themes some
    # properties already dark; mapping those again would turn them light). ``_property_values`` holds
    # exactly what was set; the public ``properties_with_values`` mixes the theme's values in.
    given = model._property_values
    if dark:
        # Drop the design's theme from this model first: a value equal to a themed one would not be stored
        # (Bokeh skips a set that changes nothing), and the browser may never have been sent the theme's.
        model.apply_theme({})
    for name in model.properties():
        if dark and name.endswith("_color"):
            current = given[name] if name in given else model.lookup(name).class_default(type(model))
            plain, wrapped = _value(current)
            if isinstance(plain, str):
                new = dark_color(plain)
                if new != plain:
                    setattr(model, name, {"value": new} if wrapped else new)
        elif present and name.endswith("_font_size"):
            plain, wrapped = _value(getattr(model, name))
            if isinstance(plain, str):
                new = present_font_size(plain)
                if new != plain:
                    setattr(model, name, {"value": new} if wrapped else new)
        elif present and name == "line_width" and isinstance(model, Glyph | Annotation):
            plain, wrapped = _value(getattr(model, name))
            if isinstance(plain, int | float) and 0 < plain < PRESENT_MIN_LINE:
                setattr(model, name, {"value": PRESENT_MIN_LINE} if wrapped else PRESENT_MIN_LINE)
        elif present and name == "size" and isinstance(model, Scatter):
            # A marker's size is in screen px: it grows with the figure (dots of 8 px were specks on a projector).
            plain, wrapped = _value(getattr(model, name))
            if isinstance(plain, int | float) and plain > 0:
                grown = round(plain * PRESENT_GROWTH, 1)
                setattr(model, name, {"value": grown} if wrapped else grown)
    if present and isinstance(model, ContinuousTicker):
        # Labels 1.8 times larger on an axis that may not grow at all (a figure fitted to a 1280 px window):
        # fewer of them, or they run into each other ("−20−15−10").
        model.desired_num_ticks = max(PRESENT_MIN_TICKS, round(model.desired_num_ticks / PRESENT_FONT_SCALE))
    if present and isinstance(model, Legend):
        # Larger labels with the same gaps ran into the next entry's swatch ("hand at pos—hand at pos + k").
        for name in LEGEND_GAPS:
            setattr(model, name, round(getattr(model, name) * PRESENT_GROWTH))
        model.spacing = max(model.spacing, PRESENT_LEGEND_SPACING)
    if present and isinstance(model, Plot):
        # The figure's own size: FigureStyler._size, which knows the window.
        for border in ("min_border_left", "min_border_bottom"):
            if getattr(model, border):
                setattr(model, border, round(getattr(model, border) * PRESENT_GROWTH))
        # A list under the figure, in type 1.8 times larger, took half a fitted figure's height (the learned
        # table's four starts, one entry per value of a data column): in two columns it takes half as many
        # rows. Two fixed entries stay one above the other (side by side they were wider than the figure).
        for legend in model.below:
            if isinstance(legend, Legend) and legend.orientation == "vertical" and legend.ncols == "auto" and (
                    len(legend.items) > 2 or any(isinstance(item.label, Field) for item in legend.items)):
                legend.ncols = 2
                two_columns_if_they_fit(model, legend)


class FigureStyler:
    """Restyles every figure of one session's document, now and whenever a layout gains children."""

    def __init__(self, doc: Document, *, dark: bool, present: bool):
        # Weakly: the styler is the value of a WeakKeyDictionary keyed by this document, and a value
        # that held its key would keep every session's document alive for good.
        self._doc = weakref.ref(doc)
        self.dark = dark
        self.present = present
        self.done: WeakSet[Model] = WeakSet()
        #: Colours this styler put into sources (see ``_data_colors``).
        self.produced: set[str] = set()
        #: Presentation mode: each figure's size as its view set it, and the browser's window (width,
        #: height; ``None`` until the page reports it).
        self.reading: WeakKeyDictionary[Plot, ReadingSize] = WeakKeyDictionary()
        self.window: tuple[int, int] | None = None
        doc.on_change(self._on_change)

    @property
    def active(self) -> bool:
        return self.dark or self.present

    def _models(self) -> list:
        doc = self._doc()
        return [] if doc is None else list(doc.models)

    def restyle(self, models: object = None) -> int:
        """Restyle the figures' models not yet restyled (all of the document's by default); how many."""
        if not self.active:
            return 0
        count = 0
        for plot in [m for m in (models if models is not None else self._models()) if isinstance(m, Plot)]:
            if plot in self.done:
                continue
            for model in plot.references():
                if model not in self.done:
                    restyle_model(model, dark=self.dark, present=self.present)
                    if self.dark and isinstance(model, ColumnDataSource):
                        self._data_colors(model)
                    self.done.add(model)
                    count += 1
            if self.present:
                self.reading[plot] = ReadingSize.of(plot)
                self._size(plot)
        return count

    def restyle_part(self, part: pn.viewable.Viewable) -> int:
        """Restyle the figures of a Panel ``part`` not yet restyled (how many models), in place.

        For a part put on a page that the browser already has (a slide): Panel sends it without the
        document's change callbacks (see the module). Call it right after the part is put in its layout,
        inside the same hold (``app.fastsync.one_message``): the new sizes and colours then leave in the
        message that carries the part, and the browser never draws its figures at reading size. A figure
        not yet on the page (Panel's update scheduled for later) is restyled all the same: the model Panel
        sends is the figure itself.
        """
        figures = [pane.object for pane in part.select(pn.pane.Bokeh) if isinstance(pane.object, Model)]
        return self.restyle([model for figure in figures for model in figure.references()])

    def fit(self, width: int, height: int) -> None:
        """Presentation mode: size every figure for a browser window of ``width`` × ``height`` px."""
        window = (int(width), int(height))
        if not self.present or window == self.window or min(window) <= 0:
            return
        self.window = window
        for plot in list(self.reading):
            self._size(plot)

    def _size(self, plot: Plot) -> None:
        # Set with this styler as the change's setter: inside a hold (a step's one message) the document's
        # callbacks, this one's too, see the change only after the hold, when no flag would still be up.
        for name, value in self.reading[plot].presented(self.window).items():
            if getattr(plot, name) != value:
                plot.lookup(name).__set__(plot, value, setter=self)

    def _data_colors(self, source: ColumnDataSource) -> None:
        """Colours held in a source's colour columns, mapped like the figures' own (dark theme only).

        A view sends its roles' colours (the selected face's label, a hand) as data; on the dark
        ground they need the same lift. Setting the column again comes back here with nothing to change.
        """
        # dark_color is not idempotent (greys swap lightness): a value it produced is never mapped again.
        for name, column in list(source.data.items()):
            if "color" not in name or not len(column) or not isinstance(column[0], str):
                continue
            mapped = [value if not isinstance(value, str) or value in self.produced else dark_color(value)
                      for value in column]
            self.produced.update(value for value in mapped if isinstance(value, str))
            if mapped != list(column):
                source.data[name] = mapped

    def _on_change(self, event: DocumentChangedEvent) -> None:
        if self.dark and isinstance(event, ColumnDataChangedEvent | ColumnsPatchedEvent | ModelChangedEvent) \
                and isinstance(getattr(event, "model", None), ColumnDataSource) \
                and getattr(event, "attr", "data") == "data":
            self._data_colors(event.model)
            return
        # A view that sizes its figure again (one that grows with its rows) sets its reading size: present it.
        if isinstance(event, ModelChangedEvent) and event.attr in ("width", "height", "max_width") \
                and event.setter is not self and event.model in self.reading:
            self.reading[event.model] = replace(self.reading[event.model], **{event.attr: event.new})
            self._size(event.model)
            return
        # Only a new root or new children of a layout can bring a new figure; a slider step changes data.
        # The event's own model is walked: while Bokeh adds a root, ``doc.models`` does not list it yet.
        # Not active (the light page): nothing to restyle, so not even a walk of the new models.
        if self.active and (isinstance(event, RootAddedEvent) or (
                isinstance(event, ModelChangedEvent) and event.attr in ("children", "objects", "center"))):
            self.restyle(event.model.references())


_STYLERS: WeakKeyDictionary[Document, FigureStyler] = WeakKeyDictionary()


def style_figures(doc: Document | None, *, dark: bool, present: bool) -> FigureStyler | None:
    """The session document's ``FigureStyler`` (made on first call); ``None`` without a document."""
    if doc is None:
        return None
    if doc not in _STYLERS:
        _STYLERS[doc] = FigureStyler(doc, dark=dark, present=present)
    return _STYLERS[doc]


def page_styler(state: ExplorerState) -> FigureStyler | None:
    """The session's ``FigureStyler``, for the state's theme and presentation mode (``None`` without a session)."""
    return style_figures(pn.state.curdoc, dark=state.theme == "dark", present=state.present)
