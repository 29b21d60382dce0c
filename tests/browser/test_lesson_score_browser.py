"""Section «score» in Chromium: the page's sources equal app.core, and the keys and the heads switch move them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from tests.helpers import click_when_still, press, wait_for_source

pytestmark = pytest.mark.browser


def test_score_section_follows_k_and_the_heads(page, app_url, console_errors):
    page.goto(f"{app_url}/score?lang=en&d_model=32&T=24&k=3&pos=0&heads=random")
    terms = wait_for_source(page, "qk_terms", lambda d: len(d["term"]) == 4 and d["value"][0] != 0)
    assert list(terms["term"]) == ["ee", "ep", "pe", "pp"]
    np.testing.assert_allclose(terms["value"], core.qk_terms(0, 3, 24, 32, "random"), atol=1e-9)
    pp = wait_for_source(page, "pp_by_start", lambda d: len(d["m"]) == 21)
    np.testing.assert_allclose(pp["value"], core.position_term_by_start(3, 24, 32, "random")[1], atol=1e-9)
    assert np.ptp(pp["value"]) > 1.0

    press(page, "offset k", "ArrowRight")
    terms = wait_for_source(page, "qk_terms", lambda d: np.allclose(d["value"], core.qk_terms(0, 4, 24, 32)))
    wait_for_source(page, "pp_by_start", lambda d: len(d["m"]) == 20)

    aligned = page.get_by_role("button", name="aligned")
    click_when_still(aligned)
    expect(aligned).to_have_class(re.compile(r"\bbk-active\b"))
    pp = wait_for_source(page, "pp_by_start", lambda d: len(d["m"]) == 20 and np.ptp(d["value"]) < 1e-9)
    np.testing.assert_allclose(pp["value"], core.position_term_by_start(4, 24, 32, "aligned")[1], atol=1e-9)
    assert console_errors == []


@pytest.mark.parametrize(("lang", "phrase"), [("es", "aquí solo cabe uno"), ("en", "here only one fits")])
def test_one_start_is_said_as_one_and_the_page_fits_the_screen(page, app_url, lang, phrase):
    """At |k| = T - 1 one start fits: the aligned-heads sentence says so, and its live phrase (live values
    do not wrap) leaves the page no wider than a 1280 px screen."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/score?lang={lang}&d_model=32&T=24&k=23&pos=0&heads=aligned")
    wait_for_source(page, "pp_by_start", lambda d: len(d["m"]) == 1)
    expect(page.get_by_text(phrase)).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
