"""The whole page in a real Chromium: it loads, draws, follows the keyboard and the URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from app.model.strings import text
from components.ladder import heatmap_values
from tests.helpers import press, slider_handle, wait_for_source, wait_until

pytestmark = pytest.mark.browser


def address(page) -> str:
    """The address bar as the page sees it (history.replaceState included)."""
    return page.evaluate("() => window.location.href")


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlparse(url).query).items()}


def assert_heatmap_shows(image: np.ndarray, T: int, d_model: int) -> None:
    """The page's image equals PE to within one colour bin (it is sent as 8-bit codes)."""
    assert image.shape == (T, d_model)
    np.testing.assert_allclose(heatmap_values(image), core.encoding(T, d_model), atol=1.0 / 256 + 1e-6)


def open_page(page, url: str) -> dict:
    page.goto(url)
    return wait_for_source(page, "heatmap", lambda d: len(d["image"]) == 1)


def test_page_loads_draws_and_follows_the_T_slider(page, app_url, console_errors):
    data = open_page(page, f"{app_url}/explore?lang=en&d_model=32&T=24")
    assert_heatmap_shows(data["image"][0], 24, 32)
    expect(page.locator("canvas").first).to_be_visible()
    expect(page.locator("body")).to_contain_text(text("en", "page_title"))
    wait_until(lambda: page.title() == text("en", "page_title"), message="the tab title is not the page's")
    assert page.evaluate("() => document.documentElement.lang") == "en"

    press(page, text("en", "T"), "ArrowRight")
    data = wait_for_source(page, "heatmap", lambda d: d["image"][0].shape == (25, 32))
    assert_heatmap_shows(data["image"][0], 25, 32)
    assert console_errors == []


def test_heatmap_shape_follows_d_model(page, app_url):
    open_page(page, f"{app_url}/explore?lang=en&d_model=32&T=24")
    press(page, text("en", "d_model"), "ArrowRight", times=2)
    data = wait_for_source(page, "heatmap", lambda d: d["image"][0].shape == (24, 36))
    assert_heatmap_shows(data["image"][0], 24, 36)
    ladder = wait_for_source(page, "ladder", lambda d: len(d["wavelength"]) == 18)
    np.testing.assert_allclose(ladder["wavelength"], core.wavelengths(36), rtol=1e-6)


def test_address_bar_follows_the_sliders(page, app_url):
    open_page(page, f"{app_url}/explore?lang=en&d_model=32&T=24&k=3")
    press(page, text("en", "k"), "ArrowRight")
    wait_until(lambda: query_of(address(page)).get("k") == "4", message="k=4 never reached the address bar")
    press(page, text("en", "pos"), "ArrowRight", times=2)
    wait_until(lambda: query_of(address(page)).get("pos") == "2", message="pos=2 never reached the address bar")
    query = query_of(address(page))
    # The page has one writer of its address: a slider's value stays in it when another slider writes,
    # and when the server sends the state's query (a size step), as the values it had.
    assert (query["d_model"], query["T"], query["lang"], query["k"]) == ("32", "24", "en", "4")
    press(page, text("en", "T"), "ArrowRight")
    wait_until(lambda: query_of(address(page)).get("T") == "25", message="T=25 never reached the address bar")
    query = query_of(address(page))
    assert (query["d_model"], query["k"], query["pos"]) == ("32", "4", "2")

    # A copied link reproduces the view.
    page.goto(address(page))
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [2, 6])


def test_a_slider_that_keeps_moving_does_not_hold_back_the_server_s_query(page, app_url):
    # Play runs pos 20 times a second: its slider hands a value every 50 ms, less than the pause the address
    # writer waits for. A query the server sends meanwhile (a size step) must still reach the address; it did
    # not when a slider's value came between the query and its write (here: at once, and every 40 ms after).
    open_page(page, f"{app_url}/explore?lang=en&d_model=32&T=24")
    page.evaluate("""() => {
      let i = 0;
      const move = () => window.__peAddress.set("sentence", "moving " + (i++ % 2));
      Bokeh.documents[0].get_model_by_name("address_bar").properties.query.change.connect(move);
      window.__moving = setInterval(move, 40);
    }""")
    press(page, text("en", "T"), "ArrowRight")  # the server sends the query with T=25 and the clamps
    try:
        wait_until(lambda: query_of(address(page)).get("T") == "25", timeout=10,
                   message="the server's query never reached the address while a slider kept moving")
    finally:
        page.evaluate("() => clearInterval(window.__moving)")


def test_junk_in_the_url_is_clamped_with_a_visible_escaped_notice(page, app_url, console_errors):
    hostile = "<img src=x onerror=alert(1)>"
    page.goto(f"{app_url}/explore?lang=en&d_model=33&T={hostile}&k=999&base=abc")
    data = wait_for_source(page, "heatmap", lambda d: len(d["image"]) == 1)
    assert data["image"][0].shape == (24, 34)  # T back to its default, d_model to the next even size
    notice = page.locator(".pe-notice")
    expect(notice).to_contain_text(hostile)  # shown as text...
    assert page.locator(".pe-notice img").count() == 0  # ...never as markup
    assert "&lt;img" in page.evaluate(  # the named model carries it, escaped
        "() => Bokeh.documents[0].get_model_by_name('notices').text")
    for name in ("d_model", "T", "k", "base"):
        expect(notice).to_contain_text(f"{name} =")
    expect(slider_handle(page, text("en", "k"))).to_have_attribute("aria-valuenow", "23.0")
    wait_until(lambda: query_of(address(page)).get("d_model") == "34", message="the clamped state is not in the URL")
    assert console_errors == []


def test_a_parameter_given_twice_is_read_once_with_a_notice(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=es&pos=3&pos=%3Cb%3E9%3C/b%3E&k=2&k=2")
    notice = page.locator(".pe-notice")
    expect(notice).to_contain_text("pos aparece más de una vez («3, <b>9</b>»); solo se lee el primero, «3».")
    expect(notice).not_to_contain_text("k aparece")  # the same value twice is no ambiguity
    assert page.locator(".pe-notice b").count() == 0
    expect(slider_handle(page, text("es", "pos"))).to_have_attribute("aria-valuenow", "3.0")
    # The address keeps one pos once the page has written its state into it.
    wait_until(lambda: address(page).count("pos=") == 1 and query_of(address(page)).get("pos") == "3",
               message="the address still carries both values")
    assert console_errors == []


def test_language_link_switches_and_keeps_the_state(page, app_url):
    open_page(page, f"{app_url}/explore?lang=es&d_model=32&T=24&k=5")
    expect(page.locator("body")).to_contain_text(text("es", "page_title"))
    page.get_by_text(text("es", "language_switch"), exact=True).click()
    wait_until(lambda: query_of(address(page)).get("lang") == "en", message="the language link did not switch")
    expect(page.locator("body")).to_contain_text(text("en", "page_title"))
    assert query_of(address(page))["k"] == "5"


def test_each_view_route_serves_its_view_alone(page, app_url):
    from app.pages import VIEWS

    for name in VIEWS:
        response = page.goto(f"{app_url}/{name}?lang=en")
        assert response is not None and response.ok
        expect(page.locator(".bk-input-group").first).to_be_visible()
        expect(page.locator("body")).not_to_contain_text(text("en", "page_title"))
