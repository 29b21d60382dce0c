"""Links inside the app that carry the current state: the address's query goes along."""

from __future__ import annotations

import param

from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET

LINKS_CSS = """
.pe-links { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; margin: 0.3em 0; padding: 0; list-style: none; }
ol.pe-links.pe-toc { display: block; list-style: decimal; padding-left: 2.2em; font-size: 1.2rem; }
ol.pe-links.pe-toc li { margin: 0.15em 0; }
.pe-links a { font-size: 1.15rem; color: var(--pe-t-link, #0B5C8E);
              text-decoration: underline; text-underline-offset: 0.15em; }
.pe-links a:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; border-radius: 2px; }
.pe-links.pe-pager { justify-content: space-between; border-top: 2px solid var(--pe-t-rule, #e4e4e4);
                     padding-top: 0.4em; }
"""


class StateLinks(PlainJSComponent):
    """A row (or a numbered table of contents) of links that keep the state of the page.

    Each link is ``[label, path, fragment]``: ``path`` is a route of the app
    (``"/"``, ``"/shift"``; empty for this page) and ``fragment`` a section's
    anchor or empty. The query of the page's address at the moment of the
    click (or of hovering, focusing, copying the link) goes along, so sizes,
    pos, k and the language travel with the reader. A link with an empty path
    only changes the fragment, which keeps the page (``SectionAnchor`` scrolls).
    """

    links = param.List(default=[], doc="[label, path, fragment] for each link.")
    kind = param.Selector(default="row", objects=["row", "toc", "pager"], doc="How the links are laid out.")
    label = param.String(default="", doc="Accessible name of the group (a <nav> landmark).")
    start = param.Integer(default=1, bounds=(1, None), doc="Number of the first entry of a table of contents.")

    _esm = """
    export function render({ model }) {
      const nav = document.createElement("nav");
      if (model.label) nav.setAttribute("aria-label", model.label);
      const list = document.createElement(model.kind === "toc" ? "ol" : "div");
      if (model.kind === "toc") list.start = model.start;
      list.className = "pe-links pe-" + model.kind;
      const target = (path, fragment) => {
        const here = new URL(window.location.href);
        const url = new URL(path || here.pathname, here);
        url.search = here.search;
        url.hash = fragment ? "#" + fragment : "";
        return url;
      };
      for (const [label, path, fragment] of model.links) {
        const a = document.createElement("a");
        a.textContent = label;
        a.href = target(path, fragment).href;
        if (fragment) a.dataset.section = fragment;
        const refresh = () => { a.href = target(path, fragment).href; };
        for (const type of ["mouseenter", "focus", "contextmenu", "copy"]) a.addEventListener(type, refresh);
        a.addEventListener("click", (event) => {
          if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) { refresh(); return; }
          event.preventDefault();
          const url = target(path, fragment);
          if (!path || url.pathname === window.location.pathname) {
            // The same fragment again fires no hashchange: fire it, so the page scrolls back to it.
            if (window.location.hash === url.hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
            else window.location.hash = url.hash;
          } else window.location.assign(url.href);
        });
        if (model.kind === "toc") { const li = document.createElement("li"); li.append(a); list.append(li); }
        else list.append(a);
      }
      nav.append(list);
      return nav;
    }
    """

    def __init__(self, links: list[list[str]], kind: str = "row", **params):
        params.setdefault("sizing_mode", "stretch_width")
        super().__init__(links=links, kind=kind, stylesheets=[STYLESHEET + LINKS_CSS], **params)
