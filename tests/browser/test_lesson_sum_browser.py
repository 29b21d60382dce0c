"""Section «sum» in Chromium: the page's sources equal app.core, and the reserve and k sliders move them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.model import core
from tests.helpers import press, wait_for_source

pytestmark = pytest.mark.browser


def test_sum_section_follows_the_reserve_and_k(page, app_url, console_errors):
    page.goto(f"{app_url}/sum?lang=en&d_model=32&T=24&k=3&reserve=4")
    width = wait_for_source(page, "sum_width", lambda d: len(d["part"]) == 3)
    assert list(width["right"]) == [32, 28, 32]
    reserved = wait_for_source(page, "sum_reserved_ladder", lambda d: len(d["pair"]) == 2)
    np.testing.assert_allclose(reserved["wavelength"], [2 * math.pi, 2 * math.pi * 100], rtol=1e-12)
    cross = wait_for_source(page, "sum_cross", lambda d: len(d["m"]) == 21)
    np.testing.assert_allclose(cross["cross"], core.cross_terms_by_start(3, 24, 32)[1], atol=1e-9)

    press(page, "coordinates for position", "ArrowRight")
    wait_for_source(page, "sum_reserved_ladder", lambda d: len(d["pair"]) == 3)
    wait_for_source(page, "sum_width", lambda d: list(d["right"]) == [32, 26, 32])

    press(page, "offset k", "ArrowLeft", times=4)  # k = -1
    cross = wait_for_source(page, "sum_cross", lambda d: len(d["m"]) == 23)
    np.testing.assert_allclose(cross["cross"], core.cross_terms_by_start(-1, 24, 32)[1], atol=1e-9)
    assert console_errors == []


def test_at_the_end_of_the_reserve_the_ladders_comparison_gives_way_to_a_sentence(page, app_url, console_errors):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/sum?lang=en&d_model=32&T=24&reserve=30")
    comparison = page.get_by_text("has fewer rungs")
    expect(comparison).to_be_visible(timeout=20_000)
    press(page, "coordinates for position", "ArrowRight")  # r = 32 = d_model
    expect(page.get_by_text("the concatenated ladder is the summed one, rung for rung")).to_be_visible()
    expect(comparison).to_be_hidden()
    press(page, "coordinates for position", "ArrowLeft")
    expect(comparison).to_be_visible()
    expect(page.get_by_text("rung for rung")).to_have_count(0)
    assert console_errors == []
