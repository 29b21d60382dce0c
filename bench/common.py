"""What every part of the benchmark shares: the sizes, a server in a subprocess, Chromium, timing and stats.

``bench.run`` and each part's own module (``bench.lesson``, ``bench.floor`` …) import from here; nothing
here imports a part, so the benchmark's modules form no import cycle.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import plots_drawn, wait_until  # noqa: E402

#: Scratch results (git-ignored): every run's stamped file, and a run's partial results while it runs.
RESULTS = ROOT / "bench" / "results"
#: The results the docs' tables are made from (committed): one file per benchmark, its latest run.
PUBLISHED = ROOT / "docs" / "bench"


#: The lesson's NumPy cells and the largest table the sliders allow; pair/pos/k
#: start inside their ranges so that a step either way is possible.
SIZES: dict[str, dict[str, str]] = {
    "lesson": {"d_model": "32", "T": "24", "base": "10000", "pair": "3", "pos": "5", "k": "3", "lang": "en"},
    "largest": {"d_model": "1024", "T": "2048", "base": "10000", "pair": "3", "pos": "5", "k": "3", "lang": "en"},
}


#: Slider handles on ``/explore`` (the naive app's ``/``) in page order (controls first, in this order).
HANDLE_ORDER = ("d_model", "T", "base", "pair", "pos", "k")


#: Figures on ``/`` in both apps (ladder, heatmap, clock row, strip, large clock, score curve).
PAGE_FIGURES = 6


def stats(values: list[float]) -> dict[str, float | int | None]:
    """Median, 95th percentile, min and count (nearest-rank p95, so it is a measured value)."""
    if not values:
        return {"p50": None, "p95": None, "min": None, "n": 0}
    ordered = sorted(values)
    rank = max(0, int(np.ceil(0.95 * len(ordered))) - 1)
    return {"p50": float(np.median(ordered)), "p95": float(ordered[rank]), "min": float(ordered[0]),
            "n": len(ordered)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident set size of a process, from /proc (MB = 2**20 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def log(*parts: object) -> None:
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, flush=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its children (a server's forked workers), from /proc."""
    children = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True).stdout
    total = 0.0
    for one in [pid, *map(int, children.split())]:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


@contextlib.contextmanager
def server(which: str, procs: int = 1, env: dict[str, str] | None = None) -> Iterator[tuple[int, int]]:
    """``python -m bench.serve which PORT PROCS`` in a subprocess (``env`` added to this one's environment);
    yields (port, pid) once it answers."""
    port = free_port()
    # The server's log goes to a file, not a pipe: a pipe nobody reads while the server runs fills up (64 KB of
    # warnings, e.g. bench.reliability's hostile values) and then blocks the server at its next log line.
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen([sys.executable, "-m", "bench.serve", which, str(port), str(procs)], cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True,
                                   env={**os.environ, **(env or {})})
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    errors.seek(0)
                    log_tail = errors.read().decode(errors="replace")[-2000:]
                    raise RuntimeError(f"{which} server did not start: {log_tail}")
                time.sleep(0.2)
            yield port, process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            with contextlib.suppress(ProcessLookupError):  # forked workers, if any outlived the parent
                os.killpg(process.pid, 9)


def steps(value: float, low: float, high: float, n: int) -> list[int]:
    """``n`` slider steps (-1/+1) that walk from ``value`` towards the far bound, turning at a bound.

    A walk, not a back-and-forth: most steps reach a value not seen before, so
    a view that remembers results per value (the checks keep a residual per k)
    is measured doing its work, not answering from its memory.
    """
    direction = 1 if high - value >= value - low else -1
    out = []
    for _ in range(n):
        if not low <= value + direction <= high:
            direction = -direction
        value += direction
        out.append(direction)
    return out


def build_page(which: str, query: dict[str, str]):
    """The page object for a session whose URL carries ``query``: ``/explore`` ("app"), ``/`` ("lesson") or
    the naive baseline ("naive")."""
    import app.pages as pages

    with mock.patch.object(pages, "session_query", return_value={key: [value] for key, value in query.items()}):
        if which == "app":
            return pages.explore_page()
        if which == "lesson":
            return pages.lesson_page()
        from bench.naive_app import naive_page

        return naive_page()


def find_slider_model(page, root, label: str):
    """The Bokeh model a browser would change for the widget labelled ``label``."""
    import panel as pn

    widgets = [w for w in page.select(pn.widgets.Widget) if w.name == label]
    if len(widgets) != 1:
        raise LookupError(f"{len(widgets)} widgets labelled {label!r}")
    widget = widgets[0]
    inner = getattr(widget, "_slider", None) or widget  # DiscreteSlider drives an inner IntSlider
    return inner._models[root.ref["id"]][0]


@contextlib.contextmanager
def session_in_process(which: str, query: dict):
    """A page built in a Document as a served session would have it; yields (page, root, events).

    ``events`` collects every document change, so a caller can serialize what one update sends.
    """
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        page = build_page(which, query)
        root = page.get_root(doc)
        doc.add_root(root)
        # The browser has the document now: its models are synced, not new (what sending it does, in
        # Document.to_json). Left new, every message would walk them all (DocumentModelManager.flush_synced,
        # ~2 ms per step with the lesson built) and miss fastsync's cached references.
        doc.models.flush_synced()
        # As a served session after the browser's document_ready, on the server's thread;
        # otherwise pn.io.hold() keeps the events for later and nothing would be serialized.
        pn.state._connected[doc] = True
        pn.state._thread_id_[doc] = threading.get_ident()
        events: list = []
        doc.on_change(events.append)
        yield page, root, events


def apply_step(model, new, events: list, protocol) -> int:
    """Apply a browser's slider change to ``model`` and serialize the reply; returns its bytes."""
    # What Bokeh does with a browser's PATCH-DOC: set the property; Panel's
    # on_change callback runs every watcher (no session: no debounce).
    model.set_from_json("value", new)
    model.set_from_json("value_throttled", new)
    return message_bytes(events, model, protocol)


def message_bytes(events: list, model, protocol) -> int:
    """Bytes of the PATCH-DOC that carries ``events`` (less the browser's own change of ``model``)."""
    from bokeh.document.events import DocumentPatchedEvent

    sent = [e for e in events if isinstance(e, DocumentPatchedEvent) and getattr(e, "model", None) is not model]
    if not sent:
        return 0
    message = protocol.create("PATCH-DOC", sent)
    nbytes = len(message.header_json) + len(message.metadata_json) + len(message.content_json)
    return nbytes + sum(len(b.to_bytes()) for b in message.buffers)


def _browser():
    from playwright.sync_api import sync_playwright

    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    manager = sync_playwright().start()
    browser = manager.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return manager, browser


#: Runs before any page script: note when the first Bokeh figure has drawn (every
#: renderer done), polled once per animation frame. performance.now() counts from the
#: navigation's start, i.e. from when the page was requested.
FIRST_PLOT_JS = """
(() => {
  const poll = () => {
    try {
      if (window.Bokeh && Bokeh.index) {
        for (const view of Bokeh.index.query((v) => v.model?.toolbar !== undefined
                                               && typeof v.has_finished === 'function')) {
          if (view.has_finished()) { window.__firstPlot = performance.now(); return; }
        }
      }
    } catch (e) {}
    requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})();
"""


def load_times(browser, url: str, repeats: int, figures: int | None = None) -> tuple[list[float], list[float]]:
    """Loads of ``url`` in a cold browser context each, after one that warms the server's caches (bundles,
    templates): ms from the navigation to the first drawn figure, and (with ``figures``) to seeing that
    many figures drawn (within ~10 ms; empty without ``figures``)."""
    first, idle = [], []
    for i in range(repeats + 1):
        context = browser.new_context(viewport={"width": 1920, "height": 1080})
        context.add_init_script(FIRST_PLOT_JS)
        page = context.new_page()
        page.goto(url, timeout=120_000)
        page.wait_for_function("() => window.__firstPlot !== undefined", timeout=120_000)
        if figures is not None:
            wait_until(lambda page=page: plots_drawn(page, figures), timeout=120, interval=0.01)
        t_first = page.evaluate("window.__firstPlot")
        t_idle = page.evaluate("performance.now()")
        context.close()
        if i > 0:
            first.append(t_first)
            if figures is not None:
                idle.append(t_idle)
    return first, idle


def machine() -> dict[str, str]:
    import bokeh
    import panel
    import tornado

    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    chromium = "?"
    with contextlib.suppress(Exception):
        chromium = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
    load = "?"
    with contextlib.suppress(OSError):
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return {"cpu": cpu, "cores": str(os.cpu_count()), "python": platform.python_version(),
            "panel": panel.__version__, "bokeh": bokeh.__version__, "tornado": tornado.version,
            "numpy": np.__version__, "chromium": chromium, "kernel": platform.release(), "loadavg_at_start": load}


@dataclass(frozen=True)
class DocTable:
    """Where a benchmark's latest results go: ``docs/bench/<name>.json``, and the table its ``render`` makes
    of them, between the markers ``<!-- marker:begin -->`` and ``<!-- marker:end -->`` of ``doc`` (put just
    before the heading ``before`` in a doc without them). ``python -m bench.docs`` makes every table again
    from its file, and tests/unit/test_bench_docs.py holds each table to its file."""

    name: str
    doc: Path
    marker: str
    before: str

    @property
    def results(self) -> Path:
        return PUBLISHED / f"{self.name}.json"

    def read(self) -> dict | None:
        """The results published last, or None before the first run."""
        return json.loads(self.results.read_text(encoding="utf-8")) if self.results.exists() else None

    def publish(self, results: dict, block: str) -> None:
        """Keep ``results`` as the latest and put ``block`` (their table) into the doc."""
        PUBLISHED.mkdir(parents=True, exist_ok=True)
        self.results.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        self.show(block)

    def show(self, block: str) -> None:
        """Put ``block`` between the markers of the doc, in place of what is there."""
        write_between_markers(self.doc, self.marker, block, self.before)

    def shown(self) -> str | None:
        """What the doc holds between the markers now (None without them)."""
        begin, end = f"<!-- {self.marker}:begin -->", f"<!-- {self.marker}:end -->"
        text = self.doc.read_text(encoding="utf-8")
        if begin not in text or end not in text:
            return None
        return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def write_between_markers(doc: Path, name: str, block: str, before: str) -> None:
    """Put ``block`` between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in ``doc``, in place of what is
    there; a doc without the markers gets them just before the heading ``before``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = doc.read_text(encoding="utf-8")
    marked = f"{begin}\n{block}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + marked + rest.split(end, 1)[1]
    else:
        text = text.replace(before, f"{marked}\n\n{before}", 1)
    doc.write_text(text, encoding="utf-8")
