"""A note over figures drawn from a table with a published mistake, and a button back to the correct one.

``mistake`` (``app.model.core.MISTAKES``) is chosen in the mistakes section, and it stays in the address and in
every link: the ladder, the score curve and the live checks then draw the buggy table wherever they are
shown. The prose around them describes the correct encoding ("the largest error is rounding, about
10⁻¹⁵"), so without a word a reader would see the checks fail under a text that says they pass.

The note shows and hides itself in the browser (CSS), not with ``visible``: on ``/`` toggling a
layout's ``visible`` makes BokehJS lay the whole page out again (~0.9 s), and a click on a mistake
there toggles the notes of three sections.
"""

from __future__ import annotations

import param

from app.model.prose import section_prose
from app.model.state import ExplorerState
from app.model.strings import text
from components.plainjs import PlainJSComponent
from components.present import SWITCHES_CSS
from components.stylesheets import STYLESHEET

# The button looks like the page's switches (Present, Dark theme): SWITCHES_CSS.
NOTE_CSS = """
.pe-mistake { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5em 1em; }
.pe-mistake .pe-notice { flex: 1 1 420px; margin: 0; }
"""


class MistakeNote(PlainJSComponent):
    """Shown while the state's ``mistake`` is not "none": which mistake, and a button that turns it off."""

    note = param.String(default="", doc="The note's text (set as text, not markup); empty: the note is not shown.")
    label = param.String(default="", doc="The button's label.")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-mistake pe-switches";
      const note = document.createElement("div");
      note.setAttribute("role", "status");
      const button = document.createElement("button");
      button.type = "button";
      button.addEventListener("click", () => model.send_msg("correct"));
      box.append(note, button);
      const show = () => {
        note.textContent = model.note;
        button.textContent = model.label;
        box.style.display = model.note ? "" : "none";
        // A hidden note is no notice: a page's ".pe-notice" is the one it shows.
        note.className = model.note ? "pe-notice" : "";
      };
      show();
      model.on(["note", "label"], show);
      return box;
    }
    """

    def __init__(self, state: ExplorerState, prefix: str = "", **params):
        params.setdefault("name", f"{prefix}mistake_note")
        super().__init__(label=text(state.lang, "mistake_note_reset"), sizing_mode="stretch_width",
                         margin=(5, 10), stylesheets=[STYLESHEET + SWITCHES_CSS + NOTE_CSS], **params)
        self.state = state
        state.param.watch(lambda _event: self._show(), "mistake")
        self._show()

    def _show(self) -> None:
        s = self.state
        self.note = "" if s.mistake == "none" else text(
            s.lang, "mistake_note", mistake=text(s.lang, f"mistake_{s.mistake}"),
            section=section_prose("mistakes", s.lang).title)

    def _handle_msg(self, msg: object) -> None:
        # Whatever a client sends: only this word is read.
        if msg == "correct":
            self.state.mistake = "none"
