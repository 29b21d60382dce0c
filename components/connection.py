"""A page-wide alert when the websocket to the server is lost (a restart, a network cut, a reaped session).

Without it nothing on the page changes when the server goes away: the sliders
still move in the browser, and nothing reaches the figures. BokehJS reports
the loss on the document as a ``connection_lost`` event (``Document.on_event``;
sent by its ``ClientConnection`` when the websocket closes); this component
listens for it and shows, in the page's language, an ``aria-live`` alert
with a Reload button. Reconnecting in place is not offered: a restarted
server has no session with this page's models, so the page's own document
could not be resumed. Reloading rebuilds the same view from the address,
which every slider keeps up to date (``components.address``).
"""

from __future__ import annotations

from typing import ClassVar

import param

from app.model.state import ExplorerState
from app.model.strings import text
from components.plainjs import PlainJSComponent


class ConnectionStatus(PlainJSComponent):
    """Invisible while connected; a fixed alert with a Reload button once the connection is lost."""

    message = param.String(default="", doc="What happened, in the page's language.")
    hint = param.String(default="", doc="Why reloading is safe, in the page's language.")
    reload_label = param.String(default="", doc="The Reload button's label.")

    _esm = """
    export function render({ model, view }) {
      const box = document.createElement("div");
      box.className = "pe-connection";
      box.setAttribute("role", "alert");
      box.setAttribute("aria-live", "assertive");
      box.hidden = true;
      const show = () => {
        if (!box.hidden) return;
        const text = document.createElement("p");
        text.textContent = model.message + " " + model.hint;
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = model.reload_label;
        button.addEventListener("click", () => window.location.reload());
        box.replaceChildren(text, button);
        box.hidden = false;
        window.__pe_connection_lost = true;
        button.focus({ preventScroll: true });
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
                            reload_label=text(state.lang, "connection_reload"), name="connection_status",
                            width=0, height=0, margin=0)
