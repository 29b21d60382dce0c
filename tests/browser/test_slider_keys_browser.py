"""static/slider-keys.js: a key on a slider sends its value at once, and the slider's handle and title are redrawn
with the server's answer, not before it (one frame per key instead of two; docs/performance.md, "Session 28")."""

from __future__ import annotations

import numpy as np
import pytest

from app.model import core
from tests.helpers import slider_handle, wait_for_source, wait_until

pytestmark = pytest.mark.browser

QUERY = "lang=en&d_model=32&T=24&pos=0&k=3&pair=0"

#: Times (performance.now) of the first change of what shows a slider's value, and of the first data that the
#: server sends, after the call. What is watched: ``{slider: title}``, the Slider whose title starts with
#: ``title`` (its title and handle), or ``{component: name}``, the component whose data model is named ``name``.
WATCH_JS = """({slider, component}) => {
  const view = [...Bokeh.index.query((v) => slider !== undefined
    ? v.model?.type === "Slider" && (v.model.title ?? "").startsWith(slider)
    : v.model?.data?.name === component)][0];
  const seen = window.__keysSeen = {drawn: null, data: null};
  new MutationObserver(() => { seen.drawn ??= performance.now(); }).observe(
    view.shadow_el ?? view.el, {subtree: true, childList: true, characterData: true, attributes: slider !== undefined});
  Bokeh.documents[0].on_change((event) => {
    if (event.model?.type === "ColumnDataSource" && seen.data === null) seen.data = performance.now();
  });
}"""


def _open(page, app_url, route: str = "clocks"):
    page.goto(f"{app_url}/{route}?{QUERY}")
    wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
               message=f"/{route} never finished loading")
    page.evaluate("""() => { window.__lastChange = performance.now();
      Bokeh.documents[0].on_change(() => { window.__lastChange = performance.now(); }); }""")


def _quiet(page) -> None:
    """Until the document has not changed for half a second (what the server sends after the page is drawn,
    or after a key, has come): a patch from before a key would redraw the slider early, as it should."""
    wait_until(lambda: page.evaluate("() => performance.now() - window.__lastChange > 500"), timeout=20,
               message="the page never went quiet")


def _slider(page, title: str) -> tuple[str, str, str]:
    """The slider's value in its model, on its handle (aria-valuenow) and in its title."""
    return tuple(page.evaluate("""(title) => {
      const view = [...Bokeh.index.query((v) => v.model?.type === "Slider"
                                         && (v.model.title ?? "").startsWith(title))][0];
      return [String(view.model.value), view.slider_el.querySelector(".noUi-handle").getAttribute("aria-valuenow"),
              view.title_el.textContent];
    }""", title))


def test_the_script_is_loaded_on_every_page_kind(page, app_url):
    for route in ("/explore", "/", "/clocks", "/hands"):
        page.goto(f"{app_url}{route}?{QUERY}")
        wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
                   message=f"{route} never finished loading")
        assert page.evaluate("() => Bokeh.require('models/widgets/sliders/abstract_slider')"
                             ".AbstractSliderView.prototype.peKeysFirst === true"), route


def test_a_key_redraws_the_slider_with_the_servers_answer_not_before(page, app_url):
    _open(page, app_url)
    handle = slider_handle(page, "offset k")
    handle.focus()
    for k in (4, 5, 6):
        _quiet(page)
        page.evaluate(WATCH_JS, {"slider": "offset k"})
        page.keyboard.press("ArrowRight")
        wait_until(lambda: None not in page.evaluate("() => Object.values(window.__keysSeen)"), timeout=10,
                   message="the slider and the data both changed")
        seen = page.evaluate("() => window.__keysSeen")
        # BokehJS's own keydown handler moved the handle and rewrote the title first (seen.slider < seen.data).
        assert seen["drawn"] >= seen["data"], seen
        assert _slider(page, "offset k") == (str(k), f"{k}.0", f"offset k: {k}")
        # The row's pair-0 hand at pos + k = k points at (sin k, cos k) from its centre, from app.core.
        wait_for_source(page, "clocks", lambda d, k=k: abs(np.cos(d["target_angle"][0])
                                                           - core.encoding_rows([float(k)], 32)[0, 0]) < 1e-3)


def test_the_keys_step_as_nouisliders_do(page, app_url):
    """Arrows one step, PageUp and PageDown five (noUiSlider's default page multiplier), Home and End the ends."""
    _open(page, app_url)
    handle = slider_handle(page, "position pos")
    handle.focus()
    end = int(float(handle.get_attribute("aria-valuemax")))
    for key, want in (("ArrowRight", 1), ("ArrowUp", 2), ("PageUp", 7), ("ArrowLeft", 6), ("ArrowDown", 5),
                      ("PageDown", 0), ("PageDown", 0), ("End", end), ("ArrowRight", end), ("Home", 0),
                      ("ArrowLeft", 0)):
        page.keyboard.press(key)
        wait_until(lambda want=want: _slider(page, "position pos") == (str(want), f"{want}.0",
                                                                       f"position pos: {want}"),
                   timeout=10, message=f"{key} gives pos {want}: {_slider(page, 'position pos')}")


def test_a_slider_is_redrawn_even_when_no_answer_comes(page, app_url):
    _open(page, app_url)
    handle = slider_handle(page, "offset k")
    handle.focus()
    # Every message from the server is dropped from now on: only the time limit can redraw the slider.
    page.evaluate("() => { Bokeh.require('client/session').ClientSession.prototype.handle = () => {}; }")
    page.keyboard.press("ArrowRight")
    wait_until(lambda: _slider(page, "offset k") == ("4", "4.0", "offset k: 4"), timeout=5,
               message=f"redrawn without an answer: {_slider(page, 'offset k')}")


def test_keys_faster_than_the_answers_end_on_the_last_value(page, app_url):
    """A held arrow key: each press steps from the value the previous one set, answered or not, and the slider
    and the data end on the same value."""
    _open(page, app_url)
    _quiet(page)
    handle = slider_handle(page, "offset k")
    handle.focus()
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    wait_until(lambda: _slider(page, "offset k") == ("11", "11.0", "offset k: 11"), timeout=10,
               message=f"k 3 + 8: {_slider(page, 'offset k')}")
    wait_for_source(page, "clocks", lambda d: abs(np.cos(d["target_angle"][0])
                                                  - core.encoding_rows([11.0], 32)[0, 0]) < 1e-3)


def test_a_discrete_sliders_title_waits_for_the_answer_too(page, app_url):
    _open(page, app_url, "wavelengths")
    title = "wavelengths_base_title"
    shown = "() => [...Bokeh.index.query((v) => v.model?.data?.name === 'wavelengths_base_title')][0].model.data.text"
    # Its title is a component of its own, so the handle is found by the name components.a11y gives it.
    page.locator('.noUi-handle[aria-label^="base"]').first.focus()
    for _ in range(2):
        _quiet(page)
        before = page.evaluate(shown)
        page.evaluate(WATCH_JS, {"component": title})
        page.keyboard.press("ArrowLeft")
        wait_until(lambda: None not in page.evaluate("() => Object.values(window.__keysSeen)"), timeout=10,
                   message="the title and the data both changed")
        seen = page.evaluate("() => window.__keysSeen")
        # The link set the title in the keydown, before the server's answer (seen.title < seen.data).
        assert seen["drawn"] >= seen["data"], seen
        assert page.evaluate(shown) != before
