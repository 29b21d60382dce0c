"""Past the lesson, section «gram»: the Gram matrix G = PE·PEᵀ and the distances it holds.

Two figures:

* ``gram_plot``: G as an image (rows p top-down, columns q), every diagonal one colour
  since G[p, q] = S(q − p); the row ``pos`` and the column ``pos + k`` outlined and their
  cell marked. Up to ``MOST_POSITIONS`` positions every one is drawn; beyond, every
  ``stride``-th (exact values at those positions, nothing averaged) and the figure says so;
* ``gram_distance_plot``: the row ``pos`` of G turned into squared distances,
  ‖PE_pos − PE_q‖² = d_model − 2·S(q − pos), against q; ``pos`` and ``pos + k`` marked.
  The curve is sent once per size as a function of the offset q − pos and drawn shifted
  by ``pos`` in the page (``gram_row_shift``, a ``CustomJSTransform`` with ``args`` pos and the
  last position, which also leaves out the offsets that land outside the table), because it is
  the same curve for every pos.

What is resent on a change:
* d_model, T, base: the image (at most 256 × 256 float32), the distance curve
  (at most 4095 offsets), the ranges and the note;
* pos, k: the marks (two rows each) and the shift's two numbers.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import ColorBar, ColumnDataSource, CustomJSTransform, HoverTool, LinearColorMapper, Range1d, Span
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model import core
from app.model.strings import minus_sign, number, text
from components.figure_row import fixed_figure_box
from components.ladder import PALETTE
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, LABEL_SIZE, MOVING, TICK_SIZE, style_figure
from components.widgets import LiveHTML

#: Positions drawn along each side of the image at most (256 × 256 float32: 256 kB).
MOST_POSITIONS = 256


def gram_data(T: int, d_model: int, base: float) -> dict[str, list]:
    """The image source: G at every ``stride``-th position, float32, and its placement."""
    values, stride = core.gram_sampled(T, d_model, base, MOST_POSITIONS)
    return {"image": [values.astype(np.float32)], "x": [0], "y": [0], "dw": [values.shape[0] * stride],
            "dh": [values.shape[0] * stride], "stride": [stride]}


#: The row's transform, for one offset ``x``: its position pos + x, or NaN outside 0 .. last.
_IN_TABLE = "const q = x + pos; return q < 0 || q > last ? NaN : q;"


def distance_curve(T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """‖PE_p − PE_(p+offset)‖² for every offset a table of T positions holds (the same for every p)."""
    offset = np.arange(-(T - 1), T, dtype=np.int32)
    return {"offset": offset, "distance": core.encoding_distances(0, offset, d_model, base)}


class GramMatrix(LessonSection):
    """G = PE·PEᵀ, constant along its diagonals, and one of its rows as distances."""

    slug = "gram"
    controls = ("d_model", "T", "base", "pos", "k")
    live_on = ("d_model", "base", "pos", "k")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.image = ColumnDataSource(name="gram", data=gram_data(1, 2, 10.0))
        self.marks = ColumnDataSource(name="gram_marks", data={"p": [], "q": []})
        self.curve = ColumnDataSource(name="gram_row", data={"offset": [], "distance": []})
        self.distance_marks = ColumnDataSource(name="gram_distance_marks",
                                               data={"q": [], "distance": [], "label": [], "align": []})

        self.mapper = LinearColorMapper(palette=PALETTE, low=-1, high=1, name="gram_colors")
        self.figure = figure(name="gram_plot", title=text(lang, "gram_title"),
                             x_range=Range1d(0, 1, name="gram_q_range"), y_range=Range1d(1, 0, name="gram_p_range"),
                             height=620, width=640, tools="", toolbar_location=None, match_aspect=True)
        fig = self.figure
        image = fig.image(image="image", x="x", y="y", dw="dw", dh="dh", color_mapper=self.mapper, source=self.image,
                          name="gram_image")
        # Row pos: solid outline; column pos + k: dashed; their cell: a ring. Each spans one position.
        fig.hstrip(y0="p", y1=dodge("p", 1.0), source=self.marks, fill_alpha=0, line_color=COLORS["pos"],
                   line_width=3, level=MOVING, name="gram_row_mark")
        fig.vstrip(x0="q", x1=dodge("q", 1.0), source=self.marks, fill_alpha=0, line_color=COLORS["target"],
                   line_width=3, line_dash="dashed", level=MOVING,
                   name="gram_column_mark")
        fig.scatter(x=dodge("q", 0.5), y=dodge("p", 0.5), source=self.marks, size=18, marker="circle",
                    fill_alpha=0, line_color=COLORS["ink"], line_width=3, level=MOVING,
                    name="gram_cell_mark")
        fig.add_tools(HoverTool(renderers=[image], tooltips=[
            (text(lang, "gram_y"), "$y{0}"), (text(lang, "gram_x"), "$x{0}"),
            (text(lang, "gram_hover_score"), "@image{0.0000}")]))
        fig.add_layout(ColorBar(color_mapper=self.mapper, title=text(lang, "gram_colorbar"), orientation="horizontal",
                                height=14, location=(0, 0), major_label_text_font_size=TICK_SIZE,
                                title_text_font_size=TICK_SIZE, name="gram_colorbar"), "below")
        fig.xaxis.axis_label = text(lang, "gram_x")
        fig.yaxis.axis_label = text(lang, "gram_y")

        # q = pos + offset, and NaN where q lies outside the table, so the line stops at the first and the
        # last position instead of running on to the edge of the figure (half a step past them).
        self.shift = CustomJSTransform(name="gram_row_shift", args={"pos": 0, "last": 0}, func=_IN_TABLE,
                                       v_func=f"return Float64Array.from(xs, (x) => {{ {_IN_TABLE} }});")
        self.distance_figure = figure(name="gram_distance_plot", title=text(lang, "gram_distance_title"),
                                      x_range=Range1d(0, 1, name="gram_distance_q_range"),
                                      y_range=Range1d(0, 1, name="gram_distance_range"), height=360,
                                      sizing_mode="stretch_width", tools="", toolbar_location=None)
        fig = self.distance_figure
        self.reference = Span(dimension="width", location=0, line_color=COLORS["ink"], line_dash="dashed",
                              line_width=2, line_alpha=0.6, name="gram_d_model_line")
        fig.add_layout(self.reference)
        curve = fig.line(x={"field": "offset", "transform": self.shift}, y="distance", source=self.curve,
                         line_color=COLORS["curve"], line_width=3, name="gram_row_line")
        fig.scatter(x={"field": "offset", "transform": self.shift}, y="distance", source=self.curve, size=6,
                    color=COLORS["curve"], name="gram_row_dots")
        fig.scatter(x="q", y="distance", source=self.distance_marks, size=18, marker="circle",
                    fill_color=COLORS["target"],
                    line_color="white", line_width=2, level=MOVING, name="gram_distance_marks_dots")
        fig.text(x="q", y="distance", text="label", source=self.distance_marks, text_align="align", x_offset=0,
                 y_offset=-12, text_baseline="bottom", text_font_size=LABEL_SIZE, text_font_style="bold",
                 text_color=COLORS["ink"], background_fill_color="white", background_fill_alpha=0.85,
                 level=MOVING, name="gram_distance_labels")
        fig.add_tools(HoverTool(renderers=[curve], mode="vline", tooltips=[
            ("q − pos", "@offset"), (text(lang, "gram_distance_y"), "@distance{0.0000}")]))
        fig.xaxis.axis_label = text(lang, "gram_x")
        fig.yaxis.axis_label = text(lang, "gram_distance_y")
        for f, counts in ((self.figure, "xy"), (self.distance_figure, "x")):
            style_figure(f, counts)

        self.note = LiveHTML(name="gram_note", sizing_mode="stretch_width")
        self.figures = pn.Column(fixed_figure_box(self.figure), self.note,
                                 sizing_mode="stretch_width", name="gram_view")
        self.row_view = pn.pane.Bokeh(self.distance_figure, sizing_mode="stretch_width")
        self._update_sizes()

    @param.depends("state.d_model", "state.T", "state.base", watch=True)
    def _update_sizes(self) -> None:
        s = self.state
        image = gram_data(s.T, s.d_model, s.base)
        curve = distance_curve(s.T, s.d_model, s.base)
        half = s.d_model / 2
        top = float(curve["distance"].max())
        with pn.io.hold():
            self.image.data = image
            self.curve.data = curve
            self.mapper.update(low=-half, high=half)
            self.figure.x_range.update(start=0, end=s.T)
            self.figure.y_range.update(start=s.T, end=0)
            self.distance_figure.x_range.update(start=-0.5, end=s.T - 0.5)
            # Room for the d_model line (two encodings at right angles) and the labels above the curve.
            high = max(top, float(s.d_model))
            self.distance_figure.y_range.update(start=-0.08 * high - 0.1, end=1.2 * high + 0.1)
            self.reference.location = s.d_model
            stride = image["stride"][0]
            n = image["image"][0].shape[0]
            note = (text(s.lang, "gram_every", T=s.T) if stride == 1
                    else text(s.lang, "gram_stride", stride=stride, n=n, T=s.T))
            self.note.object = f'<div class="pe-readout">{html.escape(note)}</div>'
            self._update_marks()

    @param.depends("state.pos", "state.k", watch=True)
    def _update_marks(self) -> None:
        s = self.state
        target = s.target
        inside = 0 <= target < s.T
        with pn.io.hold():
            self.shift.args = {"pos": s.pos, "last": s.T - 1}
            # A column outside the table is not drawn (NaN), nor its cell.
            send_changes(self.marks, {"p": np.array([s.pos], dtype=np.float64),
                                      "q": np.array([target if inside else np.nan], dtype=np.float64)})
            points = [(s.pos, 0.0, text(s.lang, "gram_mark_pos", q=s.pos))]
            if inside and target != s.pos:  # at k = 0 the two marks are one point: one label, not two in one place
                value = float(core.encoding_distances(s.pos, target, s.d_model, s.base))
                points.append((target, value, text(s.lang, "gram_mark_target", q=target, value=value)))
            # Labels lean away from the edges of the plot.
            aligns = ["left" if q < 0.6 * s.T else "right" for q, _, _ in points]
            send_changes(self.distance_marks, {"q": [p[0] for p in points], "distance": [p[1] for p in points],
                                               "label": [p[2] for p in points], "align": aligns})

    def describe(self) -> str:
        values = {name: minus_sign(value) for name, value in self.live_values().items()}  # as the prose prints them
        return text(self.state.lang, "describe_gram", pos=values["pos"], k=values["k"], score=values["S_k"],
                    target=values["target"], distance=values["distance"])

    def live_values(self) -> dict[str, str]:
        s = self.state
        score = float(core.relative_scores(s.k, s.d_model, s.base))
        return {
            "d_model": str(s.d_model),
            "half": number(s.d_model / 2, 0),
            "pos": str(s.pos),
            "target": str(s.target),
            "k": str(s.k),
            "S_k": number(score, 4),
            "distance": number(float(core.encoding_distances(0, s.k, s.d_model, s.base)), 4),
        }

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(), self.figures, self.passage("rows"), self.row_view,
                self.passage("try")]
