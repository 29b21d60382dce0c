"""The room box: start a room, share its link and QR code, follow a teacher, step off and back on.

One small box in the top bar of every page but an embed (``app.extras.TOP_TOOLS``; in presentation
mode the slim bar): a "Start a room" button while idle, growing in place while a room runs. Its
Bokeh models, for tests: ``room_start`` (start a room), ``room_link`` (its
``text`` is the join link, ``…?follow=ROOM``; its large QR screen shows ``code`` too, big, and where to type
it), ``room_detach`` and ``room_follow`` (a follower's two buttons), ``room_end``, on ``/`` ``room_join`` (a
box for a room's code and a Join button) and the container ``room_box`` (its ``message`` says what the page
is doing).

Who drives: the session that started the room, or a later page of the same
browser tab that proves it holds the room's secret (the secret goes to the
teacher's tab once, into ``sessionStorage``, and comes back as ``claim`` when
the teacher opens another page). A follower's own changes stay its own; a
claim with a wrong secret is refused, logged and said on the page.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import logging
import re
import time
from collections.abc import Callable
from typing import ClassVar
from urllib.parse import urlencode

import panel as pn
import param
from panel.custom import Children
from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

from app.model.routes import page_paths
from app.model.state import URL_PARAMETERS, ExplorerState, parse_query, room_code
from app.model.strings import text
from components import roombus as rooms
from components.address import script_embedded
from components.plainjs import FIND_BY_ID_JS, PlainJSComponent
from components.widgets import one_message

log = logging.getLogger("components.roombus")

#: Values of a teacher's state that a room does not carry: each follower keeps its own language.
NOT_SENT = ("lang", "follow")
#: How a page is shown, each reader's own: a follower of a presenting teacher reads the teacher's slide as a
#: section of its own page, at its own size and in its own theme (``RoomBox.where`` sends the slide as a place).
FOLLOWER_KEEPS = ("present", "slide", "theme", "controls")
#: A section id as the lesson writes them (a slug); anything else is not scrolled to.
SECTION_ID = re.compile(r"[a-z0-9_-]{1,40}")
#: Sizes first: the bounds of pair, pos and k depend on them.
SIZES = ("d_model", "T", "base")

#: The modes in which ``/`` offers the box for a room's code: not while the page drives or follows a room, nor when
#: rooms are off (the box then says why).
JOIN_SHOWN = ("idle", "ended", "closed", "missing")

#: Session ids (hashed) built by this process: the deployment test checks that none is built twice.
SESSIONS_BUILT: list[str] = []

#: In the page's flow (its top bar): one button while idle; while a room runs, a framed group that grows in
#: place (the bar wraps it onto a line of its own when the line is full), so it never lies over the page.
_BOX_CSS = """
:host { display: block; max-width: 100%; }
.pe-room { box-sizing: border-box; max-width: 100%; color: var(--pe-t-ink, #222222); font-size: 1rem;
           display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0; }
.pe-room:not([data-mode="idle"]):not([data-mode="ended"]) {
           padding: 0.25rem 0.6rem; border: 2px solid var(--pe-t-muted, #555555); border-radius: 8px; }
.pe-room p { margin: 0 0.3rem; flex: 0 1 auto; }
.pe-room p:empty { display: none; }
/* In presentation mode (root type doubled) the box stays at reading size: the slide is what the room looks at. */
:host-context(html[data-pe-present="1"]) .pe-room { font-size: 0.55rem; }
"""

_BUTTON_CSS = """
button { font: inherit; font-size: 1.05rem; padding: 0.35em 0.9em; min-height: 40px; border-radius: 6px;
         cursor: pointer;
         border: 2px solid var(--pe-t-accent, #007A5A); background: var(--pe-t-surface, #ffffff);
         color: var(--pe-t-accent, #007A5A); margin: 0 0.3rem; }
button:hover { background: var(--pe-t-accent, #007A5A); color: var(--pe-t-surface, #ffffff); }
button:focus-visible, a:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
[hidden] { display: none !important; }
:host-context(html[data-pe-present="1"]) button { font-size: 0.55rem; min-height: 0; }
"""


class RoomButton(PlainJSComponent):
    """A text button that counts its clicks (Python watches ``clicks``)."""

    label = param.String(default="")
    clicks = param.Integer(default=0, bounds=(0, None))
    shown = param.Boolean(default=True)

    _esm = """
    export function render({ model }) {
      const button = document.createElement("button");
      button.type = "button";
      const show = () => { button.textContent = model.label; button.hidden = !model.shown; };
      button.addEventListener("click", () => { model.clicks = model.clicks + 1; });
      model.on(["label", "shown"], show);
      show();
      return button;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_BUTTON_CSS]


class RoomLink(PlainJSComponent):
    """The join link, and a button that shows its QR code large (``large`` opens it from Python too)."""

    text = param.String(default="", doc="The join link: the teacher's page with ?follow=ROOM.")
    qr = param.String(default="", doc="Address of the link's QR code (an SVG the app serves).")
    link_label = param.String(default="")
    qr_show = param.String(default="")
    qr_hide = param.String(default="")
    qr_alt = param.String(default="")
    large = param.Boolean(default=False, doc="Whether the QR code is shown large (presentation).")
    code = param.String(default="", doc="The room's id, shown large beside the QR code, to be typed on /.")
    code_label = param.String(default="")
    where = param.List(default=[], item_type=str, doc=(
        "Where to type the code, as [text before, the address, text after]: the address is set apart."))

    _esm = """
    export function render({ model }) {
      const wrap = document.createElement("span");
      wrap.className = "pe-room-link";
      const link = document.createElement("a");
      const hidden = document.createElement("span");
      hidden.className = "pe-room-hidden";
      const shown = document.createElement("span");
      link.append(hidden, shown);
      const open = document.createElement("button");
      open.type = "button";
      const dialog = document.createElement("div");
      dialog.className = "pe-room-qr";
      dialog.setAttribute("role", "dialog");
      dialog.setAttribute("aria-modal", "true");
      const image = document.createElement("img");
      // Beside the QR code (below it on a tall screen): the code, big enough for the back of a lecture hall, and
      // where to type it, for a student without a camera.
      const info = document.createElement("div");
      info.className = "pe-room-qr-info";
      const codeLabel = document.createElement("p");
      codeLabel.className = "pe-room-code-label";
      const code = document.createElement("p");
      code.className = "pe-room-code";
      const where = document.createElement("p");
      const [before, address, after] = [document.createElement("span"), document.createElement("strong"),
                                        document.createElement("span")];
      where.append(before, address, after);
      const caption = document.createElement("p");
      caption.className = "pe-room-qr-link";
      const close = document.createElement("button");
      close.type = "button";
      info.append(codeLabel, code, where, caption, close);
      dialog.append(image, info);
      wrap.append(link, open, dialog);
      const show = () => {
        wrap.hidden = !model.text;
        link.href = model.text || "#";
        shown.textContent = model.text.replace(/^https?:[/][/]/, "");
        // The visible address stays in the accessible name (WCAG 2.5.3), after what the link is for.
        hidden.textContent = model.link_label + ": ";
        open.textContent = model.qr_show;
        close.textContent = model.qr_hide;
        image.alt = model.qr_alt;
        dialog.setAttribute("aria-label", model.qr_alt);
        caption.textContent = model.text;
        codeLabel.textContent = model.code_label;
        code.textContent = model.code;
        codeLabel.hidden = code.hidden = !model.code;
        [before.textContent, address.textContent, after.textContent] = [0, 1, 2].map((i) => model.where[i] || "");
        where.hidden = model.where.length !== 3;
        dialog.hidden = !(model.large && model.text);
        if (!dialog.hidden && model.qr && image.getAttribute("src") !== model.qr) image.src = model.qr;
      };
      open.addEventListener("click", () => { model.large = true; close.focus({ preventScroll: true }); });
      close.addEventListener("click", () => { model.large = false; open.focus({ preventScroll: true }); });
      dialog.addEventListener("keydown", (event) => { if (event.key === "Escape") model.large = false; });
      model.on(["text", "qr", "large", "link_label", "qr_show", "qr_hide", "qr_alt", "code", "code_label", "where"],
               show);
      show();
      return wrap;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_BUTTON_CSS + """
    .pe-room-link { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.5rem; }
    .pe-room-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
                      white-space: nowrap; }
    :host-context(html[data-pe-present="1"]) .pe-room-link a { font-size: 0.55rem; }
    .pe-room-link a { color: var(--pe-t-accent, #007A5A); max-width: 15rem; overflow: hidden; text-overflow: ellipsis;
                      white-space: nowrap; display: inline-block; }
    .pe-room-qr { position: fixed; inset: 0; z-index: 1000; background: var(--pe-t-surface, #ffffff);
                  color: var(--pe-t-ink, #222222); display: flex; flex-wrap: wrap; align-items: center;
                  align-content: center; justify-content: center; gap: 1rem 3rem; padding: 1rem;
                  box-sizing: border-box; overflow: auto; }
    .pe-room-qr img { width: min(78vh, 55vw); height: min(78vh, 55vw); image-rendering: pixelated; }
    /* A screen taller than wide (a phone, a portrait monitor): the code goes under the QR code. */
    @media (max-aspect-ratio: 1/1) {
      .pe-room-qr img { width: min(55vh, 90vw); height: min(55vh, 90vw); }
    }
    .pe-room-qr-info { flex: 1 1 18rem; max-width: 40rem; min-width: 0; display: flex; flex-direction: column;
                       align-items: center; gap: 1rem; text-align: center; }
    .pe-room-qr p { font-size: 1.6rem; margin: 0; text-align: center; overflow-wrap: anywhere; }
    .pe-room-qr .pe-room-qr-link { word-break: break-all; }
    .pe-room-qr .pe-room-code-label { font-size: 1.6rem; font-weight: 600; }
    /* Read from the back of a lecture hall: large, bold, monospaced and spaced, so no two characters touch. */
    .pe-room-qr .pe-room-code { font-family: "DejaVu Sans Mono", Menlo, Consolas, ui-monospace, monospace;
                                font-size: clamp(3rem, 7vw, 8rem); font-weight: 700; line-height: 1.1;
                                letter-spacing: 0.25em; margin-right: -0.25em; overflow-wrap: normal; }
    """]


class RoomJoin(PlainJSComponent):
    """On ``/``: a labelled box for a room's code and a Join button (Enter sends it too).

    The browser sends what was typed (``typed``, then ``asks`` + 1); the server reads it (``RoomBox.join_by_code``)
    and answers with ``message`` (shown as text, never as HTML) or ``go``, the address of the room's page, which the
    browser then opens.
    """

    label = param.String(default="")
    button = param.String(default="")
    typed = param.String(default="", doc="What the reader typed (the server normalises and checks it).")
    asks = param.Integer(default=0, bounds=(0, None), doc="How many times the reader has sent a code.")
    message = param.String(default="")
    invalid = param.Boolean(default=False, doc="Whether the last code sent was refused (aria-invalid).")
    go = param.String(default="", doc="The room's page, ``/path?follow=ROOM&lang=…``: the browser opens it.")
    shown = param.Boolean(default=True)

    _esm = """
    export function render({ model }) {
      const form = document.createElement("form");
      form.className = "pe-room-join";
      form.noValidate = true;
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.id = "pe-room-join-code";
      label.htmlFor = input.id;
      input.type = "text";
      input.maxLength = 24;
      input.size = 8;
      input.autocomplete = "off";
      input.spellcheck = false;
      input.setAttribute("autocapitalize", "none");
      input.setAttribute("autocorrect", "off");
      input.setAttribute("enterkeyhint", "go");
      const button = document.createElement("button");
      button.type = "submit";
      const message = document.createElement("p");
      message.id = "pe-room-join-message";
      message.setAttribute("role", "status");
      input.setAttribute("aria-describedby", message.id);
      form.append(label, input, button, message);
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        model.typed = input.value.slice(0, 64);
        model.asks = model.asks + 1;
      });
      const show = () => {
        form.hidden = !model.shown;
        label.textContent = model.label;
        button.textContent = model.button;
        message.textContent = model.message;
        input.setAttribute("aria-invalid", model.invalid ? "true" : "false");
      };
      const go = () => {
        if (!model.go) return;
        const url = new URL(model.go, window.location.origin);
        if (url.origin === window.location.origin) window.location.assign(url.href);
      };
      model.on(["label", "button", "message", "invalid", "shown"], show);
      model.on("go", go);
      show();
      return form;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_BUTTON_CSS + """
    .pe-room-join { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.4rem; margin: 0 0.3rem; }
    .pe-room-join label { font-size: 1rem; }
    /* 16 px at least: a phone does not zoom into the box; monospaced and spaced like the code on the QR screen. */
    .pe-room-join input { font: inherit; font-size: max(1rem, 16px); width: 7.5em; min-height: 40px;
                          box-sizing: border-box; padding: 0.2em 0.5em; border-radius: 6px;
                          border: 2px solid var(--pe-t-muted, #555555); background: var(--pe-t-surface, #ffffff);
                          color: var(--pe-t-ink, #222222); letter-spacing: 0.12em;
                          font-family: "DejaVu Sans Mono", Menlo, Consolas, ui-monospace, monospace; }
    .pe-room-join input:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
    .pe-room-join button { margin: 0; }
    .pe-room-join p { flex: 1 1 100%; margin: 0; font-size: 1rem; }
    .pe-room-join p:empty { display: none; }
    """]


class RoomPanel(PlainJSComponent):
    """The box holding the room's controls (in the page's top bar); the browser side of following and claiming.

    To the browser: ``message``, ``mode``, ``room``, ``secret`` (to the teacher's tab, once) and
    ``target`` (``path#section`` a follower should show). From it: ``location`` (``path#section``
    the page shows) and ``claim`` (``room:secret`` from the tab's storage, on a teacher's next page).
    """

    objects = Children()
    message = param.String(default="")
    region = param.String(default="")
    mode = param.String(default="idle")
    room = param.String(default="")
    secret = param.String(default="")
    target = param.String(default="")
    location = param.String(default="")
    claim = param.String(default="")

    _esm = FIND_BY_ID_JS + """
    const KEY = "pe-room";
    const headings = (root, out) => {
      for (const el of root.querySelectorAll("*")) {
        if (el.matches("h2.pe-section[id]")) out.push(el);
        if (el.shadowRoot) headings(el.shadowRoot, out);
      }
      return out;
    };

    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-room";
      box.setAttribute("role", "region");
      const message = document.createElement("p");
      message.setAttribute("aria-live", "polite");
      box.append(message, ...model.get_child("objects"));
      const store = () => {
        if (model.mode === "teacher" && model.secret) {
          sessionStorage.setItem(KEY, JSON.stringify({ room: model.room, secret: model.secret }));
        } else if (model.mode === "ended") {
          sessionStorage.removeItem(KEY);  // closed by the teacher (a new page starts idle: it may still claim)
        }
      };
      // The section headings of the page (a walk of every shadow root), found again at most every 2 s (the
      // page's later parts bring more): a teacher's report costs a few rectangles, not a walk of the page.
      let heads = [], walked = -Infinity;
      const sections = () => {
        if (performance.now() - walked > 2000 || !heads.every((el) => el.isConnected)) {
          heads = headings(document, []);
          walked = performance.now();
        }
        return heads;
      };
      const currentSection = () => {
        let current = "";
        for (const el of sections()) {
          if (el.getBoundingClientRect().top < window.innerHeight * 0.4) current = el.id;
        }
        return current;
      };
      let reported = "";
      const report = () => {
        const where = window.location.pathname + "#" + currentSection();
        if (where !== reported) { reported = where; model.location = where; }
      };
      let reportTimer = 0;
      const reportSoon = () => {
        if (model.mode !== "teacher") return;
        clearTimeout(reportTimer);
        reportTimer = setTimeout(report, 250);
      };
      // A follower's page keeps the teacher's heading at the top while the page around it still changes
      // (the lesson's sections arrive as the reader nears them, each changing the height above it), for
      // up to 30 s after the teacher's move, until the reader scrolls, clicks or types.
      let keeping = 0, keepToken = -1, keepUntil = 0, keepId = "", keepEl = null;
      for (const type of ["wheel", "touchstart", "mousedown", "keydown"]) {
        window.addEventListener(type, () => { keeping += 1; }, { passive: true });
      }
      const keep = () => {
        if (keepToken !== keeping || performance.now() > keepUntil || !keepId) return;
        if (!keepEl || !keepEl.isConnected || keepEl.id !== keepId) keepEl = find(document, keepId);
        if (!keepEl) { setTimeout(keep, 150); return; }  // not drawn yet
        if (Math.abs(keepEl.getBoundingClientRect().top) > 2) keepEl.scrollIntoView({ block: "start" });
      };
      let scrolled = "";
      const follow = () => {
        if (model.mode !== "following" || !model.target) return;
        const [path, section] = model.target.split("#");
        if (path && path !== window.location.pathname) {
          const url = new URL(path, window.location.origin);
          if (url.origin !== window.location.origin) return;
          url.searchParams.set("follow", model.room);
          url.searchParams.set("lang", document.documentElement.lang || "es");
          url.hash = section || "";
          window.location.assign(url.href);
          return;
        }
        if (section && section !== scrolled) {
          scrolled = section;
          keepToken = keeping;
          keepUntil = performance.now() + 30000;
          keepId = section;
          keep();
        }
      };
      // The page's height changes as its later parts arrive: a follower keeps its heading, a teacher says again
      // which section is at the top of the screen.
      const resized = new ResizeObserver(() => {
        if (model.mode === "following") keep();
        reportSoon();
      });
      // The page's column (in the light DOM, as tall as the page; the body keeps the viewport's height).
      const watchPage = (tries) => {
        const page = document.querySelector(".pe-page");
        if (page) resized.observe(page);
        else if (tries > 0) setTimeout(() => watchPage(tries - 1), 200);
      };
      watchPage(50);
      let wasTeacher = false;
      const show = () => {
        message.textContent = model.message;
        box.dataset.mode = model.mode;
        box.setAttribute("aria-label", model.region);
        store();
        if (model.mode !== "following") scrolled = "";
        // A page that has just started or taken the room says where it is now (it said nothing while idle).
        if (model.mode === "teacher" && !wasTeacher) report();
        wasTeacher = model.mode === "teacher";
        follow();
      };
      window.addEventListener("scroll", reportSoon, { passive: true });
      window.addEventListener("hashchange", report);
      model.on(["message", "mode", "secret", "target", "region"], show);
      show();
      report();
      if (model.mode === "idle") {
        try {
          const held = JSON.parse(sessionStorage.getItem(KEY) || "null");
          if (held && held.room && held.secret) model.claim = held.room + ":" + held.secret;
        } catch (e) { sessionStorage.removeItem(KEY); }
      }
      return box;
    }
    """

    _stylesheets: ClassVar[list[str]] = [_BOX_CSS]


def public_origin(headers: dict) -> str:
    """``scheme://host[:port]`` the browser used, behind a proxy too (``X-Forwarded-Proto``/``-Host``)."""
    def first(name: str) -> str:
        value = headers.get(name) or headers.get(name.lower()) or ""
        return str(value).split(",")[0].strip()

    scheme = first("X-Forwarded-Proto") or "http"
    host = first("X-Forwarded-Host") or first("Host") or "localhost"
    scheme = scheme if scheme in ("http", "https") else "http"
    host = host if re.fullmatch(r"[A-Za-z0-9.\-:\[\]]{1,255}", host) else "localhost"
    return f"{scheme}://{host}"


class RoomBox(pn.viewable.Viewer):
    """One session's room controls and its part in a room: none, teacher or follower.

    Its calls to the bus answer at once (the in-process bus) or later (Redis: coroutines on the server's loop,
    ``_call``); what follows an answer runs in the session's document. Redis going down and coming back is
    said on the page (``_on_bus``); the teacher's page then re-creates its room if Redis lost it.
    """

    def __init__(self, state: ExplorerState, kind: str, room_bus: rooms.Bus | None = None, **params):
        super().__init__(**params)
        self.state = state
        self.kind = kind
        self.lang = lang = state.lang
        self.bus = room_bus or rooms.bus()  # a bus of its own: tests playing several processes
        self.room = ""
        self.secret = ""
        self.seq = 0
        self.driver = 0  # this page's driver number in its room (rooms.Bus.drive)
        self.follower: rooms.Follower | None = None
        self.applied_seq = -1
        self.mode = "idle"
        self._last_publish = 0.0
        self._publish_scheduled = False
        self._publishing = False  # one publication in flight at a time: a later one waits and sends the newest
        self._publish_again = False
        self._ended = False
        self._pending_claim = ""  # a claim Redis could not check (down): checked again when it is back
        #: Called (no arguments, in the session) when this teacher's page has re-created its room in a Redis that
        #: came back empty: what else lived beside the room there (its poll) is gone too.
        self.on_recreated: list[Callable[[], None]] = []
        self.path = "/"
        self.section = ""
        self.start = RoomButton(label=text(lang, "room_start"), name="room_start", margin=0)
        self.link = RoomLink(link_label="", qr_show=text(lang, "room_qr_show"), qr_hide=text(lang, "room_qr_hide"),
                             name="room_link", margin=0)
        self.end = RoomButton(label=text(lang, "room_end"), name="room_end", shown=False, margin=0)
        self.detach = RoomButton(label=text(lang, "room_detach"), name="room_detach", shown=False, margin=0)
        self.follow = RoomButton(label=text(lang, "room_follow"), name="room_follow", shown=False, margin=0)
        # On the lesson's page (``/``, not while presenting it): a box where a student types a room's code.
        self.join = (RoomJoin(label=text(lang, "room_code"), button=text(lang, "room_join"), shown=False,
                              name="room_join", margin=0)
                     if kind == "lesson" and not state.present else None)
        parts = [self.start, self.link, self.end, self.detach, self.follow]
        self.panel = RoomPanel(objects=[*parts, self.join] if self.join is not None else parts,
                               region=text(lang, "room_region"), name="room_box",
                               margin=(5, 5))  # its buttons keep 0.3rem each side: level with the bar's other items
        self.start.param.watch(lambda _e: self.start_room(), "clicks")
        self.end.param.watch(lambda _e: self.end_room(), "clicks")
        self.detach.param.watch(lambda _e: self.detach_from_room(), "clicks")
        self.follow.param.watch(lambda _e: self.follow_again(), "clicks")
        if self.join is not None:
            self.join.param.watch(lambda _e: self.join_by_code(self.join.typed), "asks")
        self.panel.param.watch(self._on_claim, "claim")
        self.panel.param.watch(self._on_location, "location")
        state.param.watch(self._on_state, [name for name in URL_PARAMETERS if name not in NOT_SENT])
        doc = pn.state.curdoc
        self.doc = doc
        if doc is not None and doc.session_context is not None:
            SESSIONS_BUILT.append(hashlib.sha256(doc.session_context.id.encode()).hexdigest()[:16])
            pn.state.on_session_destroyed(lambda _context: self._session_ended())
        if self.bus is None:
            self._set_mode("unavailable", text(lang, "room_needs_redis"))
            return
        self.bus.watch(self._on_bus)
        if state.follow:
            self._join(state.follow)
        else:
            self._set_mode("idle", "")

    def __panel__(self) -> pn.viewable.Viewable:
        return self.panel

    # --- the bus's answers -------------------------------------------------------------------------

    def _call(self, method, *args, then=None, failed=None) -> None:
        """``method(*args)`` on the bus, then ``then(answer)``, or ``failed()`` if Redis does not answer.

        The in-process bus answers at once; Redis's answer comes in a task on the loop (which never waits
        for it) and is handled in this session's document."""
        try:
            answer = method(*args)
        except rooms.RoomsDown:
            if failed is not None:
                failed()
            return
        if not inspect.isawaitable(answer):
            if then is not None:
                then(answer)
            return

        async def wait() -> None:
            try:
                value = await answer
            except rooms.RoomsDown:
                if failed is not None:
                    self._in_session(failed)
                return
            except Exception as error:  # a bug must not end silently in a task nobody awaits
                log.warning("room %s: %s: %s", self.room, type(error).__name__, str(error)[:200])
                if failed is not None:
                    self._in_session(failed)
                return
            if then is not None:
                self._in_session(then, value)

        asyncio.get_running_loop().create_task(wait())

    def _in_session(self, callback, *args) -> None:
        """Run ``callback(*args)`` in this session's document (its lock held, Panel's document current), once the
        browser has drawn the page (Panel's ``document_ready``)."""
        doc = self.doc
        if self._ended:
            return
        if doc is None or doc.session_context is None:
            callback(*args)  # no server session (a test): at once
            return

        def run() -> None:
            with set_curdoc(doc):
                if pn.state.loaded:
                    callback(*args)
                else:
                    # The browser may hold the document already (pulled) and still be drawing it: Panel drops
                    # the changes made inside its hold until the browser's document_ready (it counts on
                    # serializing the whole document later), so an answer landing then never reached the page.
                    pn.state.onload(functools.partial(callback, *args))

        doc.add_next_tick_callback(run)

    def _on_bus(self, up: bool) -> None:
        """Redis went down or came back (called on the loop, for every page in a room)."""
        self._in_session(self._bus_changed, up)

    def _bus_changed(self, up: bool) -> None:
        if self.mode == "teacher":
            if not up:
                self.panel.message = text(self.lang, "room_down_teacher", room=self.room)
                return
            payload = rooms.encode_state(*self.where(), self._values(), self.seq)
            self._call(self.bus.restore, self.room, rooms.secret_hash(self.secret), payload, self.driver,
                       then=self._restored, failed=lambda: None)
        elif self.mode == "following":
            if not up:
                self.panel.message = text(self.lang, "room_down_follower", room=self.room)
                return
            self.panel.message = text(self.lang, "room_back_follower", room=self.room)
            self._call(self.bus.latest, self.room, then=self._apply_payload, failed=lambda: None)
        elif self.mode == "waiting" and up:
            self._join(self.room)
        elif up and self._pending_claim:
            claim, self._pending_claim = self._pending_claim, ""
            self._check_claim(claim)

    def _restored(self, outcome: int) -> None:
        if self.mode != "teacher":
            return
        if outcome < 0:
            self._lose_room("room_taken")
            return
        self.panel.message = text(self.lang, "room_back_teacher", room=self.room)
        self.publish()  # what the followers missed while it was down
        if outcome > 0:
            log.warning("room %s: Redis had lost it; re-created by its teacher's page", self.room)
            for callback in list(self.on_recreated):
                callback()

    def _apply_payload(self, payload: str | None) -> None:
        state = rooms.decode_state(payload) if payload else None
        if state is not None:
            self.apply(state)

    # --- modes -----------------------------------------------------------------------------------

    def _set_mode(self, mode: str, message: str) -> None:
        self.mode = mode
        self.start.shown = mode in ("idle", "ended", "closed")
        self.end.shown = mode == "teacher"
        self.detach.shown = mode == "following"
        self.follow.shown = mode == "detached"
        if self.join is not None:
            self.join.shown = mode in JOIN_SHOWN
        self.panel.param.update(mode=mode, message=message, room=self.room)

    def start_room(self) -> None:
        """Start a room driven by this session (the start button)."""
        if self.bus is None or self.mode not in ("idle", "ended", "closed"):
            return
        self.close()
        self.mode = "starting"
        opener = rooms.create_room if self.bus.kind == "local" else rooms.open_room
        self._call(opener, self.bus, then=self._opened, failed=self._start_failed)

    def _start_failed(self) -> None:
        self._set_mode("idle", text(self.lang, "room_down_start"))

    def _opened(self, opened: tuple[str, str]) -> None:
        room, secret = opened
        self._call(self.bus.drive, room, then=lambda driver: self._drive(room, secret, driver),
                   failed=self._start_failed)

    def _drive(self, room: str, secret: str, driver: int) -> None:
        self.room, self.secret, self.driver = room, secret, driver
        self._become_teacher()
        self.panel.secret = self.secret  # to the teacher's tab only, for its next pages
        self.publish()

    def _become_teacher(self) -> None:
        origin = public_origin(dict(pn.state.headers or {}))
        path = self.path if self.path in page_paths() else "/"
        link = f"{origin}{path}?follow={self.room}"
        self.link.param.update(text=link, qr=f"/room_qr.svg?room={self.room}&path={path}",
                               link_label=text(self.lang, "room_link_label", room=self.room),
                               qr_alt=text(self.lang, "room_qr_alt", room=self.room),
                               code=self.room, code_label=text(self.lang, "room_code"),
                               where=typing_place(self.lang, origin))
        self._set_mode("teacher", text(self.lang, "room_teacher", room=self.room))

    def end_room(self) -> None:
        """Close the room for everyone: followers are told it is closed; the tab forgets the secret."""
        if self.mode == "teacher":
            self._call(self.bus.close, self.room, self.driver, failed=lambda: None)
        self.secret = ""
        self.link.param.update(text="", large=False)
        self.room = ""
        self._set_mode("ended", "")

    def join_by_code(self, typed: str) -> None:
        """A code typed on ``/``: open its room's page if the room is running; otherwise say why not, here."""
        if self.join is None or self.bus is None or self.mode not in JOIN_SHOWN:
            return
        code = room_code(typed)
        self.join.go = ""  # the same room twice (the reader came back) is opened twice
        if not code:
            self.join.param.update(message=text(self.lang, "room_join_invalid"), invalid=True)
            return
        self._call(self.bus.lookup, code, then=lambda found: self._code_looked_up(code, found),
                   failed=lambda: self.join.param.update(message=text(self.lang, "room_down_start"), invalid=False))

    def _code_looked_up(self, code: str, found: tuple[str, str | None]) -> None:
        status, latest = found
        if status != "open":
            key = "room_join_closed" if status == "closed" else "room_join_missing"
            self.join.param.update(message=text(self.lang, key, room=code), invalid=True)
            return
        self.join.param.update(message=text(self.lang, "room_joining", room=code), invalid=False,
                               go=room_page(code, self.lang, rooms.decode_state(latest) if latest else None))

    def _lose_room(self, key: str) -> None:
        room = self.room
        self.secret = ""
        self.link.param.update(text="", large=False)
        self._set_mode("ended", text(self.lang, key, room=room))
        self.room = ""

    def _join(self, room: str) -> None:
        self.room = room
        self._call(self.bus.lookup, room, then=self._joined, failed=self._join_failed)

    def _joined(self, found: tuple[str, str | None]) -> None:
        status, latest = found
        if status != "open":
            self._set_mode(status, text(self.lang, "room_closed" if status == "closed" else "room_missing",
                                        room=self.room))
            return
        self._subscribe()
        self._set_mode("following", text(self.lang, "room_following", room=self.room))
        self._apply_payload(latest)

    def _join_failed(self) -> None:
        # Tried again when Redis is back (_bus_changed).
        self._set_mode("waiting", text(self.lang, "room_down_join", room=self.room))

    def _subscribe(self) -> None:
        if self.follower is None and self.doc is not None:
            self.follower = rooms.Follower(self.room, self.doc, self.apply, self.bus)

    def detach_from_room(self) -> None:
        """"Explore on my own": stop applying the teacher's states; the sliders are the student's."""
        if self.mode != "following":
            return
        self.close()
        self._set_mode("detached", text(self.lang, "room_detached", room=self.room))

    def follow_again(self) -> None:
        """"Follow again": jump to the teacher's current state and keep following."""
        if self.mode != "detached":
            return
        self._join(self.room)

    def _session_ended(self) -> None:
        self._ended = True
        self.close()
        self.doc = None  # nothing of a reaped session's document stays reachable from its page's objects

    def close(self) -> None:
        """Stop following (the session ended or the student detached)."""
        if self.follower is not None:
            self.follower.close()
            self.follower = None

    # --- the teacher's side ------------------------------------------------------------------------

    def _on_claim(self, event: param.parameterized.Event) -> None:
        claim = str(event.new or "")
        room, _, _secret = claim.partition(":")
        if not claim or self.bus is None:
            return
        if self.mode == "teacher" or not rooms.valid_room_id(room):
            return
        self._check_claim(claim)

    def _check_claim(self, claim: str) -> None:
        room, _, secret = claim.partition(":")

        def checked(holds: bool) -> None:
            if self.mode == "teacher":
                return
            if not holds:
                log.warning("refused a claim to drive room %s: wrong secret", room)
                self.panel.message = text(self.lang, "room_refused", room=room)
                return
            self._call(self.bus.drive, room, then=lambda driver: self._take(room, secret, driver),
                       failed=lambda: setattr(self, "_pending_claim", claim))

        self._call(self.bus.check, room, secret, then=checked,
                   failed=lambda: setattr(self, "_pending_claim", claim))

    def _take(self, room: str, secret: str, driver: int) -> None:
        self.close()
        self.room, self.secret = room, secret
        self.driver = driver  # the teacher's earlier page, still a session for a while, stops driving
        self._become_teacher()
        self.publish()

    def _on_location(self, event: param.parameterized.Event) -> None:
        path, _, section = str(event.new or "").partition("#")
        self.path = path if path in page_paths() else self.path
        self.section = section if SECTION_ID.fullmatch(section) else ""
        if self.mode == "teacher":
            if self.link.text and not self.link.text.split("?")[0].endswith(self.path):
                self._become_teacher()  # the teacher's first report of the page: the link names it
            self._schedule_publish()

    def _on_state(self, *_events: param.parameterized.Event) -> None:
        if self.mode == "teacher":
            self._schedule_publish()

    def _schedule_publish(self) -> None:
        wait = rooms.PUBLISH_INTERVAL_S - (time.monotonic() - self._last_publish)
        loop = IOLoop.current(instance=False)
        if wait <= 0 or loop is None:
            self.publish()
        elif not self._publish_scheduled:
            # On the loop, not as the document's timeout callback: publishing reads the state and
            # touches no model, and a document callback added while Panel holds the document is lost.
            self._publish_scheduled = True
            loop.call_later(wait, self._publish_later)

    def _publish_later(self) -> None:
        self._publish_scheduled = False
        if self.mode == "teacher":
            self.publish()

    def _values(self) -> dict[str, str]:
        """The state a room sends: every URL value but the language and the follow; the lesson's sentence too."""
        values = {key: value for key, value in self.state.query().items() if key not in NOT_SENT}
        values.setdefault("sentence", "")  # the query leaves an empty sentence out: a follower must drop its own
        return values

    def publish(self) -> None:
        """Send this (teacher's) session's state to the room; only a session holding the secret gets here."""
        if self.mode != "teacher" or self.bus is None:
            return
        if self._publishing:
            self._publish_again = True  # sent, as the newest state, when the one in flight is answered
            return
        self._last_publish = time.monotonic()
        self.seq += 1
        self._publishing = True
        self._call(self.bus.publish, self.room, rooms.encode_state(*self.where(), self._values(), self.seq),
                   self.driver, then=self._published, failed=self._publish_failed)

    def _published(self, sent: bool) -> None:
        self._publishing = False
        if self.mode != "teacher":
            return
        if not sent:
            # A later page of the teacher (or a copy of this tab) has taken the room: this one stops driving.
            self._lose_room("room_taken")
        elif self._publish_again:
            self._publish_again = False
            self.publish()

    def _publish_failed(self) -> None:
        self._publishing = self._publish_again = False
        if self.mode == "teacher":  # sent again when Redis is back (_restored)
            self.panel.message = text(self.lang, "room_down_teacher", room=self.room)

    def where(self) -> tuple[str, str]:
        """The path and section a follower should show: this page's, or while presenting, the slide's.

        A slide of ``/`` or ``/explore`` is one of its sections (``/#shift``); a slide of a section's or a view's
        own page is that slide's own page (``/shift``), as the student's page is not in presentation mode.
        """
        slide = self.state.slide if self.state.present else ""
        if not slide:
            return self.path, self.section
        if self.kind in ("lesson", "explore"):
            return self.path, slide
        own = f"/{slide}"
        return (own, "") if own in page_paths() else (self.path, self.section)

    # --- the follower's side -----------------------------------------------------------------------

    def apply(self, published: dict) -> None:
        """Show a teacher's state: values clamped like any address's, the follower's language kept."""
        if self.mode != "following":
            return
        if published.get("closed"):
            self.close()
            self._set_mode("closed", text(self.lang, "room_closed", room=self.room))
            return
        values = teacher_values(tuple(published["values"].items()), self.lang)
        # Panel sends a change at once only when the document is its current one; otherwise it queues
        # every change as a callback of its own, one per state: the queue that coalescing must avoid.
        # One message (a hold) without the echoes Bokeh would hand Panel back at its end.
        with set_curdoc(self.doc), one_message():
            self._set_values({key: values[key] for key in SIZES if key in values})
            # Compared after the sizes: their bounds may have clamped the others to the teacher's values already.
            self._set_values({key: value for key, value in values.items() if key not in SIZES})
            path = published["path"] if published["path"] in page_paths() else ""
            section = published["section"] if SECTION_ID.fullmatch(published["section"]) else ""
            self.panel.target = f"{path}#{section}" if path else ""
        self.applied_seq = published["seq"]

    def _set_values(self, values: dict[str, object]) -> None:
        """Set those of ``values`` that differ from the state's, their watchers called once, together.

        Only what differs: a move changes one or two of the teacher's ~40 values. And not ``param.update``,
        which first copies every value of the state (to hand back for its context-manager form): a
        follower's move is paid once per follower.
        """
        state = self.state
        changed = [(key, value) for key, value in values.items() if getattr(state, key) != value]
        if changed:
            with param.parameterized.batch_call_watchers(state):
                for key, value in changed:
                    setattr(state, key, value)


@functools.lru_cache(maxsize=16)
def _teacher_values(published: tuple[tuple[str, str], ...], lang: str) -> tuple[tuple[str, object], ...]:
    values, _notices = parse_query(dict(published), default_lang=lang)
    for key in (*NOT_SENT, *FOLLOWER_KEEPS):
        values.pop(key, None)
    return tuple(values.items())


def teacher_values(published: tuple[tuple[str, str], ...], lang: str) -> dict[str, object]:
    """A teacher's published values read as an address's (clamped, validated), minus what a follower keeps.

    Read once per state and language in a process (every follower there is handed the same state); each
    caller gets its own dict and its own copy of a list value.
    """
    return {key: list(value) if isinstance(value, list) else value for key, value in _teacher_values(published, lang)}


def room_page(room: str, lang: str, published: dict | None) -> str:
    """The address a student who typed ``room``'s code opens: the teacher's page and section when the room has
    said where it is (one page load on a phone, not two), else ``/``; following, in the student's language."""
    path, section = "/", ""
    if published is not None and not published.get("closed"):
        path = published["path"] if published["path"] in page_paths() else "/"
        section = published["section"] if SECTION_ID.fullmatch(published["section"]) else ""
    return f"{path}?{urlencode({'follow': room, 'lang': lang})}" + (f"#{section}" if section else "")


def typing_place(lang: str, origin: str) -> list[str]:
    """Where a student without a camera types the code, as [text before, the address, text after]: the lesson's
    page, which holds the box for it, without the scheme (a browser adds it), so the shortest thing to type."""
    address = origin.split("://", 1)[-1]
    before, _, after = text(lang, "room_code_where", address="\0").partition("\0")
    return [before, address, after]


def room_box(state: ExplorerState, kind: str) -> RoomBox | None:
    """The maker for ``app.extras.TOP_TOOLS``: every page gets a room box but an embed (``controls=``, or
    drawn into a course site's page by ``server_document``), whose readers are not a class's teacher."""
    if state.controls or script_embedded():
        return None
    return RoomBox(state, kind)
