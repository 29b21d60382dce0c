"""Lesson section 5, «one clock per pair»: the pair clocks with what to look at and what to try."""

from __future__ import annotations

import math

import panel as pn

from app.model import core
from app.model.strings import number, significant, text
from components.clocks import PairClocks
from components.lesson.base import LessonSection

#: Across the whole table, less than this share of a turn is "barely moves" (36°): the hand's two ends
#: then sit within a few degrees of each other on a clock's face.
BARELY_MOVES_TURNS = 0.1


class ClocksSection(LessonSection):
    """The odometer: one clock per pair, fast pairs on the left, and the selected pair's turn ωᵢ·k."""

    slug = "hands"
    controls = ("pair", "pos", "k", "d_model")
    live_on = ("d_model", "T", "base", "pair", "pos", "k")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        self.view = PairClocks(state)
        # In place of the "play" passage at T = 1: a single position, so neither pos nor k can move.
        self.one_position_note = self.note_in_place_of(
            "play", "one_position", lambda: text(state.lang, "hands_one_position") if state.T == 1 else "",
            on=("T", "lang"))

    def live_values(self) -> dict[str, str]:
        s = self.state
        omega = float(core.frequencies(s.d_model, s.base)[s.pair])
        wavelength = float(core.wavelengths(s.d_model, s.base)[s.pair])
        turn = float(core.angles(s.k, s.d_model, s.base)[s.pair])
        return {
            "pair": str(s.pair),
            "pos": str(s.pos),
            "k": str(s.k),
            "target": str(s.target),
            "slowest": self.slowest() if s.d_model > 2 else text(s.lang, "hands_slowest_one"),
            "omega": significant(omega, 4),
            "wavelength": number(wavelength, 2),
            "turn": significant(turn, 4),
            "turn_fraction": significant(turn / (2 * math.pi), 3),
        }

    def slowest(self) -> str:
        """What the last pair does across the table, in words true at this state: its turn per position, from
        the first row to the last, and "barely moves" only when that is under ``BARELY_MOVES_TURNS`` turns."""
        s = self.state
        last = s.d_model // 2 - 1
        omega = float(core.frequencies(s.d_model, s.base)[last])
        across = float(core.angles(s.T - 1, s.d_model, s.base)[last])
        turns = across / (2 * math.pi)
        key = ("hands_slowest" if turns < BARELY_MOVES_TURNS
               else "hands_slowest_turning" if turns < 1 else "hands_slowest_round")
        return text(s.lang, key, pair=last, omega=significant(omega, 3), across=significant(across, 3),
                    turns=significant(turns, 2))

    def describe(self) -> str:
        return ""  # the view shown here describes itself

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(), self.view, self.passage("try"),
                self.passage("play"), self.one_position_note]
