"""The floor: the explorable's views written with bare Bokeh, for the benchmark to measure against.

What a slider step costs when nothing but Bokeh is in the way: plain
``bokeh.models.Slider`` widgets with ``on_change`` callbacks, one Bokeh
server application (``bokeh.server.server.Server``), the figures and sources
built once per session and their ``data`` replaced in place on each step.
The data are those of the app (the same functions of ``components.clocks``,
``components.ladder``, ``components.distance`` and the same ``app.model.core``
mathematics), and the sources have the app's names, so the benchmark's probe
finds the same sources changing for the same key press in both. No Panel,
no text boxes, no live checks, no address bar, no debounce; one PATCH-DOC
per changed source, as Bokeh sends them. One thing the app does too, so that
the comparison is not about it: the websocket has ``TCP_NODELAY`` on (a
subclass of Bokeh's own handler; without it a step's second message can wait
~40 ms for a delayed ACK, see docs/performance.md).

Run alone: ``python -m bench.floor_app --port 5008``; the page is ``/``
(query: ``d_model``, ``T``, ``pair``, ``pos``, ``k``, ``base`` as in the app).
"""

from __future__ import annotations

import argparse

import numpy as np
from bokeh.document import Document
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, LinearColorMapper, LinearInterpolator, Range1d, Slider
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model.state import BASES, D_MODEL_MAX, T_MAX
from components.clocks import (
    ROW_SPACING,
    STRIP_DIRECTIONS,
    pair_clock_hands,
    row_faces,
    row_hands,
    row_window,
    strip_faces,
    strip_place,
    strip_shape,
)
from components.distance import curve_data, marker_data
from components.ladder import PALETTE, heatmap_data, ladder_data

#: The sliders in page order, as in the app's ``/explore`` (the benchmark finds handles by position).
ORDER = ("d_model", "T", "base", "pair", "pos", "k")


def _arg(doc: Document, name: str, default: int, low: int, high: int) -> int:
    """A query argument as an integer clamped into ``low .. high`` (the default if absent or unreadable)."""
    args = doc.session_context.request.arguments if doc.session_context is not None else {}
    try:
        value = int(float(args[name][0].decode()))
    except (KeyError, IndexError, ValueError, UnicodeDecodeError):
        value = default
    return max(low, min(value, high))


def floor_document(doc: Document) -> None:
    """One session: six sliders, six figures, the app's named sources; each step replaces only what it moves."""
    d_model = _arg(doc, "d_model", 32, 2, D_MODEL_MAX) // 2 * 2
    T = _arg(doc, "T", 24, 1, T_MAX)
    base_index = min(range(len(BASES)), key=lambda i: abs(BASES[i] - _arg(doc, "base", 10_000, 1, 10**9)))
    s = {"d_model": d_model, "T": T, "base": float(BASES[base_index]),
         "pair": _arg(doc, "pair", 0, 0, d_model // 2 - 1), "pos": _arg(doc, "pos", 0, 0, T - 1),
         "k": _arg(doc, "k", 3, -(T - 1), T - 1)}
    lang = "en"

    # Data.
    heatmap = ColumnDataSource(heatmap_data(s["T"], s["d_model"], s["base"]), name="heatmap")
    ladder = ColumnDataSource(ladder_data(s["d_model"], s["base"]), name="ladder")
    ladder_selected = ColumnDataSource({"x": [], "wavelength": []}, name="ladder_selected")
    pair_outline = ColumnDataSource({"left": [], "right": [], "top": [], "bottom": []}, name="pair_outline")
    row_marks = ColumnDataSource({"top": [], "label": [], "color": []}, name="row_marks")
    faces = ColumnDataSource(name="clock_faces")
    hands = ColumnDataSource(name="clocks")
    strip = ColumnDataSource(strip_faces(s["pos"], s["d_model"], s["base"]), name="clock_strip")
    strip_selected = ColumnDataSource({"x": [], "y": []}, name="clock_strip_selected")
    pair_hands = ColumnDataSource(name="pair_clock")
    curve = ColumnDataSource(curve_data(s["T"], s["d_model"], s["base"]), name="distance")
    marker = ColumnDataSource(name="distance_marker")
    low = float(curve.data["score"].min())
    top = s["d_model"] / 2 + 1

    # Plots.
    lam = ladder.data["wavelength"]
    bars = figure(height=230, sizing_mode="stretch_width", y_axis_type="log", tools="", toolbar_location=None,
                  x_range=Range1d(0, s["d_model"]), y_range=Range1d(1.0, float(max(lam.max(), s["T"])) * 2.0))
    bars.vbar(x="x", top="wavelength", bottom=1.0, width=1.6, color="#999999", source=ladder)
    bars.vbar(x="x", top="wavelength", bottom=1.0, width=1.6, color="#009E73", source=ladder_selected)
    heat = figure(height=430, sizing_mode="stretch_width", x_range=bars.x_range, y_range=Range1d(s["T"], 0),
                  tools="", toolbar_location=None)
    heat.image(image="image", x=0, y=0, dw="dw", dh="dh",
               color_mapper=LinearColorMapper(palette=PALETTE, low=0, high=len(PALETTE)), source=heatmap)
    heat.quad(left="left", right="right", top="top", bottom="bottom", fill_alpha=0, line_color="#009E73",
              line_width=3, source=pair_outline)
    heat.hstrip(y0="top", y1=dodge("top", 1), fill_alpha=0, line_color="color", line_width=3, source=row_marks)
    clocks = figure(height=240, sizing_mode="stretch_width", match_aspect=True, tools="", toolbar_location=None,
                    x_range=Range1d(-1.3, ROW_SPACING * 8 + 1.3), y_range=Range1d(-1.7, 1.7))
    clocks.circle(x="x", y=0, radius=1, fill_color="#fafafa", line_color="line_color", line_width="line_width",
                  source=faces)
    clocks.text(x="x", y=1.2, text="pair_label", text_align="center", source=faces)
    clocks.ray(x="x", y=0, length=1, angle="pos_angle", line_width=7, line_color="#0072B2", source=hands)
    clocks.ray(x="x", y=0, length=1, angle="target_angle", line_width=3, line_color="#D55E00", source=hands)
    clocks.annular_wedge(x="x", y=0, inner_radius=0.3, outer_radius=0.4, start_angle="arc_start",
                         end_angle="arc_end", color="#D55E00", source=hands)
    columns, lines = strip_shape(s["d_model"] // 2)
    tiny = figure(height=80 + 20 * lines, sizing_mode="stretch_width", match_aspect=True, tools="",
                  toolbar_location=None, x_range=Range1d(-0.7, columns - 0.3), y_range=Range1d(-lines + 0.4, 0.6))
    tiny.circle(x="x", y="y", radius=0.42, fill_color="#fafafa", line_color="#bbbbbb", source=strip)
    tiny.circle(x="x", y="y", radius=0.46, fill_alpha=0, line_color="#009E73", line_width=3, source=strip_selected)
    angle = {"field": "angle_code", "transform": LinearInterpolator(x=[0, STRIP_DIRECTIONS], y=[0, 2 * np.pi])}
    tiny.ray(x="x", y="y", angle=angle, length=0.4, line_color="#0072B2", line_width=2, source=strip)
    big = figure(height=480, width=490, match_aspect=True, tools="", toolbar_location=None,
                 x_range=Range1d(-1.3, 1.3), y_range=Range1d(-1.3, 1.3))
    big.circle(x=0, y=0, radius=1, fill_color="#fafafa", line_color="#bbbbbb")
    big.segment(x0=0, y0=0, x1="x", y1="y", color="color", line_width="width", source=pair_hands)
    big.annular_wedge(x=0, y=0, inner_radius=0.25, outer_radius=0.3, start_angle="arc_start", end_angle="arc_end",
                      color="#D55E00", source=pair_hands)
    dist = figure(height=540, sizing_mode="stretch_width", tools="", toolbar_location=None,
                  x_range=Range1d(-s["T"], s["T"]), y_range=Range1d(low - 1, top))
    dist.line(x="k", y="score", line_width=4, source=curve)
    dist.scatter(x="k", y="score", size=20, color="#D55E00", source=marker)
    dist.text(x="k", y="label_y", text="label", text_align="align", x_offset="x_offset", y_offset=6,
              text_baseline="top", source=marker)

    # Updates: the sources each parameter moves, as the app's views move them.
    window = [row_window(s["pair"], s["d_model"] // 2)]

    def update_rows() -> None:
        rows = [(s["pos"], "pos", "#0072B2")]
        if 0 <= s["pos"] + s["k"] < s["T"]:
            rows.append((s["pos"] + s["k"], "pos+k", "#D55E00"))
        row_marks.data = {"top": [r[0] for r in rows], "label": [r[1] for r in rows], "color": [r[2] for r in rows]}

    def update_hands() -> None:
        hands.data = row_hands(*window[0], s["pos"], s["k"], s["d_model"], s["base"])
        pair_hands.data = pair_clock_hands(s["pair"], s["pos"], s["k"], s["d_model"], s["base"])

    def update_pair() -> None:
        left = 2 * s["pair"]
        pair_outline.data = {"left": [left], "right": [left + 2], "top": [0], "bottom": [s["T"]]}
        ladder_selected.data = {"x": [left + 1.0], "wavelength": [float(ladder.data["wavelength"][s["pair"]])]}
        moved = window[0] != row_window(s["pair"], s["d_model"] // 2)
        window[0] = row_window(s["pair"], s["d_model"] // 2)
        if moved or not hands.data:  # the row's hands move only with its window
            hands.data = row_hands(*window[0], s["pos"], s["k"], s["d_model"], s["base"])
        faces.data = row_faces(*window[0], s["pair"], s["d_model"], s["base"], lang)
        x, y = strip_place(s["pair"], strip_shape(s["d_model"] // 2)[0])
        strip_selected.data = {"x": [float(x)], "y": [float(y)]}

    def on_k(_attr, _old, new) -> None:
        s["k"] = int(new)
        update_rows()
        update_hands()
        marker.data = marker_data(s["k"], s["d_model"], s["base"], lang, top)

    def on_pos(_attr, _old, new) -> None:
        s["pos"] = int(new)
        update_rows()
        update_hands()
        strip.data["angle_code"] = strip_faces(s["pos"], s["d_model"], s["base"])["angle_code"]

    def on_pair(_attr, _old, new) -> None:
        s["pair"] = int(new)
        update_pair()
        pair_hands.data = pair_clock_hands(s["pair"], s["pos"], s["k"], s["d_model"], s["base"])

    update_rows()
    update_pair()
    update_hands()
    marker.data = marker_data(s["k"], s["d_model"], s["base"], lang, top)

    # Widgets: the sizes are shown for the same layout as the app (the benchmark does not move them here).
    sliders = {
        "d_model": Slider(title="d_model (width)", start=2, end=D_MODEL_MAX, step=2, value=s["d_model"]),
        "T": Slider(title="T (positions)", start=1, end=T_MAX, step=1, value=s["T"]),
        "base": Slider(title="base (index)", start=0, end=len(BASES) - 1, step=1, value=base_index),
        "pair": Slider(title="pair i", start=0, end=max(s["d_model"] // 2 - 1, 1), step=1, value=s["pair"]),
        "pos": Slider(title="position pos", start=0, end=max(s["T"] - 1, 1), step=1, value=s["pos"]),
        "k": Slider(title="offset k", start=-(s["T"] - 1), end=max(s["T"] - 1, 1), step=1, value=s["k"]),
    }
    for name, slider in sliders.items():
        slider.name = f"floor_{name}_slider"
    sliders["pair"].on_change("value", on_pair)
    sliders["pos"].on_change("value", on_pos)
    sliders["k"].on_change("value", on_k)
    controls = column(*(sliders[name] for name in ORDER), width=340)
    views = column(bars, heat, clocks, tiny, big, dist, sizing_mode="stretch_width")
    doc.add_root(row(controls, views, sizing_mode="stretch_width"))
    doc.title = "floor"


def serve(port: int, address: str = "127.0.0.1", **kwargs):
    """Serve the floor with Bokeh's own server (no Panel, no app.fastsync); blocks."""
    from bokeh.application import Application
    from bokeh.application.handlers.function import FunctionHandler
    from bokeh.server import urls
    from bokeh.server.server import Server
    from bokeh.server.views.ws import WSHandler
    from tornado.web import RequestHandler

    class NoDelay(WSHandler):
        def open(self, *args, **kwargs):
            self.set_nodelay(True)
            return super().open(*args, **kwargs)

    urls.per_app_patterns[:] = [(p[0], NoDelay, *p[2:]) if p[0] == r"/ws" else p for p in urls.per_app_patterns]

    class Liveness(RequestHandler):
        def get(self) -> None:
            self.write("ok")

    server = Server({"/": Application(FunctionHandler(floor_document))}, port=port, address=address,
                    allow_websocket_origin=[f"{address}:{port}", f"localhost:{port}"],
                    extra_patterns=[(r"/liveness", Liveness)], **kwargs)
    server.start()
    server.io_loop.start()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the plain-Bokeh floor")
    parser.add_argument("--port", type=int, default=5008)
    serve(parser.parse_args().port)
