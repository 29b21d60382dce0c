"""What each speed patch buys: the app with one patch off against the app with all on, plain Bokeh alongside.

    python -m bench.ablation [--quick] [--patches "cached defaults,no delay"] [--sizes lesson,largest]
                             [--param d_model]

For each patch of ``components.internals.PATCHES`` (and ``stock``: ``PE_STOCK=1``, every patch off), a
server of the app runs with ``PE_OFF=<patch>`` beside a server with every patch on and the plain-Bokeh
floor (``bench/floor_app.py``). In one Chromium, ``/explore`` and the lesson ``/`` (scrolled to the
section «hands») of both app servers and the floor take turns at the k slider, round after round
(``bench.floor.Page``), so that whatever else the machine does falls on all of them alike. Per press,
key → the last source the key changes has its new data in the page (``last``, as in the floor part).

With ``--param``, another slider of both pages (``d_model``: a size step, which every section of ``/`` follows
and where the style guard's shims were measured when they came in); its rows are named
``<patch> (<param> presses)``, without the floor where its page does not move with that slider (its sizes are
fixed).

With ``--load``, also the first load of ``/explore`` and ``/`` at the lesson size (a cold browser context each,
navigation → first drawn figure, the two servers alternating): what the patches for a page's start buy
(``cached defaults``, ``plain esm``), which a key press does not measure.

The cost of removing a patch is ``p50(off) / p50(on) − 1`` of the same page in the same rounds. Results:
docs/bench/ablation.json (committed: the ledger in docs/performance.md is rendered from it, between the
markers ``ablation:begin`` and ``ablation:end``, by ``render``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
from typing import Any

from bench.common import ROOT, DocTable, _browser, load_times, log, machine, server, stats
from bench.floor import PARAMS as FLOOR_PARAMS
from bench.floor import Page
from components.internals import PATCHES

TABLE = DocTable("ablation", ROOT / "docs" / "performance.md", "ablation", before="## What makes the app fast")
#: The app's pages measured for each variant, and the floor's.
APP_PAGES = ("explore", "lesson")
#: A patch's removal is kept (the patch dropped) below this cost of p50 (issue #43).
THRESHOLD = 0.10


#: A variant ``only <patch>+<patch>…`` keeps those patches and turns every other one off: what the fewest
#: private names buy (issue #43's budget), against the floor.
ONLY = "only "


def _only(variant: str) -> list[str] | None:
    """The patches an ``only …`` variant keeps (None for any other variant)."""
    return [name.strip() for name in variant[len(ONLY):].split("+")] if variant.startswith(ONLY) else None


def _variant_env(variant: str) -> dict[str, str]:
    if variant == "stock":
        return {"PE_STOCK": "1"}
    kept = _only(variant)
    return {"PE_OFF": variant if kept is None else ",".join(p for p in PATCHES if p not in kept)}


def _measure(pages: dict[str, Page], rounds: int, per_turn: int, param: str = "k") -> dict[str, Any]:
    """Alternate the pages at ``param``'s slider; per page, stats of *last* (ms) and how many presses counted."""
    for page in pages.values():
        page.prepare(param, rounds * per_turn, 20.0)
    samples: dict[str, list] = {key: [] for key in pages}
    keys = list(pages)
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            for _ in range(per_turn):
                samples[key].append(pages[key].press(param, 20.0))
    # last: the key's data in the page; frame: the frame that shows it painted (what the style guard's shims buy).
    return {key: {"last_ms": stats([s[1] for s in got if s[1] is not None]),
                  "frame_ms": stats([s[2] for s in got if s[2] is not None]), "presses": len(got)}
            for key, got in samples.items()}


def _loads(browser, ports: dict[str, int], rounds: int) -> dict[str, Any]:
    """First drawn figure after the navigation (ms) of ``/explore`` and ``/`` on each server, alternating."""
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        for side, port in ports.items():
            for kind, path in (("explore", "/explore"), ("lesson", "/")):
                first, _idle = load_times(browser, f"http://127.0.0.1:{port}{path}?lang=en", 1)
                samples.setdefault(f"{kind}:{side}", []).extend(first)
    return {key: {"load_ms": stats(values)} for key, values in samples.items()}


def row_name(variant: str, param: str) -> str:
    """A variant's row: its name, and the slider pressed when it is not k."""
    return variant if param == "k" else f"{variant} ({param} presses)"


def run(variants: list[str], sizes: list[str], rounds: int, per_turn: int, load: bool = False,
        param: str = "k") -> dict[str, Any]:
    results: dict[str, Any] = {"started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                               "machine": machine(), "rounds": rounds, "per_turn": per_turn,
                               "sizes": {}}
    manager, browser = _browser()
    try:
        with server("floor") as (floor_port, _), server("app") as (on_port, _):
            for size in sizes:
                by_variant = results["sizes"].setdefault(size, {})
                for variant in variants:
                    log("ablation:", size, variant)
                    with server("app", env=_variant_env(variant)) as (off_port, _):
                        if load and size == "lesson":
                            results.setdefault("loads", {})[variant] = _loads(
                                browser, {"on": on_port, "off": off_port}, rounds)
                        pages = {"floor": Page(browser, "floor", floor_port, size, param=param)} \
                            if param in FLOOR_PARAMS else {}
                        for kind in APP_PAGES:
                            pages[f"{kind}:on"] = Page(browser, kind, on_port, size, param=param)
                            pages[f"{kind}:off"] = Page(browser, kind, off_port, size, param=param)
                        try:
                            by_variant[row_name(variant, param)] = _measure(pages, rounds, per_turn, param)
                        finally:
                            for page in pages.values():
                                with contextlib.suppress(Exception):
                                    page.page.close()
                    for kind in APP_PAGES:
                        on = by_variant[row_name(variant, param)][f"{kind}:on"]["last_ms"]["p50"]
                        off = by_variant[row_name(variant, param)][f"{kind}:off"]["last_ms"]["p50"]
                        log("ablation:", size, variant, kind, "p50 on/off", on, off)
    finally:
        browser.close()
        manager.stop()
    return results


def cost(on: float | None, off: float | None) -> float | None:
    """What removing the patch costs: ``off / on − 1`` (p50s; None when either is missing)."""
    return None if not on or off is None else off / on - 1


def render(results: dict[str, Any]) -> str:
    """The ablation table: per patch, size and page, p50/p95 with and without it, the floor, and the cost."""
    lines = [f"Latest run {results['started']} (`python -m bench.ablation`; a run of some patches keeps the other "
             f"rows of earlier runs, docs/bench/ablation.json; {results['rounds']} rounds of "
             f"{results['per_turn']} presses of k (or the slider named) per page, pages alternating; "
             "key → last source changed, ms; the floor is plain Bokeh at the same size). "
             "Cost = p50 without ÷ p50 with − 1; frame cost: the same for key → the frame that shows the data painted.",
             "", "| patch off | size | page | p50 with | p95 with | p50 without | p95 without | floor p50 | cost | "
             "frame cost |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size, by_variant in results["sizes"].items():
        for variant, pages in by_variant.items():
            floor = pages["floor"]["last_ms"]["p50"] if "floor" in pages else None
            for kind in APP_PAGES:
                on, off = pages[f"{kind}:on"]["last_ms"], pages[f"{kind}:off"]["last_ms"]
                c = cost(on["p50"], off["p50"])
                # Runs before 2026-12-07 kept the data's arrival only.
                frame = cost(*(pages[f"{kind}:{side}"].get("frame_ms", {}).get("p50") for side in ("on", "off")))
                lines.append(f"| {variant} | {size} | {kind} | {_ms(on['p50'])} | {_ms(on['p95'])} | "
                             f"{_ms(off['p50'])} | {_ms(off['p95'])} | {_ms(floor)} | "
                             f"{'–' if c is None else f'{c:+.0%}'} | {'–' if frame is None else f'{frame:+.0%}'} |")
    if results.get("loads"):
        lines += ["", "First load at the lesson size (navigation → first drawn figure, ms, p50; "
                  f"{results['rounds']} loads per page and server, alternating):", "",
                  "| patch off | page | with | without | cost |", "|---|---|---:|---:|---:|"]
        for variant, pages in results["loads"].items():
            for kind in APP_PAGES:
                on, off = pages[f"{kind}:on"]["load_ms"]["p50"], pages[f"{kind}:off"]["load_ms"]["p50"]
                c = cost(on, off)
                lines.append(f"| {variant} | {kind} | {_ms(on)} | {_ms(off)} | {'–' if c is None else f'{c:+.0%}'} |")
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ablation", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer presses")
    parser.add_argument("--patches", default=",".join((*PATCHES, "stock")),
                        help="comma-separated patch names (components.internals.PATCHES), stock, or "
                             "'only <patch>+<patch>' (every other patch off)")
    parser.add_argument("--sizes", default="lesson,largest")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite the JSON and the table")
    parser.add_argument("--load", action="store_true", help="also the first load of /explore and / (lesson size)")
    parser.add_argument("--param", default="k", help="the slider pressed (k, pos, pair, d_model)")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.patches.split(",") if v.strip()]
    named = [name for v in variants for name in (_only(v) or [v])]
    unknown = set(named) - {*PATCHES, "stock"}
    if unknown:
        parser.error(f"unknown patches: {', '.join(sorted(unknown))}")
    results = run(variants, [s.strip() for s in args.sizes.split(",")], rounds=3 if args.quick else 4,
                  per_turn=2 if args.quick else 3, load=args.load, param=args.param)
    if not args.no_doc:
        if (previous := TABLE.read()) is not None:  # a run of some patches keeps the others' rows
            for size, by_variant in previous.get("sizes", {}).items():
                for variant, pages in by_variant.items():
                    results["sizes"].setdefault(size, {}).setdefault(variant, pages)
            for variant, pages in previous.get("loads", {}).items():
                results.setdefault("loads", {}).setdefault(variant, pages)
        TABLE.publish(results, render(results))
    print(render(results))


if __name__ == "__main__":
    main()
