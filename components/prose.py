"""A passage of the lesson in the page: its HTML once, its live numbers as they change, its formulas typeset.

The HTML comes from ``app.model.prose`` (a teacher's Markdown file); it is sent once.
A slider move sends only ``values``, a small dict of already formatted numbers,
set on the component's data model directly (``components.widgets.push_property``), and
the browser writes each into its ``<span class="pe-num">``. Formulas are typeset
by KaTeX, which the app serves from ``static/katex`` (no other host is asked):
the script and its stylesheet (for ``@font-face``, which works only at the
document level) are added to the page once, and the stylesheet again inside
each passage's shadow root.
"""

from __future__ import annotations

from collections.abc import Mapping

import param

from app.model.prose import Passage
from app.model.strings import minus_sign
from components.lazy import SKIPPED_OFF_SCREEN
from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET
from components.widgets import push_property

#: Where the app serves KaTeX, relative to the server's root (see app/server.py, ``static_dirs``).
KATEX_DIR = "assets/katex/"
#: The smallest a display formula is scaled to fit its passage (a fraction of its size).
MIN_FIT = 0.6
#: A passage's height (px) before it is first drawn (then its last drawn height is kept).
PASSAGE_HEIGHT_PX = 200

PROSE_CSS = """
.pe-prose { font-size: 1.25rem; line-height: 1.55; max-width: 60em; }
.pe-prose p { margin: 0.45em 0; }
.pe-prose .math.block { margin: 0.6em 0; overflow-x: auto; overflow-y: hidden; }
/* A formula waits for KaTeX unseen (its TeX is not for reading); if KaTeX cannot load, the TeX shows. */
.pe-prose .math:not([data-tex]) { visibility: hidden; }
.pe-prose.pe-raw-tex .math { visibility: visible; }
.pe-prose .katex { font-size: 1.1em; }
.pe-prose .pe-num { font-variant-numeric: tabular-nums; font-weight: 600; white-space: nowrap; }
.pe-prose .pe-num.pe-phrase { white-space: normal; }
.pe-prose .pe-glue, .pe-prose code { white-space: nowrap; }
.pe-prose table { border-collapse: collapse; margin: 0.5em 0; }
.pe-prose th, .pe-prose td { border: 1px solid var(--pe-t-rule, #ccc); padding: 0.2em 0.6em; text-align: right; }
.pe-prose code { font-size: 0.95em; background: var(--pe-t-code-bg, #f3f3f3); padding: 0 0.2em; border-radius: 3px; }
.pe-prose blockquote { border-left: 6px solid #0072B2; background: var(--pe-t-quote-bg, #eef5fb);
                      margin: 0.6em 0; padding: 0.3em 1em; }
"""


class Prose(PlainJSComponent):
    """One passage of a lesson section, with live numbers and typeset formulas."""

    html = param.String(default="", doc="The passage as HTML (from app.model.prose: trusted, escaped there).")
    values = param.Dict(default={}, doc="Live numbers by placeholder name, already formatted as text.")
    hidden = param.Boolean(default=False, doc=(
        "Not shown (a passage that does not apply to the current sizes). Hidden in the browser by CSS: "
        "``visible`` would make BokehJS lay the whole page out again, ~0.9 s on '/'."))

    _esm = """
    // The server's root, also when the page is embedded elsewhere: where Bokeh's own script came from.
    const appRoot = () => {
      for (const s of document.querySelectorAll("script[src]")) {
        const m = s.src.match(/^(.*\\/)static\\/js\\/bokeh(\\.min)?\\.js/);
        if (m) return m[1];
      }
      return new URL("/", document.baseURI).href;
    };
    const katexLoaded = () => {
      if (window.__peKatex) return window.__peKatex;
      const base = appRoot() + "KATEX_DIR";
      const link = document.createElement("link");
      link.rel = "stylesheet"; link.href = base + "katex.min.css";
      document.head.appendChild(link);
      window.__peKatex = new Promise((resolve, reject) => {
        if (window.katex) return resolve(window.katex);
        const script = document.createElement("script");
        script.src = base + "katex.min.js";
        script.onload = () => resolve(window.katex);
        script.onerror = reject;
        document.head.appendChild(script);
      });
      return window.__peKatex;
    };

    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-prose";
      const fill = () => {
        const values = model.values || {};
        for (const el of box.querySelectorAll(".pe-num")) {
          const v = values[el.dataset.key];
          el.textContent = v === undefined ? "" : String(v);
          // A phrase ("between tokens 12 and 13 (at 12.50)") wraps like the words around it; a number or a
          // short value stays whole (its thousands are apart by narrow no-break spaces, not by " ").
          el.classList.toggle("pe-phrase", el.textContent.split(" ").length > 2);
        }
      };
      // KaTeX (~140 KB with its fonts) is fetched once a passage with a formula comes near the screen,
      // or the page has nothing else to do, not with the page: the first screen of "/" shows none.
      // Passages further down are typeset in idle time too, so a reader who jumps to one (a link, a
      // search, a fast scroll) finds its formulas ready.
      let near = false;
      const whenNear = (go) => {
        if (near || !("IntersectionObserver" in window)) { near = true; return go(); }
        const once = () => { if (!near) { near = true; seen.disconnect(); go(); } };
        const seen = new IntersectionObserver((entries) => {
          if (entries.some((e) => e.isIntersecting)) once();
        }, { rootMargin: "100px 0px" });
        seen.observe(box);
        (window.requestIdleCallback || ((f) => setTimeout(f, 1000)))(once);
      };
      const wrap = document.createElement("div");
      const typeset = () => {
        if (!box.querySelector(".math")) { box.dataset.typeset = "1"; return; }
        whenNear(() => katexLoaded().then((katex) => {
        if (!wrap.querySelector("link")) {
          // KaTeX's rules must be inside this shadow root: the document's do not reach it.
          const css = document.createElement("link");
          css.rel = "stylesheet"; css.href = appRoot() + "KATEX_DIR" + "katex.min.css";
          wrap.prepend(css);
        }
        for (const el of box.querySelectorAll(".math")) {
          if (el.dataset.tex !== undefined) continue;
          const tex = el.textContent.trim();
          el.dataset.tex = tex;
          katex.render(tex, el, { displayMode: el.classList.contains("block"), throwOnError: false,
                                  output: "htmlAndMathml" });
        }
        fit();
        box.dataset.typeset = "1";
      }).catch(() => { box.classList.add("pe-raw-tex"); box.dataset.typeset = "1"; }));
      };
      // A display formula wider than its passage (a narrow embed, presentation mode's large type) is
      // scaled down to fit, to no less than MIN_FIT of its size; below that it scrolls sideways.
      const fit = () => {
        for (const el of box.querySelectorAll(".math.block > .katex-display")) {
          el.style.fontSize = "";
          const block = el.parentElement;
          // Not every part of a formula scales with the font (rules, some spacing): a second or third
          // try closes the last pixels.
          let scale = 1;
          for (let tries = 0; tries < 4 && block.clientWidth > 0 && block.scrollWidth > block.clientWidth
               && scale > MIN_FIT; tries++) {
            scale = Math.max(MIN_FIT, scale * block.clientWidth / block.scrollWidth * 0.995);
            el.style.fontSize = `${scale * 100}%`;
          }
        }
      };
      if ("ResizeObserver" in window) {
        let width = 0;
        new ResizeObserver(() => {
          if (box.clientWidth !== width) { width = box.clientWidth; if (box.dataset.typeset) fit(); }
        }).observe(box);
      }
      const show = () => { box.innerHTML = model.html; delete box.dataset.typeset; fill(); typeset(); };
      show();
      const hide = () => { wrap.style.display = model.hidden ? "none" : ""; };
      hide();
      model.on("html", show);
      model.on("values", fill);
      model.on("hidden", hide);
      wrap.append(box);
      return wrap;
    }
    """.replace("KATEX_DIR", KATEX_DIR).replace("MIN_FIT", str(MIN_FIT))

    def __init__(self, passage: Passage, values: Mapping[str, str] | None = None, **params):
        params.setdefault("sizing_mode", "stretch_width")
        params.setdefault("margin", (5, 10))
        shown = {key: minus_sign(str(value)) for key, value in (values or {}).items()}
        # A typeset formula is hundreds of positioned boxes, each a paint layer that every frame of the page
        # walks (a slider's handle moving: on "/" at the clocks, Chromium's compositor update took 6.5 ms with
        # the built sections' 124 formulas, 1.8 ms without them). Off screen, a passage is not drawn at all.
        super().__init__(html=passage.html, values=shown,
                         stylesheets=[STYLESHEET + PROSE_CSS + SKIPPED_OFF_SCREEN.format(height=PASSAGE_HEIGHT_PX)],
                         **params)
        self.keys = passage.keys

    def show(self, values: Mapping[str, str]) -> None:
        """Show these live numbers (only this passage's keys are kept); nothing is sent when none changed."""
        mine = {key: minus_sign(str(values[key])) for key in self.keys if key in values}
        if mine and mine != {key: self.values.get(key) for key in mine}:
            push_property(self, "values", {**self.values, **mine})
