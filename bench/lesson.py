"""The lesson's part of the benchmark: every slider of every section of ``/``, key press -> data, in Chromium.

    python -m bench.run --parts lesson [--quick]

The page is ``/`` at the lesson's size, scrolled through first so that every
section is built (the worst case: a k press then updates every section that
shows k). Each slider handle on the page is found by its label, pressed
twice to warm up and to learn what it changes, then ``repeats`` times,
walking across its range, then walked back to where it started (not
measured), so that every slider is measured from the lesson's sizes. A press counts from the keydown to the last of
the named models it changes getting their new value in the page's Bokeh
document: data sources (a new ``data`` object or a patch) and other named
models changed by the message (a passage's live numbers, a check's
sentence); changes the page makes to named models on its own do not count.

Two figures per slider: key -> the last such change *on screen* (the models of the
sections the page reports shown, ``section_watch.shown``, and of the page outside
any section), and key -> the last change *anywhere*, which also waits for the
sections just off screen: those follow a step in the next message
(``app.model.section_watchers.follow_later``), before the reader can scroll to them.
Also: the first drawn figure of ``/`` after the request.
"""

from __future__ import annotations

import functools
import time
from typing import Any
from urllib.parse import urlencode

from bench.common import SIZES, _browser, load_times, log, server, stats, steps
from tests.helpers import wait_until

#: Any named model whose properties a message from the server changes: data sources, and the data
#: models of the passages and checks that hold the lesson's live numbers. Only changes made while the
#: page applies a server message count: the page changes some named models itself (a figure's size
#: when the layout settles), and a press that happened to coincide with one would wait for it.
PROBE_JS = """
() => {
  const doc = Bokeh.documents[0];
  const P = window.__probe = {t0: null, changed: new Map(), last: performance.now()};
  let applying = 0;
  const apply = doc.apply_json_patch;
  doc.apply_json_patch = function (...args) {
    applying += 1;
    try { return apply.apply(this, args); } finally { applying -= 1; }
  };
  document.addEventListener('keydown', () => { P.t0 = performance.now(); P.changed = new Map(); }, true);
  doc.on_change((event) => {
    P.last = performance.now();
    const name = event.model?.name;
    if (applying === 0 || P.t0 === null || name == null || P.changed.has(name)) return;
    P.changed.set(name, performance.now() - P.t0);
  });
  return true;
}
"""

#: Slider groups in the page (Playwright pierces Panel's shadow roots): each has a title and a handle.
SLIDERS = ".bk-input-group:has(.noUi-handle)"


def scroll_through(page, timeout: float = 120.0) -> None:
    """Scroll to the bottom a screen at a time until the page stops growing (every section built)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        height = page.evaluate("document.scrollingElement.scrollHeight")
        page.mouse.wheel(0, 900)
        page.wait_for_timeout(100)  # lets the scroll land before reading it (not a synchronisation)
        bottom = page.evaluate("window.scrollY + window.innerHeight >= document.scrollingElement.scrollHeight - 2")
        if bottom:
            # At the bottom: done once nothing new has arrived for a second.
            try:
                page.wait_for_function(f"() => document.scrollingElement.scrollHeight > {height}", timeout=1000)
            except Exception:
                return


def slider_label(group) -> str:
    """A slider group's label, its title without the value (textContent: a lesson section off screen is
    not rendered, content-visibility, so it has no innerText)."""
    title = (group.locator(".bk-slider-title").first.text_content() or "").split(":")[0].strip()
    # A discrete slider (base) has no title of its own: its handle's accessible name (components.a11y) is it.
    return title or (group.locator(".noUi-handle").first.get_attribute("aria-label") or "").strip()


def walk_back(page, handle, start: float, timeout: float = 60.0) -> None:
    """Press the handle back to ``start`` (not measured) and wait for the page to be quiet.

    Without it every size slider (d_model, T) left its 22 steps behind: the later sections' sliders
    were measured at d_model ~500 and T ~200, not at the sizes a reader who opens ``/`` finds. Read
    from the handle, not counted from the walk: a slider of step 2 (the reserve) reaches its end
    before ``steps`` turns.
    """
    for _ in range(2 * 1024):  # the longest walk back: a slider's whole range, one step a press
        now = float(handle.get_attribute("aria-valuenow"))
        if now == start:
            break
        handle.press("ArrowLeft" if now > start else "ArrowRight")
        page.wait_for_function("([h, now]) => Number(h.getAttribute('aria-valuenow')) !== now",
                               arg=[handle.element_handle(), now], timeout=timeout * 1000, polling=25)
    page.wait_for_function("() => performance.now() - window.__probe.last > 300", timeout=timeout * 1000,
                           polling=25)


def section_names(query: dict) -> dict[str, set[str]]:
    """The names of the named models inside each section of ``/`` (slug -> names), every section built in
    process: which of a press's changes belong to a section the page shows."""
    import panel as pn

    from bench.common import session_in_process
    from components.lazy import SectionWatch

    with session_in_process("lesson", query) as (page, root, _events):
        pn.state._on_load(root.document)  # the part of the page that follows the first draw
        watch = page.select(SectionWatch)[0]
        watch.seen = list(watch.slugs)  # every section built
        return {slug: {model.name for model in root.document.select_one({"name": f"{slug}_part"}).references()
                       if model.name} for slug in watch.slugs}


@functools.cache
def lesson_section_names() -> dict[str, set[str]]:
    """``section_names`` of ``/`` at the lesson's size (the names do not depend on the sizes), built once."""
    return section_names(SIZES["lesson"])


#: The sections the page reports on screen (the section watch's ``shown``).
SHOWN_JS = """
() => [...Bokeh.documents[0]._all_models.values()].find((m) => m.name === 'section_watch')?.shown ?? []
"""


def on_screen(witnesses: list[str], shown: list[str], sections: dict[str, set[str]]) -> list[str]:
    """Those of ``witnesses`` in a section that is ``shown`` or in no section at all (the page's own)."""
    inside = set().union(*sections.values())
    visible = set().union(*(sections[slug] for slug in shown if slug in sections))
    return [name for name in witnesses if name in visible or name not in inside]


def lesson_sliders(page, repeats: int, sections: dict[str, set[str]], press_timeout: float = 10.0) -> dict[str, Any]:
    """Per slider (its label and its place on the page): latencies, and the models each press changed."""
    page.evaluate(PROBE_JS)
    groups = page.locator(SLIDERS)
    out: dict[str, Any] = {}
    for i in range(groups.count()):
        group = groups.nth(i)
        handle = group.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        label = slider_label(group)
        handle.focus()
        # Pressed through the element found now, not the locator: a locator is resolved again at every
        # press (a selector through every shadow root of the page, ~100 ms of DOM queries right before the
        # key), and the page then collected that garbage inside the measured press.
        element = handle.element_handle()
        now, low, high = (float(handle.get_attribute(f"aria-value{a}")) for a in ("now", "min", "max"))
        if high <= low:
            continue
        keys = ["ArrowLeft" if s < 0 else "ArrowRight" for s in steps(now, low, high, repeats + 2)]
        seen = []
        for key in keys[:2]:
            element.press(key)
            try:
                page.wait_for_function("() => window.__probe.changed.size > 0", timeout=press_timeout * 1000,
                                       polling=25)
            except Exception:
                log("lesson slider", f"{i + 1:02d} {label}", "changed nothing named in the warm-up press")
            page.wait_for_function("() => performance.now() - window.__probe.last > 300", timeout=60_000, polling=25)
            seen.append(set(page.evaluate("() => [...window.__probe.changed.keys()]")))
        witnesses = sorted(seen[0] & seen[1])
        if not witnesses:
            continue
        shown = page.evaluate(SHOWN_JS)
        visible = on_screen(witnesses, shown, sections)
        latencies, anywhere, incomplete = [], [], 0
        for key in keys[2:]:
            element.press(key)
            try:
                page.wait_for_function("(w) => w.some((n) => window.__probe.changed.has(n))", arg=witnesses,
                                       timeout=press_timeout * 1000, polling="raf")
            except Exception:
                incomplete += 1
            page.wait_for_function("() => performance.now() - window.__probe.last > 150", timeout=60_000, polling=25)
            times = dict(zip(witnesses, page.evaluate("(w) => w.map((n) => window.__probe.changed.get(n) ?? null)",
                                                      witnesses), strict=True))
            if (mine := [times[name] for name in visible if times[name] is not None]):
                latencies.append(max(mine))
            if (every := [t for t in times.values() if t is not None]):
                anywhere.append(max(every))
        walk_back(page, handle, now)
        key = f"{i + 1:02d} {label}"
        out[key] = {"label": label, "latency_ms": stats(latencies), "anywhere_ms": stats(anywhere),
                    "witnesses": visible, "off_screen": [name for name in witnesses if name not in visible],
                    "shown": shown, "incomplete": incomplete}
        log("lesson slider", key, out[key]["latency_ms"].get("p50"), out[key]["latency_ms"].get("p95"),
            "anywhere", out[key]["anywhere_ms"].get("p50"), out[key]["anywhere_ms"].get("p95"))
    return out


def part_lesson(quick: bool) -> dict[str, Any]:
    repeats = 4 if quick else 20
    loads = 2 if quick else 8
    results: dict[str, Any] = {}
    manager, browser = _browser()
    try:
        with server("app") as (port, _pid):
            url = f"http://127.0.0.1:{port}/?{urlencode(SIZES['lesson'])}"
            first, _ = load_times(browser, url, loads)
            results["first_plot_ms"] = stats(first)
            log("lesson first plot", results["first_plot_ms"])
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(url, timeout=120_000)
            wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60)
            scroll_through(page)
            results["sliders"] = lesson_sliders(page, repeats, lesson_section_names())
            page.close()
    finally:
        browser.close()
        manager.stop()
    return results


def render_lesson(results: dict[str, Any], fmt) -> list[str]:
    """The lesson's table for docs/performance.md."""
    lines = ["", "### 7. The lesson (`/`, every section built): key press → new data or text in the page (ms)", ""]
    first = results.get("first_plot_ms", {})
    lines.append(f"First drawn figure of `/` after the request: p50 {fmt(first.get('p50'), 0)} ms, "
                 f"p95 {fmt(first.get('p95'), 0)} ms (target 1500).")
    lines += ["", "| # | slider | on screen p50 | on screen p95 | anywhere p50 | anywhere p95 | n | sections shown | "
              "models on screen | off screen |", "|---:|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for key, r in results.get("sliders", {}).items():
        lat, anywhere = r["latency_ms"], r.get("anywhere_ms", {})
        lines.append(f"| {key.split()[0]} | {r['label']} | {fmt(lat.get('p50'))} | {fmt(lat.get('p95'))} | "
                     f"{fmt(anywhere.get('p50'))} | {fmt(anywhere.get('p95'))} | {lat.get('n')} | "
                     f"{', '.join(r.get('shown', []))} | {', '.join(r['witnesses'])} | "
                     f"{len(r.get('off_screen', []))} |")
    return lines
