"""A page's start (its bundles' script tags) goes out before its session is built (app/earlyhead.py)."""

from __future__ import annotations

import asyncio
import http.client
import inspect
import re
import threading
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from bokeh.server import urls as bokeh_urls
from panel.io import server as panel_server

from app import earlyhead
from tests.helpers import run_coroutine, wait_until

BUNDLE_TAG = re.compile(r'<script type="text/javascript" src="([^"]+)"></script>')


def _chunks(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[http.client.HTTPResponse, list[bytes]]:
    """The response to GET ``path`` and its body as the chunks the server flushed (no compression)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request("GET", path, headers={"Accept-Encoding": "identity", **(headers or {})})
    response = connection.getresponse()
    chunks = []
    while chunk := response.read1():
        chunks.append(chunk)
    connection.close()
    return response, chunks


@pytest.fixture(scope="module")
def learned(app_url):
    # The first page at a route depth is served as Panel serves it, and teaches the start.
    response, _ = _chunks(app_url, "/")
    assert response.status == 200
    return app_url


def test_the_page_route_uses_the_early_handler(app_url):
    assert earlyhead.installed()


@pytest.mark.parametrize("path", ["/", "/score?lang=es", "/explore?d_model=64&T=200", "/ladder?embed=1"])
def test_the_start_leaves_first_and_the_page_is_whole(learned, path):
    response, chunks = _chunks(learned, path)
    assert response.status == 200
    assert response.getheader("Cache-Control") == "no-store"
    assert response.getheader("Content-Type").startswith("text/html")
    first = chunks[0].decode()
    # The first flush holds the opening and every bundle, and nothing of the session.
    assert first.startswith("<!DOCTYPE html>")
    assert "bokeh.min.js" in first and "panel.min.js" in first
    assert "<body" not in first and "render_items" not in first
    assert len(chunks) >= 2
    page = b"".join(chunks).decode()
    sources = BUNDLE_TAG.findall(page)
    assert len(sources) == len(set(sources)), "a bundle is listed twice"
    assert page.index("panel.min.js") < page.index("Bokeh.set_log_level")  # bundles before the scripts using them
    assert page.count("<head>") == 1 and page.count("</head>") == 1 and page.count("<title>") == 1
    assert page.rstrip().endswith("</html>")
    assert "render_items" in page


def test_the_rest_matches_what_panel_renders(learned):
    # The same page served stock (no start learned for this depth yet is not reproducible), so:
    # the start sent early plus the rest is a page that page_start reads back to the same start.
    _, chunks = _chunks(learned, "/clocks?lang=en")
    page = b"".join(chunks).decode()
    start = earlyhead.page_start(page)
    assert start is not None
    assert start.early == chunks[0].decode()


def test_a_page_that_does_not_begin_like_the_start_is_sent_whole():
    start = earlyhead.PageStart("<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
                                '<script type="text/javascript" src="a.js"></script>', ("a.js",))
    assert start.rest_of("<!DOCTYPE html><html lang=\"es\"><head>...") is None
    page = start.early + "<title>t</title></head><body></body></html>"
    assert start.rest_of(page) == "<title>t</title></head><body></body></html>"
    assert start.rest_of(page + start.bundles) is None  # listed twice: not the expected shape


def test_page_start_needs_the_bundles_before_the_body():
    assert earlyhead.page_start("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>"
                                '<script type="text/javascript" src="a.js"></script></body></html>') is None
    assert earlyhead.page_start("<html><body></body></html>") is None


def test_bundle_paths_resolve_against_the_page():
    start = earlyhead.PageStart("", "", ("static/js/bokeh.min.js?v=1", "assets/x.js"))
    assert start.bundle_paths("/") == {"/static/js/bokeh.min.js", "/assets/x.js"}
    assert start.bundle_paths("/embed/ladder") == {"/embed/static/js/bokeh.min.js", "/embed/assets/x.js"}


def _sent(path: str, referer: str | None) -> None:
    headers = {} if referer is None else {"Referer": referer}
    earlyhead.note_static_sent(SimpleNamespace(request=SimpleNamespace(path=path, headers=headers)))


def test_the_wait_ends_when_the_pages_bundles_are_sent():
    async def scenario():
        waiting = asyncio.ensure_future(earlyhead.bundles_sent("/", "lang=es", frozenset({"/a.js", "/b.js"}), 30))
        await asyncio.sleep(0)
        _sent("/a.js", "http://host/?lang=es")
        _sent("/b.js", "http://host/?lang=en")  # another page's bundle does not count
        _sent("/b.js", None)
        await asyncio.sleep(0)
        assert not waiting.done()
        _sent("/b.js", "https://elsewhere.example/?lang=es")  # the path and query name the page
        return await asyncio.wait_for(waiting, 5)

    assert run_coroutine(scenario()) is True
    assert earlyhead._WAITING == {}


def test_the_wait_is_bounded():
    async def scenario():
        return await earlyhead.bundles_sent("/", "", frozenset({"/a.js"}), 0.01)

    assert run_coroutine(scenario()) is False
    assert earlyhead._WAITING == {}


def test_a_browser_page_waits_for_its_bundles_and_not_longer(learned, monkeypatch):
    # With an hour's bound, the page comes only because its bundles were sent: a browser's
    # navigation (Sec-Fetch-Dest) whose bundles are fetched naming the page as Referer.
    monkeypatch.setattr(earlyhead, "BUNDLE_WAIT_S", 3600.0)
    path = "/wavelengths?lang=es&pos=7"
    result = {}
    thread = threading.Thread(target=lambda: result.update(page=_chunks(learned, path, {"Sec-Fetch-Dest": "document"})))
    thread.start()
    wait_until(lambda: earlyhead._WAITING, timeout=30)
    (wait,) = earlyhead._WAITING["/wavelengths?lang=es&pos=7"]
    for source in sorted(wait.missing):
        connection = http.client.HTTPConnection(urlsplit(learned).hostname, urlsplit(learned).port, timeout=30)
        connection.request("GET", source, headers={"Referer": f"{learned}{path}"})
        assert connection.getresponse().read()
        connection.close()
    thread.join(timeout=60)
    assert not thread.is_alive()
    response, chunks = result["page"]
    assert response.status == 200 and "render_items" in b"".join(chunks).decode()


def test_a_proxy_that_serves_the_bundles_skips_the_wait(learned, monkeypatch):
    monkeypatch.setattr(earlyhead, "BUNDLE_WAIT_S", 3600.0)
    response, chunks = _chunks(learned, "/score", {"Sec-Fetch-Dest": "document", "X-Bundles-Elsewhere": "1"})
    assert response.status == 200 and "render_items" in b"".join(chunks).decode()


def test_nginx_tells_the_app_it_serves_the_bundles():
    from pathlib import Path

    for name in ("nginx.conf.template", "nginx-compose.conf"):
        text = (Path(__file__).parents[2] / "deploy" / name).read_text()
        server_level = text[text.index("server {"):text.index("location /")]
        assert f'proxy_set_header {earlyhead.BUNDLES_ELSEWHERE_HEADER} "1";' in server_level


# --- guards: what the handler relies on in Panel, Bokeh and Tornado ---

def test_guard_panel_writes_the_page_once_at_the_end_of_get():
    source = inspect.getsource(panel_server.DocHandler.get)
    assert source.count("self.write(page)") == 2  # the page, or the authorization error page
    assert "server_html_page_for_session" in source
    assert source.rstrip().endswith("self.write(page)")


def test_guard_the_page_route_is_panels_doc_handler():
    routes = [entry for entry in bokeh_urls.per_app_patterns if entry[0] == r"/?"]
    assert len(routes) == 1 and issubclass(routes[0][1], panel_server.DocHandler)


def test_guard_tornado_static_files_finish_after_their_last_flush():
    from tornado.web import RequestHandler, StaticFileHandler

    assert "await self.flush()" in inspect.getsource(StaticFileHandler.get)
    finish = inspect.getsource(RequestHandler.finish)
    assert finish.index("self.flush(include_footers=True)") < finish.index("self.on_finish()")


@pytest.mark.parametrize("path,lang", [("/", "es"), ("/score?lang=en", "en"), ("/explore?lang=en", "en")])
def test_the_html_carries_the_pages_own_title(learned, path, lang):
    import html

    from app.model.strings import text
    from app.pages import section_title

    _, chunks = _chunks(learned, path)
    title = html.unescape(re.search(r"<title>(.*?)</title>", b"".join(chunks).decode()).group(1))
    site = text(lang, "page_title")
    assert title == (f"{section_title('score', lang)} · {site}" if path.startswith("/score") else site)
    assert "Panel" not in title


def test_a_page_that_fails_after_its_start_went_out_ends_with_a_message(learned, monkeypatch):
    from app.model.strings import text

    async def fails(self):
        raise RuntimeError("the session could not be built")

    monkeypatch.setattr(panel_server.DocHandler, "get_session", fails)
    response, chunks = _chunks(learned, "/ladder?lang=en")
    page = b"".join(chunks).decode()
    assert response.status == 200  # the status line left with the start
    assert text("en", "page_build_failed") in page and text("es", "page_build_failed") in page
    assert page.rstrip().endswith("</body></html>") and "Traceback" not in page and "RuntimeError" not in page
