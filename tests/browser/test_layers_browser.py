"""A step of k, pos or pair repaints only the figures' moving layer (components.theme.MOVING).

BokehJS draws each figure on two canvases and repaints the lower one (axes, grids, curves, images)
only when a renderer drawn there changes. These tests count, in the page, the repaints of each
layer while a slider is pressed. And the legends' entries add no compositing layers (each layer is
updated on every frame).
"""

from __future__ import annotations

import numpy as np
import pytest

from app.model.strings import text
from tests.helpers import after_two_frames, plots_drawn, press, wait_for_source, wait_until

QUERY = "lang=en&d_model=32&T=24&base=10000&pair=0&pos=0&k=3"

#: Counts each figure's repaints of its lower (primary) and upper (overlay) canvas.
COUNT_PAINTS_JS = """() => {
  const P = Bokeh.require("models/plots/plot_canvas").PlotView.prototype;
  const C = window.__paints = {primary: {}, overlays: {}};
  for (const [method, layer] of [["_paint_primary", "primary"], ["_paint_overlays", "overlays"]]) {
    const own = P[method];
    P[method] = function (...args) {
      const name = this.model.name || this.model.id;
      C[layer][name] = (C[layer][name] || 0) + 1;
      return own.apply(this, args);
    };
  }
}"""

_RESET = "window.__paints.primary = {}; window.__paints.overlays = {};"
RESET_JS = f"() => {{ {_RESET} }}"

#: Whether no figure repainted its lower canvas over ten frames (counted from a reset).
QUIET_JS = """async () => {
  """ + _RESET + """
  for (let i = 0; i < 10; i++) await new Promise((done) => requestAnimationFrame(done));
  return Bokeh.documents[0].is_idle && Object.keys(window.__paints.primary).length === 0;
}"""


def _painted(page) -> dict[str, dict[str, int]]:
    wait_until(lambda: plots_drawn(page, 4), timeout=15, message="the figures never finished painting")
    after_two_frames(page)
    return page.evaluate("() => window.__paints")


@pytest.fixture
def explore(page, app_url):
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{app_url}/explore?{QUERY}")
    wait_until(lambda: plots_drawn(page, 6), timeout=60, message="/explore never drew its figures")
    page.evaluate(COUNT_PAINTS_JS)
    # Drawn is not settled: on a loaded machine a figure may still be laid out (and repainted whole) once
    # more after the page's last message; the counts start when ten frames in a row repaint no lower layer.
    wait_until(lambda: page.evaluate(QUIET_JS), timeout=30, message="the figures kept repainting with nothing pressed")
    page.evaluate(RESET_JS)
    return page


@pytest.mark.browser
@pytest.mark.parametrize(("label", "source", "check"), [
    ("k", "row_marks", lambda d: list(d["top"]) == [0, 4]),
    ("pos", "row_marks", lambda d: list(d["top"]) == [1, 4]),
    # Pair 1 is coordinates 2 and 3: the columns x in [2, 4] of the heatmap.
    ("pair", "pair_outline", lambda d: list(d["left"]) == [2] and list(d["right"]) == [4]),
])
def test_a_step_repaints_the_moving_layer_only(explore, label, source, check):
    press(explore, text("en", label), "ArrowRight")
    wait_for_source(explore, source, check)
    painted = _painted(explore)
    assert painted["primary"] == {}, painted
    assert {"heatmap_plot", "pair_clock_plot"} <= set(painted["overlays"]), painted


@pytest.mark.browser
def test_a_size_change_still_repaints_the_figures(explore, console_errors):
    # The counter sees a repaint of the lower canvas when one is due: T changes the axes and curves.
    press(explore, text("en", "T"), "ArrowLeft")
    wait_for_source(explore, "distance_samples", lambda d: len(d["k"]) > 0 and max(d["k"]) < 23)
    painted = _painted(explore)
    assert {"distance_plot", "heatmap_plot"} <= set(painted["primary"]), painted
    # And the moving layer still shows the state after it: the big clock at pos 0 and pos + k = 3.
    clock = wait_for_source(explore, "pair_clock", lambda d: len(d["x"]) == 2)
    assert np.allclose(np.column_stack([clock["x"], clock["y"]]), [[0.0, 1.0], [np.sin(3), np.cos(3)]], atol=1e-3)
    assert console_errors == []


@pytest.mark.browser
def test_legend_entries_get_no_compositing_layer_of_their_own(explore):
    """Every frame updates each compositing layer of the page. A BokehJS legend entry lays an overlay
    (for a clickable legend's inactive look) over its swatch's canvas, which Chromium composites on a
    layer of its own ("Overlap"); no legend here is clickable, so no overlay is displayed and none gets
    a layer, while the swatches (canvases) and their labels are still there."""
    legends = explore.evaluate("""() => {
      const out = [];
      const visit = (root) => {
        for (const el of root.querySelectorAll("*")) {
          if (el.shadowRoot) {
            const items = el.shadowRoot.querySelectorAll(".bk-item");
            if (items.length) out.push([...items].map((item) => ({
              glyph: item.querySelector("canvas") !== null, label: item.textContent,
              overlay: getComputedStyle(item.querySelector(".bk-overlay")).display})));
            visit(el.shadowRoot);
          }
        }
      };
      visit(document);
      return out;
    }""")
    assert len(legends) >= 2, "/explore shows the distance figure's and the clocks' legends"
    entries = [entry for legend in legends for entry in legend]
    assert all(e["glyph"] and e["label"].strip() for e in entries)
    assert {e["overlay"] for e in entries} == {"none"}
    cdp = explore.context.new_cdp_session(explore)
    cdp.send("DOM.getDocument", {"depth": 0})
    trees: list = []
    cdp.on("LayerTree.layerTreeDidChange", lambda event: trees.append(event.get("layers")))
    cdp.send("LayerTree.enable")
    press(explore, text("en", "k"), "ArrowRight")  # a frame, so that the layer tree is reported
    wait_until(lambda: any(trees), timeout=10, message="no layer tree reported")
    classes = []
    for layer in next(t for t in reversed(trees) if t):
        if layer.get("backendNodeId"):
            node = cdp.send("DOM.describeNode", {"backendNodeId": layer["backendNodeId"]})["node"]
            attributes = node.get("attributes", [])
            classes.append(attributes[attributes.index("class") + 1] if "class" in attributes else "")
    assert any("bk-layer" in c for c in classes), "the figures' canvases are composited layers"
    assert not [c for c in classes if "bk-overlay" in c]
