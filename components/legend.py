"""Legends that the browser builds once, not on every data change.

BokehJS rebuilds a legend's entries (new DOM and a new canvas per entry) whenever
any model its items reach changes, following references recursively: a legend
item's renderers, their glyphs, and their data sources. So a legend naming a
glyph whose source moves on every slider step is rebuilt on every step (at the
score section, 4.6 ms of a d_model step's 14.6 ms in ``apply_json_patch``; on
``/explore``, a third of a k step's). ``detach_legends`` points each entry with
a fixed label at a stand-in renderer instead: the same glyph class and look,
constant coordinates and a source of its own with no columns, hidden, so it
draws nothing in the plot, and nothing it references ever changes. (BokehJS
draws the swatch of a hidden renderer, and of one glyph when a source has no
columns; of none when it has columns with no rows.)
"""

from __future__ import annotations

from bokeh.core.property.vectorization import Field
from bokeh.models import ColumnDataSource, GlyphRenderer, Legend
from bokeh.plotting import figure as Figure


def _fixed_look(renderer: GlyphRenderer) -> bool:
    """Whether every property of the glyph but its coordinates is a constant (a legend swatch draws those)."""
    glyph = renderer.glyph
    return not any(isinstance(spec, Field) for name, spec in glyph.properties_with_values(include_defaults=False)
                   .items() if name not in type(glyph)._args)


def stand_in(fig: Figure, renderer: GlyphRenderer) -> GlyphRenderer:
    """A renderer in ``fig`` drawn only as a legend swatch: ``renderer``'s glyph and look on no data."""
    glyph = renderer.glyph
    props = glyph.properties_with_values(include_defaults=False)
    props.update({name: 0 for name, spec in props.items() if name in type(glyph)._args and isinstance(spec, Field)})
    name = f"{renderer.name or glyph.__class__.__name__.lower()}_legend"
    proxy = GlyphRenderer(glyph=type(glyph)(**props), data_source=ColumnDataSource(data={}, name=f"{name}_source"),
                          level=renderer.level, visible=False, name=name)
    fig.renderers.append(proxy)
    return proxy


def detach_legends(fig: Figure) -> None:
    """Point every fixed-label entry of ``fig``'s legends at stand-ins (see the module's docstring).

    An entry labelled from a data column keeps its renderers: its labels are that data.
    """
    for legend in fig.select(type=Legend):
        for item in legend.items:
            if isinstance(item.label, Field) or not all(_fixed_look(r) for r in item.renderers):
                continue
            item.renderers = [stand_in(fig, r) for r in item.renderers]
