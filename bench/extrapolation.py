"""The extrapolation section's sliders in Chromium: key press → new data in the page, at every size.

    python -m bench.extrapolation [--repeats 20] [--no-doc]

Opens ``/extrapolation`` at the lesson size and at 1024 × 2048 (``T_train`` half of ``T``, so that its slider
moves both ways) and presses each of its sliders (T_train, T, d_model, base) ``repeats`` times, walking across
its range, as ``bench.lesson`` presses the lesson's (``lesson_sliders``: a press counts from the keydown to the
last named model it changes getting its new value in the page). Results: docs/bench/extrapolation.json and the
table between the markers ``extrapolation:begin`` and ``extrapolation:end`` of docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any
from urllib.parse import urlencode

from bench.common import ROOT, SIZES, DocTable, _browser, log, machine, server, wait_until
from bench.lesson import lesson_sliders

TABLE = DocTable("extrapolation", ROOT / "docs" / "performance.md", "extrapolation",
                 before="## Dragging a slider (issue #10)")
#: The section's target (issue #46): every slider's p95 at most this, at every size.
TARGET_P95_MS = 30.0


def run(repeats: int) -> dict[str, Any]:
    results: dict[str, Any] = {"started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                               "machine": machine(), "repeats": repeats, "sizes": {}}
    manager, browser = _browser()
    try:
        with server("app") as (port, _pid):
            for size in ("lesson", "largest"):
                query = {**SIZES[size], "T_train": str(int(SIZES[size]["T"]) // 2), "lang": "en"}
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.goto(f"http://127.0.0.1:{port}/extrapolation?{urlencode(query)}", timeout=120_000)
                wait_until(lambda page=page: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"),
                           timeout=120)
                log("extrapolation", size)
                results["sizes"][size] = lesson_sliders(page, repeats, {})
                page.close()
    finally:
        browser.close()
        manager.stop()
    return results


def render(results: dict[str, Any]) -> str:
    lines = [f"Run {results['started']} (`python -m bench.extrapolation`, {results['repeats']} presses per slider, "
             "key → last named model changed, ms; T_train = T/2):", "",
             "| size | slider | p50 | p95 | target p95 | n |", "|---|---|---:|---:|---|---:|"]
    for size, sliders in results["sizes"].items():
        for entry in sliders.values():
            latency = entry["latency_ms"]
            p50, p95 = latency.get("p50"), latency.get("p95")
            met = "–" if p95 is None else ("✔" if p95 <= TARGET_P95_MS else "✘")
            lines.append(f"| {size} | {entry['label']} | {_ms(p50)} | {_ms(p95)} | ≤ {TARGET_P95_MS:.0f} ms {met} | "
                         f"{latency.get('n', 0)} |")
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.extrapolation", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.repeats)
    if not args.no_doc:
        TABLE.publish(results, render(results))
    print(render(results))


if __name__ == "__main__":
    main()
