"""A page's scripts start loading while its session is still being built.

Panel's page handler (``panel.io.server.DocHandler.get``) builds the whole session (runs the
page's Python, ~0.3 s for ``/``) and only then renders and sends the HTML. The browser meanwhile
waits with nothing to do, and once the HTML has come it fetches, parses and runs ~2.5 MB of
BokehJS and Panel (another ~0.4 s) before it opens the websocket. The two can overlap: the start
of every page, up to and including its bundles' ``<script src>`` tags, is the same for all
sessions of a server (it depends on the bundles' versions and the route's depth only), so
``EarlyHeadDocHandler`` sends that start at once, flushes it, builds the session, and then sends
the rest of the rendered page with that start taken out.

The server is one event loop: while it builds the session it serves nothing else, so a browser
without the bundles in its cache would get them only after the build, and gain nothing. So the
handler first waits until that page's bundles have been sent (the requests that name the page as
their ``Referer``), at most ``BUNDLE_WAIT_S``; a browser that has them cached asks for nothing and
runs them during that wait. Measured in docs/performance.md ("The page's start goes first").

The start is learned from the first page the server renders at each depth of route (so the first
request is served as stock Panel does), and a page whose start differs is still sent whole after it
(never lost, at worst a bundle listed twice; logged). A page that cannot be built after the start
went out gets a short error page in the same response (the status line has left already).

The handler also puts the page's own title into its ``<title>`` (``components.address``); Panel
would write "Panel Application" there.

nginx passes the early part on at once because the response says ``X-Accel-Buffering: no``, and
it tells the app (``X-Bundles-Elsewhere``) that it answers the bundles itself, from its cache, so
the page need not wait for them. Only browsers wait (``Sec-Fetch-Dest: document`` or ``iframe``).
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import panel as pn
from bokeh.server import urls as bokeh_urls
from panel.io import server as panel_server
from tornado.web import StaticFileHandler

from app.fastsync import replace_app_route
from app.model.strings import TABLES, text
from components.address import PAGE_TITLE_VARIABLE

log = logging.getLogger("app")

#: The page's opening (doctype, <html>, <head>, charset) and the block of bundle scripts after it.
_OPENING = re.compile(r"\A<!DOCTYPE html>\s*<html[^>]*>\s*<head>\s*<meta charset=\"utf-8\">\s*", re.IGNORECASE)
_BUNDLES = re.compile(r"(?:<script type=\"esms-options\">[^<]*</script>\s*)?"
                      r"(?:<script type=\"text/javascript\" src=\"[^\"<>]+\"></script>\s*)+")


@dataclass(frozen=True)
class PageStart:
    """What every page at one route depth begins with: its opening and its bundle scripts."""

    opening: str
    bundles: str
    sources: tuple[str, ...] = field(default=())

    def bundle_paths(self, page_path: str) -> frozenset[str]:
        """The absolute paths (no query) of the bundles, for a page at ``page_path``."""
        return frozenset(urlsplit(urljoin(page_path, source)).path for source in self.sources)

    @property
    def early(self) -> str:
        """The part sent before the session exists."""
        return self.opening + self.bundles

    def rest_of(self, page: str) -> str | None:
        """``page`` without its start, or None when ``page`` does not begin that way."""
        if not page.startswith(self.opening) or page.count(self.bundles) != 1:
            return None
        return page[len(self.opening):].replace(self.bundles, "", 1)


def page_start(page: str) -> PageStart | None:
    """The start of a rendered Panel page, or None when it does not have the expected shape."""
    opening = _OPENING.match(page)
    if opening is None:
        return None
    bundles = _BUNDLES.search(page, opening.end())
    if bundles is None or "<body" in page[opening.end():bundles.start()]:
        return None
    sources = tuple(re.findall(r'src="([^"]+)"', bundles.group(0)))
    return PageStart(opening.group(0), bundles.group(0), sources)


#: Learned starts, by route depth (the bundles' URLs are relative to the page).
_STARTS: dict[int, PageStart] = {}

#: The rest of a page whose session could not be built after its start went out (its language is
#: not known then: both).
ERROR_PAGE = (f"<title>{html.escape(text('es', 'page_title'))}</title></head><body>"
              + "".join(f'<p lang="{lang}">{html.escape(text(lang, "page_build_failed"))}</p>' for lang in TABLES)
              + "</body></html>")


#: How long a page's build waits at most for its bundles to be sent (s). Browsers ask for them
#: ~30-120 ms after the start arrives (measured on loopback); one that has them cached never asks.
BUNDLE_WAIT_S = 0.15


class _BundleWait:
    """The bundles one page still waits for, and an event set when none is left."""

    def __init__(self, paths: frozenset[str]) -> None:
        self.missing = set(paths)
        self.done = asyncio.Event()

    def sent(self, path: str) -> None:
        self.missing.discard(path)
        if not self.missing:
            self.done.set()


#: A proxy in front that serves the bundles itself sets this request header (deploy/nginx*.conf).
BUNDLES_ELSEWHERE_HEADER = "X-Bundles-Elsewhere"

#: Pages waiting for their bundles, by the page's path and query (what their ``Referer`` names).
_WAITING: dict[str, list[_BundleWait]] = {}


def _page_key(path: str, query: str) -> str:
    return f"{path}?{query}"


def note_static_sent(handler: StaticFileHandler) -> None:
    """Tell a page waiting for its bundles that ``handler`` has sent one (its ``on_finish``)."""
    referer = handler.request.headers.get("Referer")
    if not referer or not _WAITING:
        return
    parts = urlsplit(referer)
    for wait in _WAITING.get(_page_key(parts.path, parts.query), ()):
        wait.sent(handler.request.path)


async def bundles_sent(page_path: str, query: str, paths: frozenset[str], timeout: float | None = None) -> bool:
    """Wait until a page's ``paths`` have been sent to a client that names the page, at most
    ``timeout`` seconds (``BUNDLE_WAIT_S``); whether they all were."""
    timeout = BUNDLE_WAIT_S if timeout is None else timeout
    wait = _BundleWait(paths)
    key = _page_key(page_path, query)
    _WAITING.setdefault(key, []).append(wait)
    try:
        await asyncio.wait_for(wait.done.wait(), timeout)
        return True
    except TimeoutError:
        return False
    finally:
        waits = _WAITING[key]
        waits.remove(wait)
        if not waits:
            del _WAITING[key]


def _depth(path: str) -> int:
    return path.count("/")


def _plain_request() -> bool:
    # Authentication and authorization may answer with a redirect or an error page of their own.
    config = pn.config
    return not (config.authorize_callback or config.oauth_provider or config.basic_auth)


class EarlyHeadDocHandler(panel_server.DocHandler):
    """Panel's page handler, sending the page's start before it builds the session."""

    _start: PageStart | None = None

    async def get(self, *args, **kwargs):
        start = _STARTS.get(_depth(self.request.path))
        prefix = self.application.prefix
        if start is None or not _plain_request() or (prefix and self.request.path == prefix):
            self._start = None
            return await super().get(*args, **kwargs)
        self._start = start
        self.set_header("Content-Type", "text/html")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Accel-Buffering", "no")
        self.write(start.early)
        self.flush()
        if self._fetches_bundles_here():
            await bundles_sent(self.request.path, self.request.query, start.bundle_paths(self.request.path))
        try:
            await super().get(*args, **kwargs)
        except Exception:
            log.exception("could not build the page %s after its start was sent", self.request.path)
            if not self._finished:
                super().write(ERROR_PAGE)

    async def get_session(self):
        session = await super().get_session()
        # Panel gives every document the title of pn.serve after the page is built; the page's own
        # title (components.address) goes into the HTML instead.
        title = session.document.template_variables.get(PAGE_TITLE_VARIABLE)
        if title and session.document.title != title:
            await session.with_document_locked(setattr, session.document, "title", title)
        return session

    def _fetches_bundles_here(self) -> bool:
        # A browser loading a page or a frame says so (Sec-Fetch-Dest); scripts, tests and crawlers
        # fetch no bundles. Our nginx answers the bundles from its own cache and says so.
        headers = self.request.headers
        return (headers.get("Sec-Fetch-Dest") in ("document", "iframe")
                and BUNDLES_ELSEWHERE_HEADER not in headers)

    def write(self, chunk) -> None:
        if isinstance(chunk, str) and chunk.lstrip().startswith("<!DOCTYPE"):
            if self._start is None:
                learned = page_start(chunk)
                if learned is not None:
                    _STARTS.setdefault(_depth(self.request.path), learned)
            elif self._headers_written:
                rest = self._start.rest_of(chunk)
                if rest is None:
                    log.warning("the page %s does not begin like the start sent early; sent whole after it",
                                self.request.path)
                    rest = chunk
                chunk = rest
        super().write(chunk)


_STOCK_ON_FINISH = StaticFileHandler.on_finish


def _on_static_finish(self: StaticFileHandler) -> None:
    # Tornado calls on_finish after the handler's last flush: the file's bytes are with the kernel.
    note_static_sent(self)


def installed() -> bool:
    """Whether the page route of servers started from now on uses ``EarlyHeadDocHandler``."""
    return (any(entry[1] is EarlyHeadDocHandler for entry in bokeh_urls.per_app_patterns)
            and StaticFileHandler.on_finish is _on_static_finish)


def install() -> None:
    """Serve pages with ``EarlyHeadDocHandler`` (before ``pn.serve``; idempotent)."""
    if StaticFileHandler.on_finish not in (_STOCK_ON_FINISH, _on_static_finish):
        raise RuntimeError("tornado's StaticFileHandler.on_finish is not stock; check app/earlyhead.py")
    StaticFileHandler.on_finish = _on_static_finish
    replace_app_route(r"/?", panel_server.DocHandler, EarlyHeadDocHandler)
