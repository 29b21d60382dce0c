"""Section «fingerprint» in Chromium: the distances in the page are the sliced table's; keys and buttons move them."""

from __future__ import annotations

import numpy as np
import pytest

from app.model import core
from tests.helpers import press, wait_for_source

pytestmark = pytest.mark.browser


def sliced(pos: int, first: int, last: int, T: int = 24, d_model: int = 32) -> np.ndarray:
    pe = core.encoding(T, d_model)[:, 2 * first:2 * last + 2]
    return np.linalg.norm(pe - pe[pos], axis=1)


def matches(pos: int, first: int, last: int):
    return lambda d: len(d["distance"]) == 24 and np.allclose(d["distance"], sliced(pos, first, last), atol=1e-12)


def test_fingerprint_distances_follow_the_keyboard_and_the_presets(page, app_url, console_errors):
    page.goto(f"{app_url}/fingerprint?lang=en&d_model=32&T=24&pos=3")
    data = wait_for_source(page, "fingerprint_distances", matches(3, 0, 15))
    assert data["q"].tolist() == list(range(24))
    # pos, then both neighbours: 2 and 4 are equally far from 3 (the distance depends on |pos − q| only).
    marks = wait_for_source(page, "fingerprint_marks", lambda d: len(d["q"]) == 3)
    assert marks["q"].tolist() == [3, 2, 4]
    assert marks["distance"][1] == marks["distance"][2] == pytest.approx(np.sort(sliced(3, 0, 15))[1], abs=1e-12)

    press(page, "position pos", "ArrowRight")
    wait_for_source(page, "fingerprint_distances", matches(4, 0, 15))

    page.get_by_role("button", name="Slowest pair only").click()
    data = wait_for_source(page, "fingerprint_distances", matches(4, 15, 15))
    assert data["distance"].max() < 0.004  # one slow wave: the whole table is almost one point
    marks = wait_for_source(page, "fingerprint_marks", lambda d: d["q"].tolist() == [4, 3, 5])
    assert marks["distance"][1] < 2e-4  # pos = 4: the closest are neighbours 3 and 5, 0.000178 away
    assert marks["label"][1] == "closest: q = 3 and 5 (0.00018)"

    page.get_by_role("button", name="Fastest pair only").click()
    wait_for_source(page, "fingerprint_distances", matches(4, 0, 0))
    page.get_by_role("button", name="All pairs").click()
    wait_for_source(page, "fingerprint_distances", matches(4, 0, 15))
    press(page, "from pair", "ArrowRight", times=2)
    wait_for_source(page, "fingerprint_distances", matches(4, 2, 15))
    assert console_errors == []
