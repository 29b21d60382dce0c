"""A page-wide alert when the websocket to the server is lost (a restart, a network cut, a reaped session),
and the page's own way back once the server answers again.

Without it nothing on the page changes when the server goes away: the sliders
still move in the browser, and nothing reaches the figures. BokehJS reports
the loss on the document as a ``connection_lost`` event (``Document.on_event``;
sent by its ``ClientConnection`` when the websocket closes); this component
listens for it and shows, in the page's language, an ``aria-live`` alert
with a Reload button.

Then it asks the server's ``/liveness`` (next to the page's own path, so through
the same nginx) after about 1 s, 2 s, 4 s, 8 s and then every 10 s, each wait
drawn between half and all of that so that a class's pages do not ask all at
once, for at most 30 minutes; the first answer reloads the page at its current
address. The address holds the whole view, the room followed included
(``components.address``, ``?follow=``), so the reload brings back the view and
the following without anyone's hand. Behind nginx another process answers at
once while the page's own one restarts, and the reload goes there.

Reconnecting in place is not done (Panel turns BokehJS's own reconnection off,
``pn.config.reconnect``): a restarted server has no session with this page's
models; BokehJS would get a new session built without the page's address and
replace the page's document with it. A reload rebuilds the same view.

Bounds: after 3 reloads of its own within 2 minutes in a tab (a server that
answers ``/liveness`` but whose websocket keeps failing would otherwise reload
the page for ever) and after 30 minutes of asking, the page waits for the
Reload button, and the alert says no more that it reloads by itself. A page
embedded in another site (``autoload.js``) never reloads by itself: that page
is the course site's, and may hold its reader's input. ``data-retry`` on the
alert says which: ``on``, or ``off``.
"""

from __future__ import annotations

from typing import ClassVar

import param

from app.model.state import ExplorerState
from app.model.strings import text
from components.address import script_embedded
from components.plainjs import PlainJSComponent


class ConnectionStatus(PlainJSComponent):
    """Invisible while connected; a fixed alert with a Reload button once the connection is lost."""

    message = param.String(default="", doc="What happened, in the page's language.")
    hint = param.String(default="", doc="Why reloading is safe, in the page's language.")
    auto_hint = param.String(default="", doc="That the page reloads by itself, in the page's language.")
    reload_label = param.String(default="", doc="The Reload button's label.")
    auto_reload = param.Boolean(default=True, doc="Whether the page reloads by itself once the server answers.")

    _esm = """
    // Waits before asking the server again: the first, doubled each time up to the last.
    const FIRST_WAIT_MS = 1000;
    const LONGEST_WAIT_MS = 10000;
    const ASK_FOR_MS = 30 * 60 * 1000;
    // At most this many reloads of its own within LOOP_WINDOW_MS per tab (sessionStorage).
    const RELOADS_KEY = "pe-connection-reloads";
    const MOST_RELOADS = 3;
    const LOOP_WINDOW_MS = 2 * 60 * 1000;

    const recentReloads = () => {
      try {
        const now = Date.now();
        const kept = JSON.parse(window.sessionStorage.getItem(RELOADS_KEY) || "[]");
        return Array.isArray(kept) ? kept.filter((t) => typeof t === "number" && now - t < LOOP_WINDOW_MS) : [];
      } catch {
        return [];  // storage refused (a private window, a sandboxed frame): no reloads counted
      }
    };

    const serverAnswers = async () => {
      try {
        const answer = await fetch(new URL("liveness", window.location.href), { cache: "no-store" });
        return answer.ok;
      } catch {
        return false;
      }
    };

    export function render({ model, view }) {
      const box = document.createElement("div");
      box.className = "pe-connection";
      box.setAttribute("role", "alert");
      box.setAttribute("aria-live", "assertive");
      box.hidden = true;
      const text = document.createElement("p");
      const say = (auto) => {
        text.textContent = [model.message, model.hint, auto ? model.auto_hint : ""].filter(Boolean).join(" ");
        box.dataset.retry = auto ? "on" : "off";
      };
      const ask = (wait, until) => {
        setTimeout(async () => {
          if (await serverAnswers()) {
            try {
              window.sessionStorage.setItem(RELOADS_KEY, JSON.stringify([...recentReloads(), Date.now()]));
            } catch {}
            window.location.reload();
          } else if (Date.now() + wait < until) {
            ask(Math.min(2 * wait, LONGEST_WAIT_MS), until);
          } else {
            say(false);
          }
        }, wait * (0.5 + Math.random() / 2));
      };
      const show = () => {
        if (!box.hidden) return;
        const auto = model.auto_reload && recentReloads().length < MOST_RELOADS;
        say(auto);
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = model.reload_label;
        button.addEventListener("click", () => window.location.reload());
        box.replaceChildren(text, button);
        box.hidden = false;
        window.__pe_connection_lost = true;
        button.focus({ preventScroll: true });
        if (auto) ask(FIRST_WAIT_MS, Date.now() + ASK_FOR_MS);
      };
      const doc = view?.model?.document ?? window.Bokeh?.documents?.[0];
      doc?.on_event("connection_lost", show);
      return box;
    }
    """

    _stylesheets: ClassVar[list[str]] = ["""
    .pe-connection { position: fixed; top: 0; left: 0; right: 0; z-index: 10000; margin: 0;
                     padding: 0.7em 1.2em; background: #fde8e8; color: #5c0000; border-bottom: 4px solid #b00020;
                     font-size: 1.15rem; display: flex; gap: 1em; align-items: center; flex-wrap: wrap; }
    .pe-connection[hidden] { display: none; }
    .pe-connection p { margin: 0; }
    .pe-connection button { font-size: 1.05rem; padding: 0.35em 1em; border: 2px solid #5c0000; border-radius: 4px;
                            background: #ffffff; color: #5c0000; cursor: pointer; }
    .pe-connection button:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
    """]


def connection_status(state: ExplorerState, kind: str) -> ConnectionStatus:
    """The page-wide maker for ``app.extras.PAGE_EXTRAS``: every kind of page gets one."""
    return ConnectionStatus(message=text(state.lang, "connection_lost"), hint=text(state.lang, "connection_hint"),
                            auto_hint=text(state.lang, "connection_auto"),
                            reload_label=text(state.lang, "connection_reload"), auto_reload=not script_embedded(),
                            name="connection_status", width=0, height=0, margin=0)
