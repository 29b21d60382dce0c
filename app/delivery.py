"""Sending the page light: compressed bundles, only the bundles a figure uses, caching that lets a
second visit fetch almost nothing (a class of 300 shares one Wi-Fi).

Stock Panel 1.9 / Bokeh 3.9 send every JavaScript bundle uncompressed (~3 MB for ``/``) and load
``bokeh-gl`` (WebGL) although no figure draws with WebGL. ``python -m app`` fixes that itself,
without a proxy in front:

* ``CompressingTransform``, a tornado output transform given to ``pn.serve`` (``transforms``),
  sends the static files Brotli-compressed at quality 11 (``Content-Encoding: br``; gzip level 9
  to a client without Brotli). Quality 11 costs ~3 s for ``bokeh.min.js``, far too long for a
  request: the compressed copies are made in a background thread when the server starts
  (``precompress``), kept in memory and on disk (``cache_dir()``, keyed by the file's SHA-256), so
  a restart reads them back in milliseconds. Until a file's copy is ready it goes out compressed
  on the fly at a fast quality. Small dynamic responses (the page's HTML) are compressed on the
  fly too. Anything already encoded, partial (Range) or not a 200 passes untouched.
* Bokeh marks its bundles ``?v=<hash>`` and tornado then lets the browser keep them for a year;
  the app's unversioned KaTeX files and the favicon get a day (``Cache-Control``), so a second
  visit transfers the HTML page and little else.
* ``install()`` wraps the list of scripts of Panel's pages and autoload scripts: the ``bokeh-gl``
  and ``bokeh-mathjax`` bundles are not listed (``UNUSED_BUNDLES``), and ``bokeh-tables``
  (no page shows a table, but Panel's bundle requires its module when it loads) is replaced by a
  40-line stand-in (static/bokeh-tables-stub.js); in an autoload script (``server_document``) the
  relative URLs Panel leaves there are made absolute, and its models' stylesheets point at this
  server instead of cdn.holoviz.org. This replaces two module attributes of ``panel.io.server``
  (``bundle_resources``, ``autoload_js_script``; tests/unit/test_delivery.py guards them).

Every page and autoload script also runs three short scripts once BokehJS has loaded (inline, no
request of their own): static/style-guard.js (BokehJS rewrites its views' ``<style>`` elements with
unchanged text on every repaint, and each write makes the next computed-style read during the paint
recompute styles; it reads each CSS custom property of a visual several times per paint; and it clears a
canvas layer from half a pixel in, so its first row and column keep half of what was drawn there),
static/slider-keys.js (a key on a slider sends its value at once and redraws the slider with the
server's answer, in one frame instead of two) and static/plain-esm.js (the app's component modules skip
Panel's in-browser TypeScript transform; components/plainjs.py).

KaTeX (``static/katex``) is fetched by the prose component only when a passage with a formula
comes near the screen (components/prose.py).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import brotli
import panel as pn
from bokeh.embed.bundle import URL
from bokeh.util.paths import bokehjs_path
from tornado import httputil
from tornado.web import OutputTransform

from components.internals import allowed
from components.stylesheets import STATIC_DIR

if TYPE_CHECKING:
    from bokeh.model import Model

log = logging.getLogger("app")

#: Bokeh bundles no figure of the app uses.
UNUSED_BUNDLES = ("bokeh-gl", "bokeh-mathjax")

PANEL_DIST = Path(pn.__file__).parent / "dist"

#: URL prefix -> the directory its files come from (what Bokeh's, Panel's and our static routes serve).
ROOTS: dict[str, Path] = {
    "/static/js/": Path(bokehjs_path()) / "js",
    "/static/extensions/panel/": PANEL_DIST,
    "/assets/": STATIC_DIR,
    "/favicon.ico": PANEL_DIST / "images" / "favicon.ico",
}

#: Kept by the browser for a day: unversioned files that change only with a new release of the app.
DAY_CACHED = ("/assets/katex/", "/favicon.ico")

COMPRESSIBLE = {
    "application/javascript", "application/x-javascript", "text/javascript", "application/json",
    "image/svg+xml", "image/x-icon", "image/vnd.microsoft.icon", "text/csv",
}
#: Below this a compressed body hardly gets smaller than its header.
MIN_LENGTH = 1024
#: On-the-fly qualities: fast enough for a request (~10 ms for 100 KB).
FAST_BROTLI, FAST_GZIP = 5, 6
BEST_BROTLI, BEST_GZIP = 11, 9


def cache_dir() -> Path:
    """Where compressed copies are kept between runs: ``$PE_CACHE_DIR``, else ``~/.cache/pe-explorable``."""
    env = os.environ.get("PE_CACHE_DIR", "").strip()
    return Path(env) if env else Path.home() / ".cache" / "pe-explorable" / "compressed"


def file_for(path: str) -> Path | None:
    """The file that a static URL path serves, or ``None`` (a page, a handler, a path leaving its root)."""
    for prefix, root in ROOTS.items():
        if prefix.endswith("/") and path.startswith(prefix):
            target = (root / path[len(prefix):]).resolve()
            if root.resolve() in target.parents and target.is_file():
                return target
        elif path == prefix:
            return root if root.is_file() else None
    return None


class Compressed:
    """Brotli and gzip copies of static files, by file path; filled by ``precompress``."""

    def __init__(self) -> None:
        self._copies: dict[Path, tuple[int, int, bytes, bytes]] = {}  # path -> (mtime_ns, size, br, gz)
        self._lock = threading.Lock()
        #: Set once the server's start-up ``precompress`` has gone through its files.
        self.ready = threading.Event()

    def get(self, path: Path, encoding: str) -> bytes | None:
        """The ``encoding`` ("br" or "gzip") copy of ``path`` if it is ready and the file has not changed."""
        with self._lock:
            entry = self._copies.get(path)
        if entry is None:
            return None
        stat = path.stat()
        if (stat.st_mtime_ns, stat.st_size) != entry[:2]:
            return None
        return entry[2] if encoding == "br" else entry[3]

    def add(self, path: Path) -> None:
        """Compress ``path`` at the best qualities (or read the copies made by an earlier run)."""
        stat = path.stat()
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        folder = cache_dir()
        br_file, gz_file = folder / f"{digest}.br", folder / f"{digest}.gz"
        try:
            br, gz = br_file.read_bytes(), gz_file.read_bytes()
        except OSError:
            br = brotli.compress(data, quality=BEST_BROTLI, lgwin=24)
            gz = gzip.compress(data, BEST_GZIP, mtime=0)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                for target, body in ((br_file, br), (gz_file, gz)):
                    partial = target.with_suffix(f".{os.getpid()}.part")
                    partial.write_bytes(body)
                    partial.replace(target)  # atomic: a second process never reads half a file
            except OSError as error:  # a read-only home: keep the copies in memory only
                log.info("compressed copies not kept on disk: %s", error)
        with self._lock:
            self._copies[path] = (stat.st_mtime_ns, stat.st_size, br, gz)


COMPRESSED = Compressed()


def static_files() -> list[Path]:
    """The static files a page may load, biggest first (so the bundles are ready soonest)."""
    bokeh_js = ROOTS["/static/js/"]
    files = [bokeh_js / f"{name}.min.js" for name in ("bokeh", "bokeh-widgets", "bokeh-tables")]
    files.append(PANEL_DIST / "panel.min.js")
    files += PANEL_DIST.glob("bundled/reactiveesm/**/*.js")
    files += PANEL_DIST.glob("css/*.css")
    files += PANEL_DIST.glob("bundled/theme/*.css")
    files.append(ROOTS["/favicon.ico"])
    files += (p for p in STATIC_DIR.rglob("*") if p.suffix in (".js", ".css"))
    return sorted({p for p in files if p.is_file()}, key=lambda p: -p.stat().st_size)


def precompress(files: Iterable[Path] | None = None) -> threading.Thread:
    """Start making the compressed copies of ``files`` (default ``static_files()``) in a daemon thread."""
    todo = list(static_files() if files is None else files)

    def work() -> None:
        for path in todo:
            try:
                COMPRESSED.add(path)
            except OSError as error:
                log.info("not compressed: %s (%s)", path, error)
        COMPRESSED.ready.set()

    thread = threading.Thread(target=work, name="precompress", daemon=True)
    thread.start()
    return thread


def accepted(header: str) -> str | None:
    """The encoding to answer with for an Accept-Encoding header: "br", else "gzip", else ``None``."""
    weights = {}
    for part in header.split(","):
        name, _, params = part.partition(";")
        quality = 1.0
        if params.strip().lower().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        weights[name.strip().lower()] = quality
    return next((name for name in ("br", "gzip") if weights.get(name, 0) > 0), None)


class CompressingTransform(OutputTransform):
    """Compresses a response for the client (see the module's docstring); one per request."""

    def __init__(self, request: httputil.HTTPServerRequest) -> None:
        self._request = request
        self._encoding = accepted(request.headers.get("Accept-Encoding", ""))
        self._mode = "pass"  # "pass" | "whole" (the copy went out with the first chunk) | "stream"
        self._stream = None

    def transform_first_chunk(self, status_code: int, headers: httputil.HTTPHeaders, chunk: bytes,
                              finishing: bool) -> tuple[int, httputil.HTTPHeaders, bytes]:
        path = self._request.path
        if status_code in (200, 304) and any(path.startswith(p) for p in DAY_CACHED):
            headers["Cache-Control"] = "public, max-age=86400"
        ctype = str(headers.get("Content-Type", "")).split(";")[0].strip()
        if not (ctype.startswith("text/") or ctype in COMPRESSIBLE):
            return status_code, headers, chunk
        headers["Vary"] = "Accept-Encoding" if "Vary" not in headers else headers["Vary"] + ", Accept-Encoding"
        if (self._encoding is None or status_code != 200 or "Content-Encoding" in headers
                or self._request.method == "HEAD" or (finishing and len(chunk) < MIN_LENGTH)):
            return status_code, headers, chunk
        headers["Content-Encoding"] = self._encoding
        source = file_for(path)
        copy = COMPRESSED.get(source, self._encoding) if source is not None else None
        if copy is not None and headers.get("Content-Length") == str(source.stat().st_size):
            self._mode = "whole"
            headers["Content-Length"] = str(len(copy))
            return status_code, headers, copy
        self._mode = "stream"
        if self._encoding == "br":
            self._stream = brotli.Compressor(quality=FAST_BROTLI)
        else:
            self._stream = _GzipStream(FAST_GZIP)
        body = self.transform_chunk(chunk, finishing)
        if finishing:
            headers["Content-Length"] = str(len(body))
        elif "Content-Length" in headers:
            del headers["Content-Length"]  # tornado falls back to chunked encoding
        return status_code, headers, body

    def transform_chunk(self, chunk: bytes, finishing: bool) -> bytes:
        if self._mode == "whole":
            return b""
        if self._mode == "pass":
            return chunk
        out = self._stream.process(chunk) if chunk else b""
        return out + (self._stream.finish() if finishing else self._stream.flush())


class _GzipStream:
    """``gzip`` with brotli.Compressor's three methods."""

    def __init__(self, level: int) -> None:
        import zlib
        self._z = zlib.compressobj(level, zlib.DEFLATED, 31)
        self._zlib = zlib

    def process(self, data: bytes) -> bytes:
        return self._z.compress(data)

    def flush(self) -> bytes:
        return self._z.flush(self._zlib.Z_SYNC_FLUSH)

    def finish(self) -> bytes:
        return self._z.flush()


#: Run on every page and autoload script once BokehJS has loaded (see the file's comment).
STYLE_GUARD_JS = (STATIC_DIR / "style-guard.js").read_text(encoding="utf-8")
#: Run on every page and autoload script once Panel's bundle has loaded, before any document is built
#: (see the file's comment and components/plainjs.py).
PLAIN_ESM_JS = (STATIC_DIR / "plain-esm.js").read_text(encoding="utf-8")
#: Run on every page and autoload script once BokehJS has loaded: a slider's key is answered before the slider
#: is redrawn (see the file's comment).
SLIDER_KEYS_JS = (STATIC_DIR / "slider-keys.js").read_text(encoding="utf-8")

#: Served instead of ``bokeh-tables`` (see static/bokeh-tables-stub.js); versioned by its content.
TABLES_STUB = STATIC_DIR / "bokeh-tables-stub.js"


def _lighter(bundle, roots: Iterable[Model] = ()):
    """``bundle`` without the scripts of ``UNUSED_BUNDLES``, and the tables stand-in for ``bokeh-tables``;
    on a page of the app's own, a head script that preloads the stylesheets ``roots`` import."""
    stub = f"assets/{TABLES_STUB.name}?v={hashlib.sha256(TABLES_STUB.read_bytes()).hexdigest()[:16]}"
    files = []
    for url in bundle.js_files:
        # Items are str or bokeh.embed.bundle.URL (autoload.js reads .url): keep each one's type.
        text = url.url if isinstance(url, URL) else str(url)
        name = text.split("?")[0].rsplit("/", 1)[-1]
        if any(name in (f"{bundle_name}.js", f"{bundle_name}.min.js") for bundle_name in UNUSED_BUNDLES):
            continue
        if name in ("bokeh-tables.js", "bokeh-tables.min.js"):
            text = text[: text.index("static/js/")] + stub
            url = URL(text) if isinstance(url, URL) else text
        files.append(url)
    bundle.js_files = _absolute(files)
    for attribute in ("js_modules", "css_files"):
        if isinstance(getattr(bundle, attribute, None), list):
            setattr(bundle, attribute, _absolute(getattr(bundle, attribute)))
    page_of_its_own = not any("://" in (u.url if isinstance(u, URL) else str(u)) for u in bundle.js_files)
    if isinstance(getattr(bundle, "js_raw", None), list):
        # BokehJS/Panel-JS speed patches; each also checks what it touches, in the page.
        bundle.js_raw.extend(script for patch, script in (("style guard", STYLE_GUARD_JS),
                                                          ("slider keys", SLIDER_KEYS_JS),
                                                          ("plain esm", PLAIN_ESM_JS)) if allowed(patch))
        if page_of_its_own:
            bundle.js_raw.append(preload_script(pn.config.theme, panel_css_of(roots)))
    return bundle


#: Panel's stylesheets that every page's widgets and layouts import into their shadow roots
#: (``static/extensions/panel/`` + these + ``?v=`` Panel's version), and the theme's two.
PANEL_CSS = ("css/listpanel.css", "css/loading.css", "css/button.css", "css/select.css", "css/gridbox.css",
             "bundled/theme/native.css")


def panel_css_of(roots: Iterable[Model]) -> set[str]:
    """Which of ``PANEL_CSS`` the models under ``roots`` import (their ``stylesheets``).

    On the page's critical path, so read fast: the document's model index, not a walk of the roots (~50 ms
    on ``/``), and the values a model was given (Bokeh's ``_property_values``) rather than its property
    getters (~10 ms for the 280 models of ``/``). Panel gives its stylesheets explicitly, so they are there;
    if Bokeh renamed that dict, nothing would be preloaded and tests/unit/test_delivery.py would fail. Roots
    outside a document (no page to preload for) give nothing.
    """
    roots = list(roots)
    document = roots[0].document if roots else None
    models = document.models if document is not None else ()
    urls = {sheet if isinstance(sheet, str) else getattr(sheet, "url", "")
            for model in models for sheet in getattr(model, "_property_values", {}).get("stylesheets") or ()}
    return {name for name in PANEL_CSS if any(f"/panel/{name}" in url for url in urls)}


def preload_css_urls(theme: str, used: Iterable[str] = PANEL_CSS) -> list[str]:
    """The stylesheets a page of the app imports while it draws its first figures, as the page asks for them:
    those of ``PANEL_CSS`` in ``used`` and the theme's. Chromium warns in the console about a preloaded
    file that the page does not use (``select.css`` on a page without a select)."""
    from panel.io.resources import JS_VERSION, LOCAL_DIST

    theme_css = f"bundled/theme/{'dark' if theme == 'dark' else 'default'}.css"
    names = (*(name for name in PANEL_CSS if name in used), theme_css)
    return [f"{LOCAL_DIST}{name}?v={JS_VERSION}" for name in names]


def preload_script(theme: str, used: Iterable[str] = PANEL_CSS) -> str:
    """A script for the page's head that starts fetching ``preload_css_urls`` at once.

    The views import those stylesheets into their shadow roots only while they render, after the
    document has arrived, and a figure is drawn once they have loaded: fetched early, they are in the
    cache by then (about a round trip per file less before the first figure).
    """
    return ("for (const href of " + json.dumps(preload_css_urls(theme, used)) + ") { const link = "
            "document.createElement('link'); link.rel = 'preload'; link.as = 'style'; link.href = href; "
            "document.head.appendChild(link); }")


def _absolute(urls: list) -> list:
    """In an autoload script (absolute URLs: the page is another site's), Panel leaves es-module-shims'
    URL relative (``static/extensions/...``), so the course page's server was asked for it; give
    relative ``static/`` URLs the root of the absolute ones. A page of the app itself is unchanged."""
    texts = [u.url if isinstance(u, URL) else str(u) for u in urls]
    root = next((t[: t.index("static/")] for t in texts if "://" in t and "static/" in t), None)
    if root is None:
        return urls
    out = []
    for url, text in zip(urls, texts, strict=True):
        bare = text.lstrip("./")  # "static/…", "./static/…" or "../static/…" (Panel's rel_path)
        if "://" not in text and bare.startswith("static/"):
            url = URL(root + bare) if isinstance(url, URL) else root + bare
        out.append(url)
    return out


_installed = False


def install() -> None:
    """Leave the unused bundles out of every page and autoload script; start ``precompress``. Idempotent.

    Wraps ``panel.io.server.bundle_resources``, which Panel's page (``server_html_page_for_session``)
    and autoload script (``autoload_js_script``) both call for their list of scripts.
    """
    global _installed
    if _installed:
        return
    from panel.io import server as panel_server
    from panel.io.resources import LOCAL_DIST, patch_model_css

    original = panel_server.bundle_resources

    @functools.wraps(original)
    def light_bundle(*args, **kwargs):
        # Panel calls bundle_resources(roots, resources, ...): the page's roots tell which stylesheets it uses.
        return _lighter(original(*args, **kwargs), (args[0] if args else kwargs.get("roots")) or ())

    panel_server.bundle_resources = light_bundle

    # A view drawn into another site's page (bokeh.embed.server_document -> autoload.js): Panel
    # gives its models' stylesheets, and those of models added later, cdn.holoviz.org addresses
    # (it sets the document's local dist_url only when it renders a page of its own). Point them at
    # this server instead, as the page renderer does.
    autoload = panel_server.autoload_js_script

    @functools.wraps(autoload)
    def local_autoload(doc, resources, *args, **kwargs):
        root = str(getattr(resources, "root_url", "") or "")
        if "://" in root:
            dist_url = root.rstrip("/") + "/" + LOCAL_DIST
            doc._template_variables["dist_url"] = dist_url
            for model in doc.roots:
                patch_model_css(model, dist_url=dist_url)
        return autoload(doc, resources, *args, **kwargs)

    panel_server.autoload_js_script = local_autoload
    _installed = True
    precompress()


def server_options() -> dict[str, object]:
    """What ``pn.serve`` needs for this module: the transform (it replaces tornado's default list)."""
    return {"transforms": [CompressingTransform]}
