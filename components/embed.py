"""The "Embed" button and its dialog: the ``<iframe>`` code for exactly what is on screen."""

from __future__ import annotations

import panel as pn
import param

from app.model.state import ExplorerState
from app.model.strings import text
from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET

EMBED_CSS = """
.pe-embed-open { font: inherit; font-size: 1.1rem; padding: 0.3em 0.9em; cursor: pointer; border-radius: 4px;
  width: 100%; color: var(--pe-t-link, #0B5C8E); background: var(--pe-t-surface, #ffffff);
  border: 2px solid currentColor; }
.pe-embed-open:focus-visible, dialog.pe-embed-dialog :focus-visible {
  outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
dialog.pe-embed-dialog { max-width: min(44rem, 92vw); padding: 1.2em 1.4em; border-radius: 8px;
  color: var(--pe-t-ink, #1a1a1a); background: var(--pe-t-surface, #ffffff);
  border: 1px solid var(--pe-t-rule, #767676);
  font-size: 1.05rem; line-height: 1.4; }
dialog.pe-embed-dialog::backdrop { background: rgba(0, 0, 0, 0.45); }
dialog.pe-embed-dialog h2 { margin: 0 0 0.4em; font-size: 1.35rem; }
dialog.pe-embed-dialog textarea { width: 100%; box-sizing: border-box; font-family: monospace; font-size: 0.95rem;
  color: inherit; background: inherit; border: 1px solid var(--pe-t-rule, #767676); }
dialog.pe-embed-dialog fieldset { border: 1px solid var(--pe-t-rule, #767676); margin: 0.6em 0; }
dialog.pe-embed-dialog fieldset label { display: inline-block; margin: 0.15em 1em 0.15em 0; }
dialog.pe-embed-dialog .pe-embed-size label { margin-right: 1em; }
dialog.pe-embed-dialog .pe-embed-size input { width: 6em; font: inherit; }
dialog.pe-embed-dialog .pe-embed-actions { display: flex; gap: 0.8em; justify-content: flex-end; margin-top: 0.6em; }
dialog.pe-embed-dialog button { font: inherit; padding: 0.25em 0.9em; cursor: pointer; border-radius: 4px;
  color: var(--pe-t-link, #0B5C8E); background: var(--pe-t-surface, #ffffff); border: 2px solid currentColor; }
"""


class EmbedDialog(PlainJSComponent):
    """A button that opens a modal ``<dialog>`` with the iframe code of the page as it is now.

    The code is made in the browser when the dialog opens (and as the author changes its choices):
    the address's route and query (which already hold every value and the language), ``controls=``
    from the checkboxes (all ticked: no ``controls``, the page as it is; none: ``controls=none``),
    and the size. A native modal dialog (the page behind it inert, Escape closes it), with Tab going
    round inside it; the focus goes back to the button when it closes.
    """

    labels = param.Dict(default={}, doc="The dialog's strings, by key.")
    choices = param.List(default=[], doc="[control name, label] for each control the embedded page can show.")

    _esm = """
    export function render({ model }) {
      const L = model.labels;
      const wrap = document.createElement("div");
      const open = document.createElement("button");
      open.type = "button"; open.className = "pe-embed-open"; open.textContent = L.button;
      open.setAttribute("aria-haspopup", "dialog");
      const dialog = document.createElement("dialog");
      dialog.className = "pe-embed-dialog";
      const uid = "pe-embed-" + Math.random().toString(36).slice(2);
      dialog.setAttribute("aria-labelledby", uid + "-title");
      dialog.setAttribute("aria-describedby", uid + "-intro");
      const title = document.createElement("h2");
      title.id = uid + "-title"; title.textContent = L.title;
      const intro = document.createElement("p");
      intro.id = uid + "-intro"; intro.textContent = L.intro;
      const boxes = [];
      let fieldset = null;
      if (model.choices.length) {
        fieldset = document.createElement("fieldset");
        const legend = document.createElement("legend");
        legend.textContent = L.controls; fieldset.append(legend);
        const current = new URL(window.location.href).searchParams.get("controls");
        const shown = current && current !== "none" ? current.split(",") : null;
        for (const [name, label] of model.choices) {
          const lab = document.createElement("label");
          const box = document.createElement("input");
          box.type = "checkbox"; box.value = name;
          box.checked = current === "none" ? false : (shown ? shown.includes(name) : true);
          lab.append(box, " " + label); fieldset.append(lab); boxes.push(box);
        }
      }
      const size = document.createElement("div");
      size.className = "pe-embed-size";
      const number = (label, value) => {
        const lab = document.createElement("label");
        const input = document.createElement("input");
        input.type = "number"; input.min = "200"; input.max = "4000"; input.step = "10"; input.value = String(value);
        lab.append(label + " ", input); size.append(lab);
        return input;
      };
      const width = number(L.width, 960);
      const height = number(L.height, 800);
      const codeLabel = document.createElement("label");
      codeLabel.textContent = L.code; codeLabel.htmlFor = uid + "-code";
      const code = document.createElement("textarea");
      code.id = uid + "-code"; code.readOnly = true; code.rows = 5; code.spellcheck = false;
      const status = document.createElement("span");
      status.setAttribute("role", "status");
      const actions = document.createElement("div");
      actions.className = "pe-embed-actions";
      const copy = document.createElement("button");
      copy.type = "button"; copy.textContent = L.copy;
      const close = document.createElement("button");
      close.type = "button"; close.textContent = L.close;
      actions.append(status, copy, close);
      dialog.append(title, intro, ...(fieldset ? [fieldset] : []), size, codeLabel, code, actions);

      const clamp = (input, fallback) => {
        const v = Math.round(Number(input.value));
        return Number.isFinite(v) ? Math.min(4000, Math.max(200, v)) : fallback;
      };
      const escape = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
      const snippet = () => {
        const url = new URL(window.location.href);
        url.hash = "";
        url.searchParams.delete("controls");
        if (boxes.length) {
          const on = boxes.filter((b) => b.checked).map((b) => b.value);
          if (on.length === 0) url.searchParams.set("controls", "none");
          else if (on.length < boxes.length) url.searchParams.set("controls", on.join(","));
        }
        return `<iframe src="${escape(url.href)}" width="${clamp(width, 960)}" height="${clamp(height, 800)}" ` +
               `title="${escape(document.title)}" style="border: 0; max-width: 100%;" loading="lazy"></iframe>`;
      };
      const refresh = () => { code.value = snippet(); status.textContent = ""; };
      for (const el of [...boxes, width, height]) el.addEventListener("input", refresh);
      open.addEventListener("click", () => {
        width.value = String(Math.min(1280, Math.max(320, document.documentElement.clientWidth)));
        height.value = String(Math.min(4000, Math.max(400, document.scrollingElement.scrollHeight)));
        refresh();
        dialog.showModal();
        code.focus(); code.select();
      });
      copy.addEventListener("click", async () => {
        code.focus(); code.select();
        try { await navigator.clipboard.writeText(code.value); } catch (e) { document.execCommand?.("copy"); }
        status.textContent = L.copied;
      });
      close.addEventListener("click", () => dialog.close());
      // A modal dialog makes the page behind it inert, but Tab past its last control would leave for
      // the browser's own toolbar: keep the focus going round inside the dialog.
      dialog.addEventListener("keydown", (event) => {
        if (event.key !== "Tab") return;
        const stops = [...dialog.querySelectorAll("input, textarea, button")].filter((el) => !el.disabled);
        const here = dialog.getRootNode().activeElement;
        const first = stops[0], last = stops[stops.length - 1];
        const outside = !dialog.contains(here);
        const to = event.shiftKey ? (here === first || outside) && last : (here === last || outside) && first;
        if (to) { event.preventDefault(); to.focus(); }
      });
      dialog.addEventListener("close", () => open.focus());
      wrap.append(open, dialog);
      return wrap;
    }
    """


LABEL_KEYS = ("button", "title", "intro", "code", "copy", "copied", "close", "controls", "width", "height")


def embed_dialog(state: ExplorerState, kind: str, controls: tuple[str, ...] = ()) -> EmbedDialog | None:
    """The page's Embed button; ``controls``: what ``controls=`` can choose on this page (a view's page).

    Not shown inside an embedded page (one whose address sets ``controls``): readers of a course page
    need no second embed button.
    """
    if state.controls:
        return None
    lang = state.lang
    choices = [[name, text(lang, "embed_play" if name == "play" else name)] for name in controls]
    return EmbedDialog(labels={key: text(lang, f"embed_{key}") for key in LABEL_KEYS}, choices=choices,
                       name="embed_dialog", stylesheets=[STYLESHEET + EMBED_CSS],
                       # Level with the title in a header (the lesson, /explore), with the buttons in a top bar
                       # (their margin: the same gaps between all of the bar's items when it wraps).
                       margin=(18, 10) if kind in ("lesson", "explore") else (5, 10),
                       width=140, sizing_mode="fixed", height=50)


__all__ = ["EmbedDialog", "embed_dialog", "pn"]
