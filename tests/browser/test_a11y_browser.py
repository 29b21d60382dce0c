"""Accessibility in Chromium: axe-core (WCAG 2.2 AA rules) on every route in both languages, the lesson walked
by keyboard alone, figure descriptions that follow the sliders, and reduced motion.

axe-core is vendored (tests/vendor/axe.min.js, MPL 2.0, see tests/vendor/README.md) and injected into the
page; it pierces open shadow roots, which is where Panel draws everything.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from app.lesson import SECTIONS
from app.model.strings import text
from app.pages import routes
from tests.browser.test_lesson_browser import scroll_through
from tests.helpers import figure_count, model_property, plots_drawn, press, slider_handle, wait_until

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parents[1] / "vendor" / "axe.min.js").read_text(encoding="utf-8")
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
#: axe runs on the page as a reader who scrolls to each part sees it. The lesson's sections off screen
#: are not rendered (``content-visibility: auto``, components/lazy.py) until they come near the screen,
#: and axe's ``target-size`` check finds an unrendered control covered (it reads what is painted where),
#: so a quiz answer failed or passed depending on the scroll position. Each such part is rendered for the
#: run (an inline style on its host wins over its own ``:host`` rule) and left as it was afterwards.
_RUN_AXE = """async (tags) => {
  const skipped = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (getComputedStyle(el).contentVisibility === "auto") skipped.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  for (const el of skipped) el.style.contentVisibility = "visible";
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  try {
    const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
    return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.html.slice(0, 160))}));
  } finally {
    for (const el of skipped) el.style.contentVisibility = "";
  }
}"""

#: Violations of lesser impact that are accepted, each with its reason. Serious and critical ones never are.
ACCEPTED: dict[str, str] = {}

#: Every handle, player button and figure canvas has its accessible name (set in the browser by
#: components/a11y.py); axe runs once they have, since the names arrive a frame after each part is drawn.
_UNNAMED = """() => {
  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.matches(".noUi-handle, .bk-panel-models-widgets-Player button") && !el.getAttribute("aria-label")
          && !el.textContent.trim() && el.offsetParent !== null) all.push(el.outerHTML.slice(0, 80));
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return all;
}"""


def route_path(route: str) -> str:
    return route if route.startswith("/") else f"/{route}"


def settle(page, route: str) -> None:
    """Wait until the page at ``route`` has drawn every figure (``/``: every section, scrolled through)."""
    path = route_path(route)
    wait_until(lambda: plots_drawn(page, figure_count(path)), timeout=40, message=f"{path} drawn")
    if path == "/":
        scroll_through(page)
        for slug in SECTIONS:
            wait_until(lambda slug=slug: model_property(page, f"{slug}_intro_text", "html") is not None,
                       timeout=30, message=f"section {slug} built")
        wait_until(lambda: plots_drawn(page, 1), timeout=40, message="every section drawn")
    wait_until(lambda: page.evaluate(_UNNAMED) == [], timeout=10, message="every control named")


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("route", list(routes()))
def test_axe_finds_no_serious_violation(page, app_url, route, lang):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}{route_path(route)}?lang={lang}")
    settle(page, route)
    page.add_script_tag(content=AXE)
    violations = page.evaluate(_RUN_AXE, WCAG_TAGS)
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], f"{route} ({lang}): {serious}"
    unexplained = [v for v in violations if v["id"] not in ACCEPTED]
    assert unexplained == [], f"{route} ({lang}): {unexplained}"
    assert page.evaluate("document.documentElement.lang") == lang


def _axe(page, where: str) -> None:
    page.add_script_tag(content=AXE)
    violations = page.evaluate(_RUN_AXE, WCAG_TAGS)
    unexplained = [v for v in violations if v["id"] not in ACCEPTED]
    assert unexplained == [], f"{where}: {unexplained}"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_axe_on_the_room_box_of_a_teacher_and_of_a_follower(browser, app_url, lang):
    """The room box's states (components/room.py): a teacher's box with its link, the QR code shown large,
    a follower's box, a detached follower's box."""
    teacher = browser.new_context(locale=lang, viewport={"width": 1280, "height": 800}).new_page()
    teacher.goto(f"{app_url}/distance?lang={lang}")
    settle(teacher, "distance")
    teacher.get_by_role("button", name=text(lang, "room_start")).click()
    link = wait_until(lambda: model_property(teacher, "room_link", "text"), message="no join link")
    _axe(teacher, f"teacher ({lang})")
    teacher.get_by_role("button", name=text(lang, "room_qr_show")).click()
    expect(teacher.get_by_role("dialog")).to_be_visible()
    _axe(teacher, f"QR code ({lang})")
    follower = browser.new_context(locale=lang, viewport={"width": 1280, "height": 800}).new_page()
    follower.goto(f"{link}&lang={lang}")
    settle(follower, "distance")
    expect(follower.get_by_role("button", name=text(lang, "room_detach"))).to_be_visible()
    _axe(follower, f"follower ({lang})")
    follower.get_by_role("button", name=text(lang, "room_detach")).click()
    expect(follower.get_by_role("button", name=text(lang, "room_follow"))).to_be_visible()
    _axe(follower, f"detached follower ({lang})")
    for page in (teacher, follower):
        page.context.close()
#: Presentation mode and the dark theme (components/present.py): the states a teacher puts a page in.
PAGE_STATES = [
    ("/clocks", "theme=dark"), ("/explore", "theme=dark"), ("/quiz", "theme=dark"), ("/order", "theme=dark"),
    ("/hands", "present=1"), ("/explore", "present=1&slide=distance&theme=dark"),
    ("/", "present=1&slide=quiz&theme=dark"), ("/", "present=1&slide=fingerprint"),
]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize(("route", "query"), PAGE_STATES)
def test_axe_finds_no_violation_in_presentation_mode_and_the_dark_theme(page, app_url, route, query, lang):
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}{route}?lang={lang}&{query}")
    theme = "dark" if "theme=dark" in query else "light"
    wait_until(lambda: page.evaluate("document.documentElement.dataset.peTheme") == theme, timeout=40,
               message="the page's theme applied")
    if route in ("/", "/explore") and "present=1" not in query:
        settle(page, route)
    else:
        wait_until(lambda: plots_drawn(page, 0), timeout=40, message="drawn")
        wait_until(lambda: page.evaluate(_UNNAMED) == [], timeout=10, message="every control named")
    page.add_script_tag(content=AXE)
    violations = page.evaluate(_RUN_AXE, WCAG_TAGS)
    assert violations == [], f"{route}?{query} ({lang}): {violations}"


def test_controls_and_figures_are_named_in_the_page_language(page, app_url):
    page.goto(f"{app_url}/clocks?lang=es&k=3")
    settle(page, "/clocks")
    expect(page.get_by_role("slider", name=text("es", "k"))).to_have_count(1)
    # One play control on the page (components/animation.py), named in the page's language.
    expect(page.get_by_role("button", name=text("es", "animation_play"))).to_have_count(1)
    # Every figure's canvas is an image named by its title (or axis labels).
    names = page.locator("[role=img]").evaluate_all("(els) => els.map((el) => el.getAttribute('aria-label'))")
    assert len(names) == figure_count("/clocks") and all(names)
    # The language link is in the other language and says so.
    link = page.locator("a.pe-lang")
    if link.count():
        assert link.get_attribute("lang") == "en"


def test_a_slider_move_changes_the_clocks_description_to_the_new_numbers(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=en&d_model=32&T=24&pair=3&pos=6&k=3")
    settle(page, "/clocks")
    label = text("en", "clocks_title")
    region = page.locator(f"section.pe-description[aria-label='{label}'] [aria-live=polite]")
    # Pair 3 of d_model 32: omega = 10000^(-6/32), worked out here from the formula, not from app.core.
    omega = 10000 ** (-6 / 32)

    def sentence(pos: int) -> str:
        theta = (omega * pos) % (2 * math.pi)
        return (f"Pair 3 turns {omega:.4g} rad per position, wavelength {2 * math.pi / omega:.1f}; at pos {pos} "
                f"its hand points at {theta:.2f} rad")

    expect(region).to_contain_text(sentence(6))
    press(page, "position pos", "ArrowRight")
    # The model follows at once; the live region only after the learner has paused.
    wait_until(lambda: sentence(7) in (model_property(page, "clocks_description", "text") or ""),
               message="the description follows pos")
    expect(region).to_contain_text(sentence(7), timeout=5000)
    assert "at pos + k = 10 at" in region.text_content()
    assert console_errors == []


def test_descriptions_are_announced_once_the_learner_pauses(page, app_url):
    page.goto(f"{app_url}/distance?lang=en&d_model=32&T=24&k=3")
    settle(page, "/distance")
    region = page.locator(f"section.pe-description[aria-label='{text('en', 'distance_title')}'] [aria-live=polite]")
    score = sum(math.cos(3 * 10000 ** (-2 * i / 32)) for i in range(16))
    expect(region).to_contain_text(f"S(k) at k = 3: {score:.2f}")
    handle = slider_handle(page, text("en", "k"))
    handle.focus()
    for _ in range(4):
        handle.press("ArrowRight")
    # Right after the last key the model has the new sentence, the live region not yet (it waits 600 ms).
    wait_until(lambda: "k = 7:" in (model_property(page, "distance_description", "text") or ""),
               message="the model follows k")
    score = sum(math.cos(7 * 10000 ** (-2 * i / 32)) for i in range(16))
    assert "k = 7" not in region.text_content()
    expect(region).to_contain_text(f"S(k) at k = 7: {score:.2f}", timeout=5000)


def focused(page) -> dict:
    """What has the keyboard focus, through the shadow roots: tag, class, text, label and its outline."""
    return page.evaluate("""() => {
      let el = document.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      if (!el) return {};
      const style = getComputedStyle(el);
      return {tag: el.tagName, cls: el.className, text: (el.textContent || "").trim().slice(0, 60),
              label: el.getAttribute("aria-label") || "", role: el.getAttribute("role") || "",
              type: el.getAttribute("type") || "",
              outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
              top: el.getBoundingClientRect().top + window.scrollY};
    }""")


def tab_until(page, matches, limit: int = 80) -> list[dict]:
    """Press Tab until the focused element satisfies ``matches``; every stop on the way, in order."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = focused(page)
        stops.append(stop)
        if matches(stop):
            return stops
    raise AssertionError(f"never reached; stops: {[s.get('label') or s.get('text') for s in stops]}")


def test_the_lesson_walked_by_keyboard_alone(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/wavelengths?lang=en&d_model=32&T=24&k=3")
    settle(page, "/wavelengths")
    # Tab through the section: every stop shows its focus, and the sliders come in reading order.
    controls = SECTIONS["wavelengths"].controls
    stops = tab_until(page, lambda s: s.get("label") == text("en", controls[-1]))
    sliders = [s["label"] for s in stops if s.get("role") == "slider"]
    assert sliders == [text("en", p) for p in controls]
    assert all(s["outline"] for s in stops if s.get("tag")), [s for s in stops if not s["outline"]]
    # Change a slider with the arrow keys: the ladder follows.
    assert controls[-1] == "pair"
    page.keyboard.press("ArrowRight")
    wait_until(lambda: (model_property(page, "ladder_description", "text") or "").startswith("Pair 1 "),
               message="the pair moved by keyboard")
    # Follow the Next link with Enter (once the slider has written itself into the address, as a reader's
    # next key press would find it).
    wait_until(lambda: "pair=1" in page.evaluate("location.search"), message="the address follows the slider")
    tab_until(page, lambda s: s.get("tag") == "A" and s.get("text", "").startswith("Next"))
    page.keyboard.press("Enter")
    page.wait_for_url("**/hands?**")
    assert "pair=1" in urlparse(page.url).query
    # The quiz by keyboard: Tab into the first question, arrows pick an answer, feedback follows.
    page.goto(f"{app_url}/quiz?lang=en")
    wait_until(lambda: model_property(page, "quiz_1", "choice") is not None, timeout=20, message="quiz drawn")
    expect(page.get_by_role("radio").first).to_be_visible()
    # The first answer of the first question (the page's play tools have inputs too: checkboxes).
    tab_until(page, lambda s: s.get("tag") == "INPUT" and s.get("type") == "radio")
    page.keyboard.press("Space")
    wait_until(lambda: model_property(page, "quiz_1", "choice") == 0, message="Space picks the first answer")
    page.keyboard.press("ArrowDown")
    wait_until(lambda: model_property(page, "quiz_1", "choice") == 1, message="an arrow picks the next answer")
    wait_until(lambda: model_property(page, "quiz_feedback_1", "text"), message="feedback shown")
    assert console_errors == []


@pytest.mark.parametrize("route", ["/?lang=en", "/explore?lang=es", "/hands?lang=en", "/clocks?lang=es"])
def test_tab_goes_down_the_page_from_the_top_bar(page, app_url, route):
    """Focus follows what the eye reads: the top bar's play first, then down the page, never back up.
    (The bar used to be built last and drawn first with CSS order, so Tab reached it after everything else.)"""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}{route}")
    settle(page, route.split("?")[0])
    page.evaluate("window.scrollTo(0, 0)")
    stops = [stop for _ in range(16) if (page.keyboard.press("Tab") or True) and (stop := focused(page)).get("tag")]
    lang = route.split("lang=")[1]
    assert stops[0]["tag"] == "BUTTON" and text(lang, "animation_play") in stops[0]["text"], stops[0]
    tops = [stop["top"] for stop in stops]
    # A row's controls differ by a few tens of px in their tops; a jump back up the page is a wrong order.
    assert all(b >= a - 40 for a, b in itertools.pairwise(tops)), [(s["label"] or s["text"], round(s["top"]))
                                                                   for s in stops]


def test_the_sentence_box_shows_its_focus_as_every_control_does(page, app_url):
    """Bokeh's input style takes the outline off a focused text box; the app's puts the same ring back."""
    page.goto(f"{app_url}/order?lang=en")
    settle(page, "/order")
    stops = tab_until(page, lambda s: s.get("tag") == "INPUT" and s.get("type") == "text")
    assert stops[-1]["outline"], stops[-1]


def test_nothing_traps_the_focus(page, app_url):
    """Tab moves on from every control of /explore: the focus never stays on one element."""
    page.goto(f"{app_url}/explore?lang=en")
    settle(page, "/explore")
    seen = []
    for _ in range(120):
        page.keyboard.press("Tab")
        stop = focused(page)
        if not stop.get("tag") or stop.get("tag") == "BODY":
            break
        seen.append((stop.get("cls"), stop.get("label"), stop.get("text"), stop.get("top")))
        assert stop.get("outline"), f"no visible focus on {stop}"
    assert len(seen) >= 12, seen
    # No element is focused twice in a row (a trap would hold the focus on one control).
    assert all(a != b for a, b in itertools.pairwise(seen)), seen


def test_player_play_and_language_link_work_from_the_keyboard(page, app_url):
    page.goto(f"{app_url}/clocks?lang=en&pos=2")
    settle(page, "/clocks")
    page.get_by_role("button", name=text("en", "animation_play")).focus()
    page.keyboard.press("Enter")
    wait_until(lambda: "at pos 3 " in (model_property(page, "clocks_description", "text") or ""),
               message="the play button, pressed from the keyboard, steps pos")
    page.get_by_role("button", name=text("en", "animation_pause")).press("Enter")


@pytest.fixture
def reduced_motion_page(browser, app_url):
    context = browser.new_context(reduced_motion="reduce")
    yield context.new_page()
    context.close()


def test_reduced_motion_starts_paused_and_drops_transitions(reduced_motion_page, app_url):
    page = reduced_motion_page
    # The address asks to play; the reader asked for less motion: the page starts paused.
    page.goto(f"{app_url}/clocks?lang=en&pos=2&play=1")
    settle(page, "/clocks")
    assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches")
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(1)
    # Once the server has the browser's word on motion (it answers in page_keys.motion), play would
    # already have started; it has not: the button still offers to play, pos is where the address put it.
    wait_until(lambda: model_property(page, "page_keys", "motion") == "reduced", message="motion reported")
    expect(page.get_by_role("button", name=text("en", "animation_play"))).to_have_count(1)
    assert "at pos 2 " in model_property(page, "clocks_description", "text")
    durations = page.evaluate("""() => {
      const out = [];
      const walk = (root) => {
        for (const el of root.querySelectorAll(".noUi-origin, .noUi-handle, .bk-btn, button, a")) {
          out.push(getComputedStyle(el).transitionDuration);
        }
        for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
      };
      walk(document);
      return out;
    }""")
    assert durations and all(d in ("0s", "") for d in durations), set(durations)


# --- The Embed dialog, the downloads and embedded pages (components/embed.py, components/export.py) ---

@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("route", ["/clocks", "/explore"])
def test_axe_with_the_embed_dialog_and_the_downloads_open(page, app_url, route, lang):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}{route}?lang={lang}")
    settle(page, route)
    page.locator("details.pe-export summary").click()
    expect(page.locator("details.pe-export button").first).to_be_visible()
    opener = page.get_by_role("button", name=text(lang, "embed_button"))
    opener.click()
    dialog = page.get_by_role("dialog", name=text(lang, "embed_title"))
    expect(dialog).to_be_visible()
    page.add_script_tag(content=AXE)
    violations = page.evaluate(_RUN_AXE, WCAG_TAGS)
    assert [v for v in violations if v["id"] not in ACCEPTED] == [], f"{route} ({lang}): {violations}"
    # Focus stays in the dialog, every stop shows its ring; Escape closes it and gives the focus back.
    for _ in range(12):
        page.keyboard.press("Tab")
        stop = focused(page)
        assert stop["outline"], stop
        assert dialog.evaluate("(d) => d.matches(':has(:focus)') || d.contains(d.getRootNode().activeElement)")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert opener.evaluate("(el) => el.getRootNode().activeElement === el")


@pytest.mark.parametrize("query", ["controls=pos,k", "controls=none", "controls=play", "controls=nonsense"])
def test_axe_on_embedded_views(page, app_url, query):
    page.goto(f"{app_url}/clocks?lang=en&{query}")
    settle(page, "/clocks")
    page.add_script_tag(content=AXE)
    violations = page.evaluate(_RUN_AXE, WCAG_TAGS)
    assert [v for v in violations if v["id"] not in ACCEPTED] == [], f"{query}: {violations}"
