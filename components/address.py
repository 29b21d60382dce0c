"""Keeps the browser's address bar equal to the state, so a copied link reproduces the view."""

from __future__ import annotations

import json
from urllib.parse import urlencode
from weakref import WeakKeyDictionary

import panel as pn
import param

from app.model.state import (
    LEFT_OUT_WHEN_EMPTY,
    PAGE_PARAMETERS,
    SIZE_PARAMETERS,
    URL_PARAMETERS,
    ExplorerState,
)
from components.plainjs import PlainJSComponent
from components.widgets import push_property


def script_embedded() -> bool:
    """Whether this session draws into another site's page (``bokeh.embed.server_document``'s autoload.js).

    Such a page is the course site's own: its address, title and language are not the view's to set.
    """
    try:
        return pn.state.curdoc.session_context.request.path.endswith("/autoload.js")
    except AttributeError:
        return False


#: Per session state, the parameters whose sliders write themselves into the address.
_WRITTEN_BY_SLIDERS: WeakKeyDictionary[ExplorerState, set[str]] = WeakKeyDictionary()

#: Browser side of ``write_to_address``: the slider hands its new value to the page's one writer of the
#: address (``AddressBar``'s ``window.__peAddress``), which writes it once the moves pause.
_SLIDER_JS = "window.__peAddress?.set(KEY, String(cb_obj.value));"


def write_to_address(widget: pn.widgets.Widget, state: ExplorerState, name: str) -> pn.widgets.Widget:
    """Let the slider of parameter ``name`` write its value into the address bar, in the browser.

    A key press on k, pos or pair then costs the server nothing for the address
    (a query string sent from Python costs ~0.5 ms and ~130 bytes per step).
    The slider shows the state's value, also when the state corrects it, so
    the address follows the state; ``AddressBar`` sends the parameters that no
    slider on the page writes. Returns ``widget``; drawn into another site's page
    (``script_embedded``), unchanged: that page's address is not the view's.
    """
    if script_embedded():
        return widget
    widget.jscallback(value=_SLIDER_JS.replace("KEY", json.dumps(name), 1))
    _WRITTEN_BY_SLIDERS.setdefault(state, set()).add(name)
    return widget


#: How long the sliders' moves must pause before their values go into the address.
SLIDER_PAUSE_MS = 150

#: The document's template variable that holds the title its page's HTML should carry.
PAGE_TITLE_VARIABLE = "pe_page_title"


class AddressBar(PlainJSComponent):
    """An invisible component that writes the state's query into the address bar.

    It also gives the browser tab the page's title and the document its
    language (``<html lang>``, for screen readers and hyphenation): pn.serve
    overwrites the server-side title, and the language is known per session.
    The title also goes into the page's HTML (``PAGE_TITLE_VARIABLE``, read by
    ``app.pages.served_with_its_title``), so the tab and link previews have it before any script runs.

    It replaces the history entry instead of pushing one, so dragging a slider
    does not flood the back button, and it does not wait for the document to
    become idle (Panel's ``Location`` does both, and a page with many Bokeh
    figures may never report idle). On first render it also replaces junk from
    the original address by the clamped values. Other query keys are kept.
    A new query is written just after the message that brought it, not while
    the page applies that message.
    """

    query = param.String(default="", doc="The state's query string (without '?').")
    title = param.String(default="", doc="Title of the browser tab.")
    lang = param.String(default="", doc="Language code of the page.")
    optional = param.List(default=[*PAGE_PARAMETERS, *LEFT_OUT_WHEN_EMPTY], doc=(
        "Keys the query leaves out at their defaults or when empty: removed from the address when the query "
        "lacks them (a sentence set back to the lesson's leaves no stale one behind)."))

    _esm = """
    export function render({ model }) {
      // The page's one writer of its address. Two things feed it: the state's query from the server
      // (``query``: written just after the message that brought it, not while the page applies it, since a
      // replaceState costs Chromium 1-3 ms there; the changes of one message make one write), and the values
      // the sliders hand it themselves (``set``: written once the moves pause for SLIDER_PAUSE_MS, since
      // browsers throttle history.replaceState). A slider's value that differs from the query last received is
      // newer than it, and stays over every later query until written; one that equals it (a section that
      // caught up with the server's state after the message that brought the query) leaves the query's own.
      let query = new URLSearchParams(model.query);
      const pending = new Map();
      let timer = 0;
      let queryDue = false;  // a query's write is on its way: a slider's value goes with it, not after a pause
      const write = () => {
        clearTimeout(timer);
        timer = 0;
        queryDue = false;
        for (const [key, value] of pending) query.set(key, value);
        pending.clear();
        const url = new URL(window.location.href);
        for (const [key, value] of query) url.searchParams.set(key, value);
        for (const key of model.optional) if (!query.has(key)) url.searchParams.delete(key);
        if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
      };
      const later = (ms) => { clearTimeout(timer); timer = setTimeout(write, ms); };
      write();
      model.on("query", () => { query = new URLSearchParams(model.query); queryDue = true; later(0); });
      window.__peAddress = {
        set: (key, value) => {
          if (query.get(key) === value) pending.delete(key); else pending.set(key, value);
          // A slider that keeps moving (play runs pos) would otherwise push a due query's write back for good.
          if (!queryDue) later(SLIDER_PAUSE_MS);
        },
      };
      if (model.title) document.title = model.title;
      if (model.lang) document.documentElement.lang = model.lang;
      return document.createElement("span");
    }
    """.replace("SLIDER_PAUSE_MS", str(SLIDER_PAUSE_MS))

    def __init__(self, state: ExplorerState, **params):
        params.setdefault("name", "address_bar")
        params.setdefault("lang", state.lang)
        if params.get("title") and pn.state.curdoc is not None:
            # The page's <title> in its HTML, before any script runs (app.pages.served_with_its_title).
            pn.state.curdoc.template_variables[PAGE_TITLE_VARIABLE] = params["title"]
        super().__init__(query=urlencode(state.query()), width=0, height=0, margin=0, **params)
        self._state = state
        state.parts["address_bar"] = self
        state.param.watch(self._follow, list(URL_PARAMETERS))

    def _follow(self, *events: param.parameterized.Event) -> None:
        # What the page's sliders write themselves (write_to_address) is not sent from here, but a size step
        # is: the values it clamps (pairs_to, pos …) may belong to sliders of a lesson section that is asleep
        # or follows later (app.model.section_watchers), which would leave the address behind the state.
        written = _WRITTEN_BY_SLIDERS.get(self._state, set())
        if any(event.name not in written or event.name in SIZE_PARAMETERS for event in events):
            # Set on the browser's model directly: Panel's own path costs a size step ~1-2 ms more.
            push_property(self, "query", urlencode(self._state.query()))


class LanguageLink(PlainJSComponent):
    """A link to the same view, same state, in another language.

    The address changes with every slider move, so the target is read from
    the live address at click time instead of being re-sent from the server.
    """

    label = param.String(default="", doc="The link's text (in the language it leads to).")
    target = param.String(default="en", doc="Language code the link switches to.")

    _esm = """
    export function render({ model }) {
      const link = document.createElement("a");
      link.className = "pe-lang";
      link.textContent = model.label;
      link.hreflang = model.target;
      link.lang = model.target;
      link.href = "?lang=" + encodeURIComponent(model.target);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        const url = new URL(window.location.href);
        url.searchParams.set("lang", model.target);
        window.location.assign(url.href);
      });
      return link;
    }
    """


def refresh_address(state: ExplorerState) -> None:
    """Send the whole query to the page's address bar: after a change that no slider made (a shortcut key,
    the end of an animation), which the sliders' own address writing does not reliably see."""
    bar = state.parts.get("address_bar")
    if isinstance(bar, AddressBar):
        bar.query = urlencode(state.query())
