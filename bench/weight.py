"""Page weight: bytes over HTTP for a first and a second visit of ``/`` and ``/explore`` (part ``weight``).

Chromium's own network log (CDP ``Network.loadingFinished.encodedDataLength``: bytes on the wire,
headers included, after compression) for every request of the page, the websocket not counted,
until every figure is drawn, the later views of ``/explore`` have arrived and the network has been
quiet for 1.5 s. First visit: a new browser context (empty cache) at 1280 x 800. Second visit: the
same context, the same address again. The server is ``python -m bench.serve app`` (so
``python -m app``'s own compression and caching), after its start-up compression has finished.
"""

from __future__ import annotations

import time
import urllib.request
from typing import Any

from bench.common import _browser, log, server

ROUTES = ("/", "/explore")
QUERY = "lang=en"
TARGET_FIRST_KB, TARGET_SECOND_KB = 700, 50


def _wait_for_compression(port: int, timeout: float = 120) -> None:
    # The start-up compression runs in a thread; until it is done the bundles go out at a fast quality.
    url = f"http://127.0.0.1:{port}/static/js/bokeh.min.js"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        request = urllib.request.Request(url, headers={"Accept-Encoding": "br"})
        with urllib.request.urlopen(request, timeout=30) as response:
            if response.headers.get("Content-Length"):
                return
        time.sleep(0.5)  # polling interval, not a synchronisation delay
    raise RuntimeError("the server's start-up compression did not finish")


def _visit(page, url: str, settle_ms: int = 1500) -> list[dict[str, Any]]:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    requests: dict[str, dict[str, Any]] = {}
    cdp.on("Network.requestWillBeSent", lambda e: requests.setdefault(e["requestId"], {}).update(
        url=e["request"]["url"]))
    cdp.on("Network.loadingFinished", lambda e: requests.setdefault(e["requestId"], {}).update(
        bytes=e["encodedDataLength"], at=time.monotonic()))
    page.goto(url)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=60_000)
    page.wait_for_function("() => !document.querySelector('body.pn-loading')", timeout=60_000)
    # Quiet network: no request finished for settle_ms (the later views and KaTeX come after the first draw).
    while True:
        last = max((r.get("at", 0) for r in requests.values()), default=0)
        if time.monotonic() - last > settle_ms / 1000:
            break
        page.wait_for_timeout(200)
    cdp.detach()
    return [r for r in requests.values() if r.get("url", "").startswith("http")]


def part_weight(quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with server("app") as (port, _pid):
        _wait_for_compression(port)
        manager, browser = _browser()
        try:
            for route in ROUTES:
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                url = f"http://127.0.0.1:{port}{route}?{QUERY}"
                first = _visit(page, url)
                second = _visit(page, url)
                context.close()
                biggest = sorted(first, key=lambda r: -r.get("bytes", 0))[:8]
                results[route] = {
                    "first_kb": sum(r.get("bytes", 0) for r in first) / 1000,
                    "second_kb": sum(r.get("bytes", 0) for r in second) / 1000,
                    "first_requests": len(first), "second_requests": len(second),
                    "biggest": [[r["url"].split("?")[0].replace(f"http://127.0.0.1:{port}", ""),
                                 r.get("bytes", 0) / 1000] for r in biggest],
                }
                log(f"weight {route}: first {results[route]['first_kb']:.0f} KB, "
                    f"second {results[route]['second_kb']:.0f} KB")
        finally:
            browser.close()
            manager.stop()
    return results


def render_weight(results: dict[str, Any], fmt) -> list[str]:
    lines = ["", "### 8. Page weight over HTTP (KB on the wire, websocket not counted; 1280 x 800, English)", "",
             "| page | first visit | second visit | requests (first / second) | target |", "|---|---:|---:|---:|---|"]
    for route, r in results.items():
        lines.append(f"| `{route}` | {fmt(r['first_kb'], 0)} | {fmt(r['second_kb'], 1)} | "
                     f"{r['first_requests']} / {r['second_requests']} | ≤ {TARGET_FIRST_KB} / ≤ {TARGET_SECOND_KB} |")
    for route, r in results.items():
        lines += ["", f"Biggest requests of the first visit of `{route}` (KB): "
                  + ", ".join(f"`{path}` {kb:.1f}" for path, kb in r["biggest"]) + "."]
    return lines
