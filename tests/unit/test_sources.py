"""components.sources.send_changes: the source ends equal to the data, and only changed columns travel."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ColumnsPatchedEvent, ModelChangedEvent
from bokeh.models import ColumnDataSource
from hypothesis import given
from hypothesis import strategies as st

from components.sources import send_changes
from tests.helpers import served_like


def watched(data: dict) -> tuple[ColumnDataSource, list]:
    source = ColumnDataSource(data=data)
    doc = Document()
    doc.add_root(source)
    events: list = []
    doc.on_change(events.append)
    return source, events


def sent_columns(events: list) -> list[set[str]]:
    out = []
    for event in events:
        if isinstance(event, ColumnDataChangedEvent):
            out.append(set(event.cols or event.model.data))
        elif isinstance(event, ModelChangedEvent) and event.attr == "data":
            out.append(set(event.model.data))
        elif isinstance(event, ColumnsPatchedEvent):
            raise AssertionError("patches are not expected")
    return out


def test_a_marker_step_sends_position_and_label_only():
    source, events = watched({"k": [3], "score": [12.27], "label": ["S(3)"], "align": ["left"]})
    changed = send_changes(source, {"k": [4], "score": [11.66], "label": ["S(4)"], "align": ["left"]})
    assert sorted(changed) == ["k", "label", "score"]
    assert sent_columns(events) == [{"k", "score", "label"}]
    assert dict(source.data) == {"k": [4], "score": [11.66], "label": ["S(4)"], "align": ["left"]}


def test_nothing_changed_sends_nothing_and_a_new_length_sends_everything():
    source, events = watched({"top": [5, 9], "label": ["pos", "pos+k"]})
    assert send_changes(source, {"top": [5, 9], "label": ["pos", "pos+k"]}) == []
    assert events == []
    send_changes(source, {"top": [5], "label": ["pos"]})
    assert sent_columns(events) == [{"top", "label"}]
    assert dict(source.data) == {"top": [5], "label": ["pos"]}


column = st.lists(st.integers(-3, 3), min_size=2, max_size=2)


@given(old=st.fixed_dictionaries({"a": column, "b": column, "c": column}),
       new=st.fixed_dictionaries({"a": column, "b": column, "c": column}))
def test_source_ends_equal_and_only_differing_columns_are_sent(old, new):
    source, events = watched(old)
    send_changes(source, {name: np.asarray(values) for name, values in new.items()})
    assert {name: list(values) for name, values in source.data.items()} == new
    differing = {name for name in new if new[name] != old[name]}
    assert sent_columns(events) == ([differing] if differing else [])


@pytest.mark.parametrize("name, value", [("d_model", 34), ("base", 500), ("T", 25)])
def test_a_size_step_resends_no_unchanged_column_of_the_sampled_scores(name, value):
    """A d_model or base step keeps the offsets, the sampled pairs and their legends of the score curve, the
    "why not simpler?" figures and the terms' ridges: only changed columns are sent (they were resent whole,
    ~22 KB of a d_model step on ``/``); a T step changes them and sends them."""
    import panel as pn
    from panel.io.state import set_curdoc

    from app.lesson import SECTIONS
    from app.model.state import ExplorerState
    from components.distance import ScoreCurve

    watched_names = {"distance", "distance_samples", "simpler_ratio", "simpler_raw_share", "simpler_learned_scores",
                     "simpler_sinusoid_scores", "simpler_sinusoid_curve", "simpler_neighbours", "simpler_ratio_marks",
                     "score_terms", "terms_curve"}
    doc = Document()
    with set_curdoc(doc):
        state = ExplorerState(d_model=32, T=24, base=10_000)
        views = [ScoreCurve(state), SECTIONS["simpler"](state), SECTIONS["terms"](state)]
        doc.add_root(pn.Column(*views).get_root(doc))
        served_like(doc)
        sources = {m.name: m for m in doc.models if isinstance(m, ColumnDataSource) and m.name in watched_names}
        assert set(sources) == watched_names
        before = {n: {c: list(np.asarray(v).tolist()) for c, v in s.data.items()} for n, s in sources.items()}
        events: list = []
        doc.on_change(events.append)
        setattr(state, name, value)
    resent = []
    for event in events:
        if getattr(event, "model", None) not in sources.values():
            continue
        for column in sent_columns([event])[0]:
            if list(np.asarray(event.model.data[column]).tolist()) == before[event.model.name][column]:
                resent.append(f"{event.model.name}.{column}")
    assert resent == []
    sent = [event.model.name for event in events if getattr(event, "model", None) in sources.values()]
    assert len(sent) == len(set(sent))  # each source changed once
    assert {"distance", "distance_samples", "simpler_sinusoid_scores", "score_terms", "terms_curve"} <= set(sent)
    assert ("simpler_ratio" in sent) == (name == "T")  # a value per token of T: nothing else moves it
    pn.state._connected.pop(doc, None)
    pn.state._thread_id_.pop(doc, None)
