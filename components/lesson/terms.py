"""Past the lesson, section «terms»: the score S(k) = Σᵢ cos(ωᵢ·k) as a sum of clocks.

Three figures:

* ``terms_score_plot``: S(k) over the offsets shown, the current k marked;
* ``terms_plot``: one ridge per pair (fast on top), ``cos(ωᵢ·k)`` against k, sharing the
  x axis with the curve above, so a dip of S lines up with the ridges that are low there;
* ``terms_bars_plot``: at the current k, each pair's term as a horizontal bar on the
  same rows as the ridges. A click on a bar or a ridge selects that pair (``state.pair``),
  which the clocks and the ladder highlight too.

Above ``MOST_ROWS`` pairs (``d_model > 64``) a row is a band of consecutive pairs and
shows their sum (``core.band_terms``): the rows still add up to S(k) exactly. The
offsets shown are ``-(T-1) … T-1`` up to ``MAX_SHOWN`` either side (the note under
the figure says when the table holds more).

What is resent on a change:
* d_model, T, base: the ridges (at most 32 rows × 1023 offsets, float32), the curve,
  the bars, the ranges and the note;
* k: the bars (≤ 32 rows), the marker (one row) and one number (the line's location);
* pair: the two filters' indices (one number each).
"""

from __future__ import annotations

import html
import json

import numpy as np
import panel as pn
import param
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    CustomJS,
    CustomJSTickFormatter,
    CustomJSTransform,
    FixedTicker,
    HoverTool,
    IndexFilter,
    Range1d,
    Spacer,
    Span,
    TapTool,
)
from bokeh.plotting import figure
from bokeh.transform import transform

from app.model import core
from app.model.strings import minus_sign, number, text
from components.figure_row import NARROW_QUERY, figure_row
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, MOVING, style_figure
from components.widgets import LiveHTML

#: Rows drawn at most: one per pair up to d_model = 64, bands of pairs beyond.
MOST_ROWS = 32
#: Offsets shown either side of 0 at most (32 rows × 1023 offsets ≈ 33k numbers per size change).
MAX_SHOWN = 511
#: Height of a ridge's swing, in rows (a term of 1 sits this far above its row's line).
RIDGE = 0.42

# The ridge of row r is drawn at height -r + RIDGE * term / size: computed in the browser, so the
# source carries the terms themselves (what a test or an embed reads), not a second copy shifted.
# Its x are the offsets shown, -(n-1)/2 … (n-1)/2 for a row of n terms (``shown_offsets``), also made in the
# browser: as a column they were the row's offsets again in every row, half of a size step's message.
_RIDGE_X = """
return xs.map((terms) => { const half = (terms.length - 1) / 2; return Array.from(terms, (_, j) => j - half); });
"""
_RIDGE_Y = """
const data = source.data;
const get = (name) => data instanceof Map ? data.get(name) : data[name];
const rows = get('row'), sizes = get('size');
return xs.map((terms, r) => Array.from(terms, (t) => -rows[r] + ridge * t / sizes[r]));
"""
_FOLLOW_WIDTH = "room.width = cb_obj.width"
#: The bars' own row axis, shown while ``figure_row`` stacks them under the ridges (the same media query).
_BARS_AXIS_WHEN_STACKED = f"""
const stacked = window.matchMedia({json.dumps(NARROW_QUERY)}).matches;
if (axis.visible !== stacked) axis.visible = stacked;
"""
_ROW_LABEL = """
const r = Math.round(-tick);
if (r < 0 || r >= starts.length) return '';
const first = starts[r], last = (r + 1 < starts.length ? starts[r + 1] : pairs) - 1;
return first == last ? String(first) : first + '–' + last;
"""


def shown_offsets(T: int) -> np.ndarray:
    """The offsets the figures show: ``-(T-1) … T-1``, at most ``MAX_SHOWN`` either side."""
    reach = min(T - 1, MAX_SHOWN)
    return np.arange(-reach, reach + 1, dtype=np.int32)


def row_of(pair: int, starts: np.ndarray) -> int:
    """The row (band) that holds ``pair``."""
    return int(np.searchsorted(starts, pair, side="right") - 1)


def ridge_data(T: int, d_model: int, base: float) -> dict[str, list | np.ndarray]:
    """One row per band: its first and last pair, its size and its term at every offset shown (``shown_offsets``)."""
    starts = core.pair_bands(d_model, MOST_ROWS)
    k = shown_offsets(T)
    terms = core.band_terms(k, d_model, base, starts).T.astype(np.float32)  # (rows, offsets)
    last = np.append(starts[1:], d_model // 2) - 1
    return {"row": np.arange(starts.size, dtype=np.int32), "pair": starts.astype(np.int32),
            "last": last.astype(np.int32), "size": (last - starts + 1).astype(np.int32),
            "term": list(terms)}


def bars_data(k: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """Every row's term at offset ``k`` (float64: they add up to S(k) exactly)."""
    starts = core.pair_bands(d_model, MOST_ROWS)
    return {"y": -np.arange(starts.size, dtype=np.float64), "term": core.band_terms(k, d_model, base, starts)}


class ScoreAsClocks(LessonSection):
    """S(k) and, under it, the term of every pair: which clocks hold the score up, which cancel."""

    slug = "terms"
    controls = ("d_model", "T", "base", "k", "pair")
    live_on = ("d_model", "base", "k")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.curve = ColumnDataSource(name="terms_curve", data={"k": [], "score": []})
        self.marker = ColumnDataSource(name="terms_marker", data={"k": [], "score": []})
        self.ridges = ColumnDataSource(name="score_terms", data={"row": [], "pair": [], "last": [], "size": [],
                                                                 "term": []})
        self.bars = ColumnDataSource(name="terms_bars", data={"y": [], "term": []})
        self.selected_ridge = IndexFilter(indices=[0], name="terms_selected_ridge")
        self.selected_bar = IndexFilter(indices=[0], name="terms_selected_bar")
        self._starts = core.pair_bands(2)

        x_range = Range1d(-1, 1, name="terms_k_range")
        self.score_figure = figure(name="terms_score_plot", title=text(lang, "terms_score_title"), x_range=x_range,
                                   y_range=Range1d(-1, 1, name="terms_score_range"), height=230,
                                   sizing_mode="stretch_width", tools="", toolbar_location=None, min_border_left=140)
        fig = self.score_figure
        fig.line(x="k", y="score", source=self.curve, line_color=COLORS["curve"], line_width=3, name="terms_curve_line")
        fig.scatter(x="k", y="score", source=self.marker, size=16, fill_color=COLORS["target"], line_color="white",
                    line_width=2, level=MOVING, name="terms_marker_dot")
        fig.yaxis.axis_label = text(lang, "terms_score_y")
        fig.xaxis.visible = False

        self.rows_range = Range1d(-1, 1, name="terms_rows_range")
        # The title, the bars' axis label and their hover label are set with the sizes (_update_sizes): past
        # MOST_ROWS pairs they name a band's sum.
        self.ridge_figure = figure(name="terms_plot", title="", x_range=x_range,
                                   y_range=self.rows_range, height=560, sizing_mode="stretch_width",
                                   tools="", toolbar_location=None, min_border_left=140)
        fig = self.ridge_figure
        ridge_x = transform("term", CustomJSTransform(v_func=_RIDGE_X))
        ridge_y = transform("term", CustomJSTransform(args={"source": self.ridges, "ridge": RIDGE}, v_func=_RIDGE_Y))
        ridges = fig.multi_line(xs=ridge_x, ys=ridge_y, source=self.ridges, line_color=COLORS["bar"], line_width=1.6,
                                nonselection_line_alpha=1.0, selection_line_color=COLORS["bar"],
                                name="terms_ridges")
        fig.multi_line(xs=ridge_x, ys=ridge_y, source=self.ridges, view=CDSView(filter=self.selected_ridge),
                       line_color=COLORS["selected"], line_width=4.5, level=MOVING,
                       name="terms_selected_ridge_line")
        fig.xaxis.axis_label = text(lang, "terms_x")
        fig.yaxis.axis_label = text(lang, "terms_rows")
        self.row_labels = CustomJSTickFormatter(args={"starts": [0], "pairs": 1}, code=_ROW_LABEL,
                                                name="terms_row_labels")
        fig.yaxis.ticker = FixedTicker(ticks=[0])
        fig.yaxis.formatter = self.row_labels
        fig.ygrid.grid_line_alpha = 0.35

        self.k_lines = [Span(dimension="height", location=0, line_color=COLORS["target"], line_width=2.5,
                             line_dash="dashed", level=MOVING, name=f"terms_k_line_{i}") for i in range(2)]
        self.score_figure.add_layout(self.k_lines[0])
        self.ridge_figure.add_layout(self.k_lines[1])

        self.bars_figure = figure(name="terms_bars_plot", title=text(lang, "terms_bars_title"),
                                  x_range=Range1d(-1.1, 1.1, name="terms_bars_range"), y_range=self.rows_range,
                                  height=560, width=330, tools="", toolbar_location=None)
        fig = self.bars_figure
        # At its right end: at the left it continued the ridges' title as one line ("… slow below) The terms at k").
        fig.title.align = "right"
        bars = fig.hbar(y="y", left=0, right="term", height=0.7, source=self.bars, fill_color=COLORS["bar"],
                        line_color=COLORS["ink"], line_width=1, nonselection_fill_alpha=1.0,
                        nonselection_line_alpha=1.0, selection_fill_color=COLORS["bar"], name="terms_bars_glyph")
        fig.hbar(y="y", left=0, right="term", height=0.7, source=self.bars, view=CDSView(filter=self.selected_bar),
                 fill_color=COLORS["selected"], line_color=COLORS["ink"], line_width=3,
                 level=MOVING, name="terms_selected_bar_glyph")
        fig.add_layout(Span(dimension="height", location=0, line_color=COLORS["ink"], line_width=1.5))
        # Beside the ridges the bars read their rows off the ridges' axis; under them, on a phone (figure_row),
        # they show that axis themselves: the same ticker and labels, shown only there (``_BARS_AXIS_WHEN_STACKED``).
        fig.yaxis.update(ticker=self.ridge_figure.yaxis.ticker, formatter=self.row_labels, visible=False,
                         name="terms_bars_rows_axis")
        fig.ygrid.grid_line_alpha = 0.35

        tooltips = [(text(lang, "hover_pair"), "@pair{0}–@last{0}"), (text(lang, "terms_size"), "@size")]
        self.ridge_figure.add_tools(HoverTool(renderers=[ridges], tooltips=tooltips, line_policy="nearest"),
                                    TapTool(renderers=[ridges]))
        self.bars_hover = HoverTool(renderers=[bars], tooltips=[])
        self.bars_figure.add_tools(self.bars_hover, TapTool(renderers=[bars]))
        for fig, counts in ((self.score_figure, ""), (self.ridge_figure, "x"), (self.bars_figure, "")):
            style_figure(fig, counts)
        self.ridges.selected.on_change("indices", self._on_tap)
        self.bars.selected.on_change("indices", self._on_tap)

        self.note = LiveHTML(name="terms_note", sizing_mode="stretch_width")
        # Beside the curve, as wide as the bars beside the ridges: the curve's k axis stays over the ridges' (a
        # presentation widens the bars; the k lines were 71 px apart at 1280 px).
        # Two links: a size the styler sets in a step's one message reaches Python callbacks no more (Panel sends
        # the held events itself), and one set while the page is built is in the first document already.
        self.bars_room = Spacer(width=self.bars_figure.width, name="terms_bars_room")
        self.bars_figure.js_on_change("width", CustomJS(args={"room": self.bars_room}, code=_FOLLOW_WIDTH))
        self.bars_figure.on_change("width", self._follow_bars)
        self.ridge_figure.js_on_change("inner_width", CustomJS(
            args={"axis": self.bars_figure.yaxis[0]}, code=_BARS_AXIS_WHEN_STACKED, name="terms_bars_rows_axis_shown"))
        self.figures = pn.Column(
            figure_row(pn.pane.Bokeh(self.score_figure, sizing_mode="stretch_width"), pn.pane.Bokeh(self.bars_room)),
            figure_row(pn.pane.Bokeh(self.ridge_figure, sizing_mode="stretch_width"),
                       pn.pane.Bokeh(self.bars_figure, width=340)),
            self.note, sizing_mode="stretch_width", name="terms_view")
        self._update_sizes()

    def _follow_bars(self, attr, old, new) -> None:
        self.bars_room.width = new

    def _on_tap(self, attr, old, new) -> None:
        if new:
            self.state.pair = int(self._starts[new[0]])
            # Cleared, so a second click on the same row selects it again after the pair slider moved.
            self.ridges.selected.indices = []
            self.bars.selected.indices = []

    @param.depends("state.d_model", "state.T", "state.base", watch=True)
    def _update_sizes(self) -> None:
        s = self.state
        ridges = ridge_data(s.T, s.d_model, s.base)
        self._starts = ridges["pair"]
        k = shown_offsets(s.T)
        scores = core.relative_scores(k, s.d_model, s.base)
        rows = self._starts.size
        largest = float(ridges["size"].max())
        low, peak = float(scores.min()), s.d_model / 2
        with pn.io.hold():
            # A d_model or base step keeps the rows and offsets: their columns are not sent again.
            send_changes(self.ridges, ridges)
            send_changes(self.curve, {"k": k, "score": scores})
            self.rows_range.update(start=-(rows - 1) - 0.7, end=0.7)
            self.ridge_figure.x_range.update(start=float(k[0]) - 0.5, end=float(k[-1]) + 0.5)
            self.score_figure.y_range.update(start=low - 0.1 * (peak - low) - 0.1, end=peak + 0.1 * (peak - low) + 0.1)
            self.bars_figure.x_range.update(start=-1.1 * largest, end=1.1 * largest)
            step = max(1, -(-rows // 16))
            self.ridge_figure.yaxis.ticker.ticks = [-float(r) for r in range(0, rows, step)]
            self.row_labels.args = {"starts": self._starts.tolist(), "pairs": s.d_model // 2}
            # Past MOST_ROWS pairs a row and its bar are a band's sum, which can leave [-1, 1]: say so on the figures.
            banded = "_bands" if largest > 1 else ""
            self.ridge_figure.title.text = text(s.lang, f"terms_title{banded}")
            self.bars_figure.xaxis.axis_label = text(s.lang, f"terms_bars_x{banded}")
            self.bars_hover.tooltips = [(text(s.lang, f"terms_bars_x{banded}"), "@term{0.000000}")]
            self.note.object = self._note()
            self._update_k()
            self._update_pair()

    def _note(self) -> str:
        s = self.state
        sentences = []
        size = int(self.ridges.data["size"].max())
        if size > 1:
            sentences.append(text(s.lang, "terms_bands", pairs=s.d_model // 2, most=MOST_ROWS, rows=self._starts.size,
                                   size=size))
        else:
            sentences.append(text(s.lang, "terms_one_per_pair", pairs=s.d_model // 2))
        if s.T == 1:  # each row's curve over k is one point, which a line does not draw
            sentences.append(text(s.lang, "terms_one_offset"))
        if s.T - 1 > MAX_SHOWN:
            sentences.append(text(s.lang, "terms_window", shown=MAX_SHOWN, last=s.T - 1))
        return f'<div class="pe-readout">{html.escape(" ".join(sentences))}</div>'

    @param.depends("state.k", watch=True)
    def _update_k(self) -> None:
        s = self.state
        with pn.io.hold():
            send_changes(self.bars, bars_data(s.k, s.d_model, s.base))
            send_changes(self.marker, {"k": [s.k], "score": [float(core.relative_scores(s.k, s.d_model, s.base))]})
            for line in self.k_lines:
                line.location = s.k

    @param.depends("state.pair", watch=True)
    def _update_pair(self) -> None:
        row = row_of(self.state.pair, self._starts)
        if self.selected_ridge.indices != [row]:
            with pn.io.hold():
                self.selected_ridge.indices = [row]
                self.selected_bar.indices = [row]

    def describe(self) -> str:
        # The prose's numbers, printed; those that are negative get the minus sign the prose gives them.
        values = {name: minus_sign(value) for name, value in self.live_values().items()}
        return text(self.state.lang, "describe_terms", k=values["k"], score=values["S_k"], pairs=values["pairs"],
                    lifting=values["lifting"], up=values["up"], down=values["down"])

    def live_values(self) -> dict[str, str]:
        s = self.state
        terms = core.score_terms(s.k, s.d_model, s.base)
        return {
            "k": str(s.k),
            "S_k": number(float(terms.sum()), 4),
            "up": number(float(terms[terms > 0].sum()), 4),
            "down": number(float(terms[terms < 0].sum()), 4),
            "lifting": str(int(np.sum(terms > 0))),
            "pairs": str(terms.size),
            "peak": number(s.d_model / 2, 0),
        }

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(), self.figures, self.passage("try")]
