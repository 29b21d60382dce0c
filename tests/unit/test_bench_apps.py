"""The benchmark's plain-Bokeh floor (bench/floor_app.py) builds on the app's data functions: it must keep
building, and its steps must keep answering, when those functions change (one did, and only the
benchmark's run found it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bokeh.document import Document

from app.model import core
from bench.floor_app import floor_document

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("entry", ["app.__main__", "bench.serve"])
def test_a_server_process_runs_one_blas_thread(entry):
    """The benchmark's servers run as ``python -m app`` does: one OpenBLAS thread (with two, a size step's
    small products spread over both cores of a busy 2-core machine). Each entry asks before it imports NumPy."""
    script = f"import importlib, os; importlib.import_module({entry!r}); print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120, check=True)
    assert done.stdout.strip() == "1"


def test_the_rooms_report_keeps_a_failed_scenario_and_the_load_measured_at_the_start():
    """bench.rooms: one scenario's timeout does not lose the others, and the load printed is the start's."""
    from bench import rooms

    start = {"cpu": "test cpu", "cores": "2", "loadavg_at_start": "9.99"}
    ok = {"followers": 100, "moves": 10, "errors": 0, "skipped": 1, "skipped_share": 0.1,
          "latency_ms": {"p50": 50.0, "p95": 90.0}, "teacher_ms": {"p50": 5.0, "p95": 9.0},
          "applied_in_app_ms": {"p50": 1.0, "p95": 2.0}, "first_follower_ms": {"p50": 3.0, "p95": 4.0},
          "last_follower_ms": {"p50": 6.0, "p95": 7.0}, "app_cpu_share": [0.5, 0.5], "bench_cpu_share": 0.2}
    results = {"page": "/explore", "seconds": 15.0, "machine": start, "started": "now",
               "command": "python -m bench.rooms", "nginx_failed": "not run",
               "scenarios": [ok, {"followers": 300, "failed": "TimeoutError()"}]}
    report = rooms.render(results)
    assert "load average 9.99 at the start" in report
    assert "| 100 | 10 | 50.0 | 90.0 |" in report
    assert "| 300 | failed: TimeoutError()" in report
    assert "nginx path: failed" in report
