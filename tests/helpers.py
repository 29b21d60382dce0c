"""Helpers for the browser tests: polling, and reading Bokeh models out of the page."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from unittest import mock

import numpy as np
import panel as pn


def row_by_hand(pos: float, d_model: int, base: float = 10_000) -> np.ndarray:
    """``PE[pos]`` written out from the paper's formula with ``math`` (an independent check of ``app.model.core``)."""
    row: list[float] = []
    for i in range(d_model // 2):
        angle = pos / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return np.array(row)


def printed(value: float, spec: str = "") -> str:
    """``value`` as the page prints it: formatted by ``spec``, a true minus sign (U+2212) before a
    negative number, and no sign before one that prints as zero."""
    text = format(value, spec)
    if not text.startswith("-"):
        return text
    return text[1:] if float(text) == 0 else "\u2212" + text[1:]


def parsed(shown: str) -> float:
    """The number a page's text prints (minus sign U+2212, thousands apart by narrow spaces)."""
    return float(shown.replace("\u2212", "-").replace("\u202f", "").replace("\u2009", ""))


def run_coroutine(coroutine, timeout: float = 180.0):
    """``asyncio.run(coroutine)`` in a worker thread: after a Playwright test the main thread has an
    event loop marked as running, and asyncio refuses to start another one there."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=timeout)


def wait_until(condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05,
               message: str | Callable[[], str] = "condition not met") -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds, with ``message``
    (a callable is called then: an f-string message shows the page as it was before the wait)."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{message() if callable(message) else message} (after {timeout} s)")
        time.sleep(interval)


#: JavaScript: a promise settled once the page has rendered two more frames.
_TWO_FRAMES_JS = "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


async def until(condition: Callable[[], Any], timeout: float = 15.0, message: str = "condition not met",
                every: float = 0.02) -> Any:
    """``wait_until`` on a running event loop, which keeps serving its tasks while this waits."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{message() if callable(message) else message} (after {timeout} s)")
        await asyncio.sleep(every)  # polling interval


def screen(browser, width: int):
    """A browser context the width of a screen: a phone (portrait, touch) below 500 px, else a desktop."""
    phone = width < 500
    return browser.new_context(viewport={"width": width, "height": 844 if phone else 800}, is_mobile=phone,
                               has_touch=phone)


def found_down_the_page(page, probe: str) -> list:
    """What the page function ``probe`` finds (a list of lists, each named by its first two items), read a screen
    at a time from the page's top to its end: figures are drawn as they come into view."""
    found: dict[tuple, list] = {}
    for top in range(0, page.evaluate("() => document.documentElement.scrollHeight"), 600):
        page.evaluate(f"() => window.scrollTo(0, {top})")
        after_two_frames(page)
        for item in page.evaluate(probe):
            found[tuple(item[:2])] = item
    return list(found.values())


def after_two_frames(page) -> None:
    """Return once the page has rendered two more frames (BokehJS paints in the first)."""
    page.evaluate(f"() => {_TWO_FRAMES_JS}")


#: The element's box after two animation frames equals its box before them (the layout has settled).
_STILL_JS = f"""async (el) => {{
  const box = () => JSON.stringify(el.getBoundingClientRect());
  const before = box();
  await {_TWO_FRAMES_JS};
  return box() === before;
}}"""


def click_when_still(locator, timeout: float = 10.0) -> None:
    """Click ``locator`` once it has stopped moving.

    The layout can still change after the data has arrived: on ``/score`` a passage above the heads
    switch changes height ~0.6 s after the first data (measured with no key pressed) and moves the
    switch a line down. Playwright checks where the control is and then clicks there, so a move in
    between sends the click elsewhere.
    """
    locator.scroll_into_view_if_needed()
    wait_until(lambda: locator.evaluate(_STILL_JS), timeout=timeout, message="the element kept moving")
    locator.click()


# Columns arrive as plain arrays, typed arrays or Bokeh ndarrays (images); all
# become {"shape": [...], "values": [...]} or plain lists so Python can read them.
_READ_SOURCE = """
(name) => {
  const plain = (v) => {
    if (v == null) return v;
    if (ArrayBuffer.isView(v)) return {shape: v.shape ?? [v.length], values: Array.from(v)};
    if (Array.isArray(v)) return v.map(plain);
    return v;
  };
  for (const doc of (window.Bokeh?.documents ?? [])) {
    const model = doc.get_model_by_name(name);
    if (model != null) {
      const out = {};
      for (const [key, value] of (model.data instanceof Map ? model.data.entries() : Object.entries(model.data)))
        out[key] = plain(value);
      return out;
    }
  }
  return null;
}
"""

_READ_PROPERTY = """
([name, attr]) => {
  for (const doc of (window.Bokeh?.documents ?? [])) {
    const model = doc.get_model_by_name(name);
    if (model != null) return model[attr];
  }
  return null;
}
"""


def _column(value: Any) -> Any:
    if isinstance(value, dict) and "values" in value:
        return np.asarray(value["values"], dtype=float).reshape(value["shape"])
    if isinstance(value, list):
        return [_column(v) for v in value] if value and isinstance(value[0], dict) else np.asarray(value)
    return value


def source_data(page, name: str) -> dict[str, Any] | None:
    """The data of the ColumnDataSource called ``name`` in the page's Bokeh documents."""
    raw = page.evaluate(_READ_SOURCE, name)
    return None if raw is None else {key: _column(value) for key, value in raw.items()}


def model_property(page, name: str, attr: str) -> Any:
    """A property of the Bokeh model called ``name`` (e.g. a range's ``start``)."""
    return page.evaluate(_READ_PROPERTY, [name, attr])


def wait_for_source(page, name: str, condition: Callable[[dict], Any] = bool, timeout: float = 15.0) -> dict:
    """Poll until the source exists and ``condition(data)`` holds; return the data."""
    found: dict = {}

    def check() -> bool:
        data = source_data(page, name)
        if data is not None and condition(data):
            found.update(data)
            return True
        return False

    wait_until(check, timeout=timeout, message=f"source {name!r} never met the condition")
    return found


def slider_handle(page, label: str):
    """The keyboard-focusable handle of the slider whose title starts with ``label``."""
    group = page.locator(".bk-input-group").filter(has=page.locator(".bk-slider-title", has_text=label))
    return group.locator(".noUi-handle").first


def press(page, label: str, key: str, times: int = 1) -> None:
    """Focus the slider titled ``label`` and press ``key`` ``times`` times."""
    handle = slider_handle(page, label)
    handle.focus()
    for _ in range(times):
        handle.press(key)


#: Every figure the page will have is drawn: at least ``min_plots`` of them exist (the full page
#: adds its later views after the first one is drawn) and each has finished rendering.
_PLOTS_DRAWN = """(minPlots) => {
  const doc = window.Bokeh?.documents?.[0];
  if (!doc || !doc.is_idle) return false;
  const plots = [...Bokeh.index.query((v) => v.model?.toolbar !== undefined && typeof v.has_finished === "function")];
  return plots.length >= minPlots && plots.every((v) => v.has_finished());
}"""


def plots_drawn(page, min_plots: int) -> bool:
    """Whether the page shows at least ``min_plots`` figures, all drawn (a page of sliders alone: 0)."""
    return bool(page.evaluate(_PLOTS_DRAWN, min_plots))


def figure_count(route: str) -> int:
    """How many Bokeh figures the page at ``route`` holds once drawn: ``/explore`` every view, a view's or a
    section's route that view or section, ``/`` the sections built with the page."""
    from bokeh.document import Document
    from bokeh.models import Plot

    from app.lesson import SECTIONS
    from app.model.state import ExplorerState
    from app.pages import FIRST_SECTIONS, VIEWS

    name = route.strip("/")
    if name == "explore":
        builders = [VIEWS[view].view for view in VIEWS]
    elif name == "":
        builders = list(SECTIONS.values())[:FIRST_SECTIONS]
    else:
        builders = [VIEWS[name].view if name in VIEWS else SECTIONS[name]]
    total = 0
    for build in builders:
        root = pn.panel(build(ExplorerState(lang="en"))).get_root(Document())
        total += sum(isinstance(m, Plot) for m in root.references())
    return total


class LogRecorder(logging.Handler):
    """Every record of the loggers a failure would show in: Bokeh's, tornado's, asyncio's, Panel's, ours."""

    NAMES = ("", "app", "bokeh", "tornado", "asyncio", "panel")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> LogRecorder:
        for name in self.NAMES:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        for name in self.NAMES:
            logging.getLogger(name).removeHandler(self)

    def failures(self) -> list[str]:
        """Tracebacks and errors: what must never be logged."""
        return [self.format(r)[:300] for r in self.records
                if r.exc_info or r.levelno >= logging.ERROR or "Exception in callback" in r.getMessage()]

    def warnings(self, name: str = "app.guard") -> list[str]:
        return [r.getMessage() for r in self.records if r.name == name and r.levelno == logging.WARNING]


def served_like(doc) -> None:
    """Make ``doc`` look to Panel like a served session's after the browser's document_ready, so that changes
    held by ``pn.io.hold()`` reach the document (as ``bench/sections.py`` does)."""
    pn.state._connected[doc] = True
    pn.state._thread_id_[doc] = threading.get_ident()


def with_address(query: Mapping[str, str]) -> mock._patch:
    """A patch under which a page built in process reads ``query`` as its session's address (what
    ``app.pages.session_query`` reads from a served session's request)."""
    from app import pages

    return mock.patch.object(pages, "session_query", return_value={key: [value] for key, value in query.items()})
