"""Presentation mode, the two themes, the page's keyboard shortcuts and its play control, in Chromium."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from app.lesson import SECTIONS
from app.model.prose import section_prose
from app.model.strings import text
from components.figure_theme import DARK_BACKGROUND
from components.prose import MIN_FIT
from tests.helpers import model_property, plots_drawn, slider_handle, wait_until

pytestmark = pytest.mark.browser


def marked(page, attribute: str, value: str) -> None:
    """Wait until the page's ``<html>`` carries ``data-<attribute>`` = ``value`` (components/present.PageLook)."""
    wait_until(lambda: page.evaluate(f"document.documentElement.dataset.{attribute}") == value,
               timeout=20, message=f"<html data-{attribute}={value}>")


def address(page) -> dict[str, str]:
    # The live address: page.url only catches up with history.replaceState when Playwright handles events.
    href = page.evaluate("() => window.location.href")
    return {key: values[0] for key, values in parse_qs(urlparse(href).query).items()}


def slider_value(page, label: str) -> int:
    return int(float(slider_handle(page, label).get_attribute("aria-valuenow")))


def wait_slider(page, label: str, value: int) -> None:
    wait_until(lambda: slider_value(page, label) == value, message=f"{label} never reached {value}")


def open_clocks(page, app_url, query: str = "") -> None:
    page.goto(f"{app_url}/clocks?lang=en&{query}")
    wait_until(lambda: plots_drawn(page, 3), timeout=40, message="clocks drawn")
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")


# -- keyboard -----------------------------------------------------------------------------------

def test_arrows_and_brackets_move_pos_k_and_pair_without_clicking_anything(page, app_url, console_errors):
    open_clocks(page, app_url, "pos=0&k=3&pair=0")
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    wait_slider(page, text("en", "pos"), 2)
    page.keyboard.press("ArrowLeft")
    wait_slider(page, text("en", "pos"), 1)
    page.keyboard.press("ArrowUp")
    wait_slider(page, text("en", "k"), 4)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    wait_slider(page, text("en", "k"), 2)
    page.keyboard.press("]")
    page.keyboard.press("]")
    wait_slider(page, text("en", "pair"), 2)
    page.keyboard.press("[")
    wait_slider(page, text("en", "pair"), 1)
    # The figures followed, and the address too.
    wait_until(lambda: "pos + k = 3" in (model_property(page, "pair_clock_target_label", "text") or ""),
               message="the big clock follows the keys")
    wait_until(lambda: {key: address(page).get(key) for key in ("pos", "k", "pair")}
               == {"pos": "1", "k": "2", "pair": "1"}, message="the address follows the keys")
    # Bounds hold: pos cannot go below 0.
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    wait_slider(page, text("en", "pos"), 0)
    assert console_errors == []


def test_a_focused_slider_keeps_its_own_arrows(page, app_url):
    open_clocks(page, app_url, "pos=5&k=3")
    handle = slider_handle(page, text("en", "k"))
    handle.focus()
    handle.press("ArrowRight")
    wait_slider(page, text("en", "k"), 4)
    handle.press("ArrowUp")  # on the k slider, Up is the slider's own step, not the page's k + 1 on top of it
    wait_slider(page, text("en", "k"), 5)
    assert slider_value(page, text("en", "pos")) == 5
    handle.press("]")  # a key the slider does not use is not taken either: the focus stays the slider's
    handle.press("Space")
    page.keyboard.press("Tab")  # leave the slider
    assert slider_value(page, text("en", "pair")) == 0
    assert model_property(page, "page_keys", "motion")
    wait_until(lambda: "pos=5" in page.evaluate("() => window.location.href"), message="the address never took pos")


def test_a_text_field_keeps_its_keys(page, app_url):
    page.goto(f"{app_url}/order?lang=en&pos=0")
    field = page.locator("input[type=text]").first
    expect(field).to_be_visible(timeout=20000)
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    field.click()
    field.press("End")
    field.type(" [x] ?")
    field.press("ArrowLeft")
    field.press("Space")
    # Every key went into the field: the brackets and ? as text, the arrow moved the caret, Space typed a space.
    assert field.input_value().endswith("[x]  ?")
    expect(page.locator(".pe-help")).to_have_count(0)


def test_a_quiz_keeps_its_keys(page, app_url):
    page.goto(f"{app_url}/quiz?lang=en&pos=0")
    wait_until(lambda: model_property(page, "quiz_1", "choice") is not None, timeout=20, message="quiz drawn")
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    radio = page.locator("input[type=radio]").first
    radio.focus()
    page.keyboard.press("Space")
    wait_until(lambda: model_property(page, "quiz_1", "choice") == 0, message="Space picks the first answer")
    first = wait_until(lambda: model_property(page, "quiz_feedback_1", "text"), message="the server answered")
    page.keyboard.press("ArrowDown")
    wait_until(lambda: model_property(page, "quiz_1", "choice") == 1, message="an arrow picks the next answer")
    wait_until(lambda: model_property(page, "quiz_feedback_1", "text") not in (None, "", first),
               message="the server answered the second pick")
    assert address(page).get("pos") == "0"


def test_space_plays_and_pauses_and_plus_minus_change_the_speed(page, app_url, console_errors):
    open_clocks(page, app_url, "T=200&pos=0&speed=20")
    page.keyboard.press(" ")
    pause = page.get_by_role("button", name=text("en", "animation_pause"))
    expect(pause).to_have_count(1)
    wait_until(lambda: slider_value(page, text("en", "pos")) >= 3, message="play moves pos")
    page.keyboard.press(" ")
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(1)
    stopped = slider_value(page, text("en", "pos"))
    # Paused: the value the slider shows is the state's, and it stays (a step on its way has arrived).
    wait_until(lambda: address(page).get("pos") == str(slider_value(page, text("en", "pos"))), message="settled")
    assert slider_value(page, text("en", "pos")) - stopped <= 1
    assert "play" not in address(page)
    speed = page.locator("select").first
    page.keyboard.press("-")
    page.keyboard.press("-")
    expect(speed).to_have_value(text("en", "animation_speed_value", speed=8))
    page.keyboard.press("+")
    expect(speed).to_have_value(text("en", "animation_speed_value", speed=12))
    wait_until(lambda: address(page).get("speed") == "12", message="the address follows the speed")
    assert console_errors == []


@pytest.mark.parametrize(("route", "count"), [("order", 0), ("quiz", 0), ("mistakes", 1), ("hands", 1)])
def test_a_section_page_shows_play_only_where_play_moves_something(page, app_url, route, count):
    """Play runs pos or k; the sentences and the quiz use neither (tests/unit/test_sections_in_place.py). Where the page
    has no play, neither has its keyboard: space started a play nobody could see or stop with a button."""
    page.goto(f"{app_url}/{route}?lang=en&speed=20")
    expect(page.get_by_role("button", name=text("en", "present_enter"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(count)
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    page.keyboard.press(" ")
    page.keyboard.press("-")
    page.keyboard.press("]")  # after them, in order: when the pair has moved, the server has read both keys
    wait_until(lambda: address(page).get("pair") == "1", message="the page's keys never reached the server")
    assert (address(page).get("speed") == "20") == (count == 0)
    expect(page.get_by_role("button", name=text("en", "animation_pause"))).to_have_count(count)
    page.keyboard.press("?")
    expect(page.locator(".pe-help")).to_have_count(1)
    listed = page.locator(".pe-help").inner_text()
    assert (text("en", "keys_play_help") in listed) == bool(count)
    assert (text("en", "keys_speed_help") in listed) == bool(count)
    assert text("en", "keys_pos_help") in listed


def test_a_presented_slide_where_nothing_plays_disables_play_and_its_keys(page, app_url):
    """Presented, the bar's play button and the space bar worked on the quiz slide, where playing moves pos unseen.
    The button is disabled there (in its place: Previous and Next do not move between slides), and enabled again
    on the next slide, where space plays."""
    page.goto(f"{app_url}/?present=1&slide=quiz&lang=en&speed=20")
    play = page.get_by_role("button", name=text("en", "animation_play"))
    expect(play).to_be_disabled(timeout=30_000)
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    following = page.get_by_role("button", name=text("en", "present_next"))
    at = following.bounding_box()
    page.keyboard.press(" ")
    page.keyboard.press("-")
    page.keyboard.press("]")  # after them, in order: when the pair has moved, the server has read all three
    wait_until(lambda: address(page).get("pair") == "1", message="the page's keys never reached the server")
    assert address(page).get("speed") == "20" and "play" not in address(page)
    expect(play).to_be_disabled()
    page.keyboard.press("PageDown")
    wait_until(lambda: address(page).get("slide") == "question", message="PageDown never reached the next slide")
    expect(play).to_be_enabled()
    assert following.bounding_box() == at
    page.keyboard.press(" ")
    expect(page.get_by_role("button", name=text("en", "animation_pause"))).to_be_enabled()


def test_play_stops_at_the_end_when_loop_is_off_and_runs_k_from_its_switch(page, app_url):
    open_clocks(page, app_url, "T=4&pos=0&speed=20&loop=0")
    page.get_by_role("button", name=text("en", "animation_play")).click()
    # It runs to T - 1 = 3 and stops by itself: the button offers to play again.
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(1, timeout=10000)
    wait_slider(page, text("en", "pos"), 3)
    # "Run k": play now moves k, pos stays.
    page.get_by_role("checkbox", name=text("en", "animation_k")).check()
    page.get_by_role("button", name=text("en", "animation_play")).click()
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(1, timeout=10000)
    wait_slider(page, text("en", "k"), 3)
    assert slider_value(page, text("en", "pos")) == 3


@pytest.mark.parametrize("lang", ["es", "en"])
def test_question_mark_opens_the_help_and_escape_closes_it(page, app_url, lang):
    page.goto(f"{app_url}/clocks?lang={lang}")
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name=text(lang, "keys_title"))
    expect(dialog).to_be_visible()
    for keys, what in (("keys_pos", "keys_pos_help"), ("keys_play", "keys_play_help"),
                       ("keys_slides", "keys_slides_help")):
        expect(dialog).to_contain_text(text(lang, what))
        expect(dialog).to_contain_text(text(lang, keys).split(" ")[0])
    expect(dialog.get_by_role("button", name=text(lang, "keys_close"))).to_be_focused()
    # While it is open the page's keys do nothing.
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert address(page).get("pos", "0") == "0"


# -- presentation mode --------------------------------------------------------------------------

def bar_text(page) -> str:
    return re.sub(r"<[^>]+>", "", model_property(page, "present_bar", "text") or "")


def test_presentation_pages_through_sections_and_a_reload_lands_on_the_same_slide(page, app_url, console_errors):
    slugs = list(SECTIONS)
    at = slugs.index("hands")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/?present=1&slide=hands&lang=en")
    wait_until(lambda: section_prose("hands", "en").title in bar_text(page), timeout=30, message="first slide")
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    assert f"{at + 1} of {len(slugs)}" in bar_text(page)
    for name in ("d_model = 32", "T = 24", "pos = 0", "k = 3", "i = 0"):
        assert name in bar_text(page)
    # Nothing of the page but the slide: no table of contents, no other section's heading.
    expect(page.locator("nav[aria-label='The lesson']")).to_have_count(0)
    page.keyboard.press("PageDown")
    wait_until(lambda: section_prose(slugs[at + 1], "en").title in bar_text(page), message="next slide")
    wait_until(lambda: address(page).get("slide") == slugs[at + 1], message="the address follows")
    page.keyboard.press("ArrowRight")  # the arrows keep their meaning in presentation mode
    wait_until(lambda: "pos = 1" in bar_text(page), message="the bar shows the new pos")
    # The address is written just after the step's message is applied (components/address.py): a reload
    # in between would load the old pos (seen once in CI).
    wait_until(lambda: address(page).get("pos") == "1", message="the address holds the new pos")
    page.reload()
    wait_until(lambda: section_prose(slugs[at + 1], "en").title in bar_text(page), timeout=30,
               message="the reload lands on the same slide")
    assert "pos = 1" in bar_text(page)
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    page.keyboard.press("PageUp")
    wait_until(lambda: section_prose("hands", "en").title in bar_text(page), message="previous slide")
    # Escape leaves: the whole lesson, at the slide's section.
    wait_until(lambda: address(page).get("slide") == "hands", message="the address follows")
    page.keyboard.press("Escape")
    page.wait_for_url(re.compile(r"#hands$"))
    assert "present" not in address(page)
    expect(page.locator("nav[aria-label='The lesson']")).to_have_count(1, timeout=20000)
    assert console_errors == []


def test_the_present_switch_starts_on_the_view_at_the_top_and_the_buttons_page(page, app_url):
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/explore?lang=es")
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="explore drawn")
    page.get_by_role("button", name=text("es", "present_enter")).click()
    page.wait_for_url(re.compile(r"present=1"))
    wait_until(lambda: text("es", "ladder_title") in bar_text(page), timeout=30, message="first view")
    assert address(page)["slide"] == "ladder"
    page.get_by_role("button", name=text("es", "present_next")).click()
    wait_until(lambda: text("es", "clocks_title") in bar_text(page), message="next view")
    wait_until(lambda: address(page).get("slide") == "clocks", message="the address follows")
    expect(page.get_by_role("button", name=text("es", "animation_play"))).to_have_count(1)
    page.get_by_role("button", name=text("es", "present_leave")).click()
    page.wait_for_url(re.compile(r"#clocks$"))
    assert "present" not in address(page)


_TEXT_SIZES = """() => {
  const sizes = [];
  const walk = (root) => {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = it.nextNode())) {
      const words = node.textContent.trim(), el = node.parentElement;
      if (!words || !el || ["STYLE", "SCRIPT"].includes(el.tagName)) continue;
      const box = el.getBoundingClientRect();
      // Text for screen readers only (a 1 px box) is not what the room sees.
      if (box.width <= 1 || box.height <= 1 || getComputedStyle(el).visibility === "hidden") continue;
      for (let i = 0; i < words.length; i++) sizes.push(parseFloat(getComputedStyle(el).fontSize));
    }
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return sizes.sort((a, b) => a - b);
}"""

_FIGURE_STYLE = """() => {
  const fonts = [], lines = [];
  for (const m of Bokeh.documents[0].all_models) {
    for (const [name, prop] of Object.entries(m.properties ?? {})) {
      let v;
      try { v = prop.get_value(); } catch (e) { continue; }  // a property never set has no value
      const plain = v?.value ?? v;
      if (name.endsWith("_font_size") && typeof plain === "string") fonts.push(parseFloat(plain));
      if (name === "line_width" && typeof plain === "number" && m.constructor.__name__ !== "Plot"
          && "glyph_view" !== name && m.type && !m.type.includes("Axis") && !m.type.includes("Grid")
          && plain > 0 && m.line_alpha?.value !== 0) lines.push([m.type, plain]);
    }
  }
  return {fonts, lines};
}"""


@pytest.mark.parametrize("route", ["clocks", "explore", "explore?slide=distance", "shift", "quiz"])
def test_presentation_type_is_twice_the_reading_size_on_the_page_and_in_the_figures(page, app_url, route):
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/{route}{'&' if '?' in route else '?'}present=1&lang=en")
    wait_until(lambda: plots_drawn(page, 0 if route == "quiz" else 1), timeout=40, message="slide drawn")
    marked(page, "pePresent", "1")
    sizes = page.evaluate(_TEXT_SIZES)
    assert sizes[len(sizes) // 2] >= 32, sizes[len(sizes) // 2]
    if route == "quiz":
        return  # no figure on that slide
    style = page.evaluate(_FIGURE_STYLE)
    assert style["fonts"] and min(style["fonts"]) >= 30, sorted(style["fonts"])[:5]
    thin = [line for line in style["lines"] if line[1] < 3 and not line[0].endswith(("Quad", "Rect", "Image"))]
    assert thin == []


_DRAWN_HEIGHTS = """() => [...Bokeh.index.query((v) => v.model?.toolbar !== undefined)]
  .map((v) => ({name: v.model.name, height: v.el.getBoundingClientRect().height,
                width: v.el.getBoundingClientRect().width}))"""


def test_presented_figures_fit_a_1280_by_720_projector_and_grow_back_on_a_larger_screen(page, app_url):
    """The full M_k (620 × 600 at reading size) grew to 930 × 900 px: on a 1280 × 720 projector the teacher
    could not show it whole. It is now as tall as the window less 40 px, its shape kept, and 1.5 times its
    reading size again when the window is large enough."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/shift?present=1&lang=en&d_model=64")
    marked(page, "pePresent", "1")
    wait_until(lambda: model_property(page, "shift_matrix_plot", "height") == 680, timeout=40,
               message="the matrix sized to the window")
    assert model_property(page, "shift_matrix_plot", "width") == round(620 * 680 / 600)
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="slide drawn")
    wait_until(lambda: all(f["height"] <= 720 - 40 for f in page.evaluate(_DRAWN_HEIGHTS)), timeout=20,
               message="every figure on the slide within the window")
    page.set_viewport_size({"width": 1920, "height": 1080})
    wait_until(lambda: model_property(page, "shift_matrix_plot", "height") == 900, timeout=20,
               message="the full growth on a 1080-pixel screen")
    assert model_property(page, "shift_matrix_plot", "width") == 930


#: The columns of a legend, its right edge and its figure's width in the figure's canvas, and the page's width.
_LEGEND_FIT_JS = """(name) => {
  const legend = Bokeh.documents[0].get_model_by_name(name);
  const view = Bokeh.index.find_one(legend);
  const plot = view.parent.model;
  return {ncols: legend.ncols, location: legend.location, left: view.bbox.left, right: view.bbox.right,
          width: plot.outer_width, page: document.documentElement.scrollWidth};
}"""


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_two_column_legend_that_would_pass_its_figure_moves_inside_it(page, app_url, lang):
    """In two columns from the frame's left, the simpler section's key under the sinusoidal scores ("S(k) =
    Σ cos(ωᵢ·k)", p = 0 …) was 1.4 px wider than a half-width figure on a 1280 px projector, and the page scrolled
    sideways: it now ends at the frame's right edge, still in two columns; the learned table's shorter key beside
    it stays where it was; on a 1920 px screen both start at the left. Where two columns do not fit at all
    (1024 px), one."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/simpler?present=1&lang={lang}")
    marked(page, "pePresent", "1")
    wait_until(lambda: plots_drawn(page, 3), timeout=40, message="slide drawn")

    def key(name: str, ncols: int, location: str) -> dict:
        return wait_until(lambda: (f := page.evaluate(_LEGEND_FIT_JS, name))["ncols"] == ncols
                          and f["location"] == location and f, timeout=20, message=f"{name}: {ncols}, {location}")

    fit = key("simpler_sinusoid_legend", 2, "top_right")
    assert fit["left"] >= 0 and fit["right"] <= fit["width"] and fit["page"] == 1280, fit
    key("simpler_learned_legend", 2, "top_left")
    page.set_viewport_size({"width": 1920, "height": 1080})
    wide = key("simpler_sinusoid_legend", 2, "top_left")
    assert wide["right"] <= wide["width"] and wide["page"] == 1920, wide
    page.set_viewport_size({"width": 1024, "height": 768})  # an older projector: the figures still side by side
    narrow = key("simpler_sinusoid_legend", 1, "top_left")
    assert narrow["right"] <= narrow["width"] and narrow["page"] == 1024, narrow


#: JavaScript: what presentation mode sets on the figures named ``names`` (every font size, line width and marker
#: size of the models each one holds, and its own size), per figure; ``null`` while one of them is missing.
_SLIDE_FIGURES_JS = """(names) => {
  const doc = Bokeh.documents[0];
  const HasProps = Bokeh.require("core/has_props").HasProps;
  const plain = (v) => (v !== null && typeof v === "object" && "value" in v ? v.value : v);
  const px = (size) => parseFloat(size) * (size.endsWith("pt") ? 4 / 3 : 1);
  const out = {};
  for (const name of names) {
    const plot = doc.get_model_by_name(name);
    if (plot == null) return null;
    const seen = new Set(), sizes = [];
    const walk = (model) => {
      if (seen.has(model)) return;
      seen.add(model);
      for (const [attr, prop] of Object.entries(model.properties)) {
        if (attr === "data") continue;  // a source's columns hold no model
        let value;
        try { value = prop.get_value(); } catch (e) { continue; }  // never set
        const shown = plain(value);
        if (attr.endsWith("_font_size") || attr === "line_width" || (attr === "size" && model.type === "Scatter"))
          if (typeof shown === "string" || typeof shown === "number") sizes.push(`${model.type}.${attr}=${shown}`);
        for (const item of (Array.isArray(value) ? value : [value]))
          if (item instanceof HasProps) walk(item);
      }
    };
    walk(plot);
    const axes = [...plot.left, ...plot.below, ...plot.right, ...plot.above].filter((m) => m.type.endsWith("Axis"));
    out[name] = {width: plot.width, height: plot.height, max_width: plot.max_width,
                 labels: axes.map((axis) => px(plain(axis.axis_label_text_font_size))),
                 sizes: sizes.sort()};
  }
  return out;
}"""

#: Records, in ``window.peFirstFrame``, ``slideFigures(names)`` at the first animation frame in which the
#: figures are all in the page (BokehJS applies a server message at once and paints them at the next frame).
_RECORD_FIRST_FRAME = """(names) => {
  const slideFigures = """ + _SLIDE_FIGURES_JS + """;
  window.peFirstFrame = null;
  const look = () => {
    const found = slideFigures(names);
    if (found === null) requestAnimationFrame(look); else window.peFirstFrame = found;
  };
  requestAnimationFrame(look);
}"""


def slide_figures(slug: str) -> dict[str, list[float]]:
    """The figures of the lesson section ``slug`` as a slide builds them (at reading size): name -> the px font
    size of each axis label, in the order of ``_SLIDE_FIGURES_JS``'s ``labels``."""
    import panel as pn
    from bokeh.models import Axis, Plot

    from app.model.state import ExplorerState

    def px(size: str) -> float:  # the views give their sizes in pt or px (a pt is 4/3 px)
        number, unit = re.fullmatch(r"([0-9.]+)(pt|px)", size).groups()
        return float(number) * (4 / 3 if unit == "pt" else 1)

    section = pn.panel(SECTIONS[slug](ExplorerState(lang="en", present=True)))
    plots = [plot for pane in section.select(pn.pane.Bokeh) for plot in pane.object.select({"type": Plot})]
    return {plot.name: [px(axis.axis_label_text_font_size)
                        for axis in (*plot.left, *plot.below, *plot.right, *plot.above) if isinstance(axis, Axis)]
            for plot in plots}


def first_frame_of_next_slide(page, slug: str, go) -> dict:
    """``go()`` (a key or a click that moves to the slide ``slug``) and what the slide's figures had at the
    first frame they were in the page."""
    names = list(slide_figures(slug))
    page.evaluate(_RECORD_FIRST_FRAME, names)
    go()
    wait_until(lambda: address(page).get("slide") == slug, message=f"the slide never became {slug}")
    return wait_until(lambda: page.evaluate("() => window.peFirstFrame"), timeout=20,
                      message=f"the figures of {slug} never came")


def test_a_slide_reached_by_page_down_or_next_is_presented_from_its_first_frame_as_on_a_direct_load(page, app_url):
    """Issue 45: after Next or PageDown the new slide's figures kept their reading size (axis labels of 20 px
    at 1920 × 1080, still 12 s later) until a reload: the styler heard of a page's new figures through the
    document's change callbacks, which Panel bypasses when it sends a layout's new children to a connected
    browser. Now a slide's figures are presented when it is shown: in the first frame they are in the page,
    their axis labels are at least 1.8 times their reading size, and every size is what a direct load (a reload
    on that slide) gives."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/?present=1&slide=shift&lang=en")
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="the first slide drawn")
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    # Reached by PageDown: large from the first frame.
    shown = first_frame_of_next_slide(page, "score", lambda: page.keyboard.press("PageDown"))
    reading = slide_figures("score")
    assert set(shown) == set(reading) and len(reading) >= 2
    for name, labels in reading.items():
        assert len(shown[name]["labels"]) == len(labels) >= 2
        for presented, read in zip(shown[name]["labels"], labels, strict=True):
            assert presented >= 1.8 * read, (name, presented, read)
    # The same sizes as opening the slide by its address.
    page.reload()
    wait_until(lambda: plots_drawn(page, len(reading)), timeout=40, message="the reloaded slide drawn")
    wait_until(lambda: page.evaluate(_SLIDE_FIGURES_JS, list(reading)) == shown,
               timeout=20, message="the reloaded slide's figures never matched the ones PageDown showed")
    # Reached by the Next button: the same.
    wait_until(lambda: model_property(page, "page_keys", "motion"), message="the page's keys are wired")
    following = page.get_by_role("button", name=text("en", "present_next"))
    shown = first_frame_of_next_slide(page, "sum", following.click)
    for name, labels in slide_figures("sum").items():
        for presented, read in zip(shown[name]["labels"], labels, strict=True):
            assert presented >= 1.8 * read, (name, presented, read)


# -- themes -------------------------------------------------------------------------------------

_PLOT_COLOURS = """() => [...Bokeh.documents[0].all_models].filter((m) => m.toolbar !== undefined)
  .map((m) => [m.background_fill_color, m.border_fill_color])"""


def test_dark_theme_covers_the_figures_and_the_switch_goes_both_ways(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=en")
    wait_until(lambda: plots_drawn(page, 3), timeout=40, message="clocks drawn")
    marked(page, "peTheme", "light")
    page.get_by_role("button", name=text("en", "theme_dark")).click()
    page.wait_for_url(re.compile(r"theme=dark"))
    wait_until(lambda: plots_drawn(page, 3), timeout=40, message="clocks drawn")
    marked(page, "peTheme", "dark")
    colours = page.evaluate(_PLOT_COLOURS)
    assert colours and all(border == DARK_BACKGROUND and back in (DARK_BACKGROUND, None) for back, border in colours)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(33, 37, 41)"
    expect(page.get_by_role("button", name=text("en", "theme_dark"))).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name=text("en", "theme_dark")).click()
    page.wait_for_url(lambda url: "theme=" not in url)
    assert console_errors == []


# -- formulas -----------------------------------------------------------------------------------

_FORMULA_WIDTHS = """(blocks) => blocks.map((b) => ({
  tex: (b.dataset.tex || "").slice(0, 50), typeset: b.querySelector(".katex") !== null,
  need: b.scrollWidth, room: b.clientWidth,
  scale: parseFloat(b.querySelector(".katex-display")?.style.fontSize || "100") / 100}))"""


@pytest.mark.parametrize(("route", "lang"), [("score", "en"), ("wavelengths", "es"), ("rope", "es"),
                                              ("fingerprint", "en"), ("order", "en")])
def test_every_display_formula_fits_the_slide_at_1280_by_800(page, app_url, route, lang):
    """The lesson's widest formulas (broken over lines where they are long) fit presentation mode's large
    type on a 1280-pixel projector without a sideways scroll, scaled down by at most
    components.prose.MIN_FIT, and KaTeX reports no error in them."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/{route}?present=1&lang={lang}")
    marked(page, "pePresent", "1")
    blocks = page.locator(".pe-prose .math.block")
    wait_until(lambda: blocks.count() > 0, timeout=40, message="the passages are drawn")
    for index in range(blocks.count()):  # a passage typesets when it comes near the screen
        blocks.nth(index).scroll_into_view_if_needed()
    wait_until(lambda: all(b["typeset"] for b in blocks.evaluate_all(_FORMULA_WIDTHS)), timeout=20,
               message="every formula typeset")
    formulas = blocks.evaluate_all(_FORMULA_WIDTHS)
    assert [f for f in formulas if f["need"] > f["room"]] == []
    assert min(f["scale"] for f in formulas) >= MIN_FIT
    assert page.locator(".katex-error").count() == 0
