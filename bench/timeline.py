"""Where a key press's milliseconds go between the browser and the server: a websocket timeline.

    python -m bench.timeline [--page /explore] [--size lesson] [--param k] [--presses 24] [--runs 3]

Serves the app in a subprocess (``python -m bench.serve timeline PORT``) whose
websocket handler and sync path log the wall-clock time of each step (``serve``
below), opens the page in Chromium with every websocket frame timed as it is
sent and as its ``message`` event is dispatched, and presses the slider's arrow
key. Per press, in ms after the
``keydown`` (one clock: browser and server run on this machine):

* ``server receives``: the first frame of the key's first ``PATCH-DOC`` reaches the handler;
* ``step starts`` / ``step ends``: the widget's ``_process_events`` (every watcher, and the
  step's message serialized), with the step's own CPU time;
* ``data written``: Panel hands the step's ``PATCH-DOC`` to the socket (``dispatch_tornado``);
* ``OK written``: Bokeh's reply to the key's message;
* ``browser receives data``: the largest message of the press is dispatched in the page.

Each run starts a fresh server and browser; the table gives the median over the
presses of each run (the first two presses of a run are warm-up). ``--slowest N``
also lists the N presses (of all runs) whose data reached the page last, each
with its whole timeline: where a press in the tail lost its milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

#: The file the served app logs its steps to (set by ``run`` for the server it starts).
LOG_ENV = "PE_TIMELINE_LOG"

#: In the page: every websocket frame sent and every message dispatched, and each keydown, by one clock.
PAGE_CLOCK_JS = """
(() => {
  const Native = window.WebSocket;
  const now = () => performance.timeOrigin + performance.now();
  window.__timeline = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => window.__timeline.push(
        ['receive', now(), typeof e.data === 'string' ? e.data.length : (e.data.byteLength ?? e.data.size)]));
    }
    send(data) { window.__timeline.push(['send', now(), 0]); return super.send(data); }
  };
  document.addEventListener('keydown', () => window.__timeline.push(['key', now(), 0]), true);
})();
"""


def serve(port: int) -> None:
    """The app as ``bench.serve`` serves it, its handler's and sync path's steps logged to ``$PE_TIMELINE_LOG``."""
    import bokeh.server.views.ws as bokeh_ws
    import panel.io.document as panel_document

    from bench.app_server import serve_app
    from components import widgets

    log = open(os.environ[LOG_ENV], "a", buffering=1)  # noqa: SIM115 - open for the server's lifetime

    def stamp(kind: str, detail: str = "") -> None:
        log.write(f"{kind} {time.time() * 1000:.3f} {detail}\n")

    on_message, write_message = bokeh_ws.WSHandler.on_message, bokeh_ws.WSHandler.write_message

    async def timed_on_message(self, fragment):
        stamp("receive", str(len(fragment)))
        await on_message(self, fragment)

    async def timed_write_message(self, message, binary=False, locked=True):
        stamp("write", str(message[:60]).replace(" ", ""))
        await write_message(self, message, binary, locked)

    dispatch = panel_document.dispatch_tornado

    def timed_dispatch(conn, events=None, msg=None):
        stamp("data")
        return dispatch(conn, events, msg)

    process = widgets._OneMessage._process_events

    def timed_process(self, events):
        stamp("start", ",".join(events))
        cpu = time.thread_time()
        try:
            return process(self, events)
        finally:
            stamp("end", f"{(time.thread_time() - cpu) * 1000:.3f}")

    bokeh_ws.WSHandler.on_message, bokeh_ws.WSHandler.write_message = timed_on_message, timed_write_message
    panel_document.dispatch_tornado = timed_dispatch
    widgets._OneMessage._process_events = timed_process
    serve_app(port)


def _press_timeline(events: list, server_lines: list[str]) -> dict[str, float | None]:
    """One press's times (ms after its keydown) from the page's events and the server's log lines."""
    key = next(t for kind, t, _ in events if kind == "key")
    received = [(t, size) for kind, t, size in events if kind == "receive"]
    log = [(kind, float(t) - key, rest) for kind, t, *rest in (line.split(" ", 2) for line in server_lines)]

    def first(kind: str, where=lambda rest: True) -> float | None:
        return next((t for k, t, rest in log if k == kind and where(rest)), None)

    value_start = next((i for i, (k, _, rest) in enumerate(log) if k == "start" and "value" in rest[0].split(",")),
                       None)
    cpu = None
    if value_start is not None:
        cpu = next((float(rest[0]) for k, _, rest in log[value_start:] if k == "end"), None)
    return {
        "server receives": first("receive"),
        "step starts": first("start", lambda rest: "value" in rest[0].split(",")),
        "step ends": first("end"),
        "step CPU": cpu,
        "data written": first("data"),
        "OK written": first("write", lambda rest: '"OK"' in rest[0]),
        "browser receives data": max(received, key=lambda r: r[1])[0] - key if received else None,
    }


def run(page_path: str, size: str, param: str, presses: int) -> list[dict[str, float | None]]:
    """One fresh server and browser; the timeline of each counted press."""
    from bench.common import HANDLE_ORDER, PAGE_FIGURES, SIZES, _browser, plots_drawn, server, wait_until

    log_path = Path(tempfile.mkstemp(prefix="timeline-", suffix=".log")[1])
    os.environ[LOG_ENV] = str(log_path)  # the server subprocess inherits it
    manager, browser = _browser()
    try:
        with server("timeline") as (port, _):
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.add_init_script(PAGE_CLOCK_JS)
            page.goto(f"http://127.0.0.1:{port}{page_path}?{urlencode(SIZES[size])}", timeout=120_000)
            wait_until(lambda: plots_drawn(page, PAGE_FIGURES), timeout=120, interval=0.2)
            handle = page.locator(".noUi-handle").nth(HANDLE_ORDER.index(param))
            handle.focus()
            out = []
            for i in range(presses + 2):
                page.evaluate("() => { window.__timeline = []; }")
                log_path.write_text("")
                page.keyboard.press("ArrowRight" if (i // 10) % 2 == 0 else "ArrowLeft")
                # The press is over once neither side has logged anything new for 150 ms.
                seen, quiet_since = -1, time.monotonic()
                while time.monotonic() - quiet_since < 0.15:
                    count = page.evaluate("() => window.__timeline.length") + len(log_path.read_text())
                    if count != seen:
                        seen, quiet_since = count, time.monotonic()
                    page.wait_for_timeout(20)
                if i >= 2:
                    out.append(_press_timeline(page.evaluate("() => window.__timeline"),
                                               log_path.read_text().splitlines()))
            return out
    finally:
        browser.close()
        manager.stop()
        log_path.unlink()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="/explore")
    parser.add_argument("--size", default="lesson", choices=("lesson", "largest"))
    parser.add_argument("--param", default="k", choices=("pair", "pos", "k"))
    parser.add_argument("--presses", type=int, default=24)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slowest", type=int, default=0, help="list the N slowest presses, each step")
    args = parser.parse_args(argv)
    runs = [run(args.page, args.size, args.param, args.presses) for _ in range(args.runs)]
    names = list(runs[0][0])
    print(f"{args.page} {args.size} {args.param}: medians per run (ms after keydown; {args.presses} presses a run)")
    print("| step | " + " | ".join(f"run {i + 1}" for i in range(len(runs))) + " |")
    print("|---|" + "---:|" * len(runs))
    for name in names:
        cells = []
        for presses in runs:
            values = [p[name] for p in presses if p[name] is not None]
            cells.append(f"{statistics.median(values):.1f}" if values else "–")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.slowest:
        print(slowest_table([p for presses in runs for p in presses], args.slowest))


def slowest_table(presses: list[dict[str, float | None]], count: int) -> str:
    """The ``count`` presses whose data reached the page last, one row each, every step's time."""
    timed = [p for p in presses if p["browser receives data"] is not None]
    tail = sorted(timed, key=lambda p: p["browser receives data"], reverse=True)[:count]
    names = list(presses[0])
    lines = [f"The {len(tail)} slowest of {len(timed)} presses (ms after keydown):",
             "| " + " | ".join(names) + " |", "|" + "---:|" * len(names)]
    lines += ["| " + " | ".join("–" if p[n] is None else f"{p[n]:.1f}" for n in names) + " |" for p in tail]
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:])
