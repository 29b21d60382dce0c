"""app/delivery.py: bundles compressed by the app itself, unused bundles left out, caching headers."""

from __future__ import annotations

import urllib.request

import brotli
import pytest

from app import delivery
from app.delivery import COMPRESSED, accepted, file_for


def get(url: str, encoding: str = "br, gzip") -> tuple[bytes, dict]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read(), dict(response.headers)


@pytest.mark.parametrize(("header", "expected"), [
    ("gzip, deflate, br, zstd", "br"), ("gzip", "gzip"), ("br;q=0, gzip", "gzip"), ("identity", None), ("", None),
])
def test_accept_encoding(header, expected):
    assert accepted(header) == expected


def test_static_urls_map_to_files_and_never_leave_their_root():
    assert file_for("/static/js/bokeh.min.js").name == "bokeh.min.js"
    assert file_for("/static/js/../../../__init__.py") is None
    assert file_for("/clocks") is None


def test_pages_list_no_webgl_and_the_tables_stand_in(app_url):
    page, _ = get(f"{app_url}/explore?lang=en", "identity")
    assert b"bokeh-gl" not in page and b"bokeh-tables.min.js" not in page and b"bokeh-tables-stub.js" in page


def test_bundles_go_out_brotli_compressed_and_decode_to_the_file(app_url):
    assert COMPRESSED.ready.wait(120), "the start-up compression did not finish"
    body, headers = get(f"{app_url}/static/js/bokeh.min.js")
    assert headers["Content-Encoding"] == "br" and "Accept-Encoding" in headers["Vary"]
    original = file_for("/static/js/bokeh.min.js").read_bytes()
    assert brotli.decompress(body) == original
    assert len(body) < len(original) / 4
    _, plain = get(f"{app_url}/static/js/bokeh.min.js", "identity")
    assert "Content-Encoding" not in plain


def test_unversioned_katex_is_cached_for_a_day(app_url):
    _, headers = get(f"{app_url}/assets/katex/katex.min.css")
    assert "max-age=86400" in headers["Cache-Control"]


def test_the_renderer_wrappers_are_in_place():
    # Guards the Panel internals this relies on: the page and autoload renderers look bundle_resources
    # up in panel.io.server's globals, and the autoload handler looks autoload_js_script up there too.
    import inspect

    from panel.io import server as panel_server
    delivery.install()
    assert panel_server.bundle_resources.__wrapped__ is not None
    assert panel_server.autoload_js_script.__wrapped__ is not None
    assert "bundle_resources(" in inspect.getsource(panel_server.server_html_page_for_session)
    assert "autoload_js_script(" in inspect.getsource(panel_server.AutoloadJsHandler)
    assert "_template_variables['dist_url']" in inspect.getsource(panel_server.server_html_page_for_session)
