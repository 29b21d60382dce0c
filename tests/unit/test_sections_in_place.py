"""Every lesson section, moved by a change of the state, shows what the same section built afresh at the new
state shows: every named source's columns, every live number of its passages, every named text.

A section updates in place (``components/``: sources and texts changed, never rebuilt), and each of its
watchers names the parameters it follows. A parameter left out of those names leaves a figure or a number
of the old state on screen: the "why not simpler?" figures kept the old base's sinusoid products, curve and
neighbour similarity (and the sentence quoting it) after a base step. This compares the two ways of
reaching a state, without a browser.
"""

from __future__ import annotations

import re

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.model import Model
from bokeh.models import ColumnDataSource
from panel.io.state import set_curdoc

from app import fastsync
from app.lesson import SECTIONS
from app.model.state import URL_PARAMETERS, ExplorerState
from components import widgets
from tests.helpers import served_like

START = {"lang": "en", "d_model": 32, "T": 24, "base": 10_000, "pair": 3, "pos": 5, "k": 3}
#: One change of each parameter a slider, a switch or a box of the lesson can make (the language reloads
#: the page instead).
CHANGES = [("d_model", 34), ("d_model", 30), ("T", 20), ("T", 25), ("base", 500), ("pair", 5), ("pos", 9),
           ("k", -4), ("pairs_from", 2), ("pairs_to", 9), ("heads", "aligned"), ("reserve", 8),
           ("sentence", "the cat sees the dog"), ("mistake", "sin_only"), ("mistake", "dim_index"),
           ("T_train", 5), ("T_train", 24)]
#: Steps in a row that clamp other values on the way (the fresh section is built from where they end).
SEQUENCES = [[("T", 3), ("T", 30)], [("d_model", 2)], [("T", 1)], [("k", 23), ("T", 12)],
             [("d_model", 8), ("pair", 3), ("d_model", 40)], [("reserve", 32), ("d_model", 20)],
             [("T_train", 20), ("T", 12), ("T", 60)]]
#: Properties of named models that show the state (a passage's values, a text's markup, a line's place...).
SHOWN = ("text", "values", "object", "location", "start", "end", "visible", "label", "title", "value", "args",
         "major_label_overrides", "low", "high")


def shown(doc: Document) -> dict[str, dict[str, object]]:
    """What each named model of ``doc`` shows: a source's columns, the other models' ``SHOWN`` properties.

    A passage keeps the first values of numbers it does not show (``Prose.show`` sends only its own):
    only the numbers its markup has a place for count.
    """
    out: dict[str, dict[str, object]] = {}
    for model in doc.models:
        if not model.name or "_" not in model.name:  # Panel's own names ("Column01234"), class names
            continue
        if isinstance(model, ColumnDataSource):
            out[model.name] = {column: np.asarray(values).tolist() for column, values in model.data.items()}
            continue
        props = {}
        for name in SHOWN:
            if name not in model.properties():
                continue
            value = getattr(model, name)
            if name == "values" and "html" in model.properties():
                places = set(re.findall(r'data-key="([^"]+)"', model.html))
                value = {key: v for key, v in value.items() if key in places}
            props[name] = getattr(value, "text", value) if name == "title" else value
        out[model.name] = props
    return out


def built(slug: str, state: ExplorerState) -> Document:
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(pn.Column(SECTIONS[slug](state)).get_root(doc))
    served_like(doc)
    return doc


def same(a: object, b: object) -> bool:
    if isinstance(a, Model) and isinstance(b, Model):
        # A model a property refers to (a callback's args): the same kind and name; what it shows is its own entry.
        return type(a) is type(b) and a.name == b.name
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        try:
            return len(a) == len(b) and bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                                          rtol=1e-9, atol=1e-9, equal_nan=True))
        except (TypeError, ValueError):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.fixture(autouse=True)
def _forget_documents():
    yield
    pn.state._connected.clear()
    pn.state._thread_id_.clear()


@pytest.mark.parametrize("slug", list(SECTIONS))
def test_a_section_moved_by_each_change_shows_what_a_fresh_one_shows(slug):
    fastsync.install()
    wrong = []
    for steps in [[change] for change in CHANGES] + SEQUENCES:
        state = ExplorerState(**START)
        doc = built(slug, state)
        for name, value in steps:
            with set_curdoc(doc), widgets.one_message():  # as a slider step is applied
                setattr(state, name, value)
        moved = shown(doc)
        final = {name: getattr(state, name) for name in URL_PARAMETERS}
        assert all(final[name] == value for name, value in steps[-1:])
        fresh = shown(built(slug, ExplorerState(**final)))
        assert fresh.keys() <= moved.keys(), f"{steps}: models missing {fresh.keys() - moved.keys()}"
        for model, props in fresh.items():
            for prop, expected in props.items():
                if not same(moved[model].get(prop), expected):
                    wrong.append(f"{steps}: {model}.{prop} shows {str(moved[model].get(prop))[:120]}, "
                                 f"a fresh section {str(expected)[:120]}")
    assert wrong == []


@pytest.mark.parametrize("slug", list(SECTIONS))
def test_a_section_offers_play_exactly_when_pos_or_k_moves_something_in_it(slug):
    """Play runs pos (or k): on the order and quiz pages it moved nothing on screen. A section's own
    page shows play only where a step of pos or k changes a figure or a number of the section."""
    fastsync.install()
    state = ExplorerState(**START)
    doc = built(slug, state)
    before = shown(doc)
    for name, value in (("pos", 9), ("k", -4)):
        with set_curdoc(doc), widgets.one_message():
            setattr(state, name, value)
    after = shown(doc)
    moved = sorted(model for model in after if model != "address_bar" and not same(before.get(model), after[model]))
    assert bool(moved) == SECTIONS[slug].plays, moved
