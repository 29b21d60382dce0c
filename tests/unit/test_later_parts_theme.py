"""Issue 45, item 1: the parts a page builds after its first draw take the page's theme and presentation sizes.

Panel sends a layout's new children to a connected browser past the document's change callbacks, where the
figure styler listens; here the parts are not on the session's document at all, so the styler hears nothing
of them either, and only the builder's own call can restyle them.
"""

from __future__ import annotations

import re

import panel as pn
from bokeh.document import Document
from bokeh.models import Plot
from panel.io.state import set_curdoc

from app.lesson import LESSON
from app.model.state import ExplorerState
from components.figure_theme import DARK_BACKGROUND, PRESENT_MIN_FONT_PX, style_figures
from components.lazy import LazyPart


def figures(part: pn.viewable.Viewable) -> list[Plot]:
    # A fixed figure sits in a box of its own (components.figure_row.fixed_figure_box): the plots a pane holds.
    return [plot for pane in part.select(pn.pane.Bokeh) for plot in pane.object.select({"type": Plot})]


def font_sizes(plot: Plot) -> list[float]:
    sizes = []
    for model in plot.references():
        for name, value in model.properties_with_values(include_defaults=True).items():
            if name.endswith("_font_size") and isinstance(value, str | dict):
                size = value["value"] if isinstance(value, dict) else value
                found = re.match(r"([0-9.]+)px", size)
                if found:
                    sizes.append(float(found.group(1)))
    return sizes


def test_a_lazy_section_built_later_takes_the_dark_theme():
    doc = Document()
    with set_curdoc(doc):
        style_figures(doc, dark=True, present=False)
        part = LazyPart(LESSON["hands"], ExplorerState(lang="en", theme="dark"), 900, "hands")
        part.build_now()
    plots = figures(part.column)
    assert plots
    assert all(plot.border_fill_color == DARK_BACKGROUND for plot in plots)


def test_a_lazy_section_built_later_takes_the_presentation_sizes():
    doc = Document()
    with set_curdoc(doc):
        style_figures(doc, dark=False, present=True)
        part = LazyPart(LESSON["shift"], ExplorerState(lang="en", present=True), 900, "shift")
        part.build_now()
    plots = figures(part.column)
    assert plots
    for plot in plots:
        sizes = font_sizes(plot)
        assert sizes and min(sizes) >= PRESENT_MIN_FONT_PX


def test_a_light_reading_page_leaves_a_lazy_section_as_built():
    doc = Document()
    with set_curdoc(doc):
        style_figures(doc, dark=False, present=False)
        part = LazyPart(LESSON["hands"], ExplorerState(lang="en"), 900, "hands")
        part.build_now()
    assert all(plot.border_fill_color != DARK_BACKGROUND for plot in figures(part.column))


def test_the_later_views_of_explore_take_the_dark_theme(monkeypatch):
    from app import pages

    monkeypatch.setattr(pages, "session_state", lambda: (ExplorerState(lang="en", theme="dark"), []))
    doc = Document()
    with set_curdoc(doc):
        # Without a session Panel runs ``onload`` at once: the later views are built with the page, after the
        # page's own look restyled the document (which the page is not on yet, as a later part is not on it).
        page = pages.explore_page()
    views = next(column for column in page.select(pn.Column) if column.name == "views")
    plots = figures(views)
    assert len(plots) > 2
    assert all(plot.border_fill_color == DARK_BACKGROUND for plot in plots)


def test_the_lessons_later_sections_take_the_dark_theme(monkeypatch):
    from app import pages

    monkeypatch.setattr(pages, "session_state", lambda: (ExplorerState(lang="en", theme="dark"), []))
    doc = Document()
    with set_curdoc(doc):
        page = pages.lesson_page()
        # LaterParts ran at once (no session): the later sections' placeholders are on the page.
        parts = [part for part in page.select(pn.Column) if part.name == "hands_part"]
        assert parts
        watch = next(part for part in page.select() if type(part).__name__ == "SectionWatch")
        watch.seen = ["hands"]  # the reader comes near the section
    plots = figures(parts[0])
    assert plots
    assert all(plot.border_fill_color == DARK_BACKGROUND for plot in plots)
