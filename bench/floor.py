"""The floor part of the benchmark: a slider step in Chromium, the app against plain Bokeh, alternating.

    python -m bench.run --parts floor [--quick]

Four pages are open at once in one Chromium, on three servers: the plain-Bokeh
floor (``bench/floor_app.py``), the app's ``/explore`` (every view) and its
lesson ``/`` scrolled to the section whose sliders move k, pos and pair (the
lesson puts sections far from the viewport to sleep, so a slider is measured
with its own section on screen), and the naive Panel baseline. For k, pos and
pair at each size, the pages take turns: a few presses on one, then the next,
round after round, so that whatever else the machine is doing falls on all of
them alike. Per press, from the ``keydown`` in the page:

* *first*: the first of the sources the key changes has new data in the page's Bokeh document;
* *last*: the last of them has (the sources are those changed by both warm-up presses);
* *frame*: the frame after the last change has been rendered (a ``requestAnimationFrame``
  callback queued after the change, then a task posted from it, which runs after that
  frame's style, layout and paint).
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import urlencode

from bench.common import PAGE_FIGURES, SIZES, _browser, log, plots_drawn, server, stats, steps, wait_until
from components.plainjs import FIND_BY_ID_JS

#: The pages compared, in the order of the first round (later rounds rotate it).
PAGES = ("floor", "explore", "lesson", "naive")
#: Which server serves each page, and its path (the lesson's section in the fragment).
ROUTES = {"floor": ("floor", "/"), "explore": ("app", "/explore"), "lesson": ("app", "/"), "naive": ("naive", "/")}
#: The lesson's section with a slider for each of k, pos and pair.
LESSON_SECTION = "hands"
PARAMS = ("k", "pos", "pair")
#: Slider handles of floor, explore and naive in page order.
HANDLE_ORDER = ("d_model", "T", "base", "pair", "pos", "k")

PROBE_JS = """
() => {
  const doc = Bokeh.documents[0];
  const P = window.__probe = {t0: null, snap: null, changed: new Map(), frames: new Map(), last: performance.now(),
                              patched: new Set()};
  // The named sources, found again only when the document's models may have changed (a rebuilt
  // figure): scanning every model of a large page per message would cost the bigger pages more.
  let cache = null, size = -1;
  const isModel = (v) => v != null && typeof v === 'object' && v.properties !== undefined && v.id !== undefined;
  const sources = () => {
    if (cache !== null && size === doc._all_models.size) return cache;
    const out = new Map();
    for (const m of doc._all_models.values()) {
      if (m.name != null && typeof m.get_length === 'function' && m.data !== undefined) {
        if (!out.has(m.name)) out.set(m.name, []);
        out.get(m.name).push(m);
      }
    }
    size = doc._all_models.size;
    return cache = out;
  };
  const snapshot = () => new Map([...sources()].map(([name, ms]) => [name, ms.map((m) => [m, m.data])]));
  let pending = false;
  const check = () => {
    pending = false;
    if (P.t0 === null) return;
    const t0 = P.t0, now = performance.now() - t0;
    for (const [name, entries] of snapshot()) {
      if (P.changed.has(name)) continue;
      const before = P.snap.get(name) ?? [];
      const same = entries.length === before.length && entries.every(
        ([m, d]) => before.some(([m0, d0]) => m0 === m && d0 === d)) && !P.patched.has(name);
      if (!same) P.changed.set(name, now);
    }
    // The frame that shows this batch: queued after BokehJS's own paint request, so it runs
    // after it; the posted task runs once that frame has been rendered.
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        if (P.t0 === t0) P.frames.set(now, performance.now() - t0);
        performance.mark('pe-frame');  // for bench/trace.py
      };
      channel.port2.postMessage(null);
    });
  };
  document.addEventListener('keydown', () => {
    P.snap = snapshot(); P.changed = new Map(); P.frames = new Map(); P.patched = new Set(); P.t0 = performance.now();
  }, true);
  doc.on_change((event) => {
    P.last = performance.now();
    if (P.t0 === null) return;
    const value = event.value ?? event.new;
    if (isModel(value) || (Array.isArray(value) && value.some(isModel)))
      cache = null;  // a layout got new children: maybe new sources (the size check misses a swap)
    if ((event.patches !== undefined || event.rollover !== undefined) && event.model?.name != null)
      P.patched.add(event.model.name);
    if (!pending) { pending = true; queueMicrotask(check); }
  });
  return true;
}
"""

#: Per press: [first, last, frame] over the witnesses that changed (nulls if none did).
RESULT_JS = """
(w) => {
  const P = window.__probe;
  const times = w.map((n) => P.changed.get(n)).filter((t) => t !== undefined);
  if (!times.length) return [null, null, null];
  const last = Math.max(...times);
  return [Math.min(...times), last, P.frames.get(last) ?? null];
}
"""


#: Scroll the element whose id is the argument (in any shadow root) to the top of the viewport.
SCROLL_JS = """
(id) => {
""" + FIND_BY_ID_JS + """
  const el = find(document, id);
  if (el) el.scrollIntoView({block: "start"});
  return el !== null;
}
"""


class Page:
    """One open page, its slider handle for each parameter, and its own walk across each range."""

    def __init__(self, browser, key: str, port: int, size: str, section: str = LESSON_SECTION,
                 param: str = "k"):
        self.key = key
        self.section = section
        self.page = browser.new_page(viewport={"width": 1920, "height": 1080})
        query = urlencode(SIZES[size])
        path = ROUTES[key][1]
        fragment = f"#{section}" if key == "lesson" else ""
        log("floor: opening", key, size)
        self.page.goto(f"http://127.0.0.1:{port}{path}?{query}{fragment}", timeout=180_000)
        if key == "lesson":
            wait_until(lambda: self.page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"),
                       timeout=180, interval=0.1)
            self._scroll_to_section(param)
        else:  # every figure drawn (the naive page's document never reports itself idle)
            wait_until(lambda: plots_drawn(self.page, PAGE_FIGURES), timeout=180, interval=0.1)
        self.page.evaluate(PROBE_JS)
        # The naive page answers a key with one message per rebuilt view, up to a second apart on a busy machine.
        self.quiet_ms = 1200 if key == "naive" else 150
        self.witnesses: dict[str, list[str]] = {}
        self.off_screen: dict[str, list[str]] = {}  # sources the key changes in sections off screen (not waited for)
        self.keys: dict[str, list[str]] = {}
        # Each parameter's handle, found once: finding it again before every press (a selector through
        # every shadow root of the lesson page, ~100 ms of DOM queries) left garbage that the page then
        # collected inside the measured press (docs/performance.md, "Session 30").
        self.handles: dict[str, Any] = {}

    def _scroll_to_section(self, param: str) -> None:
        # The page grows while the sections near the reader are built: bring the section's heading to the top
        # until its slider for param stays on screen.
        def shown() -> bool:
            self.page.evaluate(SCROLL_JS, self.section)
            try:
                self.handle(param)
                return True
            except LookupError:
                return False
        wait_until(shown, timeout=120, interval=0.5)
        self.page.wait_for_function("() => window.Bokeh.documents[0].is_idle", timeout=60_000)

    def _on_screen(self, handle) -> bool:
        box = handle.bounding_box()
        return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 1080

    def handle(self, param: str):
        if self.key != "lesson":
            return self.page.locator(".noUi-handle").nth(HANDLE_ORDER.index(param))
        from app.model.strings import text
        from bench.lesson import slider_label

        label = text("en", param)
        groups = self.page.locator(".bk-input-group:has(.noUi-handle)")
        for i in range(groups.count()):
            group = groups.nth(i)
            handle = group.locator(".noUi-handle").first
            if slider_label(group) == label and self._on_screen(handle):
                return handle
        raise LookupError(f"no {param} slider on screen in the lesson's section {self.section!r}")

    def settle(self, quiet_ms: int = 150, timeout: float = 60.0) -> None:
        self.page.wait_for_function(f"() => performance.now() - window.__probe.last > {quiet_ms}",
                                    timeout=timeout * 1000, polling=25)

    def prepare(self, param: str, presses: int, press_timeout: float) -> None:
        """Focus the handle, plan the walk, and learn the sources the key changes (two warm-up presses)."""
        handle = self.handle(param)
        handle.focus()
        self.handles[param] = handle.element_handle()
        now, low, high = (float(handle.get_attribute(f"aria-value{a}")) for a in ("now", "min", "max"))
        self.keys[param] = ["ArrowLeft" if s < 0 else "ArrowRight" for s in steps(now, low, high, presses + 2)]
        seen = []
        for key in self.keys[param][:2]:
            self.page.keyboard.press(key)
            self.page.wait_for_function("() => window.__probe.changed.size > 0", timeout=press_timeout * 1000,
                                        polling=25)
            self.settle(2 * self.quiet_ms, press_timeout)
            seen.append(set(self.page.evaluate("() => [...window.__probe.changed.keys()]")))
        self.witnesses[param] = sorted(seen[0] & seen[1])
        if self.key == "lesson":
            # The sources on screen: a section just off screen follows in the next message (bench/lesson.py).
            from bench.lesson import SHOWN_JS, lesson_section_names, on_screen

            visible = on_screen(self.witnesses[param], self.page.evaluate(SHOWN_JS), lesson_section_names())
            self.off_screen[param] = [name for name in self.witnesses[param] if name not in visible]
            self.witnesses[param] = visible
        del self.keys[param][:2]

    def press(self, param: str, press_timeout: float) -> list[float | None]:
        """One counted press: [first, last, frame] in ms from the keydown."""
        self.handles[param].focus()
        self.page.keyboard.press(self.keys[param].pop(0))
        with contextlib.suppress(Exception):  # a press may change none of the witnesses (k beyond the table)
            self.page.wait_for_function("(w) => w.some((n) => window.__probe.changed.has(n))",
                                        arg=self.witnesses[param], timeout=press_timeout * 1000, polling="raf")
        self.settle(self.quiet_ms)
        return self.page.evaluate(RESULT_JS, self.witnesses[param])


def part_floor(quick: bool) -> dict[str, Any]:
    rounds = 3 if quick else 6
    per_turn = 2 if quick else 4
    results: dict[str, Any] = {"rounds": rounds, "per_turn": per_turn}
    manager, browser = _browser()
    try:
        with server("floor") as (floor_port, _), server("app") as (app_port, _), \
                server("naive") as (naive_port, _):
            ports = {"floor": floor_port, "app": app_port, "naive": naive_port}
            for size in (["lesson"] if quick else ["lesson", "largest"]):
                log("floor: opening the pages at size", size)
                pages = {key: Page(browser, key, ports[ROUTES[key][0]], size) for key in PAGES}
                by_size = results.setdefault(size, {})
                for param in PARAMS:
                    counts = {key: (1 if key == "naive" and size == "largest" else per_turn) for key in PAGES}
                    timeouts = {key: (60.0 if key == "naive" else 10.0) for key in PAGES}
                    for key, page in pages.items():
                        page.prepare(param, counts[key] * rounds, timeouts[key])
                    samples: dict[str, list] = {key: [] for key in PAGES}
                    for r in range(rounds):
                        order = PAGES[r % len(PAGES):] + PAGES[:r % len(PAGES)]
                        for key in order:
                            for _ in range(counts[key]):
                                samples[key].append(pages[key].press(param, timeouts[key]))
                    for key in PAGES:
                        got = [s for s in samples[key] if s[1] is not None]
                        by_size.setdefault(param, {})[key] = {
                            "first_ms": stats([s[0] for s in got]), "last_ms": stats([s[1] for s in got]),
                            "frame_ms": stats([s[2] for s in got if s[2] is not None]),
                            "witnesses": pages[key].witnesses[param], "presses": len(samples[key]),
                            "off_screen": pages[key].off_screen.get(param, []),
                        }
                        log("floor", size, param, key, "last p50/p95",
                            by_size[param][key]["last_ms"]["p50"], by_size[param][key]["last_ms"]["p95"])
                for page in pages.values():
                    page.page.close()
    finally:
        browser.close()
        manager.stop()
    return results


def render_floor(results: dict[str, Any], fmt) -> list[str]:
    """The floor's table for docs/performance.md."""
    lines = ["", "### 8. Close to the floor: key press → sources changed → next frame, plain Bokeh alongside (ms)",
             "", f"Pages alternate: {results['rounds']} rounds of {results['per_turn']} presses per page "
             "(naive at the largest size: 1). Ratio: p50 of *last* ÷ the floor's.", "",
             "| size | parameter | page | first p50 | last p50 | last p95 | frame p50 | frame p95 | last ÷ floor | n |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size, by_param in ((s, r) for s, r in results.items() if s in SIZES):
        for param, by_page in by_param.items():
            floor = by_page["floor"]["last_ms"]["p50"]
            for key, r in by_page.items():
                last = r["last_ms"]
                rel = "–" if floor is None or last["p50"] is None else f"{last['p50'] / floor:.2f}×"
                lines.append(f"| {size} | {param} | {key} | {fmt(r['first_ms']['p50'])} | {fmt(last['p50'])} | "
                             f"{fmt(last['p95'])} | {fmt(r['frame_ms']['p50'])} | {fmt(r['frame_ms']['p95'])} | "
                             f"{rel} | {last['n']} |")
    lines += ["", "Sources waited for: " + "; ".join(
        f"{key} {param}: {', '.join(r['witnesses'])}" + (f" (off screen, not waited for: {', '.join(r['off_screen'])})"
                                                        if r.get("off_screen") else "")
        for param, by_page in results.get("lesson", {}).items() for key, r in by_page.items()) + "."]
    return lines
