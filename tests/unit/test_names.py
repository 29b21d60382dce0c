"""Every figure and data source has a stable name, and the README lists it (embeds rely on them)."""

from __future__ import annotations

import re
from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Plot

from app.lesson import SECTIONS
from app.model.state import ExplorerState
from app.pages import VIEWS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
LISTED = set(re.findall(r"`([a-z_]+)`", README))


def named_models(view_name: str) -> list:
    view = VIEWS[view_name].view(ExplorerState(lang="en"))
    root = pn.panel(view).get_root(Document())
    # A glyph drawn from constants gets an implicit, empty source: nothing to find there.
    return [m for m in root.references()
            if isinstance(m, Plot) or (isinstance(m, ColumnDataSource) and m.data)]


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_every_figure_and_source_is_named_and_documented(view_name):
    models = named_models(view_name)
    names = [m.name for m in models]
    assert all(names), f"unnamed: {[type(m).__name__ for m in models if not m.name]}"
    assert len(set(names)) == len(names), f"duplicate names in {view_name}: {names}"
    assert set(names) <= LISTED, f"not in the README: {sorted(set(names) - LISTED)}"


def test_names_are_unique_across_the_whole_page():
    names = [m.name for view_name in VIEWS for m in named_models(view_name)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def section_models(slug: str) -> list:
    from app.lesson import SECTIONS

    root = pn.panel(SECTIONS[slug](ExplorerState(lang="en"))).get_root(Document())
    return list(root.references())


def named_in(models: list) -> list[str]:
    return [m.name for m in models if isinstance(m, Plot) or (isinstance(m, ColumnDataSource) and m.data)]


@pytest.mark.parametrize("slug", list(SECTIONS))
def test_every_section_names_its_figures_and_sources(slug):
    models = section_models(slug)
    names = named_in(models)
    assert all(names), f"unnamed: {[type(m).__name__ for m in models if not m.name]}"
    assert len(set(names)) == len(names), f"duplicate names in {slug}: {names}"
    # A view shown again further down carries the section's prefix (README: names of the mistakes section).
    documented = {name.removeprefix(f"{slug}_") if name.removeprefix(f"{slug}_") in LISTED else name for name in names}
    assert documented <= LISTED, f"not in the README: {sorted(documented - LISTED)}"
    if slug == "quiz":
        named = {m.name for m in models}
        assert {f"quiz_{n}" for n in range(1, 6)} | {f"quiz_feedback_{n}" for n in range(1, 6)} <= named


def test_names_are_unique_across_the_whole_lesson():
    # On / every section is on one page, and Bokeh refuses get_model_by_name for a name used twice.
    # (Panel names a component's own model after its class, "Prose"; the name it is given goes to
    # its data model, which is what a test reads.)
    classes = {"Prose", "LiveHTML", "SliderTitle", "QuizChoice", "StateLinks", "SectionWatch", "Description",
               "MistakeNote", "CodeCell", "PollControls"}
    names = [m.name for slug in SECTIONS for m in section_models(slug) if m.name and m.name not in classes]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
