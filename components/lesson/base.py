"""What every lesson section shares: its prose, its own controls, its live numbers."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import ClassVar

import panel as pn
import param
from panel.custom import JSComponent

from app.model.cells import CELLS
from app.model.prose import SectionProse, section_prose
from app.model.state import ExplorerState
from app.model.strings import minus_sign, text
from components.code_cell import CodeCell
from components.controls import Controls
from components.describe import Description
from components.mistake_note import MistakeNote
from components.prose import Prose
from components.theme import NOTE_CSS
from components.widgets import LiveHTML

_DEFAULT_NAME = re.compile(r"^[A-Z][A-Za-z]*\d{5}$")


class LessonSection(pn.viewable.Viewer):
    """A section of the lesson: passages of prose around its figures, and the controls it needs.

    A subclass sets ``slug`` (its route, its ``#anchor`` and the name of its prose
    files), ``controls`` (the state's parameters it shows sliders for), builds
    its figures once in ``__init__`` and lays them out in ``layout()``. The
    live numbers of its passages come from ``live_values()``; a subclass calls
    ``refresh_text()`` from the watchers that change them (only the changed
    numbers are sent). The heading and the links to the previous and next
    sections are the page's (``app.pages``), not the section's.
    """

    slug: ClassVar[str] = ""
    controls: ClassVar[tuple[str, ...]] = ()
    #: Parameters of the state whose change may change ``live_values()``.
    live_on: ClassVar[tuple[str, ...]] = ()
    #: Whether the page's play control (which runs pos, or k) moves anything in this section: its own
    #: page shows play only then.
    plays: ClassVar[bool] = True
    #: Whether the section shows a view that draws the state's ``mistake`` (the ladder, the score curve, the
    #: checks) under prose about the correct encoding: it then starts with a ``MistakeNote``.
    draws_mistakes: ClassVar[bool] = False
    #: Parameters of the state whose change may change ``describe()``; by default its controls and ``live_on``.
    described_by: ClassVar[tuple[str, ...] | None] = None
    #: Whether ``live_values()`` and ``describe()`` read the state alone, not a table that one of the
    #: section's watchers keeps: then a second call in one step with the same values is skipped (see
    #: ``inputs_changed``). Not so where a size's watcher refills a table the text reads: the first call
    #: (a value that follows the size) comes before that watcher, and only the second one is right.
    text_reads_state_only: ClassVar[bool] = False

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        self.prose: SectionProse = section_prose(self.slug, state.lang)
        self._passages: dict[str, Prose] = {}
        self._notes: list[LiveHTML] = []
        self._layout: pn.viewable.Viewable | None = None
        self._drawn_from: dict[str, tuple] = {}
        self._code: CodeCell | None = None
        if self.live_on:
            state.param.watch(self._follow_live_on, list(self.live_on))

    def inputs_changed(self, key: str, *names: str) -> bool:
        """Whether the state's ``names`` differ from when the update ``key`` last asked (and remember them).

        A size step can call an update twice: the state first moves the values that depend on the
        size (``pairs_to`` with ``d_model``, ``reserve``, a clamped ``pos``), which calls the watchers
        of those values with the new size already in place, then calls the size's own watchers. The
        second call would draw from the same values again.
        """
        values = tuple(getattr(self.state, name) for name in names)
        if self._drawn_from.get(key) == values:
            return False
        self._drawn_from[key] = values
        return True

    def _follow_live_on(self, *_events: object) -> None:
        if not self.text_reads_state_only or self.inputs_changed("live_on", *self.live_on):
            self.refresh_text()

    def passage(self, part: str) -> Prose:
        """The passage ``part`` of this section's prose (built once), named ``<slug>_<part>_text``."""
        if part not in self._passages:
            self._passages[part] = Prose(self.prose.parts[part], values=self.live_values(),
                                         name=f"{self.slug}_{part}_text")
        return self._passages[part]

    def note_box(self, name: str) -> LiveHTML:
        """An empty box for a sentence in the notes' type, named ``<slug>_<name>_note``."""
        note = LiveHTML(name=f"{self.slug}_{name}_note", css=NOTE_CSS, sizing_mode="stretch_width")
        self._notes.append(note)
        return note

    def note_in_place_of(self, part: str, name: str, sentence: Callable[[], str], on: Sequence[str]) -> LiveHTML:
        """A ``note_box`` shown in place of passage ``part`` whenever ``sentence()`` says something (a passage
        that does not apply to the current sizes), kept up to date as the state's ``on`` change."""
        note = self.note_box(name)

        def show(*_events: object) -> None:
            self.passage_or_note(part, note, sentence())

        self.state.param.watch(show, list(on))
        show()
        return note

    def passage_or_note(self, part: str, note: LiveHTML, sentence: str) -> None:
        """Passage ``part``, or, when ``sentence`` is given, that sentence in ``note`` in its place (a passage
        that does not apply to the current sizes). Hidden by CSS (``Prose.hidden``): ``visible`` would make
        BokehJS lay the whole page out again."""
        self.passage(part).hidden = bool(sentence)
        note.object = f'<p class="nt">{html.escape(sentence)}</p>' if sentence else ""

    def live_values(self) -> dict[str, str]:
        """The live numbers of this section's passages, formatted; override in a section that has any."""
        return {}

    def refresh_text(self) -> None:
        """Send the live numbers that changed."""
        if self._passages:
            values = self.live_values()
            for prose in self._passages.values():
                prose.show(values)

    def own_names(self, view: pn.viewable.Viewable) -> pn.viewable.Viewable:
        """``view`` with ``<slug>_`` before the name of each of its named models; returns it.

        For a view that another section of ``/`` already shows: Bokeh finds a model by name
        only when no other model of the page has it (``get_model_by_name``).
        """
        layout = view.__panel__() if isinstance(view, pn.viewable.Viewer) else view
        prefix = f"{self.slug}_"
        for pane in layout.select(pn.pane.Bokeh):
            for model in pane.object.references():
                if model.name and not model.name.startswith(prefix):
                    model.name = prefix + model.name
        for component in layout.select(lambda obj: isinstance(obj, JSComponent | pn.layout.ListPanel)):
            # Panel's own default names ("Column00123") name nothing a test or an embed looks for.
            if component.name and not component.name.startswith(prefix) and not _DEFAULT_NAME.match(component.name):
                with param.edit_constant(component):
                    component.name = prefix + component.name
        return view

    def control_panel(self, parameters: Sequence[str] | None = None, columns: int = 3) -> pn.viewable.Viewable:
        """Sliders for ``parameters`` (default: the section's ``controls``), next to the figures.

        Only those an embed's ``controls=`` names (``ExplorerState.shows``); none: an empty column.
        """
        shown = [name for name in (parameters or self.controls) if self.state.shows(name)]
        if not shown:
            return pn.Column(height=0, margin=0, sizing_mode="stretch_width")
        return Controls(self.state, shown, columns=columns, prefix=self.slug)

    def describe(self) -> str:
        """What the section's main figure shows now, in a sentence in the page's language (its text alternative).

        The default names the current value of each of the section's controls; a section overrides it
        with what its main figure says (numbers from ``app.model.core``). An empty sentence: no description.
        """
        s = self.state
        values = []
        for name in self.controls:
            value = getattr(s, name)
            if isinstance(s.param[name], param.Selector) and isinstance(value, str):  # a word: its label
                value = text(s.lang, f"{name}_{value}")
            elif name == "sentence":
                value = " ".join(value) if isinstance(value, list | tuple) else value
            values.append(f"{text(s.lang, name)} = {minus_sign(str(value))}")
        return text(s.lang, "describe_section", values="; ".join(values)) if values else ""

    def description(self) -> Description | None:
        """The section's ``Description`` (named ``<slug>_description``), following ``described_by``."""
        if not self.describe():
            return None
        on = (tuple(dict.fromkeys((*self.controls, *self.live_on))) if self.described_by is None
              else self.described_by)
        return Description(self.state, self.prose.title, lambda _state: self.describe(), on,
                           name=f"{self.slug}_description", skip_repeats=self.text_reads_state_only)

    def layout(self) -> list[pn.viewable.Viewable]:
        """The section's parts, top to bottom; the default is every passage in file order."""
        return [self.passage(part) for part in self.prose.parts]

    def on_a_slide(self, parts: list[pn.viewable.Viewable]) -> list[pn.viewable.Viewable]:
        """``parts`` as the page shows them; in presentation mode, the text before the first control or figure
        moved to the end, so that a slide opens on something to drag and watch (the text that introduced it
        is the teacher's to say, and still there below)."""
        if not self.state.present:
            return parts
        lead = 0
        while lead < len(parts) and self.is_text(parts[lead]):
            lead += 1
        return parts if lead == len(parts) else [*parts[lead:], *parts[:lead]]

    def is_text(self, part: pn.viewable.Viewable) -> bool:
        """Whether ``part`` is one of the section's passages or sentence boxes (``note_box``)."""
        return any(part is box for box in (*self._passages.values(), *self._notes))

    def cell_context(self) -> dict[str, object]:
        """The section's own choices its code cell needs beyond the state (``app.model.cells.cell_source``)."""
        return {}

    def code_part(self) -> CodeCell | None:
        """'The code for this figure' under the section's parts (named ``<slug>_code``), for every slug with a
        cell in ``app.model.cells.CELLS``: a new section gets one by adding its entry there."""
        if self.slug not in CELLS or self.state.controls:  # an embed that chose its controls shows what it chose
            return None
        if self._code is None:
            self._code = CodeCell(self.state, self.slug, context=self.cell_context)
        return self._code

    def refresh_code(self) -> None:
        """Rewrite an open code part after a change of the section's own choices (``cell_context``)."""
        if self._code is not None:
            self._code.refresh()

    def __panel__(self) -> pn.viewable.Viewable:
        if self._layout is None:
            note = MistakeNote(self.state, prefix=f"{self.slug}_") if self.draws_mistakes else None
            parts = [note, *self.on_a_slide(self.layout()), self.code_part(), self.description()]
            self._layout = pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                                     name=f"{self.slug}_section",
                                     css_classes=["pe-lesson-section"])
        return self._layout
