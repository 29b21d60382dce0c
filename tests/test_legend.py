"""Legends reach nothing a slider step changes (components/legend.py): BokehJS rebuilds a legend when
anything its items reference changes, the data sources of their renderers included."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.core.property.vectorization import Field
from bokeh.document import Document
from bokeh.models import ColumnDataSource, GlyphRenderer, Legend, LegendItem, Plot
from bokeh.plotting import figure

from app.lesson import SECTIONS
from app.pages import VIEWS
from app.state import ExplorerState
from components.legend import detach_legends

LOOK = ("line_color", "line_width", "line_dash", "fill_color", "fill_alpha", "marker", "size")


def roots() -> list[tuple[str, object]]:
    made = [(f"view {name}", spec.view(ExplorerState(lang="en"))) for name, spec in VIEWS.items()]
    made += [(f"section {slug}", cls(ExplorerState(lang="en"))) for slug, cls in SECTIONS.items()]
    return made


def look(renderer: GlyphRenderer) -> dict:
    props = renderer.glyph.properties_with_values(include_defaults=True)
    return {name: props[name] for name in LOOK if name in props}


@pytest.mark.parametrize(("where", "viewable"), roots(), ids=lambda v: v if isinstance(v, str) else "")
def test_fixed_legend_entries_reference_only_hidden_stand_ins_that_look_like_a_drawn_glyph(where, viewable):
    models = pn.panel(viewable).get_root(Document()).references()
    legends = [m for m in models if isinstance(m, Legend)]
    for legend in legends:
        plot = next(p for p in models if isinstance(p, Plot) and legend in p.references())
        drawn = [r for r in plot.renderers if isinstance(r, GlyphRenderer) and r.visible]
        for item in legend.items:
            if isinstance(item.label, Field):
                continue  # labels read from the data: the entry has to follow it
            for renderer in item.renderers:
                assert not renderer.visible, (where, renderer.name)
                assert renderer.data_source.data == {}, (where, renderer.name)
                assert renderer.name.endswith("_legend"), (where, renderer.name)
                # The swatch shows a glyph that is on the figure, in the same look.
                assert any(type(r.glyph) is type(renderer.glyph) and look(r) == look(renderer) for r in drawn), \
                    (where, renderer.name)


def test_stand_ins_keep_the_look_and_data_labelled_entries_keep_their_renderers():
    fig = figure()
    source = ColumnDataSource(data={"x": [1, 2], "y": [3, 4], "c": ["red", "blue"], "legend": ["a", "b"]})
    line = fig.line(x="x", y="y", source=source, line_color="red", line_width=3, line_dash="dashed", name="curve")
    coloured = fig.scatter(x="x", y="y", source=source, color="c", legend_label="coloured", name="dots")
    fig.legend[0].items = [LegendItem(label="curve", renderers=[line]),
                           LegendItem(label={"field": "legend"}, renderers=[line]), *fig.legend[0].items]
    detach_legends(fig)
    fixed, by_data, by_colour = fig.legend[0].items[:3]
    (proxy,) = fixed.renderers
    assert proxy is not line and proxy in fig.renderers and not proxy.visible
    assert (proxy.glyph.line_color, proxy.glyph.line_width, proxy.glyph.line_dash) == ("red", 3, [6])
    assert proxy.glyph.x == 0 and proxy.data_source.data == {} and proxy.name == "curve_legend"
    assert by_data.renderers == [line]  # labels from the data
    assert by_colour.renderers == [coloured]  # colour from the data: a swatch without data has none
