"""On the full page, one key press moves every view that depends on the parameter.

Expected values are computed here from the formula in plain NumPy, not read
from the components, so the test checks the page against the mathematics.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.model.strings import text
from tests.helpers import press, wait_for_source

pytestmark = pytest.mark.browser

D_MODEL, T = 32, 24


def tip(position: int, pair: int) -> tuple[float, float]:
    """(PE[position, 2i], PE[position, 2i+1]) straight from the paper's formula."""
    angle = position / 10000.0 ** (2 * pair / D_MODEL)
    return float(np.sin(angle)), float(np.cos(angle))


def pair_clock_is(pair: int, pos: int, k: int):
    expected = np.array([tip(pos, pair), tip(pos + k, pair)])

    def check(data: dict) -> bool:
        got = np.column_stack([data["x"], data["y"]]) if len(data.get("x", [])) == 2 else None
        return got is not None and np.allclose(got, expected, atol=1e-3)  # rounded to 3 decimals on the wire

    return check


def row_hands_are(pos: int, k: int):
    def check(data: dict) -> bool:
        pairs = np.asarray(data["pair"], dtype=int)
        want = np.array([[*tip(pos, i), *tip(pos + k, i)] for i in pairs])
        # Each hand a ray of one radius from its clock's centre, by Bokeh's angle: its tip's offset is (cos, sin).
        angles = {hand: np.asarray(data[f"{hand}_angle"], dtype=float) for hand in ("pos", "target")}
        got = np.column_stack([np.cos(angles["pos"]), np.sin(angles["pos"]),
                               np.cos(angles["target"]), np.sin(angles["target"])])
        return pairs.size > 0 and np.allclose(got, want, atol=1e-3)  # rounded to 3 decimals on the wire

    return check


def score(k: int) -> float:
    return float(sum(np.cos(k / 10000.0 ** (2 * i / D_MODEL)) for i in range(D_MODEL // 2)))


def test_k_pos_and_pair_move_every_dependent_view(page, app_url):
    page.goto(f"{app_url}/explore?lang=en&d_model={D_MODEL}&T={T}&pair=0&pos=0&k=3")
    wait_for_source(page, "pair_clock", pair_clock_is(0, 0, 3))

    press(page, text("en", "k"), "ArrowRight")  # k = 4
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [0, 4])
    wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4] and abs(d["score"][0] - score(4)) < 1e-9)
    wait_for_source(page, "pair_clock", pair_clock_is(0, 0, 4))
    wait_for_source(page, "clocks", row_hands_are(0, 4))

    press(page, text("en", "pos"), "ArrowRight", times=2)  # pos = 2
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [2, 6])
    wait_for_source(page, "pair_clock", pair_clock_is(0, 2, 4))
    wait_for_source(page, "clocks", row_hands_are(2, 4))

    press(page, text("en", "pair"), "ArrowRight", times=3)  # pair = 3
    wait_for_source(page, "pair_outline", lambda d: list(d["left"]) == [6] and list(d["right"]) == [8])
    wait_for_source(page, "ladder_selected", lambda d: np.allclose(
        d["wavelength"], [2 * np.pi * 10000.0 ** (6 / D_MODEL)], rtol=1e-9))
    wait_for_source(page, "pair_clock", pair_clock_is(3, 2, 4))
    wait_for_source(page, "clocks", lambda d: 3 in list(d["pair"]))
