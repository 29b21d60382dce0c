"""Downloads of what the page shows: each figure's numbers as CSV, each figure as a PNG."""

from __future__ import annotations

import panel as pn
import param

from app.model.datasets import PAGE_DATASETS
from app.model.state import ExplorerState
from app.model.strings import text
from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET

EXPORT_CSS = """
.pe-export { margin: 0.5em 10px; font-size: 1.05rem; }
.pe-export summary { cursor: pointer; color: var(--pe-t-link, #0B5C8E); text-decoration: underline; }
.pe-export summary:focus-visible, .pe-export a:focus-visible, .pe-export button:focus-visible {
  outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
.pe-export ul { display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; list-style: none; padding: 0; margin: 0.4em 0; }
.pe-export a { color: var(--pe-t-link, #0B5C8E); }
.pe-export button { font: inherit; padding: 0.15em 0.6em; color: var(--pe-t-link, #0B5C8E);
  background: var(--pe-t-surface, #ffffff); border: 1px solid currentColor; border-radius: 4px; cursor: pointer; }
"""


#: The app's own root URL in the page (this server's, also inside another site's page): where its bundle came from.
APP_ROOT_JS = """
    const appRoot = () => {
      for (const s of document.querySelectorAll("script[src]")) {
        const m = s.src.match(/^(.*\\/)static\\/js\\/bokeh(\\.min)?\\.js/);
        if (m) return m[1];
      }
      return new URL("/", document.baseURI).href;
    };
"""


class ExportLinks(PlainJSComponent):
    """A "Download" disclosure: CSV links (``/data/<name>.csv`` plus the page's current query) and a
    PNG button for each figure on the page (named ``*_plot``), made with Bokeh's own ``export``."""

    datasets = param.List(default=[], doc="[label, dataset name] for each CSV link.")
    label = param.String(default="", doc="The disclosure's summary.")
    png_label = param.String(default="", doc="Text before the PNG buttons.")

    _esm = APP_ROOT_JS + """
    export function render({ model }) {
      const box = document.createElement("details");
      box.className = "pe-export";
      const summary = document.createElement("summary");
      summary.textContent = model.label;
      const csv = document.createElement("ul");
      const png = document.createElement("ul");
      png.setAttribute("aria-label", model.png_label);
      const href = (name) => appRoot() + "data/" + name + ".csv" + window.location.search;
      for (const [label, name] of model.datasets) {
        const li = document.createElement("li");
        const a = document.createElement("a");
        a.textContent = label; a.href = href(name); a.dataset.dataset = name;
        a.setAttribute("download", "");
        const refresh = () => { a.href = href(name); };
        for (const type of ["mouseenter", "focus", "click", "contextmenu"]) a.addEventListener(type, refresh);
        li.append(a); csv.append(li);
      }
      // The figures present now (views below the fold arrive later): listed each time the box opens.
      const listFigures = () => {
        png.replaceChildren();
        const seen = new Set();
        for (const view of window.Bokeh?.index?.query((v) => typeof v.export === "function"
                                                        && /_plot$/.test(v.model.name || "")) ?? []) {
          const name = view.model.name;
          if (seen.has(name)) continue;
          seen.add(name);
          const li = document.createElement("li");
          const button = document.createElement("button");
          button.type = "button"; button.textContent = name + ".png"; button.dataset.figure = name;
          button.addEventListener("click", async () => {
            const blob = await view.export("png", true).to_blob();
            const a = document.createElement("a");
            a.href = URL.createObjectURL(blob); a.download = name + ".png";
            document.body.append(a); a.click(); a.remove();
            setTimeout(() => URL.revokeObjectURL(a.href), 10000);
          });
          li.append(button); png.append(li);
        }
      };
      box.addEventListener("toggle", () => { if (box.open) listFigures(); });
      const pngLabel = document.createElement("p");
      pngLabel.textContent = model.png_label; pngLabel.style.margin = "0.3em 0 0";
      box.append(summary, csv, pngLabel, png);
      return box;
    }
    """


def _route() -> str:
    try:
        return pn.state.curdoc.session_context.request.path.strip("/")
    except AttributeError:
        return ""


def export_links(state: ExplorerState, kind: str) -> ExportLinks | None:
    """The page's downloads: the datasets of its route (``app.data_routes.PAGE_DATASETS``).

    None in an embed that chose its controls (``controls=``): the course page shows what its author picked.
    """
    if state.controls:
        return None
    route = _route() if kind != "lesson" else ""
    names = PAGE_DATASETS.get(route, PAGE_DATASETS["explore"] if kind == "explore" else ())
    if not names:
        names = ()
    return ExportLinks(datasets=[[text(state.lang, f"export_{name}"), name] for name in names],
                       label=text(state.lang, "export_label"), png_label=text(state.lang, "export_png"),
                       name="export_links", stylesheets=[STYLESHEET + EXPORT_CSS], sizing_mode="stretch_width")
