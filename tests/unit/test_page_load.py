"""Page load of ``/``: the first view comes with the page, the others right after it has been drawn.

In process: without a session the page is complete when built; with one, only the first view is
built until the browser reports the page drawn (Panel's ``onload``), then every other view takes its
placeholder's place, built from the state as it is then. In Chromium: the first figure is drawn
before the later views exist, every view then arrives with its data (checked against the formula
computed here), a key pressed in between reaches every view, and ``#name`` anchors scroll.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import Spacer
from panel.io.state import set_curdoc

from app import pages
from app.model.strings import text
from components.plainjs import FIND_BY_ID_JS
from components.widgets import LiveHTML
from tests.helpers import press, wait_for_source, wait_until, with_address

LESSON = {"lang": "en", "d_model": "32", "T": "24", "base": "10000", "pair": "0", "pos": "0", "k": "3"}
FIRST_NAMES = {"ladder_plot", "heatmap_plot"}
#: One figure or sentence of each later view.
LATER_NAMES = {"clock_row_plot", "pair_clock_plot", "distance_plot", "check_norm"}
#: A Bokeh model that only the view of that name draws.
VIEW_MARK = {"ladder": "ladder_plot", "clocks": "clock_row_plot", "distance": "distance_plot", "checks": "check_norm"}


def score(k: int, d_model: int = 32, base: float = 10000.0) -> float:
    """S(k) = sum_i cos(k / base^(2i/d)), straight from the paper's formula."""
    return float(sum(np.cos(k / base ** (2 * i / d_model)) for i in range(d_model // 2)))


def build(query: dict[str, str]):
    """``/`` for a session whose address carries ``query``: (page, document, root model)."""
    doc = Document()
    with set_curdoc(doc), with_address(query):
        page = pages.explore_page()
        root = page.get_root(doc)
        doc.add_root(root)
    return page, doc, root


def model_names(root) -> set[str]:
    return {m.name for m in root.references() if m.name}


def views_column(page) -> pn.Column:
    (column,) = [c for c in page.select(pn.Column) if c.name == "views"]
    return column


def test_a_page_built_in_process_reads_the_address_it_is_given():
    """These tests and the benchmark build pages with ``with_address``. It once patched a function the
    pages no longer called, and every page so built was the default one (Spanish, the lesson's sizes)."""
    page, _, _ = build({"lang": "en", "d_model": "64", "k": "9"})
    sliders = {w.name: w.value for w in page.select(pn.widgets.IntSlider)}
    assert sliders[text("en", "d_model")] == 64 and sliders[text("en", "k")] == 9


def test_without_a_session_the_page_is_complete_when_built():
    _, _, root = build(LESSON)
    assert model_names(root) >= FIRST_NAMES | LATER_NAMES
    assert not [m for m in root.references() if isinstance(m, Spacer)]


def test_in_a_session_only_the_first_view_is_built_until_the_browser_has_drawn_it(monkeypatch):
    callbacks: list = []
    monkeypatch.setattr(pn.state, "onload", lambda callback, threaded=False: callbacks.append(callback))
    page, doc, root = build(LESSON)

    names = model_names(root)
    assert names >= FIRST_NAMES
    assert not names & LATER_NAMES
    held = sorted(m.height for m in root.references() if isinstance(m, Spacer))
    assert held == sorted(pages.PLACEHOLDER_HEIGHT.values())
    assert len(callbacks) == 1

    # A key press before the browser is ready: the later views are built from the state as it is then.
    later = callbacks[0].__self__
    later.state.k = 5
    with set_curdoc(doc):
        callbacks[0]()

    assert model_names(root) >= LATER_NAMES
    assert not [m for m in root.references() if isinstance(m, Spacer)]
    marker = doc.get_model_by_name("distance_marker").data
    assert list(marker["k"]) == [5]
    assert marker["score"][0] == pytest.approx(score(5), abs=1e-9)
    # Headings stay where they were, each followed by its view and its code part, in reading order.
    objects = views_column(page).objects
    assert len(objects) == 3 * len(pages.VIEWS)
    for i, name in enumerate(pages.VIEWS):
        assert f'id="{name}"' in objects[3 * i].object
        view = objects[3 * i + 1]
        marks = {pane.object.name for pane in view.select(pn.pane.Bokeh)} | {t.name for t in view.select(LiveHTML)}
        assert VIEW_MARK[name] in marks
        assert objects[3 * i + 2].name == f"{name}_code"
    assert later.anchor.complete


# -- in Chromium ----------------------------------------------------------------------------------

#: Records, from the first animation frame on, when a figure first has finished drawing and when
#: the later views' first model appeared in the document (both in the page's own clock).
ORDER_JS = """
(() => {
  window.__order = {};
  const poll = () => {
    try {
      const doc = window.Bokeh?.documents?.[0];
      if (doc != null) {
        const now = performance.now();
        if (window.__order.firstPlot === undefined) {
          // Every figure of the app is named "<something>_plot".
          for (const view of Bokeh.index.query((v) => /_plot$/.test(v.model?.name ?? "")
                                                 && typeof v.has_finished === "function")) {
            if (view.has_finished()) {
              window.__order.firstPlot = now;
              window.__order.firstName = view.model.name;
              break;
            }
          }
        }
        if (window.__order.later === undefined && doc.get_model_by_name("clock_row_plot") != null) {
          window.__order.later = now;
        }
      }
    } catch (e) {}
    if (window.__order.later === undefined) requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})();
"""

#: The top of the element with this id, looked for through every shadow root (null if none).
HEADING_TOP = """(id) => {""" + FIND_BY_ID_JS + """
  const el = find(document, id);
  return el == null ? null : el.getBoundingClientRect().top;
}"""


def lesson_url(app_url: str, fragment: str = "") -> str:
    return f"{app_url}/explore?" + "&".join(f"{k}={v}" for k, v in LESSON.items()) + fragment


def wait_for_every_view(page) -> None:
    wait_for_source(page, "distance", lambda d: len(d["k"]) > 0, timeout=30)
    wait_for_source(page, "clocks", lambda d: len(d["pair"]) > 0, timeout=30)
    wait_until(lambda: page.evaluate("() => Bokeh.documents[0].get_model_by_name('check_norm')?.text"),
               timeout=30, message="the live checks never arrived")


@pytest.mark.browser
def test_first_figure_is_drawn_before_the_later_views_arrive_then_every_view_has_its_data(
        page, app_url, console_errors):
    page.add_init_script(ORDER_JS)
    page.goto(lesson_url(app_url))
    wait_until(lambda: page.evaluate("() => window.__order.later !== undefined"), timeout=30,
               message="the later views never arrived")
    order = page.evaluate("() => window.__order")
    assert order["firstName"] in FIRST_NAMES
    assert order["firstPlot"] < order["later"]

    wait_for_every_view(page)
    ks = np.arange(-23, 24)
    curve = wait_for_source(page, "distance", lambda d: len(d["k"]) == ks.size)
    np.testing.assert_allclose(curve["k"], ks)
    np.testing.assert_allclose(curve["score"], [score(int(k)) for k in ks], atol=1e-9)
    marker = wait_for_source(page, "distance_marker")
    assert list(marker["k"]) == [3]
    # The pair clock: pair 0 at pos 0 and pos + k = 3 (sin, cos of pos * omega_0, omega_0 = 1); the
    # tips are drawing coordinates, sent rounded, hence the tolerance (a wrong hand is off by > 0.1).
    clock = wait_for_source(page, "pair_clock", lambda d: len(d["x"]) == 2)
    np.testing.assert_allclose(np.column_stack([clock["x"], clock["y"]]), [[0.0, 1.0], [np.sin(3), np.cos(3)]],
                               atol=1e-3)
    assert console_errors == []


@pytest.mark.browser
def test_a_key_pressed_before_the_later_views_arrive_reaches_every_view(page, app_url):
    page.add_init_script(ORDER_JS)
    page.goto(lesson_url(app_url))
    wait_until(lambda: page.evaluate("() => window.__order.firstPlot !== undefined"), timeout=30,
               message="no figure was ever drawn")
    press(page, text("en", "k"), "ArrowRight")  # k = 4, as soon as the first figure shows
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [0, 4])
    marker = wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4], timeout=30)
    assert marker["score"][0] == pytest.approx(score(4), abs=1e-9)
    wait_for_source(page, "pair_clock", lambda d: len(d["x"]) == 2 and np.allclose(
        np.column_stack([d["x"], d["y"]]), [[0.0, 1.0], [np.sin(4), np.cos(4)]], atol=1e-3), timeout=30)


@pytest.mark.browser
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080), (800, 600)])
def test_every_view_arrives_on_every_load(page, app_url, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    for _ in range(2):
        page.goto(lesson_url(app_url))
        wait_for_every_view(page)


@pytest.mark.browser
def test_a_section_anchor_scrolls_to_its_view_once_it_has_arrived(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(lesson_url(app_url, "#distance"))
    wait_for_every_view(page)
    wait_until(lambda: abs(page.evaluate(HEADING_TOP, "distance") or 1e9) <= 2, timeout=15,
               message="#distance did not scroll its heading to the top")
    assert page.evaluate("() => window.location.hash") == "#distance"  # the address bar keeps it

    page.evaluate("() => { window.location.hash = 'clocks'; }")
    wait_until(lambda: abs(page.evaluate(HEADING_TOP, "clocks") or 1e9) <= 2, timeout=15,
               message="a new #clocks did not scroll its heading to the top")
