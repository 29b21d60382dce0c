"""The page's one play control: it runs ``pos`` (or ``k``) at a chosen speed, looping or stopping at the end.

The steps are taken on the server (a periodic callback of the session), so every
view follows the state exactly as it follows a slider, and a key press (space,
``+``, ``-``; ``components.keyboard``) and the buttons change the same
parameters of the state: ``play``, ``speed``, ``loop``, ``play_k``. One per page
(``animation_for``): the clocks view, which used to carry a player of its own,
has none now, so no page shows two controls named "Play".

A page opened with ``play=1`` starts only once the browser has said whether its
reader asked for less motion (``prefers-reduced-motion``); if so it stays paused.
"""

from __future__ import annotations

from typing import ClassVar

import panel as pn
import param

from app.model.state import SPEEDS, ExplorerState
from app.model.strings import text
from components.address import refresh_address
from components.plainjs import PlainJSComponent
from components.stylesheets import WIDGET_STYLESHEET
from components.theme import WRAP
from components.widgets import mark_connected, one_message

#: The bar's look: one row that wraps; every colour from the theme's variables.
BAR_CSS = """
:host { --pe-gap: 0.6em; }
.bk-btn { font-size: 1.05rem; min-height: 40px; }
"""


class LabelledCheckbox(PlainJSComponent):
    """A checkbox inside its ``<label>``, so that its text is its accessible name.

    (Panel's ``Checkbox`` draws its text in a ``div`` beside the input: a screen reader
    hears an unnamed checkbox.)
    """

    value = param.Boolean(default=False, doc="Whether it is checked.")
    label = param.String(default="", doc="Its text and accessible name.")
    kind = param.String(default="", doc="The state parameter it shows (its input's class: pe-check-<kind>).")

    _stylesheets: ClassVar[list[str]] = ["""
    label { display: inline-flex; align-items: center; gap: 0.4em; font-size: 1.05rem; line-height: 1.3;
            color: var(--pe-t-ink, #222222); cursor: pointer; padding: 0.3em 0; }
    input { width: 1.15em; height: 1.15em; margin: 0; accent-color: var(--pe-t-focus, #0072B2); }
    input:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
    """]

    _esm = """
    export function render({ model }) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.className = "pe-check-" + model.kind;
      box.checked = model.value;
      box.addEventListener("change", () => { model.value = box.checked; });
      model.on("value", () => { box.checked = model.value; });
      label.append(box, model.label);
      return label;
    }
    """


def checkbox_for(state: ExplorerState, name: str, label: str) -> LabelledCheckbox:
    """A ``LabelledCheckbox`` kept equal to the state's boolean parameter ``name``, both ways."""
    box = LabelledCheckbox(value=getattr(state, name), label=label, kind=name, name=f"animation_{name}",
                           margin=(12, 10, 5, 10))
    box.param.watch(lambda event: setattr(state, name, event.new), "value")
    state.param.watch(lambda event: setattr(box, "value", event.new), name)
    return box


class Animation(pn.viewable.Viewer):
    """Play/pause, speed, loop or stop, and whether k runs instead of pos: one row of controls."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        lang = state.lang
        self._callback: pn.io.PeriodicCallback | None = None
        # play=1 from the address waits for the browser's word on reduced motion (``browser_ready``).
        self.wanted = state.play
        self.ready = False
        if state.play:
            state.play = False
        self.toggle = pn.widgets.Toggle.from_param(
            state.param.play, name=self._play_label(), color="primary", variant="outline",
            width=260, margin=(5, 10), stylesheets=[WIDGET_STYLESHEET, BAR_CSS])
        self.speed = pn.widgets.Select.from_param(
            state.param.speed, name=text(lang, "animation_speed"),
            options={text(lang, "animation_speed_value_one" if s == 1 else "animation_speed_value", speed=s): s
                     for s in SPEEDS},
            width=150, margin=(0, 10, 5, 10), stylesheets=[WIDGET_STYLESHEET],
            description=None)  # not the parameter's English docstring as a tooltip (components.controls.widget_for)
        self.loop = checkbox_for(state, "loop", text(lang, "animation_loop"))
        self.play_k = checkbox_for(state, "play_k", text(lang, "animation_k"))
        # Wraps on a narrow page (an iframe in a course page) rather than running off its right edge.
        self._layout = pn.Row(self.toggle, self.speed, self.loop, self.play_k, name="animation",
                              css_classes=["pe-animation"], margin=0, styles=WRAP)
        state.param.watch(self._run, ["play"])
        state.param.watch(self._retime, ["speed"])

    def _play_label(self) -> str:
        return text(self.state.lang, "animation_pause" if self.state.play else "animation_play")

    # -- browser --------------------------------------------------------------------------------

    def browser_ready(self, reduced_motion: bool) -> None:
        """The page is drawn; start playing if the address asked for it and the reader did not ask for less motion."""
        if self.ready:
            return
        self.ready = True
        if self.wanted and not reduced_motion:
            self.state.play = True

    # -- the clock ------------------------------------------------------------------------------

    def _run(self, event: param.parameterized.Event) -> None:
        self.toggle.name = self._play_label()
        if event.new and self._callback is None:
            if self._at_end():
                self._restart()
            self._callback = pn.state.add_periodic_callback(self.step, period=self.period)
        elif not event.new and self._callback is not None:
            self._callback.stop()
            self._callback = None
            # Steps are not written into the address one by one (20 a second); where play stopped is.
            refresh_address(self.state)

    def _retime(self, _event: param.parameterized.Event) -> None:
        if self._callback is not None:
            self._callback.period = self.period

    @property
    def period(self) -> int:
        """Milliseconds between two steps at the current speed."""
        return round(1000 / self.state.speed)

    def _at_end(self) -> bool:
        s = self.state
        return (s.k if s.play_k else s.pos) >= s.T - 1

    def _restart(self) -> None:
        s = self.state
        if s.play_k:
            s.k = -(s.T - 1)
        else:
            s.pos = 0

    def step(self) -> None:
        """One step: pos (or k) + 1; at the end, back to the start or stop."""
        mark_connected()
        with one_message():
            s = self.state
            if not self._at_end():
                if s.play_k:
                    s.k += 1
                else:
                    s.pos += 1
            elif s.loop:
                self._restart()
            else:
                s.play = False

    def faster(self, steps: int) -> None:
        """Move the speed ``steps`` places along ``SPEEDS`` (negative: slower), stopping at the ends."""
        at = SPEEDS.index(self.state.speed)
        self.state.speed = SPEEDS[max(0, min(at + steps, len(SPEEDS) - 1))]

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout


def animation_for(state: ExplorerState) -> Animation:
    """The page's one ``Animation`` (built on first use)."""
    animation = state.parts.get("animation")
    if not isinstance(animation, Animation):
        animation = state.parts["animation"] = Animation(state)
    return animation
