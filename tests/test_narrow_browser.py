"""No page runs off the right edge: an iframe in a course page (768 px) and a projector's 1280 px in
presentation mode, where every text and figure carries double type."""

from __future__ import annotations

import pytest

from app.lesson import SECTIONS
from app.pages import VIEWS
from tests.helpers import figure_count, plots_drawn, wait_until

pytestmark = pytest.mark.browser

_WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"


def overflow(page, url: str, route: str) -> int:
    """How many pixels the drawn page at ``url`` is wider than the window."""
    page.goto(url)
    wait_until(lambda: plots_drawn(page, figure_count(route)), timeout=40, message=f"{route} drawn")
    wide, window = page.evaluate(_WIDTH)
    return wide - window


@pytest.mark.parametrize("route", [*SECTIONS, *VIEWS, "explore"])
def test_a_page_fits_a_768_px_iframe(page, app_url, route):
    """The rows that used to run off (the play controls, the clock beside its block of M_k, the mistakes'
    buttons) wrap instead."""
    page.set_viewport_size({"width": 768, "height": 900})
    assert overflow(page, f"{app_url}/{route}?lang=es", route) <= 0


@pytest.mark.parametrize("route", ["hands", "clocks", "mistakes", "explore"])
def test_a_presented_page_fits_a_1280_px_projector(page, app_url, route):
    page.set_viewport_size({"width": 1280, "height": 800})
    assert overflow(page, f"{app_url}/{route}?lang=en&present=1", route if route != "explore" else "ladder") <= 0
