"""At the smallest sizes (T = 1, d_model = 2) an axis of positions, offsets, pairs or coordinates ticks on
whole numbers: Bokeh's default ticker labelled position 0.2, 0.4 … and coordinate 1.5."""

from __future__ import annotations

import pytest

from tests.helpers import figure_count, plots_drawn, wait_until

pytestmark = pytest.mark.browser

#: Per page, the figures (by name) and their axes whose values are whole numbers.
COUNTING_AXES = {
    "explore": {"heatmap_plot": "xy", "distance_plot": "x"},
    "simpler": {"simpler_raw_plot": "x", "simpler_learned_plot": "x", "simpler_sinusoid_plot": "x",
                "simpler_neighbours_plot": "x"},
    "fingerprint": {"fingerprint_plot": "x"},
    "shift": {"shift_matrix_plot": "xy"},
    "score": {"score_pp_plot": "x"},
    "terms": {"terms_plot": "x"},
    "sum": {"sum_width_plot": "x", "sum_ladder_plot": "x", "sum_cross_plot": "x"},
    "gram": {"gram_plot": "xy", "gram_distance_plot": "x"},
    "question": {"question_sum_plot": "x"},
    "rope": {"rope_plot": "xy", "additive_plot": "xy"},
    "extrapolation": {"extrapolation_angles_plot": "x", "extrapolation_scores_plot": "x"},
    "mistakes": {"mistake_norms_plot": "x", "mistakes_heatmap_plot": "xy"},
}

#: The major ticks of every drawn axis, by figure name and dimension ("x" or "y").
_TICKS = """() => {
  const out = {};
  const seen = new Set();
  const visit = (view) => {
    if (!view || seen.has(view)) return;
    seen.add(view);
    for (const [model, axis] of view.renderer_views ?? []) {
      if (axis.tick_coords && model.type.endsWith("Axis") && model.visible) {
        const dim = axis.dimension === 0 ? "x" : "y";
        out[`${view.model.name} ${dim}`] = [...axis.tick_coords.major[axis.dimension]];
      }
    }
    for (const child of view.child_views ?? []) visit(child);
  };
  for (const view of Object.values(Bokeh.index)) visit(view);
  return out;
}"""


@pytest.mark.parametrize("route", list(COUNTING_AXES))
def test_counting_axes_tick_on_whole_numbers_at_the_smallest_sizes(page, app_url, route):
    page.goto(f"{app_url}/{route}?lang=en&T=1&d_model=2")
    wait_until(lambda: plots_drawn(page, figure_count(route)), timeout=40, message=f"{route} drawn")
    wanted = [f"{name} {dim}" for name, dims in COUNTING_AXES[route].items() for dim in dims]
    ticks = {}
    wait_until(lambda: all(ticks.update(page.evaluate(_TICKS)) or key in ticks for key in wanted),
               timeout=20, message=f"the axes of {route} drawn")
    fractional = {key: ticks[key] for key in wanted if any(abs(t - round(t)) > 1e-9 for t in ticks[key])}
    assert fractional == {}
    assert all(ticks[key] for key in wanted)  # each axis shows at least one tick
