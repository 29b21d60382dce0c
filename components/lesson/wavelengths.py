"""Lesson section 4, «the ladder»: the wavelength ladder view with what to look at and what to try."""

from __future__ import annotations

import math

import panel as pn

from app.model import core
from app.model.strings import number, text
from components.ladder import WavelengthLadder
from components.lesson.base import LessonSection


class LadderSection(LessonSection):
    """The ladder of wavelengths λᵢ = 2π·base^(2i/d) over the heatmap of PE, and a guide."""

    slug = "wavelengths"
    draws_mistakes = True
    controls = ("d_model", "T", "base", "pair")
    live_on = ("d_model", "T", "base")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        self.view = WavelengthLadder(state)
        # In place of the "steps" passage at d_model = 2: one pair has no later pair and no ladder to climb.
        self.steps_note = self.note_in_place_of(
            "steps", "steps", lambda: text(state.lang, "wavelengths_one_pair") if state.d_model == 2 else "",
            on=("d_model", "lang"))

    def live_values(self) -> dict[str, str]:
        s = self.state
        lam = core.wavelengths(s.d_model, s.base)
        return {
            "d_model": str(s.d_model),
            "T": str(s.T),
            "pairs": str(lam.size),
            "last_pair": str(lam.size - 1),
            "first_wavelength": number(lam[0], 2),
            # base^(2/d): the ladder's constant step.
            "ratio": number(core.ladder_step(s.d_model, s.base), 2),
            "last_wavelength": number(lam[-1], 1),
            "top": number(2 * math.pi * s.base, 1),
            "turning": str(core.count_within(lam, s.T)),
        }

    def describe(self) -> str:
        return ""  # the view shown here describes itself

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.passage("steps"), self.steps_note, self.control_panel(), self.view,
                self.passage("try")]
