"""A figure's text alternative that follows the state, announced politely when the learner pauses.

A view or a lesson section gives ``Description`` the figure's name and a function
``state -> sentence`` (numbers from ``app.model.core``); the component keeps the sentence
equal to the state and lets a screen reader announce it (``aria-live="polite"``)
once the learner has stopped changing things for ``DELAY_MS``: a drag or a running
player changes it many times a second, and only the last sentence is read.

In the page it is a small labelled block after the figure (visually hidden: the
figure shows the same numbers), named ``<view>_description``: the model with that
name is its data model, whose ``text`` is the current sentence and ``label`` the
figure's name. The sentence is sent only when it changed, with the same direct
path as ``LiveHTML`` (``components.widgets.push_property``), so a slider step pays for one
string format and, when the sentence moved, ~200 bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import param

from app.model.state import ExplorerState
from components.plainjs import PlainJSComponent
from components.widgets import push_property

#: Milliseconds of quiet after the last change before the new sentence is announced.
DELAY_MS = 600

Sentence = Callable[[ExplorerState], str]

#: Visually hidden, still read (the usual "sr-only" pattern); shown when focused into, for sighted
#: keyboard users who land on it through a screen reader's cursor.
CSS = """
.pe-description { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
                  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
"""


class Description(PlainJSComponent):
    """The figure's name and a sentence that says what it shows now (see the module)."""

    label = param.String(default="", doc="The figure's accessible name, in the page's language.")
    text = param.String(default="", doc="What the figure shows now, in the page's language (plain text).")
    delay = param.Integer(default=DELAY_MS, bounds=(0, 10_000), doc="Quiet (ms) before a new sentence is announced.")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("section");
      box.className = "pe-description";
      const heading = document.createElement("h3");
      const live = document.createElement("p");
      live.setAttribute("aria-live", "polite");
      live.setAttribute("aria-atomic", "true");
      box.setAttribute("aria-label", model.label);
      heading.textContent = model.label;
      live.textContent = model.text;
      box.append(heading, live);
      let timer = 0;
      model.on("text", () => {
        clearTimeout(timer);
        timer = setTimeout(() => { live.textContent = model.text; }, model.delay);
      });
      model.on("label", () => { heading.textContent = model.label; box.setAttribute("aria-label", model.label); });
      return box;
    }
    """

    def __init__(self, state: ExplorerState, label: str, sentence: Sentence, on: Sequence[str], *, name: str,
                 skip_repeats: bool = False, **params):
        params.setdefault("margin", 0)
        params.setdefault("stylesheets", [CSS])
        super().__init__(label=label, text=sentence(state), name=name, **params)
        self._state = state
        self._sentence = sentence
        self._on = tuple(on)
        self._skip_repeats = skip_repeats
        self._seen = self._values()
        if on:
            state.param.watch(self._follow, list(on))

    def _values(self) -> tuple:
        return tuple(getattr(self._state, name) for name in self._on)

    def _follow(self, *_events: object) -> None:
        # A size step may call this twice with the same values (the size's own event after those of the
        # values that follow it, e.g. d_model then pairs_to). With ``skip_repeats`` (a sentence made from
        # the state alone) the sentence is made once.
        values = self._values()
        if not self._skip_repeats or values != self._seen:
            self._seen = values
            self.refresh()

    def refresh(self, *_events: object) -> None:
        """Send the sentence for the current state, if it changed."""
        sentence = self._sentence(self._state)
        if sentence != self.text:
            push_property(self, "text", sentence)

