"""The baseline: the same three views written the way most Panel apps are.

Stock Panel widgets (with Panel's 50 ms debounce, no TCP_NODELAY), and one
``pn.bind`` function per view that builds *new* Bokeh figures from every
parameter on each change: the wavelength ladder (float64 heatmap of the whole
table plus the bars), the pair clocks (a row of nine clocks, every pair's tiny
clock, the selected pair's clock) and the score-vs-distance curve. Nothing is
split by what changed, nothing is quantised. The mathematics comes from
``app.model.core`` and the controls from ``ExplorerState``, exactly as in the app,
so the only difference measured is how the views are written and synced.

The sources have the same names as the app's (``heatmap``, ``clocks``,
``distance``...), so the benchmark finds them the same way in both.

Run alone: ``python -m bench.naive_app --port 5007``.
"""

from __future__ import annotations

import argparse

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.palettes import RdBu11, interp_palette
from bokeh.plotting import figure

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import text
from app.pages import session_state

PALETTE = interp_palette(RdBu11, 256)
ROW_SIZE = 9


def ladder_view(d_model: int, T: int, base: float, pair: int, pos: int, k: int) -> pn.Column:
    pe = core.encoding(T, d_model, base)
    lam = core.wavelengths(d_model, base)
    bars = figure(height=230, sizing_mode="stretch_width", y_axis_type="log", tools="", toolbar_location=None,
                  title="wavelengths")
    bars.vbar(x="x", top="wavelength", bottom=1.0, width=1.6, color="#999999",
              source=ColumnDataSource({"x": 2 * np.arange(lam.size) + 1.0, "wavelength": lam}, name="ladder"))
    bars.vbar(x=[2 * pair + 1.0], top=[lam[pair]], bottom=1.0, width=1.6, color="#009E73")
    heat = figure(height=430, sizing_mode="stretch_width", x_range=(0, d_model), y_range=(T, 0), tools="hover",
                  toolbar_location=None, title="PE", tooltips=[("value", "@image")])
    heat.image(image="image", x=0, y=0, dw=d_model, dh=T,
               color_mapper=LinearColorMapper(palette=PALETTE, low=-1, high=1),
               source=ColumnDataSource({"image": [pe]}, name="heatmap"))
    heat.quad(left=[2 * pair], right=[2 * pair + 2], top=[0], bottom=[T], fill_alpha=0, line_color="#009E73",
              line_width=3)
    rows = [pos] + ([pos + k] if 0 <= pos + k < T else [])
    heat.hstrip(y0="y0", y1="y1", fill_alpha=0, line_width=3,
                source=ColumnDataSource({"y0": rows, "y1": [r + 1 for r in rows]}, name="row_marks"))
    return pn.Column(bars, heat, sizing_mode="stretch_width")


def clocks_view(d_model: int, base: float, pair: int, pos: int, k: int) -> pn.Column:
    pairs = d_model // 2
    start = min(max(pair - ROW_SIZE // 2, 0), max(pairs - ROW_SIZE, 0))
    stop = min(pairs, start + ROW_SIZE)
    rows = core.encoding_rows(np.array([pos, pos + k], dtype=np.float64), d_model, base)
    x = 2.6 * np.arange(stop - start)
    row = figure(height=240, sizing_mode="stretch_width", match_aspect=True, tools="", toolbar_location=None,
                 title="clocks")
    row.circle(x=x, y=0, radius=1, fill_color="#fafafa", line_color="#bbbbbb")
    hands = {"x": x, "pos_x": x + rows[0, 2 * start:2 * stop:2], "pos_y": rows[0, 2 * start + 1:2 * stop:2],
             "target_x": x + rows[1, 2 * start:2 * stop:2], "target_y": rows[1, 2 * start + 1:2 * stop:2]}
    source = ColumnDataSource(hands, name="clocks")
    row.segment(x0="x", y0=0, x1="pos_x", y1="pos_y", source=source, line_width=5, line_color="#0072B2")
    row.segment(x0="x", y0=0, x1="target_x", y1="target_y", source=source, line_width=3, line_color="#D55E00")
    theta = core.angles(pos, d_model, base)
    columns = min(pairs, 64)
    strip = figure(height=200, sizing_mode="stretch_width", match_aspect=True, tools="", toolbar_location=None)
    strip_source = ColumnDataSource({"x": np.arange(pairs) % columns, "y": -(np.arange(pairs) // columns),
                                     "angle": np.pi / 2 - theta}, name="clock_strip")
    strip.circle(x="x", y="y", radius=0.42, source=strip_source, fill_color="#fafafa", line_color="#bbbbbb")
    strip.ray(x="x", y="y", angle="angle", length=0.4, source=strip_source, line_color="#0072B2")
    big = figure(height=480, width=490, match_aspect=True, tools="", toolbar_location=None, title=f"pair {pair}")
    big.circle(x=0, y=0, radius=1, fill_color="#fafafa", line_color="#bbbbbb")
    big_source = ColumnDataSource({"x": rows[:, 2 * pair], "y": rows[:, 2 * pair + 1],
                                   "color": ["#0072B2", "#D55E00"]}, name="pair_clock")
    big.segment(x0=0, y0=0, x1="x", y1="y", color="color", line_width=6, source=big_source)
    return pn.Column(row, strip, big, sizing_mode="stretch_width")


def distance_view(d_model: int, T: int, base: float, k: int) -> pn.Column:
    ks = np.arange(-(T - 1), T)
    fig = figure(height=540, sizing_mode="stretch_width", tools="hover", toolbar_location=None,
                 title="S(k)", tooltips=[("k", "@k"), ("S", "@score")])
    fig.line(x="k", y="score", line_width=4,
             source=ColumnDataSource({"k": ks, "score": core.relative_scores(ks, d_model, base)}, name="distance"))
    fig.scatter(x="k", y="score", size=20, color="#D55E00",
                source=ColumnDataSource({"k": [k], "score": [float(core.relative_scores(k, d_model, base))]},
                                        name="distance_marker"))
    return pn.Column(fig, sizing_mode="stretch_width")


def naive_page(state: ExplorerState | None = None) -> pn.viewable.Viewable:
    """``/``: the controls and the three views, each rebuilt whole by ``pn.bind`` on every change."""
    if state is None:
        state, _ = session_state()
    p = state.param
    widgets = [
        pn.widgets.IntSlider.from_param(p.d_model, name=text(state.lang, "d_model")),
        pn.widgets.IntSlider.from_param(p.T, name=text(state.lang, "T")),
        pn.widgets.DiscreteSlider.from_param(p.base, name=text(state.lang, "base")),
        pn.widgets.IntSlider.from_param(p.pair, name=text(state.lang, "pair")),
        pn.widgets.IntSlider.from_param(p.pos, name=text(state.lang, "pos")),
        pn.widgets.IntSlider.from_param(p.k, name=text(state.lang, "k")),
    ]
    views = pn.Column(
        pn.bind(ladder_view, p.d_model, p.T, p.base, p.pair, p.pos, p.k),
        pn.bind(clocks_view, p.d_model, p.base, p.pair, p.pos, p.k),
        pn.bind(distance_view, p.d_model, p.T, p.base, p.k),
        sizing_mode="stretch_width",
    )
    return pn.Row(pn.Column(*widgets, width=340), views, sizing_mode="stretch_width")


def serve(port: int, address: str = "127.0.0.1", **kwargs):
    """Serve the baseline the stock way (no app.fastsync)."""
    pn.extension(notifications=False)
    return pn.serve({"/": naive_page}, port=port, address=address, show=False, liveness=True,
                    websocket_origin=[f"{address}:{port}", f"localhost:{port}"], **kwargs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the naive baseline app")
    parser.add_argument("--port", type=int, default=5007)
    serve(parser.parse_args().port)
