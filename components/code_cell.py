"""'The code for this figure': a collapsed part under a section's or a view's figures with its NumPy cell.

One component for every section and view (``LessonSection`` adds it for its slug, ``app.pages`` under each
view): a ``<details>`` disclosure (keyboard reachable, its summary the label) holding the cell in
``<pre><code>``, a Copy button (``navigator.clipboard``; where the page may not write the clipboard, the code
is selected for Ctrl+C and the status line says so) and a link to the whole lesson as a notebook
(``/notebook.ipynb`` with the page's current query, ``app.data_routes``). The source is written by
``app.model.cells.cell_source`` from the state, and only while the part is open: a closed one costs a
slider step nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import param

from app.model.cells import cell_source
from app.model.state import LESSON_PARAMETERS, VIEW_PARAMETERS, ExplorerState
from app.model.strings import text
from components.export import APP_ROOT_JS
from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET

#: The state's parameters a cell may read (``app.model.cells``): a change of any rewrites an open cell.
CELL_INPUTS = (*VIEW_PARAMETERS, *LESSON_PARAMETERS)

CODE_CSS = """
.pe-code { margin: 0.6em 10px; font-size: 1.05rem; min-width: 0; max-width: 100%; }
.pe-code summary { cursor: pointer; color: var(--pe-t-link, #0B5C8E); text-decoration: underline; }
.pe-code summary:focus-visible, .pe-code a:focus-visible, .pe-code button:focus-visible {
  outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
.pe-code .pe-code-tools { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4em 1.2em; margin: 0.4em 0; }
.pe-code button { font: inherit; padding: 0.15em 0.8em; color: var(--pe-t-link, #0B5C8E);
  background: var(--pe-t-surface, #ffffff); border: 1px solid currentColor; border-radius: 4px; cursor: pointer; }
.pe-code a { color: var(--pe-t-link, #0B5C8E); }
.pe-code [role=status] { color: var(--pe-t-ink, #1a1a1a); font-weight: 600; min-width: 6em; }
.pe-code pre { max-width: 100%; box-sizing: border-box; margin: 0; padding: 0.7em 0.9em; overflow-x: auto;
  border-radius: 4px; font-size: 0.9em;
  line-height: 1.4; background: var(--pe-t-code-bg, #f4f6f8); color: var(--pe-t-ink, #1a1a1a);
  border: 1px solid var(--pe-t-rule, #c8ced6); }
"""


class CodeCell(PlainJSComponent):
    """The collapsed code part of one section or view; ``code`` is filled while ``open``."""

    code = param.String(default="", doc="The cell's source (empty while the part has never been opened).")
    open = param.Boolean(default=False, doc="Whether the reader has the part open (set by the browser).")
    label = param.String(default="", doc="The disclosure's summary.")
    copy_label = param.String(default="")
    copied_label = param.String(default="")
    failed_label = param.String(default="")
    notebook_label = param.String(default="")

    _esm = APP_ROOT_JS + """
    export function render({ model }) {
      const box = document.createElement("details");
      box.className = "pe-code";
      box.open = model.open;
      const summary = document.createElement("summary");
      summary.textContent = model.label;
      const tools = document.createElement("div");
      tools.className = "pe-code-tools";
      const copy = document.createElement("button");
      copy.type = "button"; copy.textContent = model.copy_label;
      const status = document.createElement("span");
      status.setAttribute("role", "status"); status.setAttribute("aria-live", "polite");
      const book = document.createElement("a");
      book.textContent = model.notebook_label; book.setAttribute("download", "");
      const href = () => { book.href = appRoot() + "notebook.ipynb" + window.location.search; };
      for (const type of ["mouseenter", "focus", "click", "contextmenu"]) book.addEventListener(type, href);
      href();
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.className = "language-python";
      code.textContent = model.code;
      pre.append(code);
      tools.append(copy, status, book);
      box.append(summary, tools, pre);
      let timer = null;
      const say = (words) => {
        status.textContent = words;
        clearTimeout(timer);
        timer = setTimeout(() => { status.textContent = ""; }, 4000);
      };
      const select = () => {
        const range = document.createRange();
        range.selectNodeContents(code);
        const selection = window.getSelection();
        selection.removeAllRanges(); selection.addRange(range);
      };
      copy.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(code.textContent);
          say(model.copied_label);
        } catch (error) {
          select();  // no clipboard here (an insecure origin, a refused permission): the reader copies it
          say(model.failed_label);
        }
      });
      box.addEventListener("toggle", () => { if (model.open !== box.open) model.open = box.open; });
      model.on("code", () => { code.textContent = model.code; });
      model.on("open", () => { if (box.open !== model.open) box.open = model.open; });
      return box;
    }
    """

    def __init__(self, state: ExplorerState, slug: str,
                 context: Callable[[], Mapping[str, object]] | None = None, **params: object):
        lang = state.lang
        super().__init__(label=text(lang, "cell_label"), copy_label=text(lang, "cell_copy"),
                         copied_label=text(lang, "cell_copied"), failed_label=text(lang, "cell_copy_failed"),
                         notebook_label=text(lang, "cell_notebook"), name=f"{slug}_code",
                         stylesheets=[STYLESHEET + CODE_CSS], sizing_mode="stretch_width", **params)
        self._state, self._slug, self._context = state, slug, context
        state.param.watch(self._follow, list(CELL_INPUTS))
        self.param.watch(self._follow, "open")

    def source(self) -> str:
        """The cell for the state now (and the section's own choices, ``context``)."""
        return cell_source(self._slug, self._state, self._context() if self._context else None)

    def refresh(self) -> None:
        """Rewrite the code if the part is open (a string: cheap; unchanged text is not sent)."""
        if self.open:
            code = self.source()
            if code != self.code:
                self.code = code

    def _follow(self, *_events: object) -> None:
        self.refresh()
