"""The benchmark's plain-Bokeh floor (bench/floor_app.py) builds on the app's data functions: it must keep
building, and its steps must keep answering, when those functions change (one did, and only the
benchmark's run found it)."""

from __future__ import annotations

import numpy as np
from bokeh.document import Document

from app import core
from bench.floor_app import floor_document


def test_the_floor_builds_its_named_sources_and_answers_its_sliders():
    doc = Document()
    floor_document(doc)
    names = {m.name for m in doc.models if m.name}
    assert {"heatmap", "ladder", "clocks", "pair_clock", "distance", "distance_marker", "row_marks"} <= names
    marker = doc.get_model_by_name("distance_marker")
    assert marker.data["k"] == [3]
    assert marker.data["score"][0] == np.float64(core.relative_scores(3, 32, 10_000))
    k = doc.get_model_by_name("floor_k_slider")
    # As Bokeh applies a browser's change: the slider's on_change callbacks run.
    k.trigger("value", 3, 5)
    assert marker.data["k"] == [5]
    assert marker.data["label_y"][0] > max(doc.get_model_by_name("distance").data["score"])
    assert list(doc.get_model_by_name("row_marks").data["top"]) == [0, 5]
