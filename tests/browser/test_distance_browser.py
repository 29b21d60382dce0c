"""The distance and checks views in a real Chromium: data in the page equals app.core, keys move it."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from app.model.strings import text
from tests.helpers import source_data, wait_for_source, wait_until

pytestmark = pytest.mark.browser

#: noUiSlider puts the range on each handle; only k's range goes below zero, only T's reaches 2048.
K_HANDLE = '.noUi-handle[aria-valuemin^="-"]'
T_HANDLE = '.noUi-handle[aria-valuemin="1.0"][aria-valuemax="2048.0"]'
POS_HANDLE = '.noUi-handle[aria-valuemin="0.0"][aria-valuemax="23.0"]'


def press(page, selector: str, key: str, times: int = 1) -> None:
    handle = page.locator(selector)
    expect(handle).to_have_count(1)
    handle.focus()
    for _ in range(times):
        handle.press(key)


def assert_curve(data: dict, T: int, d_model: int) -> None:
    assert data["k"].tolist() == list(range(-(T - 1), T))
    np.testing.assert_allclose(data["score"], core.relative_scores(data["k"], d_model), rtol=0, atol=1e-12)


def test_distance_page_shows_the_curve_and_follows_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/distance?d_model=32&T=24&k=3")
    curve = wait_for_source(page, "distance", lambda d: len(d["k"]) == 47)
    assert_curve(curve, 24, 32)
    marker = wait_for_source(page, "distance_marker", lambda d: len(d["k"]) == 1)
    assert marker["k"].tolist() == [3] and list(marker["label"]) == ["S(3) = 12.272398"]

    samples = source_data(page, "distance_samples")
    assert sorted(set(samples["p"].astype(int).tolist())) == [0, 8, 15, 23]
    np.testing.assert_allclose(samples["score"], core.relative_scores(samples["k"], 32), rtol=0, atol=1e-12)

    # Count what reaches the curve's source from now on: a k step must not resend it.
    page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("distance");
        if (m) { window.__curveSends = 0; m.properties.data.change.connect(() => window.__curveSends++); }
      }
    }""")
    press(page, K_HANDLE, "ArrowRight")
    marker = wait_for_source(page, "distance_marker", lambda d: d["k"].tolist() == [4])
    assert list(marker["label"]) == [text("es", "distance_marker", k=4, score=float(core.relative_scores(4, 32)))]
    assert page.evaluate("window.__curveSends") == 0

    press(page, T_HANDLE, "ArrowLeft", times=2)
    curve = wait_for_source(page, "distance", lambda d: len(d["k"]) == 43)
    assert_curve(curve, 22, 32)
    assert page.evaluate("window.__curveSends") >= 1  # the counter does see a resend
    assert console_errors == []


def test_shrinking_T_below_k_drags_the_marker_along(page, app_url):
    page.goto(f"{app_url}/distance?lang=en&d_model=32&T=5&k=4")
    wait_for_source(page, "distance", lambda d: len(d["k"]) == 9)
    press(page, T_HANDLE, "ArrowLeft")
    wait_for_source(page, "distance_marker", lambda d: d["k"].tolist() == [3])
    assert_curve(wait_for_source(page, "distance", lambda d: len(d["k"]) == 7), 4, 32)


def test_checks_page_texts(page, app_url, console_errors):
    page.goto(f"{app_url}/checks?lang=en&d_model=32&T=24&k=3&pos=0")
    cards = page.locator("p.ck")  # inside each card Div's shadow root, which Playwright pierces
    expect(cards).to_have_count(3)
    expect(cards.nth(0)).to_contain_text("√(d_model/2) = 4:")
    expect(cards.nth(1)).to_contain_text(text("en", "check_rotation", count=21, error=0).split(":")[0])
    expect(cards.nth(2)).to_contain_text(text("en", "check_target_inside", target=3, positions="0 … 23"))

    # The printed error is the core's residual, of the order the lesson gives.
    def printed_error() -> tuple[float] | None:
        # The card can be mid-render (empty) for a moment: poll until it holds a number.
        words = cards.nth(1).inner_text().rstrip(". \n").split()
        return (float(words[-1]),) if words else None

    (printed,) = wait_until(printed_error, message="the rotation check never printed its error")
    assert printed < 1e-13
    assert printed == pytest.approx(core.rotation_residual(3, 24, 32), rel=0.05)

    press(page, POS_HANDLE, "End")
    expect(cards.nth(2)).to_contain_text(text("en", "check_target_outside", target=26, positions="0 … 23"))
    press(page, K_HANDLE, "ArrowLeft", times=4)  # k = -1: 23 positions p have p + k in the table
    expect(cards.nth(1)).to_contain_text("over 23 positions")
    expect(cards.nth(2)).to_contain_text(text("en", "check_target_inside", target=22, positions="0 … 23"))
    assert console_errors == []


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (1920, 1080)])
def test_nothing_sticks_out_horizontally(page, app_url, width, height):
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{app_url}/distance?d_model=32&T=24&k=3")
    wait_for_source(page, "distance", lambda d: len(d["k"]) == 47)
    wait_until(lambda: page.locator("canvas").count() > 0, message="no canvas")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    box = page.locator(".bk-Canvas, canvas").first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
