"""Section «score» in Chromium: the page's sources equal app.core, and the keys and the heads switch move them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from app import core
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
