"""The address bar: sliders write their own parameter in the browser; the server sends only the rest."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from app.model.section_watchers import SectionWatchers
from app.model.state import ExplorerState
from app.model.strings import text
from components.address import AddressBar
from components.controls import Controls, widget_for
from tests.helpers import press, wait_for_source, wait_until


def query(bar: AddressBar) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(bar.query).items()}


def test_a_parameter_with_a_slider_on_the_page_is_not_sent_from_the_server():
    state = ExplorerState(d_model=32, T=24, k=3)
    Controls(state, ["d_model", "T", "k"])
    bar = AddressBar(state)
    before = bar.query
    state.k = 4  # the k slider writes k=4 itself
    assert bar.query == before
    state.base = 100.0  # no slider writes base (a discrete slider): the server does, with the whole state
    assert query(bar)["base"] == "100.0" and query(bar)["k"] == "4"


def test_a_lesson_section_slider_writes_itself_while_its_section_sleeps():
    # On / a section's watchers of the state sleep while it is far from the reader (SectionWatchers): its
    # slider still writes the state, and the slider, not the server, puts the value into the address.
    state = ExplorerState(d_model=32, T=24, k=3)
    watchers = SectionWatchers(state)
    with watchers.recording():
        slider = widget_for(state, "k")
        Controls(state, ["k"])
    bar = AddressBar(state)
    watchers.awake = False
    before = bar.query
    slider.value = 4
    assert state.k == 4 and bar.query == before
    state.base = 100.0  # no slider writes base
    assert query(bar)["base"] == "100.0" and query(bar)["k"] == "4"


def test_a_parameter_without_a_slider_is_sent_from_the_server():
    state = ExplorerState(d_model=32, T=24, pos=20)
    Controls(state, ["T"])
    bar = AddressBar(state)
    state.T = 10  # pos has no slider here; the state clamps it to 9
    assert query(bar)["pos"] == "9" and query(bar)["T"] == "10"


def test_T_train_clamped_by_a_T_step_reaches_the_address_through_its_own_slider_or_the_server():
    # The extrapolation section shows both sliders: T's step clamps T_train (1 .. T), and the server writes the
    # clamped T_train only when no slider of the page does (here none does).
    state = ExplorerState(d_model=64, T=128, T_train=32)
    Controls(state, ["T"])
    bar = AddressBar(state)
    assert query(bar)["T_train"] == "32"
    state.T = 20
    assert query(bar)["T_train"] == "20" and query(bar)["T"] == "20"


def address_query(page) -> dict[str, str]:
    url = page.evaluate("() => window.location.href")
    return {key: values[0] for key, values in parse_qs(urlparse(url).query).items()}


@pytest.mark.browser
def test_embed_page_address_follows_a_slider_and_a_clamped_parameter_without_one(page, app_url):
    # /distance has sliders for d_model, T, base and k, none for pos.
    page.goto(f"{app_url}/distance?lang=en&d_model=32&T=24&pos=22&k=3")
    wait_for_source(page, "distance", lambda d: len(d["k"]) > 0)
    press(page, text("en", "k"), "ArrowRight")
    wait_until(lambda: address_query(page).get("k") == "4", message="the k slider did not write k=4")
    press(page, text("en", "T"), "ArrowLeft", times=3)  # T = 21: pos 22 is clamped to 20
    wait_until(lambda: address_query(page).get("T") == "21", message="the T slider did not write T=21")
    wait_until(lambda: address_query(page).get("pos") == "20", message="the clamped pos never reached the address")
