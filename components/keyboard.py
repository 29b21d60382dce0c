"""Keyboard shortcuts for the whole page, and the help overlay that lists them.

← → move pos, ↑ ↓ move k, ``[`` ``]`` move the pair, space plays or pauses (on a page with play), ``+`` ``-``
change the play speed, ``?`` opens the help; in presentation mode PageDown/PageUp (what a
presenter's clicker sends) move between slides and Escape leaves. They work without
clicking anything first (the listener is on the window) and never take a key from a
control that has focus: a text field, a quiz's radio button, a button, a checkbox, a
select or a slider's handle (a focused slider keeps its arrows) — whatever
``composedPath()[0]`` is, inside Panel's shadow roots too.

The browser only says which shortcut was pressed; the server changes the state
(clamped to its bounds), so every view, slider and the address follow as they do
for a slider move.
"""

from __future__ import annotations

import param

from app.model.state import ExplorerState
from app.model.strings import text
from components.address import refresh_address
from components.animation import animation_for
from components.plainjs import PlainJSComponent
from components.widgets import mark_connected, one_message

#: The shortcuts in the help overlay, in order: (keys' string key, description's string key).
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("keys_pos", "keys_pos_help"),
    ("keys_k", "keys_k_help"),
    ("keys_pair", "keys_pair_help"),
    ("keys_play", "keys_play_help"),
    ("keys_speed", "keys_speed_help"),
    ("keys_slides", "keys_slides_help"),
    ("keys_escape", "keys_escape_help"),
    ("keys_help", "keys_help_help"),
)
#: The shortcuts of play, which a page without it has not.
PLAY_SHORTCUTS = frozenset({"keys_play", "keys_speed"})
#: What a message from the browser may ask for, and the state parameter it moves.
MOVES = {"pos": "pos", "k": "k", "pair": "pair"}


class PageKeys(PlainJSComponent):
    """The page's keyboard shortcuts (see the module) and its help overlay (``?``)."""

    present = param.Boolean(default=False, doc="Whether the page is in presentation mode (PageUp/PageDown, Escape).")
    plays = param.Boolean(default=True, doc=(
        "Whether the page has play (a section's own page has none where pos and k move nothing): space and "
        "+/- are its shortcuts, listed in the help only then."))
    help_title = param.String(default="", doc="Title of the help overlay.")
    help_rows = param.List(default=[], doc="[keys, what they do] per shortcut, in the page's language.")
    close_label = param.String(default="", doc="Name of the overlay's close button.")
    motion = param.String(default="", doc=(
        "Set by the server once the browser has said whether its reader wants less motion: 'reduced' or 'full'."))

    _esm = """
    // Controls that own the keys they receive: text fields, radios, checkboxes, buttons, selects, slider handles.
    const OWN_ROLES = new Set(["slider", "radio", "checkbox", "textbox", "switch", "spinbutton", "combobox",
                               "listbox", "option", "menuitem", "button", "searchbox"]);
    const TEXT_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT"]);
    const owner = (event) => {
      const el = event.composedPath()[0];
      if (!(el instanceof Element)) return null;
      if (el.isContentEditable || TEXT_TAGS.has(el.tagName) || el.tagName === "BUTTON") return el;
      if (el.classList.contains("noUi-handle") || OWN_ROLES.has(el.getAttribute("role"))) return el;
      return null;
    };
    const isTextField = (el) => el && (el.isContentEditable || el.tagName === "TEXTAREA" ||
      (el.tagName === "INPUT" && !["radio", "checkbox", "range", "button", "submit"].includes(el.type)));

    const STYLE = `
    .pe-help-backdrop { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.55); z-index: 1000;
      display: flex; align-items: center; justify-content: center; }
    .pe-help { background: var(--pe-surface, #ffffff); color: var(--pe-ink, #1a1a1a); border-radius: 10px;
      padding: 1.2em 1.6em; max-width: min(46em, 92vw); max-height: 90vh; overflow: auto;
      font: 1.15rem/1.45 system-ui, sans-serif; border: 2px solid var(--pe-ink, #1a1a1a); }
    .pe-help h2 { margin: 0 0 0.5em 0; font-size: 1.5em; }
    .pe-help table { border-collapse: collapse; }
    .pe-help th { text-align: left; padding: 0.3em 1.2em 0.3em 0; white-space: nowrap; font-weight: 600; }
    .pe-help td { padding: 0.3em 0; }
    .pe-help kbd { border: 1px solid var(--pe-ink, #1a1a1a); border-radius: 4px; padding: 0 0.35em;
      font: inherit; }
    .pe-help button { margin-top: 1em; font: inherit; padding: 0.3em 1em; border-radius: 6px;
      background: var(--pe-surface, #ffffff); color: var(--pe-ink, #1a1a1a); border: 2px solid var(--pe-ink, #1a1a1a); }
    .pe-help button:focus-visible { outline: 3px solid var(--pe-focus, #0072B2); outline-offset: 2px; }
    `;

    export function render({ model }) {
      if (!document.getElementById("pe-help-style")) {
        const style = document.createElement("style");
        style.id = "pe-help-style";
        style.textContent = STYLE;
        document.head.appendChild(style);
      }
      let overlay = null;
      let before = null;
      const close = () => {
        if (!overlay) return;
        overlay.remove();
        overlay = null;
        if (before && before.isConnected) before.focus();
      };
      const open = () => {
        before = document.activeElement;
        overlay = document.createElement("div");
        overlay.className = "pe-help-backdrop";
        const box = document.createElement("div");
        box.className = "pe-help";
        box.setAttribute("role", "dialog");
        box.setAttribute("aria-modal", "true");
        box.setAttribute("aria-labelledby", "pe-help-title");
        box.lang = document.documentElement.lang || "";
        const title = document.createElement("h2");
        title.id = "pe-help-title";
        title.textContent = model.help_title;
        const table = document.createElement("table");
        for (const [keys, what] of model.help_rows) {
          const row = table.insertRow();
          const head = document.createElement("th");
          head.scope = "row";
          for (const [i, key] of keys.split(" ").entries()) {
            if (i) head.append(" ");
            const kbd = document.createElement("kbd");
            kbd.textContent = key;
            head.append(kbd);
          }
          row.append(head);
          row.insertCell().textContent = what;
        }
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = model.close_label;
        button.addEventListener("click", close);
        box.append(title, table, button);
        overlay.append(box);
        overlay.addEventListener("click", (event) => { if (event.target === overlay) close(); });
        // Focus stays in the dialog: Tab has one place to go.
        overlay.addEventListener("keydown", (event) => {
          if (event.key === "Tab") { event.preventDefault(); button.focus(); }
        });
        document.body.append(overlay);
        button.focus();
      };

      const send = (what) => model.send_msg(what);
      const leave = () => {
        const url = new URL(window.location.href);
        const slide = url.searchParams.get("slide");
        url.searchParams.delete("present");
        url.searchParams.delete("slide");
        url.hash = slide ? slide : "";
        window.location.assign(url.href);
      };
      const onKey = (event) => {
        if (event.defaultPrevented || event.metaKey || (event.ctrlKey && !event.altKey)) return;
        const key = event.key;
        if (overlay) {
          if (key === "Escape" || key === "?") { event.preventDefault(); close(); }
          return;
        }
        const own = owner(event);
        if (key === "Escape") {
          if (model.present && !isTextField(own)) { event.preventDefault(); leave(); }
          return;
        }
        if (own) return;
        let what = null;
        switch (key) {
          case "ArrowRight": what = {move: "pos", by: 1}; break;
          case "ArrowLeft": what = {move: "pos", by: -1}; break;
          case "ArrowUp": what = {move: "k", by: 1}; break;
          case "ArrowDown": what = {move: "k", by: -1}; break;
          case "]": what = {move: "pair", by: 1}; break;
          case "[": what = {move: "pair", by: -1}; break;
          case " ": case "Spacebar": if (model.plays) what = {play: "toggle"}; break;
          case "+": case "=": if (model.plays) what = {speed: 1}; break;
          case "-": case "_": case "\\u2212": if (model.plays) what = {speed: -1}; break;
          case "PageDown": if (model.present) what = {slide: 1}; break;
          case "PageUp": if (model.present) what = {slide: -1}; break;
          case "?": event.preventDefault(); open(); return;
        }
        if (what) { event.preventDefault(); send(what); }
      };
      window.addEventListener("keydown", onKey);
      const reduced = window.matchMedia?.("(prefers-reduced-motion: reduce)")?.matches ?? false;
      // After this turn: a page part added by a server message renders while that message is being
      // applied, and a message sent then carries the whole model again ("reference already known").
      setTimeout(() => send({ready: true, reduced_motion: reduced}), 0);
      const spot = document.createElement("span");
      spot.className = "pe-keys";
      return spot;
    }
    """

    def __init__(self, state: ExplorerState, **params):
        lang = state.lang
        params.setdefault("name", "page_keys")
        super().__init__(
            present=state.present, help_title=text(lang, "keys_title"), close_label=text(lang, "keys_close"),
            width=0, height=0, margin=0, **params)
        self.state = state
        self._list_shortcuts()
        #: Called with +1 or -1 on PageDown / PageUp in presentation mode (set by the presentation).
        self.on_slide = None

    @param.depends("plays", watch=True)
    def _list_shortcuts(self) -> None:
        lang = self.state.lang
        self.help_rows = [[text(lang, keys), text(lang, what)] for keys, what in SHORTCUTS
                          if self.plays or keys not in PLAY_SHORTCUTS]

    def _handle_msg(self, msg: object) -> None:
        # Whatever a client sends: only these shapes are read, every number is clamped by the state's bounds.
        if not isinstance(msg, dict):
            return
        mark_connected()
        animation = animation_for(self.state)
        if msg.get("ready") is True:
            reduced = msg.get("reduced_motion") is True
            animation.browser_ready(reduced)
            self.motion = "reduced" if reduced else "full"
            return
        def step(value: object) -> int | None:
            # Exactly +1 or -1 (a bool is an int in Python: True would pass as 1).
            return value if type(value) is int and value in (1, -1) else None

        with one_message():
            by = step(msg.get("by"))
            if isinstance(msg.get("move"), str) and msg["move"] in MOVES and by is not None:
                self.move(MOVES[msg["move"]], by)
                refresh_address(self.state)
            elif msg.get("play") == "toggle" and self.plays:
                self.state.play = not self.state.play
            elif step(msg.get("speed")) is not None and self.plays:
                animation.faster(msg["speed"])
            elif step(msg.get("slide")) is not None and self.on_slide is not None:
                self.on_slide(msg["slide"])

    def move(self, name: str, by: int) -> None:
        """Move parameter ``name`` of the state by ``by`` (the state keeps it within its bounds)."""
        setattr(self.state, name, getattr(self.state, name) + by)


def page_keys(state: ExplorerState, kind: str) -> PageKeys:
    """The page's keyboard shortcuts (a ``PAGE_EXTRAS`` maker)."""
    return PageKeys(state)
