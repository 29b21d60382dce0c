"""Issue 45, item 1, in Chromium: a lesson section built when the reader comes near it, long after the page
was drawn, takes the dark theme (Panel sends it past the document's callbacks, where the styler listens)."""

from __future__ import annotations

import pytest

from components.figure_theme import DARK_BACKGROUND
from tests.helpers import model_property, wait_until

pytestmark = pytest.mark.browser


def test_a_section_built_on_approach_is_dark_on_a_dark_page(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?lang=en&theme=dark#sum")
    # The section's figures exist only once the reader (here the jump to #sum) came near the section.
    wait_until(lambda: model_property(page, "sum_cross_plot", "border_fill_color") is not None, timeout=60,
               message="the sum section was never built")
    for name in ("sum_width_plot", "sum_ladder_plot", "sum_cross_plot"):
        wait_until(lambda name=name: model_property(page, name, "border_fill_color") == DARK_BACKGROUND,
                   timeout=15, message=f"{name} stayed {model_property(page, name, 'border_fill_color')!r}")
    assert console_errors == []
