"""docs/course-page-example: a static page on another port embeds two views (an iframe and a
``server_document`` script); both render in Chromium and their sliders move them."""

from __future__ import annotations

import functools
import http.server
import re
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.server import free_port, is_alive, serve
from tests.helpers import wait_until

pytestmark = pytest.mark.browser

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "course-page-example" / "index.html"


class _CoursePage(http.server.BaseHTTPRequestHandler):
    """Serves the example page, with the explorable's address of this test in place of localhost:5006."""

    def __init__(self, *args, app_url: str, **kwargs):
        self.app_url = app_url
        super().__init__(*args, **kwargs)

    def do_GET(self):  # http.server calls it by this name
        if self.path == "/favicon.ico":  # the course site's own business; not part of the example
            self.send_response(204)
            self.end_headers()
            return
        if self.path not in ("/", "/index.html"):
            self.send_error(404)
            return
        body = EXAMPLE.read_text(encoding="utf-8").replace("http://localhost:5006", self.app_url).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def course_page():
    """(course page URL, app URL): the app allows the course page's origin, as the README says."""
    app_port, page_port = free_port(), free_port()
    origins = [f"{host}:{port}" for host in ("127.0.0.1", "localhost") for port in (app_port, page_port)]
    thread = serve(port=app_port, address="127.0.0.1", threaded=True, allow_websocket_origin=origins)
    app_url = f"http://127.0.0.1:{app_port}"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", page_port),
                                            functools.partial(_CoursePage, app_url=app_url))
    static = threading.Thread(target=httpd.serve_forever, daemon=True)
    static.start()
    try:
        deadline = time.monotonic() + 30
        while not is_alive(app_url):
            assert time.monotonic() < deadline, "the explorable did not start"
            time.sleep(0.05)  # polling interval
        yield f"http://127.0.0.1:{page_port}/", app_url
    finally:
        httpd.shutdown()
        thread.stop()


def test_both_views_render_on_the_course_page_and_their_sliders_work(page, course_page, console_errors):
    url, app_url = course_page
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(url)
    # 1. The iframe: only pos and k, and k moves the clocks.
    frame = page.frame_locator("#clocks-view")
    k = frame.get_by_role("slider", name=re.compile("offset k"))
    expect(k).to_have_count(1, timeout=30_000)
    expect(frame.get_by_role("slider")).to_have_count(2)
    clocks = next(f for f in page.frames if f.url.startswith(f"{app_url}/clocks"))

    def block() -> str:
        return clocks.evaluate("() => Bokeh.documents[0]?.get_model_by_name('rotation_block')?.text ?? ''")

    wait_until(lambda: "M\u2083" in block(), timeout=20, message="the iframe shows k = 3")
    k.focus()
    k.press("ArrowRight")
    wait_until(lambda: "M\u2084" in block(), timeout=10, message="the iframe's k slider moves its clocks")
    # 2. The script embed: drawn in the course page itself, with only k; its slider moves the marker.
    marker_k = ("() => (window.Bokeh?.documents ?? []).map((d) => d.get_model_by_name('distance_marker'))"
                ".filter(Boolean).map((m) => m.data.k[0])[0] ?? null")
    wait_until(lambda: page.evaluate(marker_k) == 5, timeout=30, message="the script embed shows k = 5")
    own = page.locator("#distance-view").get_by_role("slider")
    expect(own).to_have_count(1)
    own.focus()
    own.press("ArrowRight")
    wait_until(lambda: page.evaluate(marker_k) == 6, timeout=10, message="the embedded k slider moves the marker")
    # The embed's slider has no address writer (components.address._SLIDER_JS keeps its pending values in
    # window.__peAddress, set the moment a slider with one moves): the course page's address is its own.
    assert page.evaluate("() => window.__peAddress === undefined")
    # Nothing from a third host: the course page and the explorable only.
    hosts = {url.rsplit("/", 1)[0], app_url}
    foreign = [r for r in requests if not r.startswith(("data:", "blob:")) and not r.startswith(tuple(hosts))]
    assert foreign == []
    # The course page keeps its own address and title.
    assert page.url == url and page.title().startswith("Week 3")
    assert console_errors == [], console_errors
