"""The base slider's title (``components.widgets.FastDiscreteSlider`` with ``components.widgets.SliderTitle``): it
follows a key press in the page without a Bokeh ``Div`` (whose every text change lays the page out
again), and the handle keeps its accessible name. And a title longer than its cell in a row of sliders wraps
inside it, the row's tracks level."""

from __future__ import annotations

import itertools
import json

import pytest

from app.model.state import BASES
from app.model.strings import text
from tests.helpers import model_property, plots_drawn, wait_until

pytestmark = pytest.mark.browser

#: Every change of a model's property in the page's document: (model type, property).
RECORD_JS = """() => {
  window.__changes = [];
  Bokeh.documents[0].on_change((event) => {
    if (event.model && event.attr) window.__changes.push([event.model.type, event.attr]);
  });
  return true;
}"""


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_key_press_retitles_the_base_slider_without_a_div(page, app_url, lang, console_errors):
    sent: list[str] = []  # the page's websocket frames to the server
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame if isinstance(frame, str)
                                                                                 else "")))
    page.goto(f"{app_url}/explore?lang={lang}&d_model=32&T=24&base=10000")
    wait_until(lambda: plots_drawn(page, 4), timeout=60, message="/explore never drew its figures")
    label = text(lang, "base")
    handle = page.get_by_role("slider", name=label, exact=True)
    assert handle.count() == 1
    assert page.locator(".pe-slider-title").inner_text() == f"{label}: 10000"
    page.evaluate(RECORD_JS)
    handle.focus()
    sent.clear()
    handle.press("ArrowRight")
    following = BASES[BASES.index(10_000) + 1]
    # The browser's own link retitles the slider at once; the server's reply sets the same text.
    wait_until(lambda: model_property(page, "base_title", "text")
               == f'<span class="pe-slider-title">{label}: <b>{following}</b></span>', timeout=15,
               message="the title never followed the key")
    assert page.locator(".pe-slider-title").inner_text() == f"{label}: {following}"
    wait_until(lambda: any(t == "ColumnDataSource" for t, _ in page.evaluate("() => window.__changes")), timeout=15,
               message="the views never followed the key")
    # The key sent the slider's value, not the title its link set in the page (the server sets it too).
    assert any('"value"' in frame for frame in sent), sent
    assert not any("pe-slider-title" in frame for frame in sent), sent
    # Nor a range the page computed: the ladder's log range was a DataRange1d, whose end the page sent back on
    # the key, before the server's reply, so that the server held the previous step's value.
    changed = [json.loads(frame)["events"] for frame in sent if frame.startswith('{"events"')]
    assert {event["attr"] for events in changed for event in events} == {"value", "value_throttled"}, changed
    changed_types = {t for t, _ in page.evaluate("() => window.__changes")}
    assert "Div" not in changed_types, changed_types
    assert page.evaluate("""() => [...Bokeh.documents[0].all_models].filter((m) => m.type === "Div"
        && String(m.text).includes(":")).length""") == 0
    # Still named after its title (components/a11y.py) once the title has been redrawn.
    assert handle.get_attribute("aria-label") == label
    assert console_errors == []


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_offset_slider_prints_a_negative_value_with_a_minus_sign(page, app_url, lang, console_errors):
    """BokehJS prints a slider's value with a hyphen ("-3"); the k slider's title uses U+2212, as the text
    around it does (``components.controls.signed_format``), and follows a key press across zero."""
    page.goto(f"{app_url}/explore?lang={lang}&d_model=32&T=24&k=-1")
    wait_until(lambda: plots_drawn(page, 4), timeout=60, message="/explore never drew its figures")
    label = text(lang, "k")
    handle = page.get_by_role("slider", name=label, exact=True)
    assert handle.count() == 1
    title = page.locator(".bk-input-group", has=handle).locator(".bk-slider-title")

    def shown() -> str:
        return " ".join(title.inner_text().split())

    assert shown() == f"{label}: \u22121"
    handle.focus()
    for key, value in (("ArrowLeft", "\u22122"), ("ArrowRight", "\u22121"), ("ArrowRight", "0"), ("ArrowRight", "1")):
        handle.press(key)
        wait_until(lambda value=value: shown() == f"{label}: {value}", timeout=15,
                   message=f"the title never showed {value!r}: {shown()!r}")
    assert "-" not in shown()
    assert console_errors == []


@pytest.mark.parametrize("lang", ["en", "es"])
def test_sliders_announce_their_values_as_their_titles_show_them(page, app_url, lang, console_errors):
    """A screen reader read an integer slider's value as noUiSlider's default writes it, "64.00" (and the base
    slider's as its index, "4.00"): aria-valuetext now says the integer, with a minus sign, and the base's
    value itself, also after a key press."""
    page.goto(f"{app_url}/explore?lang={lang}&d_model=64&T=24&k=-3&base=10000")
    wait_until(lambda: plots_drawn(page, 4), timeout=60, message="/explore never drew its figures")

    def said(name: str) -> str | None:
        return page.get_by_role("slider", name=text(lang, name), exact=True).get_attribute("aria-valuetext")

    for name, value in (("d_model", "64"), ("T", "24"), ("k", "\u22123"), ("pos", "0"), ("base", "10000")):
        wait_until(lambda name=name, value=value: said(name) == value, timeout=15,
                   message=f"{name} announced {said(name)!r}, not {value!r}")
    for name, key, value in (("d_model", "ArrowRight", "66"), ("k", "ArrowRight", "\u22122"),
                             ("base", "ArrowRight", str(BASES[BASES.index(10_000) + 1]))):
        page.get_by_role("slider", name=text(lang, name), exact=True).press(key)
        wait_until(lambda name=name, value=value: said(name) == value, timeout=15,
                   message=f"after {key}, {name} announced {said(name)!r}, not {value!r}")
    # The value itself stays a number for the assistive technologies that read it.
    handle = page.get_by_role("slider", name=text(lang, "d_model"), exact=True)
    assert float(handle.get_attribute("aria-valuenow")) == 66
    assert console_errors == []


#: Boxes of the slider titles' text and of the tracks of the section's grid of controls (every ``.bk-slider-title`` and
#: ``.noUi-target`` of the page's shadow roots, in page order).
SLIDER_BOXES_JS = """() => {
  const out = {titles: [], tracks: []};
  const visit = (root) => {
    for (const el of root.querySelectorAll("*")) {
      const box = (r = el.getBoundingClientRect()) => [r.left, r.top, r.right, r.bottom];
      if (el.classList.contains("bk-slider-title")) {
        // The text's own extent (a title's box is its cell's, whatever its text overflows).
        const words = document.createRange();
        words.selectNodeContents(el);
        out.titles.push([el.textContent, ...box(words.getBoundingClientRect())]);
      }
      if (el.classList.contains("noUi-target")) out.tracks.push(box());
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return out;
}"""


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_row_of_sliders_keeps_its_titles_apart_and_its_tracks_level(page, app_url, lang):
    # Four sliders a row at 1280 px: "T_train (longitud de entrenamiento): 128" is wider than its cell, and
    # Bokeh's own title does not wrap (it ran over the next slider's title).
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/extrapolation?lang={lang}&d_model=256&T=512&T_train=128")
    wait_until(lambda: plots_drawn(page, 2), timeout=60, message="/extrapolation never drew its figures")
    boxes = page.evaluate(SLIDER_BOXES_JS)
    titles = {title: box for title, *box in boxes["titles"]}
    names = [text(lang, name) for name in ("T_train", "T", "d_model")]
    row = [next(box for title, box in titles.items() if title.startswith(f"{name}:")) for name in names]
    for (_, _, right, _), (next_left, *_) in itertools.pairwise(row):
        assert right <= next_left, (row, boxes)
    # Under each title its track (13 px in from the cell's edge), all three at one height.
    tracks = [next(t for t in boxes["tracks"] if 0 <= t[0] - title[0] < 40 and t[1] > title[1]) for title in row]
    assert max(t[1] for t in tracks) - min(t[1] for t in tracks) < 1, tracks
