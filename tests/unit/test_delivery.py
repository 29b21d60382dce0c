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


#: Every <link> under the document's shadow roots, however deep (Panel's views import their stylesheets there).
SHADOW_LINKS = """() => {
  const hrefs = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.tagName === "LINK" && el.rel === "stylesheet") hrefs.push(el.href);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return hrefs;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("route", ["/", "/explore", "/ladder", "/hands?theme=dark", "/hands?present=1&theme=dark"])
def test_every_panel_stylesheet_a_page_imports_was_preloaded_and_fetched_once(page, app_url, route):
    from urllib.parse import urljoin

    from tests.helpers import plots_drawn, wait_until

    page.goto(f"{app_url}{route}{'&' if '?' in route else '?'}lang=en")
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="drawn")
    entries = page.evaluate("performance.getEntriesByType('resource').map((e) => [e.name, e.startTime])")
    parsed = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventStart")
    panel_css = [name for name, _ in entries if "/static/extensions/panel/" in name and ".css" in name]
    # Asked for from the page's head, not when the views render (after the document has been parsed).
    assert all(start <= parsed for name, start in entries if name in panel_css), (entries, parsed)
    preloaded = set(page.evaluate("[...document.head.querySelectorAll('link[rel=preload]')].map((l) => l.href)"))
    assert preloaded <= {urljoin(f"{app_url}/", url) for url in delivery.preload_css_urls("dark" if "dark" in route
                                                                                             else "")}
    assert len(panel_css) >= 5
    assert set(panel_css) <= preloaded, set(panel_css) - preloaded
    # And nothing preloaded in vain (Chromium warns in the console: "preloaded … but not used"): /explore has
    # no gridbox, a presented /hands no select.
    imported: set[str] = set()

    def all_imported() -> bool:
        imported.update(page.evaluate(SHADOW_LINKS))
        return preloaded <= imported

    wait_until(all_imported, timeout=20, message="preloaded, never imported")
    assert len(panel_css) == len(set(panel_css)), "a stylesheet was fetched twice: the preload missed the cache"


def test_autoload_scripts_get_the_style_guard_slider_keys_and_plain_modules_and_no_preload():
    scripts = [delivery.STYLE_GUARD_JS, delivery.SLIDER_KEYS_JS, delivery.PLAIN_ESM_JS]
    bundle = delivery._lighter(type("B", (), {"js_files": ["http://h:1/static/js/bokeh.min.js"], "js_raw": []})())
    assert bundle.js_raw == scripts
    bundle = delivery._lighter(type("B", (), {"js_files": ["static/js/bokeh.min.js"], "js_raw": []})())
    assert len(bundle.js_raw) == 4 and bundle.js_raw[:3] == scripts and "rel = 'preload'" in bundle.js_raw[3]


def test_the_preload_follows_the_widgets_a_page_has():
    """A page preloads the Panel stylesheets its models import and no others (Chromium warns about the rest)."""
    import panel as pn
    from bokeh.document import Document
    from panel.io.resources import LOCAL_DIST, patch_model_css

    def used(*views: pn.viewable.Viewable) -> set[str]:
        doc = Document()
        root = pn.Column(*views).get_root(doc)
        doc.add_root(root)
        patch_model_css(root, dist_url=LOCAL_DIST)
        return delivery.panel_css_of(doc.roots)

    assert "css/select.css" in used(pn.widgets.Select(options=["a", "b"]))
    assert "css/select.css" not in used(pn.widgets.IntSlider())
    assert "css/button.css" in used(pn.widgets.Button(label="b")) - used(pn.pane.Markdown("a"))
    script = delivery.preload_script("", used(pn.pane.Markdown("a")))
    assert "select.css" not in script and "default.css" in script
