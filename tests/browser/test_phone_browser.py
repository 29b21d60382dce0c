"""A student's phone (390 x 844, portrait, touch): the page is laid out at the phone's width, not as a
shrunken 980 px desktop page, and nothing makes it scroll sideways."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.helpers import (
    after_two_frames,
    figure_count,
    found_down_the_page,
    model_property,
    plots_drawn,
    screen,
    wait_until,
)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("route", ["/quiz?lang=es", "/order?lang=en", "/explore?lang=es", "/distance?lang=en"])
def test_a_phone_reads_the_page_at_its_own_width(browser, app_url, route):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(app_url + route)
        wait_until(lambda: model_property(page, "room_box", "mode") not in (None, ""), timeout=60,
                   message="the page was not drawn")
        viewport = page.evaluate("document.querySelector('meta[name=viewport]')?.content")
        assert viewport == "width=device-width, initial-scale=1"
        assert page.evaluate("window.innerWidth") == 390  # laid out at the phone's width
        # Measured once its figures are drawn: a figure's column laid out late made /explore 456 px wide.
        wait_until(lambda: plots_drawn(page, figure_count(route.split("?")[0])), timeout=60,
                   message=f"the figures of {route} were not drawn")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, f"{route} scrolls sideways on a phone"
    finally:
        context.close()


def test_the_lesson_on_a_phone_is_no_wider_than_the_screen_once_drawn(browser, app_url):
    """``/``, where a student types a room's code, measured once its figures are drawn (its contents' two columns
    and its header used to lay it out 540 px wide, scrolling sideways)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/?lang=es")
        wait_until(lambda: plots_drawn(page, figure_count("/")), timeout=60, message="the figures were not drawn")
        assert page.evaluate("window.innerWidth") == 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_the_rotation_block_fits_a_phone_without_scrolling_inside(browser, app_url):
    """The 2 × 2 block of M_k times a pair of PE is read whole on a phone: at desktop type it needed ~480 px
    and scrolled inside its box, showing "= [ 0" cut at the screen's edge."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/clocks?lang=es")
        table = page.locator(".pe-live table").first  # the block's one table, inside the rotation_block's shadow
        table.wait_for(timeout=60_000)
        widths = table.evaluate("(t) => [t.scrollWidth, t.clientWidth]")
        assert widths[0] <= widths[1], f"the block scrolls inside its box on a phone: {widths}"
    finally:
        context.close()


#: Each drawn figure: its name, its left and right edges and its width on the page (px).
_FIGURE_BOXES = """() => [...Bokeh.index.query((v) => v.model?.toolbar !== undefined && v.canvas_view)]
  .map((v) => [v.model.name, v.el.getBoundingClientRect()]).filter(([, r]) => r.width > 0)
  .map(([name, r]) => [name, r.left, r.right, r.width])"""


@pytest.mark.parametrize("route", ["/simpler?lang=es", "/order?lang=en", "/terms?lang=es", "/shift?lang=en",
                                   "/gram?lang=es", "/rope?lang=en"])
def test_figures_side_by_side_stack_and_fixed_figures_narrow_on_a_phone(browser, app_url, route):
    """Figures that share a row on a wide page got 195 px each on a phone (/simpler, /order), or 60 px beside a
    fixed one (/terms); a 620–640 px heat map held the page that wide (/shift, /gram, /rope). On a phone each
    figure is on the screen, and at least 300 px wide."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(app_url + route)
        wait_until(lambda: plots_drawn(page, figure_count(route.split("?")[0])), timeout=60,
                   message=f"the figures of {route} were not drawn")

        def misfits():
            boxes = page.evaluate(_FIGURE_BOXES)
            return boxes and [box for box in boxes if box[1] < 0 or box[2] > 390 or box[3] < 300]

        wait_until(lambda: misfits() == [], timeout=15,
                   message=lambda: f"figures off the screen or squeezed: {misfits()}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, f"{route} scrolls sideways on a phone"
    finally:
        context.close()


def _bars_axis(page) -> list | None:
    """/terms' bars' row axis: whether it is shown, how many rows the ridges' axis ticks, whether it is that ticker."""
    return page.evaluate("""() => {
      const axis = Bokeh.documents[0]?.get_model_by_name('terms_bars_rows_axis');
      const ridges = Bokeh.documents[0]?.get_model_by_name('terms_plot');
      if (!axis || !ridges) return null;
      return [axis.visible, ridges.left[0].ticker.ticks.length, axis.ticker === ridges.left[0].ticker];
    }""")


@pytest.mark.parametrize(("width", "shown"), [(390, True), (1280, False)])
def test_the_terms_bars_label_their_rows_where_they_stack_under_the_ridges(browser, app_url, width, shown):
    """Beside the ridges the bars read their rows off the ridges' axis; stacked under them on a phone they had no
    row labels at all. There they show the same axis (the ridges' ticker), and only there."""
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=width < 600, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/terms?lang=en")
        wait_until(lambda: plots_drawn(page, figure_count("/terms")), timeout=60, message="/terms was not drawn")
        wait_until(lambda: (_bars_axis(page) or [None])[0] is shown, timeout=15,
                   message=lambda: f"the bars' row axis: {_bars_axis(page)}")
        _, ticks, shared = _bars_axis(page)
        assert shared and ticks == 16  # d_model 32: one row per pair
    finally:
        context.close()


def test_a_fixed_figure_beside_text_leaves_the_rest_of_a_wide_row_to_the_text(browser, app_url):
    """/rope's 540 px clock, boxed so that it narrows on a phone, took half of a 1920 px row: its angle
    sentence began ~420 px right of the clock. Its box is no wider than the clock."""
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        page.goto(f"{app_url}/rope?lang=es")
        wait_until(lambda: plots_drawn(page, figure_count("/rope")), timeout=60, message="/rope was not drawn")
        widths = """() => ['rope_clock_plot', 'rope_clock_plot_box'].map((name) => {
          const model = Bokeh.documents[0].get_model_by_name(name);
          const view = [...Bokeh.index.query((v) => v.model === model)][0];
          return view ? Math.round(view.el.getBoundingClientRect().width) : null; })"""
        wait_until(lambda: page.evaluate(widths)[0] == 540, timeout=15,
                   message=lambda: f"the clock is not drawn at its 540 px: {page.evaluate(widths)}")
        assert page.evaluate(widths)[1] == 540, f"the clock's box is wider than the clock: {page.evaluate(widths)}"
    finally:
        page.close()


def _drawn(browser, app_url: str, width: int, path: str, figure: str | None, probe: str, what: str):
    """What ``probe`` reads of the page ``path`` on a screen ``width`` px wide, once it reads something: the figure
    named ``figure`` scrolled into view first (figures are drawn as they come into view)."""
    context = screen(browser, width)
    try:
        page = context.new_page()
        page.goto(f"{app_url}{path}")
        if figure is not None:
            page.evaluate(f"() => [...Bokeh.index.query((v) => v.model?.name === '{figure}')][0]?.el.scrollIntoView()")
        return wait_until(lambda: page.evaluate(probe), timeout=60, message=f"{what} was not drawn")
    finally:
        context.close()


def _found_on_a_phone(browser, app_url: str, route: str, lang: str, width: int, probe: str,
                      before=None) -> list:
    """What ``probe`` finds down ``route``'s page on a phone ``width`` px wide, once its figures are drawn
    (``before(page)`` runs then, first)."""
    context = screen(browser, width)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{route}?lang={lang}")
        wait_until(lambda: plots_drawn(page, figure_count(f"/{route}")), timeout=60, message=f"/{route} was not drawn")
        if before is not None:
            before(page)
        return found_down_the_page(page, probe)
    finally:
        context.close()


#: Every legend label drawn on the page that passes its figure's edges or the screen's: [legend, left, right, label].
_LEGEND_LABELS_OUT = """() => {
  const out = [];
  for (const view of Bokeh.index.query((v) => v.model?.type === 'Legend')) {
    if (!view.el || !view.model.visible) continue;
    const figure = view.parent?.el?.getBoundingClientRect();
    for (const label of (view.shadow_el ?? view.el).querySelectorAll('.bk-label')) {
      const box = label.getBoundingClientRect();
      if (box.width === 0) continue;
      const right = Math.min(window.innerWidth, figure?.right ?? Infinity), left = Math.max(0, figure?.left ?? 0);
      if (box.left < left - 0.5 || box.right > right + 0.5)
        out.push([view.model.name, label.textContent, Math.round(box.left), Math.round(box.right)]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize(("route", "lang", "width"), [("sum", "es", 390), ("sum", "en", 390), ("explore", "en", 390),
                                                      ("extrapolation", "es", 360)])
def test_every_legend_is_read_whole_on_a_phone(browser, app_url, route, lang, width):
    """/sum's keys on a 390 px phone: the ladder's, two entries side by side and centred, began 47-88 px left of
    the screen; the cross terms' label ran 8-17 px past its right edge. (Found by walking every route at 390 px,
    es and en: the only legends cut.) At 360 px /extrapolation's labels, 250 px wide each to line two columns up,
    ran 10-30 px past the screen in the one column left."""
    def some_legends(page) -> None:
        legends = page.evaluate("() => [...Bokeh.index.query((v) => v.model?.type === 'Legend')].length")
        assert legends >= 2, f"/{route} has {legends} legends: nothing to check"

    cut = _found_on_a_phone(browser, app_url, route, lang, width, _LEGEND_LABELS_OUT, some_legends)
    assert not cut, f"legend labels past their figure or the screen at {width} px: {cut}"


#: The drawn boxes (screen px: left, right, top, bottom) of /sum's three level labels, of its key and of its frame,
#: and the text each label shows; null until the labels are drawn.
_LEVEL_LABELS = """() => {
  const labels = [...Bokeh.index.query((v) => v.model?.name === 'sum_levels_labels')][0];
  const key = [...Bokeh.index.query((v) => v.model?.name === 'sum_cross_legend')][0];
  if (labels?.glyph?.labels?.length !== 3 || key?.bbox == null) return null;
  const glyph = labels.glyph;
  const box = (i) => {
    const r = glyph.rect_i(i), xs = [r.p0.x, r.p1.x, r.p2.x, r.p3.x], ys = [r.p0.y, r.p1.y, r.p2.y, r.p3.y];
    return [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  };
  const f = labels.plot_view.frame.bbox;
  return {labels: [0, 1, 2].map(box), key: [key.bbox.left, key.bbox.right, key.bbox.top, key.bbox.bottom],
          frame: [f.left, f.right, f.top, f.bottom], texts: [0, 1, 2].map((i) => glyph.text.get(i))};
}"""


@pytest.mark.parametrize(("width", "lang", "query"), [(390, "en", ""), (360, "es", "k=2&reserve=16"),
                                                      (390, "en", "d_model=128&T=96&k=20"), (1280, "es", "")])
def test_the_sums_level_labels_are_read_whole_on_a_phone(browser, app_url, width, lang, query):
    """/sum's three level labels ("PE·PE when summing: S(3) = 12.272", …) were placed for a desktop's frame: on a
    390 px phone their one line (up to 34 characters) ran off both sides of a 263 px frame. On a phone they are set
    on two lines and placed for its frame: each inside the frame, on no other label and not under the key."""
    phone = width < 500
    drawn = _drawn(browser, app_url, width, f"/sum?lang={lang}&{query}", "sum_cross_plot", _LEVEL_LABELS,
                   "the level labels")
    assert all(("\n" in text) == phone for text in drawn["texts"]), drawn["texts"]  # two lines on a phone only
    left, right, top, bottom = drawn["frame"]
    for label in drawn["labels"]:
        assert left - 0.5 <= label[0] and label[1] <= right + 0.5, (label, drawn)
        assert top - 0.5 <= label[2] and label[3] <= bottom + 0.5, (label, drawn)
    boxes = [*drawn["labels"], drawn["key"]]
    overlapping = [(a, b) for n, a in enumerate(boxes) for b in boxes[n + 1:]
                   if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]]
    assert not overlapping, (overlapping, drawn)


#: Every drawn text label of the page's figures that runs past its figure (screen px of the canvas), with the
#: figure's renderer name and its text.
_TEXT_PAST_FIGURE = """() => {
  const out = [];
  for (const view of Bokeh.index.query((v) => v.glyph?.model?.type === 'Text' && v.model.visible)) {
    const glyph = view.glyph, width = view.plot_view.bbox.width;
    for (let i = 0; i < (glyph.labels?.length ?? 0); i++) {
      const text = String(glyph.text.get(i) ?? '');
      if (glyph.labels[i] == null || text.trim() === '') continue;
      const r = glyph.rect_i(i), xs = [r.p0.x, r.p1.x, r.p2.x, r.p3.x];
      if (!xs.every(Number.isFinite)) continue;
      if (Math.min(...xs) < -0.5 || Math.max(...xs) > width + 0.5)
        out.push([view.model.name, text, Math.round(Math.min(...xs)), Math.round(Math.max(...xs)), width]);
    }
  }
  // Labels (annotations): the box BokehJS drew them in.
  for (const view of Bokeh.index.query((v) => v.model?.type === 'Label' && v.model.visible && v.model.text)) {
    if (view._rect == null) continue;  // not drawn (yet)
    const {sx, width, anchor} = view._rect, left = sx - anchor.x * width, figure = view.plot_view.bbox.width;
    if (left < -0.5 || left + width > figure + 0.5)
      out.push([view.model.name, view.model.text, Math.round(left), Math.round(left + width), figure]);
  }
  return out;
}"""


@pytest.mark.parametrize(("route", "lang", "width"), [("simpler", "es", 360), ("simpler", "en", 390),
                                                      ("sum", "es", 360), ("sum", "en", 390),
                                                      ("distance", "es", 360), ("explore", "en", 390),
                                                      ("mistakes", "en", 360)])
def test_every_figure_label_is_read_whole_on_a_phone(browser, app_url, route, lang, width):
    """Labels drawn in figures (text glyphs), walked on a phone at 390 and 360 px, es and en: on /simpler "between
    tokens 12 and 13 of 300" ran 70 px past the figure; on /sum "meaning + position, sharing all 32" past both of
    its sides; on /distance and /explore "S(3) = 12.272398" 117 px left of it, the key beside a 37 px frame; on
    /mistakes "√(d_model/2) = 4: the correct encoding" 130 px past it. Now two lines (in smaller type) on a phone,
    the key under the figure."""
    cut = _found_on_a_phone(browser, app_url, route, lang, width, _TEXT_PAST_FIGURE)
    assert not cut, f"labels past their figure at {width} px: {cut}"


_DISTANCE_KEY = """() => {
  const key = [...Bokeh.index.query((v) => v.model?.name === 'distance_legend')][0];
  if (key?.bbox == null || !(key.plot_view.frame.bbox.width > 0)) return null;
  const frame = key.plot_view.frame.bbox;
  return {frame: [frame.left, frame.right, frame.top, frame.bottom], key: [key.bbox.left, key.bbox.top],
          width: key.plot_view.bbox.width};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_distance_key_goes_under_the_figure_on_a_phone(browser, app_url, width):
    """Right of the frame, /distance's key left a 390 px phone's frame 37 px of the figure's 390."""
    phone = width < 500
    drawn = _drawn(browser, app_url, width, "/distance?lang=en", None, _DISTANCE_KEY, "/distance's key")
    left, right, _, bottom = drawn["frame"]
    if phone:
        assert drawn["key"][1] >= bottom and right - left >= 0.6 * drawn["width"], drawn
    else:
        assert drawn["key"][0] >= right and drawn["key"][1] < bottom, drawn


#: Pairs of drawn labels (text glyphs and Labels) of one figure that overlap by more than a pixel both ways.
_LABELS_ON_LABELS = """() => {
  const boxes = new Map();
  const add = (view, name, text, box) => boxes.set(view, [...(boxes.get(view) ?? []), [name, text, box]]);
  for (const view of Bokeh.index.query((v) => v.glyph?.model?.type === 'Text' && v.model.visible)) {
    const glyph = view.glyph;
    for (let i = 0; i < (glyph.labels?.length ?? 0); i++) {
      const text = String(glyph.text.get(i) ?? '');
      if (glyph.labels[i] == null || text.trim() === '') continue;
      const r = glyph.rect_i(i), xs = [r.p0.x, r.p1.x, r.p2.x, r.p3.x], ys = [r.p0.y, r.p1.y, r.p2.y, r.p3.y];
      const box = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
      if (box.every(Number.isFinite)) add(view.plot_view, view.model.name, text, box);
    }
  }
  for (const view of Bokeh.index.query((v) => v.model?.type === 'Label' && v.model.visible && v.model.text)) {
    if (view._rect == null) continue;  // not drawn (yet)
    const {sx, sy, width, height, anchor} = view._rect, left = sx - anchor.x * width, top = sy - anchor.y * height;
    add(view.plot_view, view.model.name, view.model.text, [left, left + width, top, top + height]);
  }
  const out = [];
  for (const items of boxes.values())
    for (let a = 0; a < items.length; a++)
      for (let b = a + 1; b < items.length; b++) {
        const [A, B] = [items[a][2], items[b][2]];
        if (Math.min(A[1], B[1]) - Math.max(A[0], B[0]) > 1 && Math.min(A[3], B[3]) - Math.max(A[2], B[2]) > 1)
          out.push([`${items[a][0]}: ${items[a][1]}`, `${items[b][0]}: ${items[b][1]}`]);
      }
  return out;
}"""


@pytest.mark.parametrize(("route", "lang"), [("fingerprint", "es"), ("score", "en"), ("hands", "es")])
def test_no_figure_label_runs_into_another_on_a_phone(browser, app_url, route, lang):
    """At 360 px: /fingerprint's "ninguna pasa de 2√n = 8.00" ran into "pos = 0", and its dials' numbers into each
    other ("10" into "11"); /score's "−2.810" into "−2.771". (Found by walking every route at 360 px, es and en.)"""
    overlapping = _found_on_a_phone(browser, app_url, route, lang, 360, _LABELS_ON_LABELS)
    assert not overlapping, f"labels over labels at 360 px: {overlapping}"


#: /fingerprint's dials as drawn (screen px): each face's centre and radius, the key's box and the frame's box.
_DIALS = """() => {
  const faces = [...Bokeh.index.query((v) => v.model?.name === 'fingerprint_faces')][0];
  const key = [...Bokeh.index.query((v) => v.model?.name === 'fingerprint_dials_legend')][0];
  const glyph = faces?.glyph;
  if (key?.bbox == null || !(glyph?.sx?.length > 0) || !(faces.plot_view.frame.bbox.width > 0)) return null;
  const f = faces.plot_view.frame.bbox;
  return {centres: [...glyph.sx].map((x, i) => [x, glyph.sy[i]]), radius: glyph.sradius[0],
          key: [key.bbox.left, key.bbox.right, key.bbox.top, key.bbox.bottom],
          frame: [f.left, f.right, f.top, f.bottom]};
}"""


@pytest.mark.parametrize(("width", "lang"), [(360, "es"), (390, "en"), (1280, "es")])
def test_the_dials_go_in_two_rows_on_a_phone_clear_of_their_key(browser, app_url, width, lang):
    """/fingerprint's sixteen dials in one row were 16 px wide on a 390 px phone, and its stacked key, inside the
    frame, would have covered them. On a phone: two rows of eight, each dial at least 26 px across, inside the frame,
    the key above them; on a desktop one row."""
    phone = width < 500
    drawn = _drawn(browser, app_url, width, f"/fingerprint?lang={lang}", "fingerprint_dials_plot", _DIALS, "the dials")
    centres, radius = drawn["centres"], drawn["radius"]
    assert len(centres) == 16, drawn  # the lesson's 16 pairs
    rows = sorted({round(y) for _, y in centres})
    assert len(rows) == (2 if phone else 1), drawn
    if phone:
        assert 2 * radius >= 26, drawn
        assert [sum(round(y) == row for _, y in centres) for row in rows] == [8, 8], drawn
    left, right, top, bottom = drawn["frame"]
    assert all(left <= x - radius and x + radius <= right + 0.5 and top <= y - radius and y + radius <= bottom
               for x, y in centres), drawn
    k_left, k_right, k_top, k_bottom = drawn["key"]
    under_key = [(x, y) for x, y in centres
                 if x + radius > k_left and x - radius < k_right and y + radius > k_top and y - radius < k_bottom]
    assert not under_key, drawn


@pytest.mark.parametrize(("route", "lang"), [("fingerprint", "es"), ("distance", "en")])
def test_a_key_that_moves_on_a_phone_moves_without_an_error(browser, app_url, route, lang):
    """A key that leaves its side for another on a phone (``moved_when_narrow``) was set one side at a time, and
    BokehJS laid the figure out between the two, without the key's view: "cannot find a view for Legend" in the
    console on every phone's load of /fingerprint and /distance."""
    context = screen(browser, 390)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{app_url}/{route}?lang={lang}")
        wait_until(lambda: plots_drawn(page, figure_count(f"/{route}")), timeout=60, message=f"/{route} was not drawn")
        found_down_the_page(page, "() => []")  # every figure scrolled into view, so each is laid out
        after_two_frames(page)
    finally:
        context.close()
    assert errors == []


#: /hands' row of clocks as drawn (screen px): each face's centre and radius, the centres of the pair numbers above
#: the faces and of the wavelengths under them, each hand's tip, and the frame's box.
_CLOCK_ROW = """() => {
  const view = (name) => [...Bokeh.index.query((v) => v.model?.name === name)][0];
  const faces = view('clock_faces_glyph'), pairs = view('clock_pair_text'), lambdas = view('clock_lambda_text');
  const hands = view('clock_pos_hands');
  if (!(faces?.glyph?.sx?.length > 0) || !(faces.plot_view.frame.bbox.width > 0) || !(pairs?.glyph?.sy?.length > 0)
      || !(hands?.glyph?.sx?.length > 0)) return null;
  const at = (glyph) => [...glyph.sx].map((x, i) => [x, glyph.sy[i]]);
  const h = hands.glyph, f = faces.plot_view.frame.bbox;
  return {centres: at(faces.glyph), radius: faces.glyph.sradius[0], pairs: at(pairs.glyph), lambdas: at(lambdas.glyph),
          tips: [...h.sx].map((x, i) => [x + h.slength[i] * Math.cos(h.angle.get(i)),
                                          h.sy[i] - h.slength[i] * Math.sin(h.angle.get(i))]),
          frame: [f.left, f.right, f.top, f.bottom]};
}"""


@pytest.mark.parametrize(("width", "lang"), [(360, "es"), (390, "en"), (1280, "es")])
def test_the_clock_row_goes_in_two_rows_on_a_phone(browser, app_url, width, lang):
    """/hands' nine clocks in one row were 30 px across on a 390 px phone, numbered in 8.5 pt. On a phone: five over
    four, each clock at least 48 px across, its number above it and its wavelength under it, its hands from its
    centre to its rim, all inside the frame; on a desktop one row."""
    phone = width < 500
    drawn = _drawn(browser, app_url, width, f"/hands?lang={lang}&pos=5&k=3", "clock_row_plot", _CLOCK_ROW,
                   "the clock row")
    centres, radius = drawn["centres"], drawn["radius"]
    assert len(centres) == 9, drawn
    rows = sorted({round(y) for _, y in centres})
    assert [sum(round(y) == row for _, y in centres) for row in rows] == ([5, 4] if phone else [9]), drawn
    if phone:
        assert 2 * radius >= 48, drawn
    left, right, top, bottom = drawn["frame"]
    for (x, y), (px, py), (lx, ly), (tx, ty) in zip(centres, drawn["pairs"], drawn["lambdas"], drawn["tips"],
                                                    strict=True):
        assert left <= x - radius and x + radius <= right + 0.5 and top <= y - radius and y + radius <= bottom
        # The labels are placed from the same centres as the faces (a transform of the phone's column too).
        assert abs(px - x) < 0.5 and y - 1.3 * radius < py < y - radius, drawn
        assert abs(lx - x) < 0.5 and y + radius < ly < y + 1.3 * radius, drawn
        assert abs(math.hypot(tx - x, ty - y) - radius) < 1, drawn


#: Every text a canvas draws, recorded from the page's start: its canvas, text, left and right edges and baseline
#: height in the canvas's pixels (with BokehJS's transforms applied; axis labels are drawn unrotated).
_RECORD_TEXT = """
window.__peTexts = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const m = this.getTransform(), width = this.measureText(text).width;
  window.__peTexts.push([this.canvas, String(text), m.a * x + m.e, m.a * (x + width) + m.e, m.d * y + m.f, m.b]);
  return fillText.call(this, text, x, y, ...rest);
};
"""

#: The tick labels figure ``name`` drew in its last paint under its frame (``side`` "below", the x axis's) or left of
#: it ("left", the y axis's): [text, left, right, baseline], in CSS pixels. Each paint draws an axis's labels in the
#: order of its ticks, from the first tick's (``first``) on.
_AXIS_LABELS = """([name, side, first]) => {
  const view = [...Bokeh.index.query((v) => v.model?.name === name)][0];
  if (view == null || !(view.frame.bbox.width > 0)) return null;
  const canvases = new Set([...view.canvas_view.el.shadowRoot?.querySelectorAll('canvas') ?? [],
                            ...view.canvas_view.el.querySelectorAll('canvas')]);
  const ratio = window.devicePixelRatio, frame = view.frame.bbox;
  // Below the frame and not left of it (the y axis's lowest label is drawn there too), or wholly left of it.
  const beside = side === 'below' ? (x0, x1, y) => y > frame.bottom * ratio && x0 >= frame.left * ratio - 1
                                  : (x0, x1, y) => x1 <= frame.left * ratio + 1 && y <= frame.bottom * ratio + 2;
  const drawn = window.__peTexts.filter(([canvas, , x0, x1, y, skew]) => canvases.has(canvas) && skew === 0
                                                                       && beside(x0, x1, y))
    .map(([, text, x0, x1, y]) => [text, x0 / ratio, x1 / ratio, y / ratio]);
  return drawn.slice(Math.max(0, drawn.map(([text]) => text).lastIndexOf(first)));
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_ladders_pair_numbers_do_not_run_together_on_a_phone(browser, app_url, width):
    """The ladder's sixteen pair numbers ran together on a 390 px phone as "9101112131415". On a phone every other
    pair is numbered (0, 2 … 14), on a desktop all sixteen; none runs into the next."""
    context = screen(browser, width)
    context.add_init_script(_RECORD_TEXT)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/wavelengths?lang=es")
        probe = ["ladder_plot", "below", "0"]
        wait_until(lambda: page.evaluate(_AXIS_LABELS, probe), timeout=60, message="the ladder was not drawn")
        after_two_frames(page)
        drawn = [label for label in page.evaluate(_AXIS_LABELS, probe) if label[0].isdigit()]  # not "pareja i"
        labels = [label[0] for label in drawn]
        boxes = sorted((left, right) for _, left, right, _ in drawn)
        assert all(b[0] >= a[1] + 2 for a, b in itertools.pairwise(boxes)), f"pair numbers run together: {drawn}"
        if width >= 1280:
            assert labels == [str(pair) for pair in range(16)], labels
        else:
            assert labels == [str(pair) for pair in range(0, 16, 2)], labels  # every other pair, from 0
    finally:
        context.close()


@pytest.mark.parametrize(("route", "name", "first", "labels"), [
    ("order", "order_outputs_plot", "el", ["el", "perro", "muerde", "al", "hombre"]),
    ("terms", "terms_plot", "0", [str(pair) for pair in range(16)])])
def test_every_row_of_a_y_axis_keeps_its_label(browser, app_url, route, name, first, labels):
    """Rows apart enough to read every label keep every label: Bokeh's NoOverlap policy, tried on every axis, drew
    /order's first word and /terms' first pair number alone."""
    context = screen(browser, 1280)
    context.add_init_script(_RECORD_TEXT)
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{route}?lang=es")
        page.evaluate(f"() => [...Bokeh.index.query((v) => v.model?.name === '{name}')][0]?.el.scrollIntoView()")
        wait_until(lambda: page.evaluate(_AXIS_LABELS, [name, "left", first]), timeout=60,
                   message=f"{name} was not drawn")
        after_two_frames(page)
        drawn = page.evaluate(_AXIS_LABELS, [name, "left", first])
        assert [label[0] for label in sorted(drawn, key=lambda label: label[3])] == labels, drawn
    finally:
        context.close()
