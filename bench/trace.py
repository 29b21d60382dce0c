"""Where a slider step's time goes in Chromium: a performance trace of key presses, the app beside the floor.

    python -m bench.trace                       # k at the lesson size: floor, /explore, / (lesson section)
    python -m bench.trace --param pos --size largest --pages floor,explore --presses 8
    python -m bench.trace --param d_model --pages lesson --section simpler
    python -m bench.trace --param base --pages lesson --section wavelengths

Each page gets two warm-up presses, then ``--presses`` counted ones inside one
Chromium trace (``browser.start_tracing``: the DevTools timeline categories).
For every press the window runs from the ``keydown`` event to the frame
rendered after the last document change of that press (as in
``bench/floor.py``); the renderer main thread's work inside it is split by
self time into scripting (BokehJS, Panel's components, the probe), style
(style recalculation), layout, paint (pre-paint, paint, layerize, commit),
other (task overheads, parsing a message) and idle (the main thread waiting,
for the server's answer mostly). Also, from the page itself: the time spent
in ``render()`` of every Bokeh view that re-renders during the press, by model
type (the slider's own re-render among them), the key's ``keydown`` handler,
the websocket ``message`` handlers (applying the server's answer), and how
many messages left and arrived. Prints medians over the counted presses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import _browser, log, server  # noqa: E402
from bench.floor import LESSON_SECTION, ROUTES, Page  # noqa: E402

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing",
              "toplevel", "blink"]

SCRIPTING = {"FunctionCall", "EvaluateScript", "EventDispatch", "TimerFire", "FireAnimationFrame", "RunMicrotasks",
             "v8.callFunction", "v8.run", "v8.compile", "V8.Execute", "MajorGC", "MinorGC", "V8.GCScavenger",
             "V8.GC_SCAVENGER", "v8.evaluateModule", "FireIdleCallback", "XHRReadyStateChange", "XHRLoad",
             "v8.produceCache", "V8.CompileCode", "V8.ScavengeTask", "BlinkGC.AtomicPhase",
             "ThreadState::performIdleLazySweep"}
STYLE = {"UpdateLayoutTree", "RecalculateStyles", "ParseAuthorStyleSheet", "StyleRecalc"}
LAYOUT = {"Layout", "UpdateLayoutTree::Layout", "IntersectionObserverController::computeIntersections",
          "ResizeObserverController::DeliverObservations"}
PAINT = {"Paint", "PrePaint", "Layerize", "Commit", "CompositeLayers", "UpdateLayerTree", "PaintImage",
         "Decode Image", "Animation Frame Fired", "UpdateLayer"}

#: Added to the floor part's probe: per press, the time in each view's render() by model type, the
#: keydown and websocket message handlers, and the messages that left. Wrapped on the views'
#: prototypes, so views built during the press are counted too.
INSTRUMENT_JS = """
() => {
  const T = window.__trace = {render: {}, sent: 0, received: 0};
  const wrapped = new Set();
  const wrap = (view) => {
    const proto = Object.getPrototypeOf(view);
    if (wrapped.has(proto) || typeof proto.render !== 'function') return;
    wrapped.add(proto);
    const render = proto.render;
    proto.render = function (...args) {
      const t = performance.now();
      try { return render.apply(this, args); }
      finally {
        const type = this.model?.type ?? '?';
        const r = T.render[type] ??= {n: 0, ms: 0};
        r.n += 1; r.ms += performance.now() - t;
      }
    };
  };
  for (const view of Bokeh.index.query(() => true)) wrap(view);
  const send = WebSocket.prototype.send;
  // A Bokeh message is a header frame (with its msgtype), a metadata frame, a content frame and any buffers.
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.includes('"msgtype"')) T.sent += 1;
    return send.call(this, data);
  };
  return wrapped.size;
}
"""


RESET_JS = "() => { const T = window.__trace; T.render = {}; T.sent = 0; T.received = 0; }"


def _thread_of_main(events: list[dict]) -> tuple[int, int]:
    """(pid, tid) of the renderer's main thread that ran the keydown."""
    for e in events:
        if e.get("name") == "EventDispatch" and e.get("args", {}).get("data", {}).get("type") == "keydown":
            return e["pid"], e["tid"]
    raise LookupError("no keydown in the trace")


def split(events: list[dict], lasts: list[float | None]) -> list[dict[str, float]]:
    """Per press, ms on the main thread: from the keydown to the last source changed, and from there to the frame.

    ``lasts`` is the probe's key -> last source time of each press (in trace order). Before it: the
    keydown handler, the frames rendered before the answer (the slider moving), the tasks that handle
    a websocket message (the server's answers, and its OKs), other work, and idle time (the main thread
    waiting: the server and the network). After it: self time by kind until the frame is rendered.
    """
    pid, tid = _thread_of_main(events)
    main = sorted((e for e in events if e.get("pid") == pid and e.get("tid") == tid and e.get("ph") == "X"
                   and "dur" in e), key=lambda e: (e["ts"], -e["dur"]))
    keys = [e for e in main if e["name"] == "EventDispatch"
            and e.get("args", {}).get("data", {}).get("type") == "keydown"]
    ends = sorted(e["ts"] for e in events if e.get("name") == "pe-frame" and e.get("pid") == pid)
    # Self time: an event's duration less that of its direct children (a stack over the sorted events);
    # and each event's top-level task.
    self_time: dict[int, float] = {}
    top: dict[int, dict] = {}
    stack: list[dict] = []
    for e in main:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        self_time[id(e)] = e["dur"]
        if stack:
            self_time[id(stack[-1])] -= e["dur"]
        top[id(e)] = top[id(stack[0])] if stack else e
        stack.append(e)
    message_tasks = {id(top[id(e)]) for e in main if e["name"] == "FunctionCall"
                     and "onmessage" in e.get("args", {}).get("data", {}).get("functionName", "")
                     and "bokeh" in e.get("args", {}).get("data", {}).get("url", "")}
    frame_tasks = {id(top[id(e)]) for e in main if e["name"] in ("Commit", "Paint")}
    out = []
    for i, (key, last) in enumerate(zip(keys, lasts, strict=False)):
        start = key["ts"]
        limit = keys[i + 1]["ts"] if i + 1 < len(keys) else float("inf")
        frame_ends = [t for t in ends if start < t < limit]
        if last is None or not frame_ends:
            continue
        middle, end = start + last * 1000, max(frame_ends)
        parts: dict[str, float] = defaultdict(float)
        parts["key to last"] = last
        parts["keydown handler"] = key["dur"] / 1000
        for e in main:
            if not start <= e["ts"] < end:
                continue
            ms = max(self_time[id(e)], 0) / 1000
            if e["ts"] >= middle:
                parts[f"after: {kind(e['name'])}"] += ms
            elif top[id(e)] is top[id(key)]:
                continue  # the keydown's own task
            elif id(top[id(e)]) in message_tasks:
                parts["messages"] += ms
            elif id(top[id(e)]) in frame_tasks:
                parts["frames"] += ms
            else:
                parts["other"] += ms
        parts["idle"] = last - parts["keydown handler"] - parts["messages"] - parts["frames"] - parts["other"]
        parts["last to frame"] = (end - middle) / 1000
        out.append(dict(parts))
    return out


def kind(name: str) -> str:
    if name in SCRIPTING or name.lower().startswith("v8") or "GC" in name:
        return "scripting"
    if name in STYLE:
        return "style"
    if name in LAYOUT:
        return "layout"
    if name in PAINT:
        return "paint"
    return "other"


def trace_page(browser, key: str, port: int, size: str, param: str, presses: int,
               raw_dir: Path | None = None, section: str = LESSON_SECTION) -> dict[str, Any]:
    page = Page(browser, key, port, size, section, param)
    page.page.evaluate(INSTRUMENT_JS)
    page.prepare(param, presses, 60.0)
    rendered: list[dict] = []
    lasts: list[float | None] = []
    browser.start_tracing(page=page.page, categories=CATEGORIES)
    try:
        for _ in range(presses):
            # Reset before the key, not in a keydown listener: static/slider-keys.js sends the value from a
            # listener that runs before any the page adds later.
            page.page.evaluate(RESET_JS)
            lasts.append(page.press(param, 60.0)[1])
            rendered.append(page.page.evaluate("() => ({...window.__trace})"))
    finally:
        raw = browser.stop_tracing()
    page.page.close()
    if raw_dir is not None:
        (raw_dir / f"trace-{key}-{param}-{size}.json").write_bytes(raw)
    events = json.loads(raw)["traceEvents"]
    presses_split = split(events, lasts)
    renders: dict[str, list[float]] = defaultdict(list)
    for r in rendered:
        for type_, v in r["render"].items():
            renders[type_].append(v["ms"])
    return {"split": {k: statistics.median(p.get(k, 0.0) for p in presses_split) for k in
                      sorted({k for p in presses_split for k in p})},
            "render_ms": {t: statistics.median(v + [0.0] * (len(rendered) - len(v))) for t, v in renders.items()},
            "render_counts": {t: max(r["render"].get(t, {}).get("n", 0) for r in rendered) for t in renders},
            "sent": statistics.median(r["sent"] for r in rendered), "presses": len(presses_split),
            "witnesses": page.witnesses[param]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.trace", description=__doc__.splitlines()[0])
    parser.add_argument("--param", default="k", choices=("k", "pos", "pair", "d_model", "T", "base"))
    parser.add_argument("--section", default=LESSON_SECTION, help="the lesson page's section (its slug)")
    parser.add_argument("--size", default="lesson", choices=("lesson", "largest"))
    parser.add_argument("--pages", default="floor,explore,lesson")
    parser.add_argument("--presses", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--raw", type=Path, help="also write each page's trace into this folder (chrome://tracing)")
    args = parser.parse_args(argv)
    pages = [p.strip() for p in args.pages.split(",")]
    manager, browser = _browser()
    results = {}
    try:
        servers = sorted({ROUTES[p][0] for p in pages})
        from contextlib import ExitStack

        with ExitStack() as stack:
            ports = {s: stack.enter_context(server(s))[0] for s in servers}
            for key in pages:
                log("trace", key, args.param, args.size)
                results[key] = trace_page(browser, key, ports[ROUTES[key][0]], args.size, args.param, args.presses,
                                          args.raw, args.section)
    finally:
        browser.close()
        manager.stop()
    columns = ["key to last", "keydown handler", "frames", "messages", "other", "idle", "last to frame",
               "after: scripting", "after: style", "after: layout", "after: paint", "after: other"]
    print(f"\n{args.param} at the {args.size} size, medians over the counted presses (ms; messages out: count)\n")
    print("| page | " + " | ".join(columns) + " | messages out |")
    print("|---|" + "---:|" * (len(columns) + 1))
    for key, r in results.items():
        print(f"| {key} | " + " | ".join(f"{r['split'].get(c, 0.0):.1f}" for c in columns) + f" | {r['sent']:.0f} |")
    print("\nrender() per press, by model type (median ms; most renders in one press)\n")
    for key, r in results.items():
        parts = sorted(r["render_ms"].items(), key=lambda kv: -kv[1])
        print(f"* {key}: " + (", ".join(f"{t} {ms:.1f} ms ({r['render_counts'][t]}×)" for t, ms in parts)
                               or "no view re-rendered"))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
