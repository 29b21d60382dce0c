"""The Embed dialog and controls= in Chromium; the pages render with the light bundles."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from app.model.strings import text
from tests.helpers import wait_until

pytestmark = pytest.mark.browser


def ready(page) -> None:
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=60_000)


def test_embed_dialog_gives_code_that_reproduces_the_view(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=en&d_model=40&k=5&pos=2")
    ready(page)
    opener = page.get_by_role("button", name="Embed")
    opener.click()
    dialog = page.get_by_role("dialog", name="Embed this view in another page")
    expect(dialog).to_be_visible()
    dialog.get_by_role("checkbox", name="T (positions)").uncheck()
    dialog.get_by_role("checkbox", name="play buttons").uncheck()
    code = dialog.get_by_role("textbox", name="Code to embed").input_value()
    src = html.unescape(re.search(r'src="([^"]+)"', code).group(1))
    query = parse_qs(urlparse(src).query)
    assert urlparse(src).path == "/clocks"
    assert query["d_model"] == ["40"] and query["k"] == ["5"] and query["pos"] == ["2"] and query["lang"] == ["en"]
    assert set(query["controls"][0].split(",")) == {"d_model", "base", "pair", "pos", "k"}
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert opener.evaluate("(el) => el.getRootNode().activeElement === el")
    # The code's address shows the same state, with only the chosen sliders and no player or Embed button.
    page.goto(src)
    ready(page)
    expect(page.get_by_role("slider", name=re.compile("offset k"))).to_have_count(1)
    expect(page.get_by_role("slider", name=re.compile("T \\(positions\\)"))).to_have_count(0)
    expect(page.get_by_role("button", name="Embed")).to_have_count(0)
    wait_until(lambda: page.evaluate(
        "() => Bokeh.documents[0].get_model_by_name('rotation_block')?.text?.includes('M\u2085') ?? false"),
        timeout=20, message="the embedded view shows k = 5")
    assert console_errors == []


def test_controls_none_shows_no_control_and_still_follows_its_url(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=en&controls=none&k=7")
    ready(page)
    wait_until(lambda: page.evaluate(
        "() => Bokeh.documents[0].get_model_by_name('rotation_block')?.text?.includes('M\u2087') ?? false"),
        timeout=20, message="k = 7 from the address")
    expect(page.get_by_role("slider")).to_have_count(0)
    expect(page.get_by_role("button", name="Play")).to_have_count(0)
    assert console_errors == []


def test_controls_play_shows_the_player_only(page, app_url):
    page.goto(f"{app_url}/clocks?lang=en&controls=play")
    ready(page)
    # The page's play control (components/animation.py), and nothing else of the page's tools or sliders.
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_be_visible(timeout=20_000)
    expect(page.get_by_role("slider")).to_have_count(0)
    expect(page.get_by_role("button", name=text("en", "present_enter"))).to_have_count(0)


@pytest.mark.parametrize(("route", "query", "sliders"), [
    ("/explore", "controls=k", ["offset k"]),
    ("/hands", "controls=pos,k", ["position pos", "offset k"]),
    ("/explore", "controls=none", []),
])
def test_controls_apply_to_explore_and_the_sections(page, app_url, route, query, sliders, console_errors):
    page.goto(f"{app_url}{route}?lang=en&{query}")
    ready(page)
    # Once the clocks (and on /explore the later views) are there: exactly the named sliders, no player.
    wait_until(lambda: page.evaluate("() => !!Bokeh.documents[0].get_model_by_name('clock_row_plot')"),
               timeout=30, message="the clocks arrived")
    handles = page.get_by_role("slider")
    expect(handles).to_have_count(len(sliders))
    # Handles are named once the page is drawn (components.a11y.AccessibleNames runs after the first draw).
    wait_until(lambda: sorted(h.get_attribute("aria-label") or "" for h in handles.all()) == sorted(sliders),
               timeout=15, message=f"the handles are not named {sliders}")
    expect(page.get_by_role("button", name="Play")).to_have_count(0)
    assert console_errors == []
