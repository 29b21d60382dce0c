"""The benchmarks' tables in the docs are their published results, rendered: never numbers copied by hand."""

from __future__ import annotations

import json

import pytest

from bench import docs
from bench.common import DocTable


@pytest.mark.parametrize("table", list(docs.PUBLISHED), ids=lambda table: table.name)
def test_each_table_in_the_docs_is_its_results_rendered(table):
    results = table.read()
    assert results is not None, f"{table.results} is missing: run the benchmark (or python -m bench.docs)"
    assert table.shown() == docs.PUBLISHED[table](results).strip("\n"), (
        f"the table between the {table.marker!r} markers of {table.doc.name} is not {table.results.name} rendered: "
        "run python -m bench.docs, and keep prose about a run outside the markers")


def test_publishing_keeps_the_results_and_replaces_only_the_block(tmp_path, monkeypatch):
    monkeypatch.setattr("bench.common.PUBLISHED", tmp_path / "bench")
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nprose before\n\n## Next\n\nprose after\n", encoding="utf-8")
    table = DocTable("demo", doc, "demo", before="## Next")
    assert table.read() is None and table.shown() is None

    table.publish({"p50": 1.5}, "| p50 |\n|---|\n| 1.5 |")
    assert json.loads((tmp_path / "bench" / "demo.json").read_text(encoding="utf-8")) == {"p50": 1.5}
    assert table.shown() == "| p50 |\n|---|\n| 1.5 |"
    text = doc.read_text(encoding="utf-8")
    assert text.index("prose before") < text.index("<!-- demo:begin -->") < text.index("## Next")

    table.publish({"p50": 2.0}, "| p50 |\n|---|\n| 2.0 |")  # a second run replaces the block, nothing else
    assert table.read() == {"p50": 2.0}
    assert doc.read_text(encoding="utf-8") == text.replace("1.5", "2.0")


def test_a_failing_part_of_the_benchmark_keeps_the_others_results(tmp_path, monkeypatch):
    """bench.run: a part that raises is reported and its table stays the previous run's; the parts that finished
    are published, not lost with it."""
    from bench import run

    monkeypatch.setattr("bench.common.PUBLISHED", tmp_path / "bench")
    monkeypatch.setattr(run, "RESULTS", tmp_path / "scratch")
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n## Results\n\n## Next\n", encoding="utf-8")
    monkeypatch.setattr(run, "TABLE", DocTable("run", doc, "bench", before="## Next"))
    monkeypatch.setattr(run, "machine", lambda: {key: "?" for key in (
        "cpu", "cores", "loadavg_at_start", "python", "panel", "bokeh", "tornado", "numpy", "chromium")})
    run.TABLE.publish({"started": "earlier", "beta": {"from": "the previous run"}}, "old tables")

    def fails(quick: bool) -> dict:
        raise TimeoutError("a server that never answered")

    monkeypatch.setattr(run, "PARTS", {"alpha": lambda quick: {"measured": 1.0}, "beta": fails})
    run.main(["--parts", "alpha,beta"])
    published = run.TABLE.read()
    assert published["alpha"] == {"measured": 1.0}
    assert published["beta"] == {"from": "the previous run"}
    assert published["part_runs"] == {"alpha": published["started"], "beta": "earlier"}
    assert run.TABLE.shown() == run.render(published).strip("\n")
