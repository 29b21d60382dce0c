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
from app.model.state import ExplorerState
from app.pages import VIEWS
from components.legend import detach_legends

LOOK = ("line_color", "line_width", "line_dash", "fill_color", "fill_alpha", "marker")


def roots() -> list[tuple[str, object]]:
    made = [(f"view {name}", spec.view(ExplorerState(lang="en"))) for name, spec in VIEWS.items()]
    made += [(f"section {slug}", cls(ExplorerState(lang="en"))) for slug, cls in SECTIONS.items()]
    return made


def look(renderer: GlyphRenderer) -> dict:
    props = renderer.glyph.properties_with_values(include_defaults=True)
    return {name: props[name] for name in LOOK if name in props}


@pytest.mark.parametrize(("where", "viewable"), roots(), ids=lambda v: v if isinstance(v, str) else "")
def test_legend_entries_reference_only_hidden_stand_ins_that_look_like_a_drawn_glyph(where, viewable):
    models = pn.panel(viewable).get_root(Document()).references()
    legends = [m for m in models if isinstance(m, Legend)]
    for legend in legends:
        plot = next(p for p in models if isinstance(p, Plot) and legend in p.references())
        drawn = [r for r in plot.renderers if isinstance(r, GlyphRenderer) and r.visible]
        for item in legend.items:
            for renderer in item.renderers:
                assert not renderer.visible, (where, renderer.name)
                assert renderer.name.endswith("_legend"), (where, renderer.name)
                # The swatch shows a glyph that is on the figure, in the same look.
                twins = [r for r in drawn if type(r.glyph) is type(renderer.glyph) and look(r) == look(renderer)]
                assert twins, (where, renderer.name)
                if isinstance(item.label, Field):
                    # One row per label of the drawn glyph's data, in order.
                    column = item.label.field
                    labels = renderer.data_source.data[column]
                    assert any(labels == list(dict.fromkeys(r.data_source.data[column])) for r in twins
                               if column in r.data_source.data), (where, renderer.name)
                else:
                    assert renderer.data_source.data == {}, (where, renderer.name)


def test_stand_ins_keep_the_look_and_data_labelled_entries_follow_their_labels_only():
    fig = figure()
    source = ColumnDataSource(data={"x": [1, 2], "y": [3, 4], "c": ["red", "blue"], "legend": ["a", "b"]})
    line = fig.line(x="x", y="y", source=source, line_color="red", line_width=3, line_dash="dashed", name="curve")
    coloured = fig.scatter(x="x", y="y", source=source, color="c", legend_field="legend", name="dots")
    fig.legend[0].items = [LegendItem(label="curve", renderers=[line]),
                           LegendItem(label={"field": "legend"}, renderers=[line]), *fig.legend[0].items]
    followers = detach_legends(fig)
    fixed, by_data, by_colour = fig.legend[0].items[:3]
    (proxy,) = fixed.renderers
    assert proxy is not line and proxy in fig.renderers and not proxy.visible
    assert (proxy.glyph.line_color, proxy.glyph.line_width, proxy.glyph.line_dash) == ("red", 3, [6])
    assert proxy.glyph.x == 0 and proxy.data_source.data == {} and proxy.name == "curve_legend"
    (labelled,) = by_data.renderers
    assert labelled.data_source.data == {"legend": ["a", "b"]}
    (swatches,) = by_colour.renderers
    assert swatches.glyph.fill_color == Field("c") and swatches.glyph.x == 0
    assert swatches.data_source.data == {"legend": ["a", "b"], "c": ["red", "blue"]}  # the first row of each

    document = Document()
    document.add_root(fig)
    changes = []
    document.on_change(changes.append)
    source.data = {"x": [5, 6, 7], "y": [1, 1, 1], "c": ["red", "blue", "red"], "legend": ["a", "b", "a"]}
    for entry in followers:
        entry.follow()
    assert [getattr(c, "model", None) for c in changes] == [source]  # same labels, same look: nothing more
    source.data = {"x": [5], "y": [1], "c": ["green"], "legend": ["z"]}
    for entry in followers:
        entry.follow()
    assert labelled.data_source.data == {"legend": ["z"]}
    assert swatches.data_source.data == {"legend": ["z"], "c": ["green"]}
    assert coloured.data_source is source
