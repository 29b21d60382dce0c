"""A note over figures drawn from a table with a published mistake, and a button back to the correct one.

``mistake`` (``app.core.MISTAKES``) is chosen in the mistakes section, and it stays in the address and in
every link: the ladder, the score curve and the live checks then draw the buggy table wherever they are
shown. The prose around them describes the correct encoding ("the largest error is rounding, about
10⁻¹⁵"), so without a word a reader would see the checks fail under a text that says they pass.
"""

from __future__ import annotations

import html

import panel as pn
import param

from app.prose import section_prose
from app.state import ExplorerState
from app.strings import text
from components.theme import WIDGET_STYLESHEET, WRAP, LiveHTML


class MistakeNote(pn.viewable.Viewer):
    """Shown while the state's ``mistake`` is not "none": which mistake, and a button that turns it off.

    Its text's model is named ``<prefix>mistake_note``.
    """

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, prefix: str = "", **params):
        super().__init__(state=state, **params)
        lang = state.lang
        self.note = LiveHTML(name=f"{prefix}mistake_note", sizing_mode="stretch_width", styles={"flex": "1 1 420px"})
        self.reset = pn.widgets.Button(label=text(lang, "mistake_note_reset"), color="primary", variant="outline",
                                       stylesheets=[WIDGET_STYLESHEET], width=260, margin=(10, 10), align="center")
        self.reset.on_click(self._correct)
        self._layout = pn.Row(self.note, self.reset, sizing_mode="stretch_width", styles=WRAP,
                              name=f"{prefix}mistake_note_row")
        self._show()

    @param.depends("state.mistake", watch=True)
    def _show(self) -> None:
        s = self.state
        self._layout.visible = s.mistake != "none"
        if s.mistake != "none":
            self.note.object = ('<div class="pe-notice" role="status">' + html.escape(text(
                s.lang, "mistake_note", mistake=text(s.lang, f"mistake_{s.mistake}"),
                section=section_prose("mistakes", s.lang).title)) + "</div>")

    def _correct(self, _event: object) -> None:
        self.state.mistake = "none"

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
