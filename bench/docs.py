"""The benchmarks' tables in the docs, made again from the results they published (docs/bench/<name>.json).

    python -m bench.docs           # write every table again from its results
    python -m bench.docs --check   # name the tables that differ from their results; exit status 1 if any

What stands between a benchmark's markers is its ``render`` of its results file and nothing else: prose about a
run goes outside the markers. tests/unit/test_bench_docs.py runs the check.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from bench import ablation, extrapolation, reliability, rooms, run
from bench.common import ROOT, DocTable

#: Every benchmark that publishes a table: where it goes, and how its results become the table.
PUBLISHED: dict[DocTable, Callable[[dict[str, Any]], str]] = {
    module.TABLE: module.render for module in (run, rooms, ablation, extrapolation, reliability)}


def differing() -> list[str]:
    """The tables whose text in their doc is not their results rendered (or that have no results)."""
    out = []
    for table, render in PUBLISHED.items():
        results = table.read()
        if results is None or table.shown() != render(results).strip("\n"):
            out.append(f"{table.name} ({table.doc.relative_to(ROOT)}, markers {table.marker!r})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit status 1 if a table differs")
    args = parser.parse_args(argv)
    if args.check:
        stale = differing()
        print("\n".join(stale) if stale else "every table is its results, rendered")
        return 1 if stale else 0
    for table, render in PUBLISHED.items():
        results = table.read()
        if results is None:
            print(f"{table.name}: no results yet ({table.results.relative_to(ROOT)})")
            continue
        table.show(render(results))
        print(f"{table.name}: written into {table.doc.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
