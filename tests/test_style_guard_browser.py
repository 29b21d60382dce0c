"""static/style-guard.js: BokehJS no longer rewrites a <style> with the text it already holds, reads
each CSS custom property of a visual once per microtask, and clears a canvas layer whole.

The guard replaces ``InlineStyleSheet.prototype._update`` of BokehJS's ``core/dom`` module,
``VisualProperties.prototype._get_css_value`` of ``core/visuals/visual`` and ``CanvasLayer.prototype.clear``
of ``core/util/canvas`` (Bokeh internals, pinned in pyproject.toml): these tests fail if those methods move
or the script is not loaded, and show with Bokeh's own methods that a key press did rewrite unchanged
styles and read each property many times, and that a paint left a canvas's first row and column dark.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.strings import text
from tests.helpers import after_two_frames, plots_drawn, press, wait_for_source, wait_until

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
def test_a_css_property_set_by_code_is_read_from_the_next_microtask_on(page, app_url):
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
