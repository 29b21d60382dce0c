"""The lesson in Chromium: its order and table of contents, sections built as the reader comes near,
links that keep the state, formulas typeset by the app's own KaTeX, and no request to another host."""

from __future__ import annotations

import math
import time
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import expect

from app.lesson import SECTIONS
from app.model import core
from app.model.prose import section_prose
from app.model.state import ExplorerState
from app.pages import VIEWS, SectionAnchor
from components.lazy import LazyPart
from tests.helpers import after_two_frames, model_property, press, source_data, wait_for_source, wait_until

pytestmark = pytest.mark.browser

QUERY = "lang=en&d_model=32&T=24&k=5&pos=2"


def address(page) -> dict[str, list[str]]:
    """The query of the page's address as the browser has it now (replaceState is not a navigation)."""
    return parse_qs(urlparse(page.evaluate("() => window.location.href")).query)


def scroll_through(page) -> None:
    """Scroll the whole page down a screen at a time, waiting at each step for what came near to be built."""
    for _ in range(60):
        before = page.evaluate("document.scrollingElement.scrollHeight")
        page.mouse.wheel(0, 700)
        # Playwright does not wait for the scroll: without the frames, a loaded machine coalesces several
        # wheels into one jump, and the page's section watch never sees the sections jumped over.
        after_two_frames(page)
        at_end = page.evaluate("window.scrollY + window.innerHeight >= document.scrollingElement.scrollHeight - 2")
        if at_end and page.evaluate("document.scrollingElement.scrollHeight") == before:
            return


def test_lesson_lists_every_section_in_order(page, app_url, console_errors):
    page.goto(f"{app_url}/?{QUERY}")
    toc = page.locator("nav[aria-label='The lesson'] a, nav[aria-label='Past the lesson'] a")
    expect(toc).to_have_count(len(SECTIONS))
    titles = [section_prose(slug, "en").title for slug in SECTIONS]
    assert toc.all_inner_texts() == titles
    headings = page.locator("h2.pe-section[id]")
    expect(headings).to_have_count(len(SECTIONS))
    assert [h.get_attribute("id") for h in headings.all()] == list(SECTIONS)
    # Numbered in reading order.
    assert headings.nth(2).inner_text().startswith("3. ")
    assert console_errors == []


def test_sections_below_the_fold_are_built_when_the_reader_comes_near(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?{QUERY}")
    first, last = next(iter(SECTIONS)), list(SECTIONS)[-1]
    wait_until(lambda: model_property(page, f"{first}_intro_text", "html"), timeout=20,
               message="the first section is built with the page")
    assert model_property(page, f"{last}_intro_text", "html") is None, "the last section was built too early"
    page.locator(f"h2#{last}").scroll_into_view_if_needed()
    wait_until(lambda: model_property(page, f"{last}_intro_text", "html"), timeout=20,
               message="the last section is built once it comes near")
    assert console_errors == []


#: [sections' parts, passages] whose rendering the browser may skip off screen (a passage: its shadow root
#: holds the prose box).
_SKIPPABLE = """(els) => {
  const auto = els.filter((el) => getComputedStyle(el).contentVisibility === "auto");
  const passage = (el) => el.shadowRoot?.querySelector(".pe-prose") != null;
  return [auto.filter((el) => !passage(el)).length, auto.filter(passage).length];
}"""


def test_sections_off_screen_are_skipped_on_screen_and_printed_whole(page, app_url):
    """Each section's part, and each passage of prose in it (its formulas are hundreds of positioned boxes
    that every frame walks), lets the browser skip its rendering while it is off screen (a frame costs what
    is on screen), and a printout renders every section and every passage."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?{QUERY}")
    wait_until(lambda: page.locator("*").evaluate_all(_SKIPPABLE)[0] == len(SECTIONS), timeout=30,
               message="every section's part is skippable")
    passages = page.locator("*").evaluate_all("(els) => els.filter((el) => el.shadowRoot?.querySelector"
                                              "('.pe-prose') != null).length")
    assert page.locator("*").evaluate_all(_SKIPPABLE)[1] == passages > 0, "every passage is skippable"
    page.emulate_media(media="print")
    assert page.locator("*").evaluate_all(_SKIPPABLE) == [0, 0]
    page.emulate_media(media="screen")
    assert page.locator("*").evaluate_all(_SKIPPABLE)[0] == len(SECTIONS)

def test_contents_link_scrolls_to_its_section_and_keeps_the_query(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?{QUERY}")
    page.locator("nav[aria-label='The lesson'] a", has_text=section_prose("shift", "en").title).click()
    wait_until(lambda: urlparse(page.url).fragment == "shift", message="the fragment follows the link")
    wait_until(lambda: abs(page.locator("h2#shift").bounding_box()["y"]) < 5, timeout=20,
               message="the section's heading is scrolled to the top")
    query = parse_qs(urlparse(page.url).query)
    assert query["k"] == ["5"] and query["pos"] == ["2"] and query["lang"] == ["en"]


@pytest.mark.parametrize("build_delay", [0.0, SectionAnchor.SETTLE_MS / 1000 + 1.0], ids=["prompt", "slow"])
def test_a_section_jumped_to_stays_at_the_top_while_its_neighbours_are_built(page, app_url, console_errors,
                                                                            monkeypatch, build_delay):
    """The sections around the one a contents link (or a teacher's room) jumps to are built after the
    jump and change the page's height above it: the heading is still at the top once all is built, also
    when the neighbours arrive after the page has held still for longer than the anchor's settling time
    (a busy server: "slow" holds the server's loop while it builds them, as a loaded CI machine did)."""
    build_now = LazyPart.build_now

    def slow_build_now(self: LazyPart) -> None:
        if not self.built and self.column.name in {"hands_part", "score_part"}:
            time.sleep(build_delay)  # the server is busy; this is the slowness under test, not a wait
        build_now(self)

    monkeypatch.setattr(LazyPart, "build_now", slow_build_now)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?{QUERY}")
    wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=30)
    page.locator("nav[aria-label='The lesson'] a", has_text=section_prose("shift", "en").title).click()
    neighbours = ("hands", "score")  # the sections just above and below: built because they are near
    settled = {"height": None, "since": 0.0}

    def at_rest() -> bool:
        if not all(model_property(page, f"{slug}_intro_text", "html") for slug in neighbours):
            return False
        height = page.evaluate("document.scrollingElement.scrollHeight")
        if height != settled["height"]:
            settled.update(height=height, since=time.monotonic())
        # The page's height has held for 2 s (longer than a build takes to arrive after the jump).
        return time.monotonic() - settled["since"] > 2.0

    wait_until(at_rest, timeout=30, interval=0.1, message="the sections around the jump are built")
    assert abs(page.locator("h2#shift").bounding_box()["y"]) < 5, "the page moved away from the section"
    assert console_errors == []


def test_a_section_alone_links_to_its_neighbours_with_the_state(page, app_url, console_errors):
    page.goto(f"{app_url}/wavelengths?{QUERY}")
    pager = page.locator("nav[aria-label='Lesson sections'] a")
    expect(pager).to_have_count(3)
    # The state changes on this page; the link carries what the page shows at the moment of the click.
    press(page, "d_model", "ArrowRight")
    wait_until(lambda: address(page).get("d_model") == ["34"], message="address follows")
    pager.filter(has_text="Next").click()
    page.wait_for_url("**/hands?**")
    query = parse_qs(urlparse(page.url).query)
    assert query["d_model"] == ["34"] and query["k"] == ["5"] and query["lang"] == ["en"]
    expect(page.locator("h2#hands")).to_have_text(f"5. {section_prose('hands', 'en').title}")
    page.locator("nav[aria-label='Lesson sections'] a", has_text="The whole lesson").click()
    page.wait_for_url("**/?**#hands")
    assert parse_qs(urlparse(page.url).query)["d_model"] == ["34"]
    assert console_errors == []


def test_lesson_and_explore_link_to_each_other(page, app_url):
    page.goto(f"{app_url}/?{QUERY}")
    page.get_by_role("link", name="Explore all the views").click()
    page.wait_for_url("**/explore?**")
    assert parse_qs(urlparse(page.url).query)["k"] == ["5"]
    page.get_by_role("link", name="Back to the lesson").click()
    page.wait_for_url(lambda url: urlparse(url).path == "/")
    assert parse_qs(urlparse(page.url).query)["k"] == ["5"]


_FORMULAS = """(maths) => maths.map((m) => ({typeset: m.dataset.tex !== undefined && m.querySelector(".katex") !== null,
                                   visible: getComputedStyle(m).visibility === "visible"}))"""


def test_formulas_far_below_the_screen_are_typeset_while_the_page_is_idle(page, app_url):
    """A reader who jumps down (a link, a search) meets typeset formulas: the score section's last
    formulas, several screens below the first, are typeset without any scroll."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/score?{QUERY}")
    maths = page.locator(".pe-prose .math")
    wait_until(lambda: maths.count() >= 3, timeout=40, message="the passages are drawn")
    last = maths.last.bounding_box()
    assert last is not None and last["y"] > 3 * 800, last  # far below: never near the screen here
    wait_until(lambda: all(m["typeset"] for m in maths.evaluate_all(_FORMULAS)), timeout=20,
               message="every formula typeset without scrolling")
    assert page.evaluate("window.scrollY") == 0


def test_a_formula_is_hidden_until_typeset_and_shown_as_tex_when_katex_cannot_load(page, app_url):
    """The TeX source is not shown while KaTeX loads; if KaTeX cannot load at all, it is (better than a gap)."""
    held = []
    def hold(route) -> None:  # never answered while the test looks
        held.append(route)

    page.route("**/assets/katex/katex.min.js", hold)
    page.goto(f"{app_url}/wavelengths?{QUERY}")
    maths = page.locator(".pe-prose .math")
    wait_until(lambda: maths.count() > 0 and held, timeout=40, message="KaTeX requested")
    states = maths.evaluate_all(_FORMULAS)
    assert not any(m["typeset"] for m in states) and not any(m["visible"] for m in states), states

    page.goto("about:blank")
    page.unroute("**/assets/katex/katex.min.js")
    page.route("**/assets/katex/katex.min.js", lambda route: route.abort())
    page.goto(f"{app_url}/wavelengths?{QUERY}")
    wait_until(lambda: maths.count() > 0 and all(m["visible"] for m in maths.evaluate_all(_FORMULAS)),
               timeout=40, message="the TeX shown once KaTeX failed")
    assert not any(m["typeset"] for m in maths.evaluate_all(_FORMULAS))
    assert "\\omega" in page.locator(".pe-prose").first.inner_text()


def test_formulas_are_typeset_and_live_numbers_follow_the_sliders(page, app_url, console_errors):
    page.goto(f"{app_url}/wavelengths?{QUERY}")
    intro = page.locator(".pe-prose").first
    expect(intro.locator(".katex").first).to_be_visible(timeout=15_000)
    # Outside the typeset formulas (whose MathML keeps the TeX as an annotation for screen readers),
    # no dollar sign and no TeX command is left.
    plain = intro.evaluate("""(box) => {
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      let out = "";
      while (walker.nextNode()) if (!walker.currentNode.parentElement.closest(".katex")) out += walker.currentNode.data;
      return out;
    }""")
    assert "$" not in plain and "\\" not in plain and "omega" not in plain
    assert intro.locator(".katex").count() >= 5

    def ratio_shown() -> str:
        return (model_property(page, "wavelengths_steps_text", "values") or {}).get("ratio", "")

    wait_until(lambda: ratio_shown() == f"{10000 ** (2 / 32):.2f}", message="ratio at d_model 32")
    press(page, "d_model", "ArrowRight")
    wait_until(lambda: ratio_shown() == f"{10000 ** (2 / 34):.2f}", message="ratio follows d_model")
    lam = core.wavelengths(34)
    assert math.isclose(lam[1] / lam[0], 10000 ** (2 / 34))
    expect(page.locator(".pe-prose").nth(1)).to_contain_text(f"{10000 ** (2 / 34):.2f}")  # the steps passage
    assert console_errors == []


ROUTES = ["/", "/explore", *(f"/{slug}" for slug in SECTIONS), *(f"/{name}" for name in VIEWS)]


@pytest.mark.parametrize("route", ROUTES)
def test_every_request_of_every_page_goes_to_the_app_itself(page, app_url, route):
    origin = urlparse(app_url)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{app_url}{route}?{QUERY}")
    page.wait_for_load_state("networkidle")
    if route == "/":
        scroll_through(page)
        page.wait_for_load_state("networkidle")
    if route == "/explore":
        # The later views arrive after the first draw and bring stylesheets of their own (the player's).
        wait_until(lambda: page.evaluate("() => !!(window.Bokeh && Bokeh.documents[0]?.get_model_by_name("
                                         "'distance_plot') && Bokeh.documents[0].get_model_by_name('clocks'))"),
                   timeout=30, message="the later views of /explore arrived")
        page.get_by_role("button", name="Play").first.wait_for(timeout=20_000)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)  # a stylesheet requested by the views' first paint
        page.wait_for_load_state("networkidle")
    foreign = [url for url in requests
               if not url.startswith(("data:", "blob:")) and urlparse(url)[:2] != (origin.scheme, origin.netloc)]
    assert requests and foreign == []


def handle_below(page, label: str, heading: str):
    """The handle of the first slider titled ``label`` below the heading ``heading`` (``/`` has one per section)."""
    top = page.locator(f"h2#{heading}").bounding_box()["y"]
    groups = page.locator(".bk-input-group").filter(has=page.locator(".bk-slider-title", has_text=label))
    below = [(box["y"], handle) for i in range(groups.count())
             if (box := (handle := groups.nth(i).locator(".noUi-handle").first).bounding_box()) and box["y"] > top]
    assert below, f"no {label!r} slider below #{heading}"
    return min(below, key=lambda pair: pair[0])[1]


def is_rotation(k: int, d_model: int):
    def check(data: dict) -> bool:
        image = np.asarray(data["image"][0], dtype=float)
        return np.allclose(image, core.rotation(k, d_model)[:64, :64], atol=1e-6)
    return check


#: For each named model, the index (from 1) of the server message, counted from the last reset, that first
#: changed it.
_MESSAGE_OF_CHANGE = """() => {
  const doc = Bokeh.documents[0];
  window.__messages = 0; window.__firstChanged = {};
  const apply = doc.apply_json_patch;
  doc.apply_json_patch = function (...args) { window.__messages += 1; return apply.apply(this, args); };
  doc.on_change((event) => {
    const name = event.model?.name;
    if (name == null || window.__messages === 0 || name in window.__firstChanged) return;
    window.__firstChanged[name] = window.__messages;
  });
}"""


def test_a_step_answers_with_the_sections_on_screen_and_the_one_just_off_screen_follows(browser, app_url):
    # At "why not simpler?" with its heading at the top, the first section is just above the screen: near
    # (awake) but not shown. A d_model step there changes both; the answer carries the section on screen,
    # and the other follows in a later message, ending exactly as a fresh page at the new size draws it.
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{app_url}/?lang=en&d_model=32&T=24")
    wait_for_source(page, "order_outputs")

    def at_simpler() -> bool:
        page.locator("h2#simpler").evaluate("(h) => h.scrollIntoView({block: 'start'})")
        near = model_property(page, "section_watch", "near") or []
        shown = model_property(page, "section_watch", "shown") or []
        return "order" in near and "order" not in shown and "simpler" in shown

    wait_until(at_simpler, timeout=30, interval=0.5, message="never had the first section near and off screen")
    before = source_data(page, "order_outputs")
    page.evaluate(_MESSAGE_OF_CHANGE)
    slider = page.locator(".bk-input-group").filter(has=page.locator(".bk-slider-title", has_text="d_model (width)"))
    wait_until(lambda: any((box := slider.nth(i).bounding_box()) and 0 < box["y"] < 800 for i in range(slider.count())),
               timeout=20, message="the section's d_model slider never showed")
    handle = handle_below(page, "d_model (width)", "simpler")
    handle.focus()
    handle.press("ArrowRight")
    wait_until(lambda: page.evaluate("'order_outputs' in window.__firstChanged"), timeout=20,
               message="the section just off screen never followed")
    first = page.evaluate("window.__firstChanged")
    assert first["simpler_raw_share"] < first["order_outputs"], first
    after = source_data(page, "order_outputs")
    fresh = browser.new_page(viewport={"width": 1280, "height": 800})
    fresh.goto(f"{app_url}/order?lang=en&d_model=34&T=24")
    expected = wait_for_source(fresh, "order_outputs")
    fresh.close()
    assert not np.allclose(np.asarray(after["with_pe"], float), np.asarray(before["with_pe"], float))
    assert after.keys() == expected.keys()
    for key in expected:
        got, want = np.asarray(after[key]), np.asarray(expected[key])
        assert (np.allclose(got, want, rtol=1e-12, atol=0) if want.dtype.kind == "f" else
                np.array_equal(got, want)), key
    assert errors == []
    page.close()


def test_the_address_follows_a_size_step_whose_clamped_values_belong_to_sections_off_screen(page, app_url):
    # The fingerprint's pairs_to slider (its section not on screen) would write its own value: a d_model
    # step at "why not simpler?" moves pairs_to with it (a fingerprint over every pair stays so), and a
    # link copied then must carry the state, not pairs_to=15 of 18.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?lang=en&d_model=32&T=24")
    wait_for_source(page, "order_outputs")
    page.locator("h2#simpler").evaluate("(h) => h.scrollIntoView({block: 'start'})")
    slider = page.locator(".bk-input-group").filter(has=page.locator(".bk-slider-title", has_text="d_model (width)"))
    wait_until(lambda: any((box := slider.nth(i).bounding_box()) and 0 < box["y"] < 800 for i in range(slider.count())),
               timeout=20, message="the section's d_model slider never showed")
    handle = handle_below(page, "d_model (width)", "simpler")
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")
    wait_until(lambda: address(page).get("d_model") == ["38"], timeout=20, message="the address never showed d_model")
    expected = ExplorerState(d_model=32, T=24)
    expected.d_model = 38  # pairs_to 15 -> 18 (every pair), the reserve keeps its eighth
    wait_until(lambda: {key: values[0] for key, values in address(page).items() if key != "lang"}
               == {key: value for key, value in expected.query().items() if key != "lang"}, timeout=20,
               message=f"the address {address(page)} is not the state's {expected.query()}")


def test_a_section_far_from_the_reader_sleeps_and_catches_up_when_the_reader_returns(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?lang=en&d_model=16&T=24&k=3&pos=2")
    page.locator("h2#shift").scroll_into_view_if_needed()
    wait_for_source(page, "rotation_matrix", is_rotation(3, 16))
    page.evaluate("""() => {
      const m = Bokeh.documents[0].get_model_by_name("rotation_matrix");
      window.__matrixSends = 0; m.properties.data.change.connect(() => window.__matrixSends++);
    }""")

    def at_terms() -> bool:
        # Sections built above it push the heading down: scroll to it again until it stays.
        page.locator("h2#terms").scroll_into_view_if_needed()
        near = model_property(page, "section_watch", "near") or []
        return "terms" in near and "shift" not in near

    wait_until(at_terms, timeout=30, interval=0.5, message="the page never reported shift far and terms near")
    wait_for_source(page, "terms_marker", lambda d: list(d["k"]) == [3], timeout=20)
    handle = handle_below(page, "offset k", "terms")
    handle.scroll_into_view_if_needed()
    handle.press("ArrowRight")
    wait_for_source(page, "terms_marker", lambda d: list(d["k"]) == [4], timeout=20)
    assert page.evaluate("window.__matrixSends") == 0, "a section far away was updated"
    # Back at the section: it shows the present k at once.
    wait_until(lambda: page.locator("h2#shift").scroll_into_view_if_needed()
               or is_rotation(4, 16)(source_data(page, "rotation_matrix")), timeout=30, interval=0.5,
               message="the section did not catch up")
    assert page.evaluate("window.__matrixSends") == 1  # one catch-up, not one per missed step
    assert console_errors == []


@pytest.mark.parametrize("route", ["hands", "clocks"])
def test_a_page_of_its_own_switches_language_keeping_its_state(page, app_url, route):
    """A section's or a view's own page (one step a day) has the language link that / and /explore have;
    an embed that chose its controls does not (its course page chose the language)."""
    page.goto(f"{app_url}/{route}?lang=es&d_model=32&T=24&pos=5&k=2")
    link = page.get_by_role("link", name="English")
    expect(link).to_be_visible(timeout=30000)
    link.click()
    page.wait_for_url(lambda url: parse_qs(urlparse(url).query).get("lang") == ["en"])
    query = parse_qs(urlparse(page.url).query)
    assert query["pos"] == ["5"] and query["k"] == ["2"]
    expect(page.get_by_role("link", name="Español")).to_be_visible(timeout=30000)

    page.goto(f"{app_url}/{route}?lang=es&controls=k")
    wait_until(lambda: model_property(page, "address_bar", "query") is not None, timeout=30,
               message="the embed drawn")
    assert page.get_by_role("link", name="English").count() == 0
