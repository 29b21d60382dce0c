"""Legends that the browser builds once, not on every data change.

BokehJS rebuilds a legend's entries (new DOM and a new canvas per entry) whenever
any model its items reach changes, following references recursively: a legend
item's renderers, their glyphs, and their data sources. So a legend naming a
glyph whose source moves on every slider step is rebuilt on every step (at the
score section, 4.6 ms of a d_model step's 14.6 ms in ``apply_json_patch``; on
``/explore``, a third of a k step's). ``detach_legends`` points each entry with
a fixed label at a stand-in renderer instead: the same glyph class and look,
constant coordinates and a source with no columns (one per figure), hidden, so it
draws nothing in the plot, and nothing it references ever changes. (BokehJS
draws the swatch of a hidden renderer, and of one glyph when a source has no
columns; of none when it has columns with no rows. A stand-in sits at 0: a
``DataRange1d`` that follows every renderer of its figure would take that in,
so the figures here name their ranges' renderers.)

An entry labelled from a data column (one label per group of rows) gets a
stand-in too, on ``LegendRows``: a source holding the first row of each label
only, the columns its swatches read, which the section brings up to date after
changing the real data (``follow``); it sends nothing when the labels and their
looks are unchanged, which is most steps.

Each entry of a BokehJS legend also holds an overlay (the dimmed look of an
inactive entry, for ``click_policy``) laid over its swatch's canvas, so Chromium
gives every overlay a compositing layer of its own ("Overlap"): on ``/`` at the
simpler section 14 of the page's 96 layers, and every frame (a handle moving,
the figures repainting) updates them all. No legend here is clickable, so the
overlays are not displayed (``QUIET_ENTRIES``).
"""

from __future__ import annotations

import numpy as np
from bokeh.core.property.dataspec import NumberSpec
from bokeh.core.property.vectorization import Field
from bokeh.models import CDSView, ColumnDataSource, CustomJS, Glyph, GlyphRenderer, Legend, LegendItem
from bokeh.plotting import figure as Figure

from components.sources import send_changes
from components.theme import NARROW_FRAME_PX


def _coordinates(glyph: Glyph) -> set[str]:
    """The glyph's positional numbers (x, y, size, radius, angles): a legend swatch places its own."""
    return {name for name in type(glyph)._args if isinstance(glyph.lookup(name).property, NumberSpec)}


def _look_columns(renderer: GlyphRenderer) -> set[str]:
    """The data columns the glyph's look (all but its coordinates) reads."""
    glyph = renderer.glyph
    coordinates = _coordinates(glyph)
    return {spec.field for name, spec in glyph.properties_with_values(include_defaults=False).items()
            if isinstance(spec, Field) and name not in coordinates}


def _fixed_look(renderer: GlyphRenderer) -> bool:
    """Whether the glyph's look is constant (a swatch on no data can draw it)."""
    return not _look_columns(renderer)


def stand_in(renderer: GlyphRenderer, source: ColumnDataSource, view: CDSView | None = None) -> GlyphRenderer:
    """A hidden renderer drawn only as a legend swatch: ``renderer``'s glyph and look at constant coordinates,
    on ``source`` (with no columns: one swatch). Add it to the figure."""
    glyph = renderer.glyph
    props = glyph.properties_with_values(include_defaults=False)
    coordinates = _coordinates(glyph)
    props.update({name: 0 for name, spec in props.items() if name in coordinates and isinstance(spec, Field)})
    name = f"{renderer.name or glyph.__class__.__name__.lower()}_legend"
    return GlyphRenderer(glyph=type(glyph)(**props), data_source=source, view=view or CDSView(),
                         level=renderer.level, visible=False, name=name)


class LegendRows:
    """A data-labelled legend entry drawn from a source of its own: the first row of each label of the real
    renderer's data, in the columns its swatch reads. Call ``follow()`` after changing that data."""

    def __init__(self, fig: Figure, item: LegendItem):
        (renderer,) = item.renderers
        self._data = renderer.data_source
        label = item.label.field
        self.columns = [label, *sorted(_look_columns(renderer) - {label})]
        self.source = ColumnDataSource(data={column: [] for column in self.columns},
                                       name=f"{renderer.name}_legend_source")
        item.renderers = [stand_in(renderer, self.source)]
        fig.renderers.append(item.renderers[0])
        self.follow()

    def follow(self) -> None:
        """Bring the entry's rows up to date with the real data (nothing is sent when they are the same)."""
        data = self._data.data
        labels = np.asarray(data.get(self.columns[0], []))
        rows = np.sort(np.unique(labels, return_index=True)[1]) if labels.size else np.zeros(0, dtype=int)
        send_changes(self.source, {column: np.asarray(data[column])[rows].tolist() for column in self.columns})


#: A legend's rule: no overlay on its entries (they are not clickable; see the module's docstring).
QUIET_ENTRIES = ".bk-overlay { display: none; }"

#: A legend's stylesheet that breaks a label into lines no wider than the screen less the room left of it (a
#: frame's axis, a swatch): on a 390 px phone a label of one line ran past the figure's edge, cut by the canvas.
WRAPPED_LABELS = ".bk-label { white-space: normal; max-width: calc(100vw - 180px); }"


def detach_legends(fig: Figure) -> list[LegendRows]:
    """Point every entry of ``fig``'s legends at stand-ins (see the module's docstring); returns the
    data-labelled entries, whose ``follow()`` the caller runs after changing their data. Every legend also
    takes ``WRAPPED_LABELS`` (and ``QUIET_ENTRIES`` when not clickable).

    The fixed-label stand-ins of a figure share one empty source and one view (a stand-in costs its
    renderer and its glyph only)."""
    followers = []
    empty: ColumnDataSource | None = None
    view: CDSView | None = None
    for legend in fig.select(type=Legend):
        if legend.click_policy == "none" and QUIET_ENTRIES not in legend.stylesheets:
            legend.stylesheets = [*legend.stylesheets, QUIET_ENTRIES]
        if WRAPPED_LABELS not in legend.stylesheets:
            legend.stylesheets = [*legend.stylesheets, WRAPPED_LABELS]
        for item in legend.items:
            if isinstance(item.label, Field):
                if len(item.renderers) == 1:
                    followers.append(LegendRows(fig, item))
            elif all(_fixed_look(r) for r in item.renderers):
                if empty is None:
                    empty, view = ColumnDataSource(data={}, name=f"{fig.name}_legend_source"), CDSView()
                item.renderers = [stand_in(r, empty, view) for r in item.renderers]
                fig.renderers.extend(item.renderers)
    return followers


def stacked_when_narrow(fig: Figure, legend: Legend, below_px: int = NARROW_FRAME_PX, grow_px: int = 0) -> None:
    """Lay ``legend``'s entries out one under the other while ``fig`` is narrower than ``below_px`` (a phone),
    side by side otherwise, the figure ``grow_px`` taller while they are: a horizontal legend is one row, and on a
    390 px phone that row made the page scroll sideways. Decided in the browser, where the width is known (Bokeh's
    public ``js_on_change``)."""
    flip = CustomJS(args={"fig": fig, "legend": legend, "wide": legend.orientation}, name=f"{legend.name}_stacking",
                    code=f"""
const orientation = cb_obj.inner_width > 0 && cb_obj.inner_width < {below_px} ? "vertical" : wide;
if (legend.orientation === orientation) return;
legend.orientation = orientation;
if ({grow_px}) fig.height += orientation === "vertical" ? {grow_px} : -{grow_px};
""")
    fig.js_on_change("inner_width", flip)


def moved_when_narrow(fig: Figure, legend: Legend, sides: tuple[str, str] = ("right", "below"), grow_px: int = 0,
                      below_px: int = NARROW_FRAME_PX) -> None:
    """Move ``legend`` from the first of ``sides`` (where ``fig`` lays it out when wide: ``"right"``, ``"center"``
    for inside the frame) to the second while the figure is narrower than ``below_px`` (a phone), ``grow_px``
    taller to hold it, and back when it widens: on a 390 px phone /distance's key, right of the frame, left the
    frame 37 px, and /fingerprint's key, inside the frame, lay over the dials. Decided in the browser, as
    ``stacked_when_narrow``, from the frame's width, or from the figure's whole width when the move would change
    the frame's (a key leaving the right side); BokehJS lays a figure out again when its side panels change
    (public properties)."""
    wide, narrow_side = sides
    width = "outer_width" if {"left", "right"} & set(sides) else "inner_width"
    fig.js_on_change(width, CustomJS(args={"fig": fig, "legend": legend}, name=f"{legend.name}_side", code=f"""
const narrow = cb_obj.{width} > 0 && cb_obj.{width} < {below_px};
if (narrow === fig.{narrow_side}.includes(legend)) return;
const [from, to] = narrow ? ["{wide}", "{narrow_side}"] : ["{narrow_side}", "{wide}"];
// One change: set one side at a time, BokehJS dropped the key's view with the first and laid the figure out again
// before building it anew for the second ("cannot find a view for Legend").
fig.setv({{[from]: fig[from].filter((model) => model !== legend), [to]: [...fig[to], legend],
          height: fig.height + (narrow ? {grow_px} : -{grow_px})}});
"""))


#: ``two_columns_if_they_fit``'s rule, run in the browser after each layout of the figure.
_TWO_COLUMNS_IF_THEY_FIT = """
// BokehJS's view of the legend; a BokehJS without this lookup leaves the legend as set (stock behaviour).
const view = window.Bokeh?.index?.find_one?.(legend);
if (view?.bbox == null || !(cb_obj.outer_width > 0)) return;
// Measured as first laid out (two columns from the frame's left): where it starts and how wide it is.
if (legend.__pe_two === undefined) {
  if (legend.ncols !== 2 || legend.location !== "top_left") return;
  legend.__pe_two = {left: view.bbox.left, width: view.bbox.width, label_width: legend.label_width};
}
const {left, width} = legend.__pe_two;
const [ncols, location] = left + width <= cb_obj.outer_width ? [2, "top_left"]
  // Ending at the frame's right edge less the margin (the frame spans inner_width from left − margin).
  : width <= left + cb_obj.inner_width - 2 * legend.margin ? [2, "top_right"]
  : [1, "top_left"];
if (legend.ncols !== ncols) legend.ncols = ncols;
if (legend.location !== location) legend.location = location;
// A column's width only lines the two up; in one, a label is as wide as its text (WRAPPED_LABELS caps it): a
// label_width of 250 px ran past a 360 px phone.
const label_width = ncols === 2 ? legend.__pe_two.label_width : Math.min(legend.__pe_two.label_width, 20);
if (legend.label_width !== label_width) legend.label_width = label_width;
"""


def two_columns_if_they_fit(fig: Figure, legend: Legend) -> None:
    """Keep ``legend``, set in two columns under ``fig`` from the frame's left edge, inside the figure: where two
    columns from there would pass the figure's right edge, the same two columns end at that edge if they fit
    there, else one column; back when the figure widens. (Presentation mode on a 1280 px projector: the simpler
    section's "S(k) = Σ cos(ωᵢ·k)" key was 1.4 px wider than the page, which then scrolled sideways.) Decided in
    the browser after each layout, where the legend's width is known, as ``stacked_when_narrow``."""
    fig.js_on_change("inner_width", CustomJS(args={"legend": legend}, code=_TWO_COLUMNS_IF_THEY_FIT,
                                             name=f"{legend.name}_columns" if legend.name else None))
