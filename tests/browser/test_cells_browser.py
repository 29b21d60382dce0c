"""The code part in Chromium: opened with the keyboard, it shows the cell for the state now, and follows it."""

from __future__ import annotations

import pytest

from tests.helpers import press, wait_until

pytestmark = pytest.mark.browser


def code_text(page) -> str:
    return page.locator("details.pe-code code").first.text_content() or ""


def test_code_part_opens_with_the_keyboard_and_follows_the_sliders(page, app_url, console_errors):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{app_url}/shift?lang=en&d_model=16&T=10&k=2")
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=60_000)
    summary = page.locator("details.pe-code summary").first
    summary.wait_for(timeout=60_000)
    assert summary.text_content() == "The code for this figure"
    summary.focus()
    page.keyboard.press("Enter")
    wait_until(lambda: "d_model, T, base = 16, 10, 10000" in code_text(page), timeout=30,
               message="the open part shows the cell for the address's state")
    assert "k, pair = 2, 0" in code_text(page)
    press(page, "d_model (width)", "ArrowRight")  # 16 -> 18
    wait_until(lambda: "d_model=18" in page.evaluate("location.search"), timeout=30, message="address follows")
    wait_until(lambda: "d_model, T, base = 18, 10, 10000" in code_text(page), timeout=30,
               message="the open part follows the slider")
    page.locator("details.pe-code button").first.click()
    wait_until(lambda: page.locator("details.pe-code [role=status]").first.text_content() == "Copied", timeout=10,
               message="copy confirmed")
    assert "d_model, T, base = 18, 10" in page.evaluate("navigator.clipboard.readText()")
    assert console_errors == []
