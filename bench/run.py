"""The benchmark: the explorable against the naive baseline, side by side, in one run.

    python -m bench.run            # full run, ~17 min on 2 cores
    python -m bench.run --quick    # lesson size only, fewer repetitions and sessions, ~6 min
    python -m bench.run --parts server,browser   # some parts only

Parts (each measures both apps in the same run; ratios are naive / app):

* ``server``  - server time of one update per parameter, in this process, no network: a
  widget's Bokeh model is changed the way a browser message changes it, every watcher
  runs and the resulting document events are serialized into a PATCH-DOC message;
* ``wire``    - bytes the server sends on the websocket per update (a real server, one
  Bokeh-protocol client), with the time to the last data message;
* ``browser`` - key press on a slider in Chromium -> every source that the key changes has
  its new data in the page's Bokeh document (both timestamps taken inside the page);
* ``clients`` - N Bokeh-protocol clients each changing k 5 times a second (closed loop: a
  client waits for its answer, at most 5 s, before its next change);
* ``memory``  - server RSS per open session, and after 200 sessions opened and closed;
* ``load``    - first drawn plot after the page is requested, cold browser context;
* ``lesson``  - the lesson ``/``: first drawn figure, and every slider of every section,
  key press -> new data or text (bench/lesson.py; the app only);
* ``floor``   - k, pos and pair in Chromium: the app's ``/explore`` and ``/`` beside a plain
  Bokeh server app (bench/floor_app.py) and the naive baseline, pages alternating; key ->
  first and last source changed, and the next rendered frame (bench/floor.py).
* ``weight``  - bytes over HTTP of a first and a second visit of ``/`` and ``/explore``
  (bench/weight.py; the app only).
* ``rooms``   - a teacher's room: 100 and 300 followers over two processes with Redis, and the
  nginx path against the direct one (bench/rooms.py; its own section of docs/performance.md).
* ``drag``    - the k handle dragged across its range in 1 s with 60 pointer moves: updates
  shown per second during the drag, release -> final state (bench/drag.py; the app only).

Results: docs/bench/run.json (the latest run's, committed; a partial run keeps the other parts' from it), the
tables made from them between the markers in docs/performance.md, and each run's own
bench/results/<time>.json (git-ignored). Servers are started as subprocesses on free loopback ports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import json
import time
import traceback
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np

from bench.common import (
    HANDLE_ORDER,
    PAGE_FIGURES,
    RESULTS,
    ROOT,
    SIZES,
    DocTable,
    _browser,
    apply_step,
    cpu_seconds,
    find_slider_model,
    load_times,
    log,
    machine,
    message_bytes,
    plots_drawn,
    rss_mb,
    server,
    session_in_process,
    stats,
    steps,
    wait_until,
)

TABLE = DocTable("run", ROOT / "docs" / "performance.md", "bench", before="## Dragging a slider (issue #10)")

APPS = ("app", "naive")
PARAMS = ("k", "pos", "pair", "T", "d_model", "base")
#: The page of every view in each app: the app's ``/`` is the lesson, its views are on ``/explore``.
VIEWS_PATH = {"app": "/explore", "naive": "/"}
#: Targets from the issue, for the pass/fail column.
TARGETS = {"browser_p95_ms": 30.0, "bytes_per_step": 2048, "server_ms_small": 3.0, "server_ms_big": 50.0,
           "clients_p95_ms": 100.0, "session_mb": 5.0, "leak_mb": 15.0, "load_s": 1.5, "ratio": 5.0}


# ---------------------------------------------------------------------------
# Small helpers.
# ---------------------------------------------------------------------------















# ---------------------------------------------------------------------------
# 1. Server time of one update, in process.
# ---------------------------------------------------------------------------











def server_times(which: str, size: str, repeats: int) -> dict[str, Any]:
    """Per parameter: the update's time on the event loop, and the live checks' deferred work apart.

    In a served session the checks of a large table run on a worker thread
    (``components.checks.run_later``) and their sentences follow in a second
    message. Here, with no event loop, that work is collected and timed
    after the update: ``deferred`` is its time (worker thread plus applying
    the sentences), and its message's bytes count with the update's.
    """
    import panel as pn
    from bokeh.protocol import Protocol

    from app.model.strings import text

    out: dict[str, Any] = {}
    deferred: list = []
    patch = mock.patch("components.checks.run_later", lambda work, apply: deferred.append((work, apply)))
    with patch, session_in_process(which, SIZES[size]) as (page, root, events):
        protocol = Protocol()
        for param in PARAMS:
            model = find_slider_model(page, root, text("en", param))
            step = model.step if hasattr(model, "step") and model.step else 1
            times, later, sizes = [], [], []
            walk = steps(model.value / step, model.start / step, model.end / step, repeats + 2)
            for i, sign in enumerate(walk):
                new = model.value + sign * step
                events.clear()
                deferred.clear()
                gc.disable()
                t0 = time.perf_counter()
                nbytes = apply_step(model, new, events, protocol)
                t1 = time.perf_counter()
                events.clear()
                with pn.io.hold():
                    for work, apply in deferred:
                        apply(work())
                nbytes += message_bytes(events, model, protocol)
                t2 = time.perf_counter()
                gc.enable()
                if i >= 2:  # the first two are warm-up
                    times.append((t1 - t0) * 1000)
                    if deferred:
                        later.append((t2 - t1) * 1000)
                    sizes.append(nbytes)
            out[param] = {**stats(times), "deferred": stats(later) if later else None,
                          "serialized_bytes": int(np.median(sizes)) if sizes else None}
        pn.state.reset()
    return out


def sizes(quick: bool) -> list[str]:
    """The sizes parts 1-3 measure: both, or the lesson size alone in a quick run."""
    return ["lesson"] if quick else list(SIZES)


def part_server(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes(quick):
        for which in APPS:
            repeats = 5 if (which == "naive" and size == "largest") else (8 if quick else 25)
            log("server", which, size)
            results.setdefault(size, {})[which] = server_times(which, size, repeats)
    return results


# ---------------------------------------------------------------------------
# 2. Bytes on the wire per update, one protocol client.
# ---------------------------------------------------------------------------

def base_slider_id(client) -> str:
    """The inner slider of the base DiscreteSlider: an untitled 0..len(BASES)-1 Slider."""
    from app.model.state import BASES
    from bench.protocol import objects

    found = [o["id"] for o in objects(client.doc) if "Slider" in o.get("name", "")
             and o["attributes"].get("end") == len(BASES) - 1 and not o["attributes"].get("title")]
    if len(found) != 1:
        raise LookupError(f"{len(found)} candidate base sliders")
    return found[0]


async def wire_one(port: int, which: str, size: str, repeats: int) -> dict[str, Any]:
    from app.model.strings import text
    from bench.protocol import BokehClient, objects

    client = BokehClient("127.0.0.1", port, VIEWS_PATH[which], SIZES[size])
    await client.open(timeout=120)
    out: dict[str, Any] = {}
    try:
        for param in PARAMS:
            model_id = base_slider_id(client) if param == "base" else client.slider_id(text("en", param))
            model = next(o for o in objects(client.doc) if o["id"] == model_id)
            attributes = model["attributes"]
            value = int(attributes["value"])
            step = int(attributes.get("step") or 1)
            latencies, sizes = [], []
            walk = steps(value / step, attributes.get("start", 0) / step, attributes["end"] / step, repeats + 2)
            for i, sign in enumerate(walk):
                value += sign * step
                await client.set_value(model_id, value)
                seconds, nbytes = await client.until_data(timeout=60, quiet=0.15)
                if i >= 2:
                    latencies.append(seconds * 1000)
                    sizes.append(nbytes)
            out[param] = {"bytes": stats([float(s) for s in sizes]), "latency_ms": stats(latencies)}
    finally:
        client.close()
    return out


def part_wire(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for which in APPS:
        with server(which) as (port, _pid):
            for size in sizes(quick):
                repeats = 5 if (which == "naive" and size == "largest") else (5 if quick else 15)
                log("wire", which, size)
                results.setdefault(size, {})[which] = asyncio.run(wire_one(port, which, size, repeats))
    return results


# ---------------------------------------------------------------------------
# 3. Browser end to end.
# ---------------------------------------------------------------------------

#: Installed in the page: on every key press, remember each named source's model and data
#: object; on every document change, note when a named source got a new data object, was
#: patched/streamed, or was replaced by a new model (a rebuilt figure). Times are
#: performance.now() in the page, so the network and the browser's work are both inside.
PROBE_JS = """
() => {
  const doc = Bokeh.documents[0];
  const P = window.__probe = {t0: null, snap: null, changed: new Map(), last: performance.now(), patched: new Set()};
  const sources = () => {
    const out = new Map();
    for (const m of doc._all_models.values()) {
      if (m.name != null && typeof m.get_length === 'function' && m.data !== undefined) {
        if (!out.has(m.name)) out.set(m.name, []);
        out.get(m.name).push([m, m.data]);
      }
    }
    return out;
  };
  let pending = false;
  const check = () => {
    pending = false;
    if (P.t0 === null) return;
    const now = performance.now() - P.t0;
    for (const [name, entries] of sources()) {
      if (P.changed.has(name)) continue;
      const before = P.snap.get(name) ?? [];
      const same = entries.length === before.length && entries.every(
        ([m, d]) => before.some(([m0, d0]) => m0 === m && d0 === d)) && !P.patched.has(name);
      if (!same) P.changed.set(name, now);
    }
  };
  document.addEventListener('keydown', () => {
    P.t0 = performance.now(); P.snap = sources(); P.changed = new Map(); P.patched = new Set();
  }, true);
  doc.on_change((event) => {
    P.last = performance.now();
    if (P.t0 === null) return;
    if ((event.patches !== undefined || event.rollover !== undefined) && event.model?.name != null)
      P.patched.add(event.model.name);
    // One check per batch of events (a whole PATCH-DOC is applied synchronously).
    if (!pending) { pending = true; queueMicrotask(check); }
  });
  return true;
}
"""



def _handles(page):
    """The slider handles in page order (inside Panel's shadow roots; Playwright pierces them)."""
    return page.locator(".noUi-handle")


def browser_one(browser, url: str, repeats: int, press_timeout: float) -> dict[str, Any]:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    received: list[tuple[float, int]] = []

    def on_ws(ws) -> None:
        ws.on("framereceived", lambda payload: received.append((time.perf_counter(), len(payload))))

    page.on("websocket", on_ws)
    out: dict[str, Any] = {}
    try:
        page.goto(url, timeout=120_000)
        # The whole page: the app's views below the first arrive after it is drawn.
        wait_until(lambda: plots_drawn(page, PAGE_FIGURES), timeout=120, interval=0.05)
        page.evaluate(PROBE_JS)
        handles = _handles(page)
        handles.nth(0).wait_for(timeout=60_000)

        def settle(quiet_ms: int = 150, timeout: float = 60.0) -> None:
            page.wait_for_function(f"() => performance.now() - window.__probe.last > {quiet_ms}",
                                   timeout=timeout * 1000, polling=25)

        for param in PARAMS:
            handle = handles.nth(HANDLE_ORDER.index(param))
            handle.focus()
            now, low, high = (float(handle.get_attribute(f"aria-value{a}")) for a in ("now", "min", "max"))
            step = 2.0 if param == "d_model" else 1.0
            keys = ["ArrowLeft" if s < 0 else "ArrowRight" for s in steps(now / step, low / step, high / step,
                                                                          repeats + 2)]
            # Discover which sources this parameter changes: those changed by both warm-up presses.
            seen = []
            for key in keys[:2]:
                page.keyboard.press(key)
                # A warm-up press: wait for its first answer, then for the page to go quiet.
                page.wait_for_function("() => window.__probe.changed.size > 0", timeout=press_timeout * 1000,
                                       polling=25)
                settle(300, press_timeout)
                seen.append(set(page.evaluate("() => [...window.__probe.changed.keys()]")))
            witnesses = sorted(seen[0] & seen[1])
            latencies, nbytes, incomplete = [], [], 0
            for key in keys[2:]:
                start = time.perf_counter()
                count = len(received)
                page.keyboard.press(key)
                # A press need not change every witness (once pos + k has left the table, k moves
                # no row mark, and the app sends nothing for it): the press counts once some
                # witness changed, and its latency is that of the last witness that changed
                # before the page went quiet.
                try:
                    page.wait_for_function("(w) => w.some((n) => window.__probe.changed.has(n))", arg=witnesses,
                                           timeout=press_timeout * 1000, polling="raf")
                except Exception:
                    incomplete += 1
                settle()
                changed = page.evaluate("(w) => w.map((n) => window.__probe.changed.get(n) ?? null)", witnesses)
                changed = [t for t in changed if t is not None]
                if changed:
                    latencies.append(max(changed))
                nbytes.append(sum(n for t, n in received[count:] if t >= start))
            out[param] = {"latency_ms": stats(latencies), "bytes": stats([float(b) for b in nbytes]),
                          "witnesses": witnesses, "incomplete": incomplete}
    finally:
        page.close()
    return out


def part_browser(quick: bool) -> dict[str, Any]:
    from urllib.parse import urlencode

    results: dict[str, Any] = {}
    manager, browser = _browser()
    try:
        for which in APPS:
            with server(which) as (port, _pid):
                for size in sizes(quick):
                    slow = which == "naive" and size == "largest"
                    repeats = 5 if slow else (4 if quick else (20 if which == "app" else 10))
                    log("browser", which, size)
                    url = f"http://127.0.0.1:{port}{VIEWS_PATH[which]}?{urlencode(SIZES[size])}"
                    results.setdefault(size, {})[which] = browser_one(browser, url, repeats,
                                                                      press_timeout=60 if slow else 10)
    finally:
        browser.close()
        manager.stop()
    return results


# ---------------------------------------------------------------------------
# 4. Many clients.
# ---------------------------------------------------------------------------

async def open_clients(port: int, which: str, count: int, query: dict[str, str], concurrency: int = 8) -> list:
    """``count`` Bokeh-protocol sessions of the views' page of app ``which`` (``VIEWS_PATH``), opened."""
    from bench.protocol import BokehClient

    gate = asyncio.Semaphore(concurrency)

    async def one():
        async with gate:
            client = BokehClient("127.0.0.1", port, VIEWS_PATH[which], query)
            await client.open(timeout=120)
            client.k = int(query["k"])  # the session's k, kept up to date by first_updates and drive
            return client

    return list(await asyncio.gather(*(one() for _ in range(count))))


async def drive(clients: list, seconds: float, rate_hz: float) -> dict[str, Any]:
    from app.model.strings import text

    period = 1.0 / rate_hz
    latencies: list[float] = []
    errors: list[str] = []
    sent = 0

    async def run(client, offset: float) -> None:
        nonlocal sent
        model_id = client.slider_id(text("en", "k"))
        # Start from the session's k (an earlier run may have left it at 2): a change to
        # the value the session already has would get no answer and count as an error.
        value, direction = client.k, -1
        await asyncio.sleep(offset)
        start = time.perf_counter()
        tick = start
        while time.perf_counter() - start < seconds:
            value += direction
            direction = -direction
            try:
                await client.set_value(model_id, value)
                sent += 1
                latency, _ = await client.until_data(timeout=5.0, quiet=0.0)
                latencies.append(latency * 1000)
            except Exception as exc:
                errors.append(type(exc).__name__)
                with contextlib.suppress(Exception):
                    await drain(client)
            client.k = value
            tick += period
            await asyncio.sleep(max(0.0, tick - time.perf_counter()))
        await drain(client)

    t0 = time.perf_counter()
    await asyncio.gather(*(run(c, i * period / len(clients)) for i, c in enumerate(clients)))
    wall = time.perf_counter() - t0
    return {**stats(latencies), "errors": len(errors), "error_kinds": sorted(set(errors)), "sent": sent,
            "rate_per_client_hz": sent / len(clients) / wall}


async def first_updates(clients: list) -> dict[str, Any]:
    """Latency of each session's first change of k, one session at a time."""
    from app.model.strings import text

    latencies = []
    for client in clients:
        await client.set_value(client.slider_id(text("en", "k")), 2)
        latency, _ = await client.until_data(timeout=30.0, quiet=0.05)
        latencies.append(latency * 1000)
        await client.set_value(client.slider_id(text("en", "k")), 3)
        await client.until_data(timeout=30.0, quiet=0.05)
        client.k = 3
    return stats(latencies)


async def drain(client, quiet: float = 0.2) -> None:
    """Read whatever is still on its way, so the next measurement starts clean."""
    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        while True:
            await client.receive(quiet)


#: The servers part 4 compares: (results key, app, server processes). ``python -m app --num-procs 2``
#: is how the explorable is meant to be served to a room (one process per core).
CLIENT_SERVERS = (("app", "app", 1), ("app2", "app", 2), ("naive", "naive", 1))
SERVER_LABELS = {"app": "app, 1 process", "app2": "app, 2 processes", "naive": "naive, 1 process"}


def part_clients(quick: bool) -> dict[str, Any]:
    counts = (10, 30) if quick else (10, 50, 100)
    seconds = 3.0 if quick else 8.0
    results: dict[str, Any] = {}
    for key, which, procs in CLIENT_SERVERS:
        with server(which, procs) as (port, pid):

            async def scenario(which: str = key, app: str = which, port: int = port, pid: int = pid) -> dict[str, Any]:
                clients = await open_clients(port, app, max(counts), SIZES["lesson"])
                # A session's first update costs more than the rest (see docs/performance.md):
                # measured once per session here, then left out of the 5 Hz runs.
                # Every session gets its first change here (so none pays it inside the timed runs);
                # the statistics are over all of them.
                first = await first_updates(clients)
                out: dict[str, Any] = {"first_update": first}
                try:
                    for n in counts:
                        log("clients", which, n)
                        cpu0 = cpu_seconds(pid)
                        out[str(n)] = await drive(clients[:n], seconds, 5.0)
                        out[str(n)]["server_cpu_ms_per_change"] = (
                            1000 * (cpu_seconds(pid) - cpu0) / max(out[str(n)]["sent"], 1))
                        for client in clients[:n]:
                            await drain(client, 0.05)
                finally:
                    for client in clients:
                        client.close()
                return out

            results[key] = asyncio.run(scenario())
    return results


# ---------------------------------------------------------------------------
# 5. Memory.
# ---------------------------------------------------------------------------

def part_memory(quick: bool) -> dict[str, Any]:
    held = 10 if quick else 20
    cycles = 50 if quick else 200
    results: dict[str, Any] = {}
    for which in APPS:
        with server(which) as (port, pid):
            log("memory", which)

            async def scenario(which: str = which, port: int = port, pid: int = pid) -> dict[str, Any]:
                query = SIZES["lesson"]
                warm = await open_clients(port, which, 2, query)
                for c in warm:
                    c.close()
                await asyncio.sleep(3)
                before = rss_mb(pid)
                clients = await open_clients(port, which, held, query)
                await asyncio.sleep(1)
                during = rss_mb(pid)
                for c in clients:
                    c.close()
                await asyncio.sleep(3)  # sessions are discarded 1 s after their socket closes
                after_first = rss_mb(pid)
                curve = [(held, after_first)]  # (sessions so far, RSS MB)
                opened = held
                while opened < cycles:
                    batch = await open_clients(port, which, 10, query)
                    for c in batch:
                        c.close()
                    opened += 10
                    # Let the server discard them (1 s after close, checked every 0.5 s), so that
                    # no more sessions are alive at once than in the first 20.
                    await asyncio.sleep(2)
                    if opened % 40 == 0:
                        curve.append((opened, rss_mb(pid)))
                await asyncio.sleep(2)
                after_all = rss_mb(pid)
                return {"rss_before_mb": before, "held": held, "cycles": cycles, "rss_with_held_open_mb": during,
                        "per_session_mb": (during - before) / held, "rss_after_first_closed_mb": after_first,
                        "rss_after_all_closed_mb": after_all, "growth_mb": after_all - after_first,
                        "curve": curve}

            results[which] = asyncio.run(scenario())
    return results


# ---------------------------------------------------------------------------
# 6. Page load.
# ---------------------------------------------------------------------------





def part_load(quick: bool) -> dict[str, Any]:
    from urllib.parse import urlencode

    repeats = 2 if quick else 8
    results: dict[str, Any] = {}
    manager, browser = _browser()
    try:
        for which in APPS:
            with server(which) as (port, _pid):
                log("load", which)
                url = f"http://127.0.0.1:{port}{VIEWS_PATH[which]}?{urlencode(SIZES['lesson'])}"
                first, idle = load_times(browser, url, repeats, PAGE_FIGURES)
                results[which] = {"first_plot_ms": stats(first), "idle_seen_ms": stats(idle)}
    finally:
        browser.close()
        manager.stop()
    return results


# ---------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------



def ratio(naive: float | None, ours: float | None) -> str:
    if naive is None or ours is None or ours <= 0:
        return "–"
    return f"{naive / ours:.1f}×"


def fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def kb(value: float | None) -> str:
    return "–" if value is None else (f"{value / 1024:.1f} KB" if value < 1024 * 1024 else
                                      f"{value / 1024 / 1024:.2f} MB")


def render(results: dict[str, Any]) -> str:
    lines: list[str] = []
    add = lines.append
    m = results["machine"]
    add(f"Run: {results['started']} ({'quick' if results['quick'] else 'full'}), `{results['command']}`, "
        f"{results['seconds']:.0f} s.  ")
    add(f"Machine: {m['cpu']}, {m['cores']} cores, load average at start {m['loadavg_at_start']}; Python "
        f"{m['python']}, Panel {m['panel']}, Bokeh {m['bokeh']}, Tornado {m['tornado']}, NumPy {m['numpy']}, "
        f"{m['chromium']}; loopback.")
    runs = results.get("part_runs", {})
    if len(set(runs.values())) > 1:
        add("Parts from other runs: " + ", ".join(f"{part} ({when})" for part, when in runs.items()
                                                  if when != results["started"]) + ".  ")
    add("")
    add("Ratios are naive ÷ app (higher is better for the app).")
    if "server" in results:
        add("")
        add("### 1. Server time of one update (ms, in process, includes serializing the PATCH-DOC)")
        add("")
        add("App: the update on the event loop, and (*checks later*) the live checks of a table above "
            "2¹⁸ numbers, which run on a worker thread and follow in their own message.")
        add("")
        add("| size | parameter | app p50 | app p95 | app checks later p50 | naive p50 | naive p95 | ratio p50 | "
            "app bytes | naive bytes |")
        add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size, by_app in results["server"].items():
            for param in PARAMS:
                a, n = by_app["app"][param], by_app["naive"][param]
                later = (a.get("deferred") or {}).get("p50")
                add(f"| {size} | {param} | {fmt(a['p50'], 2)} | {fmt(a['p95'], 2)} | {fmt(later, 1)} | "
                    f"{fmt(n['p50'], 1)} | {fmt(n['p95'], 1)} | {ratio(n['p50'], a['p50'])} | "
                    f"{kb(a['serialized_bytes'])} | {kb(n['serialized_bytes'])} |")
    if "wire" in results:
        add("")
        add("### 2. Bytes sent by the server on the websocket per update (one client, median)")
        add("")
        add("| size | parameter | app | naive | ratio | app: last data after (ms, p50) | naive (ms, p50) |")
        add("|---|---|---:|---:|---:|---:|---:|")
        for size, by_app in results["wire"].items():
            for param in PARAMS:
                a, n = by_app["app"][param], by_app["naive"][param]
                add(f"| {size} | {param} | {kb(a['bytes']['p50'])} | {kb(n['bytes']['p50'])} | "
                    f"{ratio(n['bytes']['p50'], a['bytes']['p50'])} | {fmt(a['latency_ms']['p50'])} | "
                    f"{fmt(n['latency_ms']['p50'])} |")
    if "browser" in results:
        add("")
        add("### 3. Chromium: key press → new data in the page's Bokeh document (ms)")
        add("")
        add("| size | parameter | app p50 | app p95 | naive p50 | naive p95 | ratio p50 | ratio p95 | app n | "
            "sources waited for (app) |")
        add("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for size, by_app in results["browser"].items():
            for param in PARAMS:
                a, n = by_app["app"][param], by_app["naive"][param]
                al, nl = a["latency_ms"], n["latency_ms"]
                add(f"| {size} | {param} | {fmt(al['p50'])} | {fmt(al['p95'])} | {fmt(nl['p50'])} | "
                    f"{fmt(nl['p95'])} | {ratio(nl['p50'], al['p50'])} | {ratio(nl['p95'], al['p95'])} | "
                    f"{al['n']} | {', '.join(a['witnesses'])} |")
    if "clients" in results:
        add("")
        add("### 4. Many clients, each changing k 5 times a second (lesson size, ms from change to data)")
        add("")
        add("| clients | server | p50 | p95 | errors | changes answered per client (Hz) | "
            "server CPU per change (ms) | p95 ratio naive ÷ this |")
        add("|---:|---|---:|---:|---:|---:|---:|---:|")
        clients = results["clients"]
        for n_clients in (key for key in clients["app"] if key != "first_update"):
            naive = clients["naive"][n_clients]
            for key in (k for k in SERVER_LABELS if k in clients):
                r = clients[key][n_clients]
                cpu = r.get("server_cpu_ms_per_change")
                add(f"| {n_clients} | {SERVER_LABELS[key]} | {fmt(r['p50'])} | {fmt(r['p95'])} | {r['errors']} | "
                    f"{r['rate_per_client_hz']:.1f} | {fmt(cpu, 2)} | "
                    f"{'–' if key == 'naive' else ratio(naive['p95'], r['p95'])} |")
        add("")
        add("Each session's first change of k, one session at a time (not in the rows above): " + "; ".join(
            f"{SERVER_LABELS[key]} p50 {fmt(clients[key]['first_update']['p50'])} ms, "
            f"p95 {fmt(clients[key]['first_update']['p95'])} ms" for key in SERVER_LABELS if key in clients) + ".")
    if "memory" in results:
        add("")
        add("### 5. Server memory (RSS, MB; lesson size, page `/`)")
        add("")
        r0 = results["memory"]["app"]
        held, cycles = r0.get("held", 20), r0.get("cycles", 200)
        add(f"| app | per open session | after {held} opened+closed | after {cycles} | growth {held} → {cycles} |")
        add("|---|---:|---:|---:|---:|")
        for which in APPS:
            r = results["memory"][which]
            add(f"| {which} | {r['per_session_mb']:.2f} | {r['rss_after_first_closed_mb']:.1f} | "
                f"{r['rss_after_all_closed_mb']:.1f} | {r['growth_mb']:+.1f} |")
    if "load" in results:
        add("")
        add("### 6. Page load: first drawn plot after the page is requested (ms, warm server, cold browser)")
        add("")
        add("| app | first plot p50 | first plot p95 | all plots drawn (seen) p50 |")
        add("|---|---:|---:|---:|")
        for which in APPS:
            r = results["load"][which]
            add(f"| {which} | {fmt(r['first_plot_ms']['p50'], 0)} | {fmt(r['first_plot_ms']['p95'], 0)} | "
                f"{fmt(r['idle_seen_ms']['p50'], 0)} |")
    if "lesson" in results:
        from bench.lesson import render_lesson

        lines += render_lesson(results["lesson"], fmt)
    if "floor" in results:
        from bench.floor import render_floor

        lines += render_floor(results["floor"], fmt)
    if "weight" in results:
        from bench.weight import render_weight

        lines += render_weight(results["weight"], fmt)
    if "drag" in results:
        from bench.drag import render_drag

        lines += render_drag(results["drag"], fmt)
    return "\n".join(lines) + "\n"


#: The parts whose tables ``render`` writes between the markers, and a line that each table starts with.
TABLE_PARTS = {"server": "### 1.", "wire": "### 2.", "browser": "### 3.", "clients": "### 4.", "memory": "### 5.",
               "load": "### 6.", "lesson": "### 7.", "floor": "### 8. Close to the floor",
               "weight": "### 8. Page weight", "drag": "### Dragging k"}


def part_in_doc(part: str) -> bool:
    """Whether the tables between the markers of docs/performance.md hold ``part``'s table now."""
    return any(line.startswith(TABLE_PARTS[part]) for line in (TABLE.shown() or "").splitlines())


def part_lesson(quick: bool) -> dict[str, Any]:
    from bench.lesson import part_lesson as run

    return run(quick)


def part_floor(quick: bool) -> dict[str, Any]:
    from bench.floor import part_floor as run

    return run(quick)


def part_weight(quick: bool) -> dict[str, Any]:
    from bench.weight import part_weight as run

    return run(quick)


def part_rooms(quick: bool) -> dict[str, Any]:
    from bench.rooms import part_rooms as run  # its own section of docs/performance.md

    return run(quick)


def part_drag(quick: bool) -> dict[str, Any]:
    from bench.drag import part_drag as run

    return run(quick)


PARTS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "server": part_server, "wire": part_wire, "browser": part_browser, "clients": part_clients,
    "memory": part_memory, "load": part_load, "lesson": part_lesson, "floor": part_floor,
    "weight": part_weight, "rooms": part_rooms, "drag": part_drag,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about 3 minutes)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite the tables in docs/performance.md")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    started = time.time()
    results: dict[str, Any] = {
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick,
        "command": "python -m bench.run" + (" --quick" if args.quick else "")
                   + ("" if len(parts) == len(PARTS) else f" --parts {','.join(parts)}"),
        "machine": machine(),
    }
    failed = []
    for part in parts:
        t0 = time.time()
        try:
            results[part] = PARTS[part](args.quick)
        except Exception:  # one part's failure keeps the others' results; its table stays the previous run's
            log(part, "FAILED:\n" + traceback.format_exc())
            failed.append(part)
            continue
        log(part, f"done in {time.time() - t0:.0f} s")
    results["seconds"] = time.time() - started
    results["part_runs"] = {part: results["started"] for part in parts if part not in failed}
    old = TABLE.read()
    if (failed or len(parts) < len(PARTS)) and old is not None:
        # A partial run: the other parts' tables stay those of the previous run, labelled as such.
        for part in PARTS:
            if part not in results and part in old:
                results[part] = old[part]
                results["part_runs"][part] = old.get("part_runs", {}).get(part, old["started"])
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"{stamp}.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    table = render(results)
    print(table)
    if failed:
        log("failed parts (their tables are the previous run's, if any):", ", ".join(failed))
    # A partial run takes the other parts' results from docs/bench/run.json; where it has none for a part
    # whose table the doc shows (a file from before that part existed), rewriting would drop that table.
    lost = [part for part in TABLE_PARTS if part not in results and part_in_doc(part)]
    if lost:
        log("not writing", TABLE.doc, "- no results for", ", ".join(lost),
            "(their tables would be lost); run those parts too")
    elif not args.no_doc:
        TABLE.publish(results, table)
        log("results and tables written to", TABLE.results, "and", TABLE.doc)


if __name__ == "__main__":
    main()
