"""Lesson section 7, «what a score can see»: S(k), then the four terms of a real score.

Three figures, built once and updated in place:

* the score curve ``S(k) = Σ cos(ωᵢ·k) = PE_p · PE_p+k`` (``components.distance.ScoreCurve``,
  its names are ``distance_*``);
* ``score_terms_plot``: the four terms of ``qᵀk`` for ``m = pos``, ``n = pos + k`` with seeded
  stand-in embeddings and weights (source ``qk_terms``: term, value, label), and their sum in
  ``score_total``;
* ``score_pp_plot``: the position-position term ``PE_mᵀ W_Qᵀ W_K PE_m+k`` for every start ``m``
  (source ``pp_by_start``: m, value; ``score_pp_marker`` is the start ``m = pos``), with random
  heads (it changes with ``m``) or aligned ones (it does not).

What is recomputed: ``A = W_Qᵀ W_K`` per (d_model, heads); the tables ``PE``, ``e`` and ``PE·A``
per size; on a k or pos press only two vector-matrix products and one dot product per start.
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange, Range1d, Span
from bokeh.plotting import figure

from app.model import core
from app.model.strings import minus_sign, number, positions, text
from components.distance import ScoreCurve
from components.legend import detach_legends
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, LABEL_SIZE, MOVING, readout, smaller_type_when_narrow, style_figure
from components.widgets import LiveHTML

#: One colour per term, and the axis says which term each bar is (colour is only a help).
TERM_COLORS = {"ee": COLORS["bar"], "ep": COLORS["pos"], "pe": COLORS["target"], "pp": COLORS["selected"]}


def value_range(values: np.ndarray) -> tuple[float, float]:
    """A y range holding ``values`` and 0, with room: a flat row of equal values is drawn flat, not magnified."""
    values = values[np.isfinite(values)]
    low = min(0.0, float(values.min())) if values.size else -1.0
    high = max(0.0, float(values.max())) if values.size else 1.0
    pad = 0.12 * max(high - low, 1.0)
    return low - pad, high + pad


class WhatScoresSee(LessonSection):
    """S(k) depends on the distance only; a real score has four terms, and only one is positional."""

    slug = "score"
    draws_mistakes = True
    controls = ("d_model", "T", "k", "pos", "heads")
    live_on = ("d_model", "T", "base", "k", "pos", "heads")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.curve = ScoreCurve(state)
        self._a_key: tuple | None = None
        self._table_key: tuple | None = None
        self._pp_key: tuple | None = None

        # The bars stand at the terms' readable names ("e·e"); ``term`` keeps the short keys.
        self._axis = [text(lang, f"score_term_{term}") for term in core.SCORE_TERMS]
        self.terms = ColumnDataSource(name="qk_terms", data=self._terms_data(np.zeros(4)))
        self.terms_plot = figure(
            name="score_terms_plot", title=text(lang, "score_terms_title"),
            x_range=FactorRange(*self._axis, name="score_terms_x_range"),
            y_range=Range1d(-1, 1, name="score_terms_y_range"),
            height=420, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.terms_plot
        fig.vbar(x="axis", top="value", width=0.6, source=self.terms, fill_color="color", line_color=COLORS["ink"],
                 name="score_terms_bars")
        labels = fig.text(x="axis", y="value", text="label", source=self.terms, text_align="center",
                          text_baseline="baseline", y_offset="y_offset", text_font_size=LABEL_SIZE,
                          text_font_style="bold", text_color=COLORS["ink"], background_fill_color="white",
                          background_fill_alpha=0.85, padding=2, name="score_terms_labels")
        # On a phone "−2.810" and "−2.771" ran into each other over bars ~70 px apart.
        smaller_type_when_narrow(fig, [labels.glyph], "11pt", "score_terms_label_size")
        fig.add_layout(Span(dimension="width", location=0, line_color=COLORS["ink"], line_width=1))
        fig.xaxis.axis_label = text(lang, "score_terms_x")
        fig.yaxis.axis_label = text(lang, "score_terms_y")
        style_figure(fig)
        self.total = LiveHTML(name="score_total", sizing_mode="stretch_width")

        self.by_start = ColumnDataSource(name="pp_by_start", data={"m": [], "value": []})
        self.marker = ColumnDataSource(name="score_pp_marker", data={"m": [], "value": []})
        self.pp_plot = figure(
            name="score_pp_plot", title=text(lang, "score_pp_title"),
            x_range=Range1d(-0.5, 1, name="score_pp_x_range"), y_range=Range1d(-1, 1, name="score_pp_y_range"),
            height=420, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.pp_plot
        fig.add_layout(Span(dimension="width", location=0, line_color=COLORS["ink"], line_width=1))
        fig.line(x="m", y="value", source=self.by_start, line_color=COLORS["selected"], line_width=2,
                 line_dash="dashed", name="score_pp_line")
        fig.scatter(x="m", y="value", source=self.by_start, size=13, marker="circle", fill_color=COLORS["selected"],
                    line_color="white", legend_label=text(lang, "score_pp_legend"), name="score_pp_dots")
        fig.scatter(x="m", y="value", source=self.marker, size=24, marker="square", fill_alpha=0,
                    line_color=COLORS["target"], line_width=3, legend_label=text(lang, "score_pp_here"),
                    level=MOVING, name="score_pp_here")
        fig.xaxis.axis_label = text(lang, "score_pp_x")
        fig.yaxis.axis_label = text(lang, "score_pp_y")
        # Below the figure: inside, it hid dots (at 512 × 512 the largest p·p, which the text quotes).
        [legend] = fig.legend
        fig.center.remove(legend)
        legend.update(orientation="horizontal", label_text_font_size=LABEL_SIZE)
        fig.add_layout(legend, "below")
        detach_legends(fig)
        style_figure(fig, counts="x")

        self._update()

    # ----------------------------------------------------------------------
    # Data
    # ----------------------------------------------------------------------

    def _tables(self) -> None:
        """``A`` per (d_model, heads); ``PE``, ``e`` and ``PE·A`` per size: a k or pos press reuses them."""
        s = self.state
        a_key = (s.d_model, s.heads)
        if a_key != self._a_key:
            self._a = core.query_key_matrix(s.d_model, s.heads)
            self._a_key, self._table_key = a_key, None
        table_key = (s.d_model, s.T, s.base, s.heads)
        if table_key != self._table_key:
            if self._table_key is None or self._table_key[:3] != table_key[:3]:
                self._pe = core.encoding(s.T, s.d_model, s.base)
                self._e = core.embeddings(s.T, s.d_model)
            self._pe_a = self._pe @ self._a
            self._table_key = table_key

    def _terms_data(self, values: np.ndarray) -> dict[str, list]:
        """The bars' rows; each value printed past the end of its bar (above a positive one, below a negative one)."""
        return {"term": list(core.SCORE_TERMS), "axis": self._axis, "value": values,
                "label": ["" if math.isnan(v) else minus_sign(f"{v:.3f}") for v in values],
                "baseline": ["top" if v < 0 else "bottom" for v in values],
                "y_offset": [6 if v < 0 else -6 for v in values], "color": list(TERM_COLORS.values())}

    def pp_by_start(self) -> tuple[np.ndarray, np.ndarray]:
        """The p·p term for every start at the current k (once per change: the plot and the prose share it)."""
        self._tables()
        key = (self._table_key, self.state.k)
        if key != self._pp_key:
            self._pp = core.position_term_by_start_of(self._pe_a, self._pe, self.state.k)
            self._pp_key = key
        return self._pp

    def terms_values(self) -> np.ndarray | None:
        """``[ee, ep, pe, pp]`` for m = pos, n = pos + k, or ``None`` when pos + k is outside the table."""
        s = self.state
        if not 0 <= s.target < s.T:
            return None
        return core.qk_terms_of(self._e, self._pe, self._a, s.pos, s.target)

    @param.depends("state.d_model", "state.T", "state.base", "state.heads", "state.k", "state.pos", watch=True)
    def _update(self) -> None:
        # One watcher for sizes and keys: a T change clamps k and pos in the same batch, and the tables
        # must follow the size before the terms are read (the cache keys make a key press cheap).
        s = self.state
        self._tables()
        values = self.terms_values()
        shown = np.full(4, np.nan) if values is None else values
        starts, pp = self.pp_by_start()
        here = starts == s.pos
        with pn.io.hold():
            send_changes(self.terms, self._terms_data(shown))
            self.terms_plot.y_range.update(**dict(zip(("start", "end"), value_range(shown), strict=True)))
            self.total.object = self._total_html(values)
            self.by_start.data = {"m": starts, "value": pp}
            send_changes(self.marker, {"m": starts[here], "value": pp[here]})
            self.pp_plot.x_range.update(start=-0.5, end=max(s.T - 1, 1) + 0.5)
            self.pp_plot.y_range.update(**dict(zip(("start", "end"), value_range(pp), strict=True)))

    def _total_html(self, values: np.ndarray | None) -> str:
        s = self.state
        if values is None:
            return readout(s.lang, "score_outside", n=s.target, positions=positions(s.T - 1))
        return readout(s.lang, "score_total", m=s.pos, n=s.target, total=float(values.sum()),
                       k=s.k, s=float(core.relative_scores(s.k, s.d_model, s.base)))

    def live_values(self) -> dict[str, str]:
        s = self.state
        scores = core.relative_scores(np.array([0, 1, s.k]), s.d_model, s.base)
        values = {"d_model": str(s.d_model), "half": number(s.d_model / 2, 0), "S_one": number(scores[1], 3),
                  "k": str(s.k), "S_k": number(scores[2], 3), "pos": str(s.pos), "target": str(s.target)}
        starts, pp = self.pp_by_start()
        # The state keeps |k| <= T - 1, so there is always at least one start (m = 0 or m = T - 1).
        if starts.size > 1:
            low, high = number(pp.min(), 3), number(pp.max(), 3)
            # Aligned heads make every start give one value: "from −4.954 to −4.954" said it twice.
            values["pp_range"] = (text(s.lang, "pp_range", low=low, high=high) if low != high
                                  else text(s.lang, "pp_all_same", value=low))
            values["dots_level"] = text(s.lang, "pp_dots_level", n=starts.size)
        else:
            values["pp_range"] = text(s.lang, "pp_one_start", value=number(pp[0], 3))
            values["dots_level"] = text(s.lang, "pp_dot_level")
        values["heads"] = text(s.lang, f"heads_{s.heads}")
        return values

    def layout(self) -> list[pn.viewable.Viewable]:
        return [
            self.passage("intro"), self.control_panel(("d_model", "T", "k")), self.curve, self.passage("curve"),
            self.passage("terms"), self.control_panel(("pos", "heads"), columns=2),
            pn.pane.Bokeh(self.terms_plot, sizing_mode="stretch_width"), self.total,
            self.passage("heads"), pn.pane.Bokeh(self.pp_plot, sizing_mode="stretch_width"), self.passage("try"),
        ]
