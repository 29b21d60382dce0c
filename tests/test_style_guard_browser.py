"""static/style-guard.js: BokehJS no longer rewrites a <style> with the text it already holds.

The guard replaces ``InlineStyleSheet.prototype._update`` of BokehJS's ``core/dom`` module (a
Bokeh internal, pinned in pyproject.toml): these tests fail if that method moves or the guard is
not loaded, and show with Bokeh's own method that a key press did rewrite unchanged styles.
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


def _explore(page, app_url: str) -> None:
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/explore?{QUERY}")
    wait_until(lambda: plots_drawn(page, 4), timeout=60, message="/explore never drew its figures")


def _k_press_writes(page, k: int) -> dict[str, int]:
    """Style text replacements during one k press, until its figures have painted."""
    page.evaluate(WATCH_STYLES_JS)
    press(page, text("en", "k"), "ArrowRight")
    wait_for_source(page, "row_marks", lambda d: list(d["top"]) == [0, k])
    wait_until(lambda: plots_drawn(page, 4), timeout=15, message="the figures never finished painting")
    after_two_frames(page)
    return page.evaluate("() => window.__styleWrites")


@pytest.mark.browser
def test_the_guard_is_loaded_on_every_page_kind(page, app_url):
    for route in ("/explore", "/", "/clocks"):
        page.goto(f"{app_url}{route}?{QUERY}")
        wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
                   message=f"{route} never finished loading")
        assert page.evaluate(
            "() => Bokeh.require('core/dom').InlineStyleSheet.prototype._update.peStyleGuard === true"), route


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
