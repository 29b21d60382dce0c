"""components.sources.send_changes: the source ends equal to the data, and only changed columns travel."""

from __future__ import annotations

import numpy as np
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ColumnsPatchedEvent, ModelChangedEvent
from bokeh.models import ColumnDataSource
from hypothesis import given
from hypothesis import strategies as st

from components.sources import send_changes


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
