"""Section «extrapolation» in Chromium: the page's sources equal the papers' formulas written out in NumPy
(tests/unit/test_lesson_extrapolation.py, not app.core), and the T_train slider and the scheme buttons move them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers import (
    after_two_frames,
    model_property,
    press,
    screen,
    source_data,
    wait_for_source,
    wait_until,
)
from tests.unit.test_lesson_extrapolation import by_hand, unseen_by_hand

pytestmark = pytest.mark.browser

D, T_TRAIN, T = 64, 32, 128

#: The glyph field a renderer, found by name, reads for y.
_Y_FIELD = """(name) => {
  for (const doc of window.Bokeh?.documents ?? []) {
    const model = doc.get_model_by_name(name);
    if (model) return model.glyph.y.field ?? null;
  }
  return null;
}"""


def test_extrapolation_page_draws_the_formulas_and_follows_its_controls(page, app_url, console_errors):
    page.goto(f"{app_url}/extrapolation?lang=en&d_model={D}&T_train={T_TRAIN}&T={T}")
    ladders = by_hand(D, T_TRAIN, T, 10_000)
    omega = ladders["sinusoidal"]
    angles = wait_for_source(page, "extrapolation_angles", lambda d: len(d["pair"]) == D // 2, timeout=30)
    np.testing.assert_allclose(angles["trained"], omega * (T_TRAIN - 1), rtol=1e-12)
    for name, read in ladders.items():
        np.testing.assert_allclose(angles[name], read * (T - 1), rtol=1e-12, err_msg=name)
        assert list(angles[f"unseen_{name}"]) == unseen_by_hand(omega, read, T_TRAIN, T), name

    scores = wait_for_source(page, "extrapolation_scores", lambda d: len(d["k"]) == T)
    k = np.arange(T)
    for name, read in ladders.items():
        np.testing.assert_allclose(scores[name], [sum(math.cos(f * step) for f in read) for step in k], atol=1e-9)
    learned = np.asarray(scores["learned"], dtype=float)
    assert np.isnan(learned[T_TRAIN:]).all() and not np.isnan(learned[:T_TRAIN]).any()
    alibi = wait_for_source(page, "extrapolation_alibi", lambda d: len(d["slope"]) == 8)
    np.testing.assert_allclose(alibi["slope"], [2.0 ** -j for j in range(1, 9)])
    # The learned table's gap is said, not only drawn: a label on the figure, at the far end of k.
    assert model_property(page, "extrapolation_no_learned_label", "text") == "no value\nfrom k = T_train on"
    assert model_property(page, "extrapolation_no_learned_label", "visible") is True
    assert model_property(page, "extrapolation_no_learned_label", "x") == T - 0.5

    press(page, "T_train (training length)", "ArrowRight", times=2)  # T_train = 34
    scores = wait_for_source(page, "extrapolation_scores",
                             lambda d: int(np.isnan(np.asarray(d["learned"], dtype=float)).sum()) == T - 34)
    angles = source_data(page, "extrapolation_angles")
    np.testing.assert_allclose(angles["trained"], omega * 33, rtol=1e-12)
    np.testing.assert_allclose(angles["interpolation"], omega * 34 / T * (T - 1), rtol=1e-12)

    assert page.evaluate(_Y_FIELD, "extrapolation_stretched_curve") == "interpolation"
    page.get_by_role("button", name="YaRN").click()
    wait_until(lambda: page.evaluate(_Y_FIELD, "extrapolation_stretched_curve") == "yarn",
               message="the YaRN button did not change the curve drawn")
    assert page.evaluate(_Y_FIELD, "extrapolation_stretched_unseen_marks") == "yarn"
    # The choice is the state's: in the address, so that a copied link (and a room) shows YaRN too.
    wait_until(lambda: "stretch=yarn" in page.url, message=lambda: f"the address does not say stretch=yarn: {page.url}")
    page.reload()
    wait_for_source(page, "extrapolation_angles", lambda d: len(d["pair"]) == D // 2, timeout=30)
    wait_until(lambda: page.evaluate(_Y_FIELD, "extrapolation_stretched_curve") == "yarn",
               message="a link with stretch=yarn did not draw YaRN")
    assert console_errors == []


def test_the_lesson_page_reaches_the_extrapolation_section(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/?lang=en&d_model={D}&T_train={T_TRAIN}&T={T}")

    def near() -> bool:
        # Scroll down a screen at a time until the section's sources exist (it is built when the reader nears it).
        if source_data(page, "extrapolation_scores") is not None:
            return True
        page.mouse.wheel(0, 700)
        after_two_frames(page)
        return False

    wait_until(near, timeout=120, interval=0.2, message="the extrapolation section was never built")
    page.locator("#extrapolation").scroll_into_view_if_needed()
    wait_for_source(page, "extrapolation_angles", lambda d: len(d["pair"]) == D // 2, timeout=30)
    wait_for_source(page, "extrapolation_scores", lambda d: len(d["k"]) == T, timeout=30)
    assert console_errors == []


def test_a_training_length_past_T_is_read_as_T_with_a_notice(page, app_url, console_errors):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/extrapolation?lang=en&T=40&T_train=100")
    expect(page.get_by_role("alert").filter(has_text="T_train = 100 is longer than the text (T)")).to_be_visible(
        timeout=20_000)
    scores = wait_for_source(page, "extrapolation_scores", lambda d: len(d["k"]) == 40, timeout=30)
    assert not np.isnan(np.asarray(scores["learned"], dtype=float)).any()  # T_train = T: every row trained
    assert model_property(page, "extrapolation_no_learned_label", "visible") is False
    assert console_errors == []


#: Each of the section's legends: its left and right edges on the page, and the labels' widest right edge.
_LEGEND_EDGES = """() => ['extrapolation_angles_legend', 'extrapolation_scores_legend'].map((name) => {
  const legend = window.Bokeh?.documents?.[0]?.get_model_by_name(name);
  const view = legend && Bokeh.index.find_one(legend);
  if (!view?.el) return null;
  const box = view.el.getBoundingClientRect();
  const labels = [...view.shadow_el.querySelectorAll('.bk-label')].map((label) => label.getBoundingClientRect());
  return [box.left, box.right, labels.length, Math.max(...labels.map((label) => label.right))];
})"""


@pytest.mark.parametrize(("width", "query"), [(390, "lang=es"), (390, "lang=en"), (1280, "lang=es&present=1")])
def test_the_legends_are_read_whole_on_a_phone_and_presented(browser, app_url, width, query):
    """The legends under the two figures were set in two columns of one-line labels: on a 390 px phone the
    canvas cut the second column away (the stretched ladder's entry, the trained curve's), presented at 1280 px
    in Spanish the start of both. Every label is now on the screen, in one column and in lines where needed."""
    mobile = width < 600
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=mobile, has_touch=mobile)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/extrapolation?{query}")
        wait_until(lambda: None not in (page.evaluate(_LEGEND_EDGES) or [None]), timeout=60,
                   message="the legends were not drawn")

        def off_screen():
            return [edges for edges in page.evaluate(_LEGEND_EDGES)
                    if edges[0] < 0 or edges[1] > width + 0.5 or edges[2] != 4 or edges[3] > width + 0.5]

        wait_until(lambda: off_screen() == [], timeout=15, message=lambda: f"legends off the screen: {off_screen()}")
        wait_until(lambda: page.evaluate("document.documentElement.scrollWidth") <= width, timeout=10,
                   message="the page scrolls sideways")
    finally:
        context.close()


#: The no-value label as drawn (BokehJS's text box of the label view), and the frame's left and right edges.
_LABEL_AND_FRAME = """() => {
  const view = [...Bokeh.index.query((v) => v.model?.name === 'extrapolation_no_learned_label')][0];
  if (!view?._rect || !view.model.visible) return null;
  const {sx, anchor, width} = view._rect;
  const frame = view.plot_view.frame.bbox;
  return {left: sx - anchor.x * width, right: sx + (1 - anchor.x) * width, frame: [frame.left, frame.right]};
}"""


@pytest.mark.parametrize(("width", "lang"), [(390, "es"), (390, "en"), (1280, "es")])
def test_the_no_value_label_is_read_whole_when_training_nearly_covers_the_text(browser, app_url, width, lang):
    """Placed just past the last trained row, the label ran off the frame's right edge once T_train neared T
    (at 1280 from T_train = 20 of 24), and on a phone its one line (260-277 px) was wider than the whole frame
    (206-226 px)."""
    context = screen(browser, width)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/extrapolation?lang={lang}&T=24&T_train=23")
        wait_for_source(page, "extrapolation_scores", lambda d: len(d["k"]) == 24, timeout=30)
        page.evaluate("() => [...Bokeh.index.query((v) => v.model?.name === 'extrapolation_scores_plot')][0]"
                      "?.el.scrollIntoView()")
        drawn = wait_until(lambda: page.evaluate(_LABEL_AND_FRAME), timeout=30,
                           message="the no-value label was never drawn")
        left, right = drawn["frame"]
        assert left - 0.5 <= drawn["left"] and drawn["right"] <= right + 0.5, drawn
    finally:
        context.close()
