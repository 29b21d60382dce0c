"""static/style-guard.js: BokehJS no longer rewrites a <style> with the text it already holds, reads
each CSS custom property of a visual and each plot's font size once per microtask, clears a canvas layer
whole, and leaves a colour bar alone when its mapper's new metrics change nothing it draws.

The guard replaces ``InlineStyleSheet.prototype._update`` of BokehJS's ``core/dom`` module,
``VisualProperties.prototype._get_css_value`` of ``core/visuals/visual`` and ``CanvasLayer.prototype.clear``
of ``core/util/canvas`` (Bokeh internals, pinned in pyproject.toml): these tests fail if those methods move
or the script is not loaded, and show with Bokeh's own methods that a key press did rewrite unchanged
styles and read each property many times, and that a paint left a canvas's first row and column dark.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.model.strings import text
from tests.helpers import after_two_frames, plots_drawn, press, source_data, wait_for_source, wait_until

QUERY = "lang=en&d_model=32&T=24&base=10000&pair=0&pos=0&k=3"

#: Records, for every shadow root of the page, each replacement of a <style>'s text; counts those
#: whose new text equals the text it replaced.
WATCH_STYLES_JS = """() => {
  const W = window.__styleWrites = {same: 0, changed: 0};
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.target.nodeName !== "STYLE" || r.type !== "childList") continue;
      const removed = [...r.removedNodes].map((n) => n.textContent).join("");
      const added = [...r.addedNodes].map((n) => n.textContent).join("");
      if (removed === "" && added === "") continue;
      if (removed === added) W.same++; else W.changed++;
    }
  });
  const walk = (root) => {
    observer.observe(root, {childList: true, subtree: true});
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return true;
}"""

#: BokehJS 3.9's own InlineStyleSheet._update, put back for the positive control.
BOKEH_OWN_UPDATE_JS = """() => {
  Bokeh.require("core/dom").InlineStyleSheet.prototype._update = function (css) { this.el.textContent = css; };
}"""


#: BokehJS 3.9's own VisualProperties._get_css_value, put back for the positive control.
BOKEH_OWN_CSS_READ_JS = """() => {
  Bokeh.require("core/visuals/visual").VisualProperties.prototype._get_css_value = function (name) {
    return getComputedStyle(this.obj.el).getPropertyValue(`${this.css_prefix}${name}`);
  };
}"""

#: Counts the page's getComputedStyle calls from the next keydown on.
COUNT_STYLE_READS_JS = """() => {
  if (!window.__styleReads) {
    const own = window.getComputedStyle;
    window.getComputedStyle = function (...args) { window.__styleReads += 1; return own.apply(this, args); };
    document.addEventListener("keydown", () => { window.__styleReads = 0; }, true);
  }
  window.__styleReads = 0;
}"""


def _explore(page, app_url: str) -> None:
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/explore?{QUERY}")
    wait_until(lambda: plots_drawn(page, 4), timeout=60, message="/explore never drew its figures")


def _counted_k_press(page, k: int, counter_js: str, result: str):
    """What ``counter_js`` counted during one k press (``result``, a page expression), once its figures have
    painted."""
    page.evaluate(counter_js)
    press(page, text("en", "k"), "ArrowRight")
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [0, k])
    wait_until(lambda: plots_drawn(page, 4), timeout=15, message="the figures never finished painting")
    after_two_frames(page)
    return page.evaluate(f"() => {result}")


def _k_press_writes(page, k: int) -> dict[str, int]:
    """Style text replacements during one k press."""
    return _counted_k_press(page, k, WATCH_STYLES_JS, "window.__styleWrites")


@pytest.mark.browser
def test_the_guard_is_loaded_on_every_page_kind(page, app_url):
    for route in ("/explore", "/", "/clocks"):
        page.goto(f"{app_url}{route}?{QUERY}")
        wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
                   message=f"{route} never finished loading")
        assert page.evaluate(
            "() => Bokeh.require('core/dom').InlineStyleSheet.prototype._update.peStyleGuard === true"), route
        assert page.evaluate("() => Bokeh.require('core/visuals/visual').VisualProperties.prototype"
                             "._get_css_value.peCssReads === true"), route
        assert page.evaluate("() => Bokeh.require('core/util/canvas').CanvasLayer.prototype.clear.peWholeClear"
                             " === true"), route
        assert page.evaluate("() => Bokeh.require('models/annotations/color_bar').ColorBarView.prototype"
                             "._metrics_changed.peSameBar === true"), route
        assert page.evaluate("() => Object.getOwnPropertyDescriptor(Bokeh.require('models/plots/plot_canvas')"
                             ".PlotView.prototype, 'base_font_size').get.peFontSize === true"), route


@pytest.mark.browser
def test_an_unchanged_text_is_not_written_and_a_changed_one_is(page, app_url):
    _explore(page, app_url)
    result = page.evaluate("""async () => {
      const sheet = new (Bokeh.require("core/dom").InlineStyleSheet)(":host { color: red; }");
      document.head.appendChild(sheet.el);
      let records = 0;
      const observer = new MutationObserver((rs) => { records += rs.length; });
      observer.observe(sheet.el, {childList: true, characterData: true, subtree: true});
      sheet.replace(":host", {color: "red"});    // BokehJS's composed form of the rule
      await Promise.resolve();
      records = 0;
      sheet.replace(":host", {color: "red"});    // the same text again, twice
      sheet.replace(sheet.css);
      await Promise.resolve();
      const afterSame = records;
      sheet.replace(":host { color: blue; }");
      await Promise.resolve();
      const out = {afterSame, afterChange: records, css: sheet.css, el: sheet.el.textContent};
      sheet.remove();
      return out;
    }""")
    assert result["afterSame"] == 0
    assert result["afterChange"] >= 1
    assert result["css"] == result["el"] == ":host { color: blue; }"


@pytest.mark.browser
def test_a_key_press_rewrites_no_style_with_its_own_text(page, app_url, console_errors):
    _explore(page, app_url)
    guarded = _k_press_writes(page, 4)
    assert guarded["same"] == 0, guarded

    # Positive control: with BokehJS's own method the same press does rewrite unchanged styles.
    page.evaluate(BOKEH_OWN_UPDATE_JS)
    unguarded = _k_press_writes(page, 5)
    assert unguarded["same"] > 0, unguarded

    # And the figures still show the state: the big clock's hands for pos 0 and pos + k = 5.
    clock = wait_for_source(page, "pair_clock", lambda d: len(d["x"]) == 2)
    assert np.allclose(np.column_stack([clock["x"], clock["y"]]), [[0.0, 1.0], [np.sin(5), np.cos(5)]], atol=1e-3)
    assert console_errors == []


def _k_press_style_reads(page, k: int) -> int:
    """getComputedStyle calls during one k press."""
    return _counted_k_press(page, k, COUNT_STYLE_READS_JS, "window.__styleReads")


@pytest.mark.browser
def test_a_key_press_reads_each_css_property_of_a_visual_once(page, app_url, console_errors):
    _explore(page, app_url)
    cached = _k_press_style_reads(page, 4)
    # Positive control: BokehJS's own method reads the same properties again for every use.
    page.evaluate(BOKEH_OWN_CSS_READ_JS)
    uncached = _k_press_style_reads(page, 5)
    assert cached > 0 and 1.5 * cached < uncached, (cached, uncached)
    clock = wait_for_source(page, "pair_clock", lambda d: len(d["x"]) == 2)
    assert np.allclose(np.column_stack([clock["x"], clock["y"]]), [[0.0, 1.0], [np.sin(5), np.cos(5)]], atol=1e-3)
    assert console_errors == []


@pytest.mark.browser
def test_a_style_set_by_code_is_read_from_the_next_microtask_on(page, app_url):
    """A visual's CSS custom property (shim 2) and a plot's font size (shim 5)."""
    _explore(page, app_url)
    result = page.evaluate("""async () => {
      const {VisualProperties} = Bokeh.require("core/visuals/visual");
      const view = [...Bokeh.index.query(() => true)].find(
        (v) => v.visuals && Object.values(v.visuals).some((x) => x instanceof VisualProperties));
      const visual = Object.values(view.visuals).find((x) => x instanceof VisualProperties);
      const name = `${visual.css_prefix}line-color`;
      await Promise.resolve();
      const before = visual._get_css_value("line-color");
      view.el.style.setProperty(name, "rgb(1, 2, 3)");
      const sameRun = visual._get_css_value("line-color");
      await Promise.resolve();
      const nextMicrotask = visual._get_css_value("line-color");
      view.el.style.removeProperty(name);
      await Promise.resolve();
      const removed = visual._get_css_value("line-color");
      return {before, sameRun, nextMicrotask, removed, same: view.el === visual.obj.el};
    }""")
    assert result == {"before": "", "sameRun": "", "nextMicrotask": "rgb(1, 2, 3)", "removed": "", "same": True}
    font = page.evaluate("""async () => {
      const {PlotView} = Bokeh.require("models/plots/plot_canvas");
      const view = [...Bokeh.index.query((v) => v instanceof PlotView)][0];
      await Promise.resolve();
      const before = view.base_font_size;
      view.el.style.fontSize = "21px";
      const sameRun = view.base_font_size;
      await Promise.resolve();
      const nextMicrotask = view.base_font_size;
      view.el.style.fontSize = "";
      await Promise.resolve();
      return {before, sameRun, nextMicrotask, restored: view.base_font_size};
    }""")
    assert font["before"] == font["sameRun"] == font["restored"] != 21, font
    assert font["nextMicrotask"] == 21, font


#: BokehJS 3.9's own CanvasLayer.clear, put back for the positive control.
BOKEH_OWN_CLEAR_JS = """() => {
  Bokeh.require("core/util/canvas").CanvasLayer.prototype.clear = function () {
    const { x, y, width, height } = this.bbox;
    this.ctx.clearRect(x, y, width, height);
  };
}"""

#: Paints an opaque black first row and first column on the big clock's primary canvas layer (what an earlier
#: paint can leave there), has the figure paint again, and returns how many of those pixels are still dark.
STALE_EDGE_JS = """async () => {
  const view = [...Bokeh.index.query((v) => v.model?.name === "pair_clock_plot")][0];
  const { ctx } = view.canvas_view.primary;
  const [w, h] = [ctx.canvas.width, ctx.canvas.height];
  ctx.save(); ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, w, 1); ctx.fillRect(0, 0, 1, h); ctx.restore();
  view.request_paint();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const dark = (data) => { let n = 0; for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] > 64 && data[i] + data[i + 1] + data[i + 2] < 300) n++; } return n; };
  const row = ctx.getImageData(0, 0, w, 1).data, column = ctx.getImageData(0, 0, 1, h).data;
  return dark(row) + dark(column);
}"""


@pytest.mark.browser
def test_a_paint_clears_the_first_row_and_column_of_a_canvas(page, app_url):
    """BokehJS clears a layer from half a pixel in: its first row and column kept half of what was drawn there
    at every paint, and a presented figure resized to the window showed 1-px grey slivers at its edges (the
    order section's output figure, the tops of the terms curve's title from before it took two lines)."""
    _explore(page, app_url)
    assert page.evaluate(STALE_EDGE_JS) == 0
    # Positive control: with BokehJS's own clear the painted edge stays dark after the figure repaints.
    page.evaluate(BOKEH_OWN_CLEAR_JS)
    assert page.evaluate(STALE_EDGE_JS) > 100


#: From the next call on, counts each colour bar's new palette images and each layout a colour bar asks of its
#: figure (BokehJS's ColorBarView._set_canvas_image, and PlotView.request_layout called from _metrics_changed).
COUNT_BAR_WORK_JS = """() => {
  const {ColorBarView} = Bokeh.require("models/annotations/color_bar");
  const bar = ColorBarView.prototype;
  const W = window.__barWork = {images: 0, layouts: 0, metrics: 0};
  if (!bar.__counted) {
    const image = bar._set_canvas_image;
    bar._set_canvas_image = function () { window.__barWork.images++; return image.call(this); };
    bar.__counted = true;
  }
  for (const view of Bokeh.index.query((v) => v instanceof ColorBarView)) {
    const plot = view.plot_view;
    if (!plot.__counted) {
      const layout = plot.request_layout;
      plot.request_layout = function () {
        if (new Error().stack.includes("_metrics_changed")) window.__barWork.layouts++;
        return layout.call(this);
      };
      plot.__counted = true;
    }
    if (!view.model.color_mapper.__counted) {
      view.model.color_mapper.metrics_change.connect(() => { window.__barWork.metrics++; });
      view.model.color_mapper.__counted = true;
    }
  }
  return true;
}"""

#: Every colour bar on the page: its mapper's low and high, its range, and whether its palette image holds the
#: mapper's palette (one pixel per colour: left to right, or bottom to top on a vertical bar).
BARS_JS = """() => {
  const {ColorBarView} = Bokeh.require("models/annotations/color_bar");
  const hex = (d, i) => "#" + [d[i], d[i + 1], d[i + 2]].map((v) => v.toString(16).padStart(2, "0")).join("");
  return [...Bokeh.index.query((v) => v instanceof ColorBarView)].map((view) => {
    const mapper = view.model.color_mapper, image = view._image;
    const data = image.getContext("2d").getImageData(0, 0, image.width, image.height).data;
    const drawn = Array.from({length: image.width * image.height}, (_, i) => hex(data, 4 * i));
    if (image.height > 1) drawn.reverse();
    return {mapper: mapper.name, low: mapper.low, high: mapper.high,
            range: [view._major_range.start, view._major_range.end],
            palette: drawn.join() === mapper.palette.map((c) => c.toLowerCase()).join()};
  });
}"""


def _bar_work(page, label: str, source: str):
    """Colour bar work counted during one ArrowRight on the slider ``label``, once ``source`` has changed and
    the figures have painted; and the page's colour bars after it."""
    before = source_data(page, source)
    page.evaluate(COUNT_BAR_WORK_JS)
    press(page, label, "ArrowRight")
    def changed() -> bool:
        now = source_data(page, source)
        return now.keys() != before.keys() or any(not np.array_equal(now[k], before[k]) for k in now)
    wait_until(changed, timeout=15, message=f"{source} never changed")
    wait_until(lambda: page.evaluate("() => Bokeh.documents[0].is_idle"), timeout=15)
    after_two_frames(page)
    return page.evaluate("() => window.__barWork"), page.evaluate(BARS_JS)


def _open_section(page, app_url: str, route: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}{route}?{QUERY}")
    wait_until(lambda: plots_drawn(page, 1) and page.evaluate("() => Bokeh.documents[0].is_idle"), timeout=60,
               message=f"{route} never drew")


@pytest.mark.browser
def test_a_colour_bar_whose_mapper_did_not_move_is_left_alone(page, app_url, console_errors):
    """The shift section's matrix changes on every k key; its mapper's low and high stay -1 and 1. (A bar's
    first metrics after the page loads go to BokehJS: the first press is not counted.)"""
    _open_section(page, app_url, "/shift")
    _bar_work(page, text("en", "k"), "rotation_matrix")
    work, bars = _bar_work(page, text("en", "k"), "rotation_matrix")
    assert work["metrics"] > 0, work  # the mapper did announce new metrics
    assert (work["images"], work["layouts"]) == (0, 0), work
    assert bars and all(b["palette"] and b["range"] == [b["low"], b["high"]] == [-1, 1] for b in bars), bars
    # Positive control: BokehJS's own method draws a new palette image and asks for a layout on each.
    page.evaluate("() => { const p = Bokeh.require('models/annotations/color_bar').ColorBarView.prototype;"
                  " p._metrics_changed = p._metrics_changed.bokeh; }")
    work, bars = _bar_work(page, text("en", "k"), "rotation_matrix")
    assert work["images"] > 0 and work["layouts"] > 0, work
    assert console_errors == []


@pytest.mark.browser
def test_a_colour_bar_whose_range_moved_is_laid_out_with_its_image_kept(page, app_url, console_errors):
    """The Gram matrix's mapper spans ±d_model/2: a d_model key moves the bar's range, not its palette."""
    _open_section(page, app_url, "/gram")
    _bar_work(page, text("en", "d_model"), "gram")
    work, bars = _bar_work(page, text("en", "d_model"), "gram")
    (gram,) = [b for b in bars if b["mapper"] == "gram_colors"]
    assert gram["range"] == [gram["low"], gram["high"]] == [-18, 18], gram  # d_model 32 → 34 → 36
    assert gram["palette"], gram
    assert work["images"] == 0 and work["layouts"] > 0, work
    assert console_errors == []
