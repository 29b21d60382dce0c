"""Lesson section 2, «why not simpler?»: the three easy ways of writing position, each failing on screen.

* (a) the raw position number in coordinate 0 (``core.raw_position_share``):
  ``simpler_raw_plot`` draws ``pos² / ‖x_pos‖²`` as pos grows (``simpler_raw_share``)
  with the current pos marked (``simpler_raw_marker``);
* (b) ``n/T`` with ``n = pos + 1`` (``core.relative_position``): ``simpler_ratio_plot``
  draws every token's value for the learner's T and for another length L
  (``simpler_ratio``), and marks the learner's token and the token of L with
  the same value, or the two around it (``simpler_ratio_marks``);
* (c) a learned table (``core.learned_table``, ``trained`` rows):
  ``simpler_learned_plot`` draws ``row_p · row_p+k`` for a few starts p
  (``simpler_learned_scores``) next to ``simpler_sinusoid_plot``, where
  ``PE_p · PE_p+k`` of the same starts (``simpler_sinusoid_scores``) land on
  ``S(k)`` (``simpler_sinusoid_curve``); ``simpler_neighbours_plot`` draws how
  alike row p and row p + 1 are in both tables (``simpler_neighbours``), with
  no learned row past the trained ones; ``simpler_no_row`` says whether pos has one.

What a change recomputes: d_model → (a) and (c); T → (a), (b), (c); pos → the
markers of (a) and (b) and the no-row sentence; k → two lines; L → (b);
trained → (c).
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import BoxAnnotation, ColumnDataSource, Legend, LegendItem, Range1d, Span
from bokeh.plotting import figure
from bokeh.transform import factor_cmap, factor_mark

from app.model import core
from app.model.datasets import learned_rows
from app.model.state import T_MAX
from app.model.strings import number, percent, positions, text
from components.distance import SLOT_COLORS, SLOT_MARKERS, SLOT_SIZES, SLOTS, sample_columns
from components.figure_row import figure_row
from components.legend import LegendRows, detach_legends, stacked_when_narrow
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.stylesheets import WIDGET_STYLESHEET
from components.theme import (
    COLORS,
    LABEL_SIZE,
    MOVING,
    TICK_SIZE,
    columns_when_narrow,
    smaller_type_when_narrow,
    style_figure,
)
from components.widgets import FastIntSlider, LiveHTML

#: The lesson's position for the raw number: "at position 300 that coordinate is 300".
LESSON_POS = 300


#: Pixels between a mark's label and the dashed line through the mark.
LABEL_GAP_PX = 14
#: The n/T figure on a 360 px phone: its frame's width (px, measured 267-270) and a character of its 11 pt labels.
NARROW_RATIO_FRAME_PX = 265
NARROW_CHAR_PX = 7.6


class SimplerChoice(param.Parameterized):
    """The section's own choices: the second text length of (b) and the learned table's rows of (c)."""

    other_length = param.Integer(default=300, bounds=(1, T_MAX), doc="Length L of the second text in (b).")
    trained = param.Integer(default=16, bounds=(1, T_MAX), doc="Positions the learned table of (c) was trained on.")


def _figure(name: str, title: str, x_label: str, y_label: str, height: int, counts: str = "x",
            **ranges) -> figure:
    fig = figure(name=name, title=title, height=height, sizing_mode="stretch_width", tools="",
                 toolbar_location=None, **ranges)
    fig.xaxis.axis_label = x_label
    fig.yaxis.axis_label = y_label
    return style_figure(fig, counts)


class WhyNotSimpler(LessonSection):
    """The raw number, pos/T and a learned table, each on the current sizes."""

    slug = "simpler"
    controls = ("d_model", "pos", "T", "k")
    live_on = ("d_model", "T", "pos")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        self.choice = SimplerChoice()
        lang = state.lang

        # (a) the raw number
        self.raw_share = ColumnDataSource(name="simpler_raw_share", data={"pos": [], "share": []})
        self.raw_marker = ColumnDataSource(name="simpler_raw_marker",
                                           data={"pos": [], "share": [], "label": [], "side": [], "dy": []})
        self.raw_plot = _figure("simpler_raw_plot", text(lang, "simpler_raw_title"), text(lang, "simpler_raw_x"),
                                text(lang, "simpler_raw_y"), 380, x_range=Range1d(0, 1),
                                y_range=Range1d(-0.05, 1.12))
        self.raw_plot.line(x="pos", y="share", source=self.raw_share, line_width=4, line_color=COLORS["curve"],
                           name="simpler_raw_curve")
        self.raw_plot.scatter(x="pos", y="share", source=self.raw_marker, size=18, fill_color=COLORS["target"],
                              line_color="white", line_width=2, level=MOVING, name="simpler_raw_dot")
        self.raw_plot.text(x="pos", y="share", text="label", source=self.raw_marker, x_offset=12,
                           y_offset={"field": "dy"}, text_baseline={"field": "side"}, text_font_size=LABEL_SIZE,
                           text_font_style="bold",
                           text_color=COLORS["target_text"], background_fill_color="white", background_fill_alpha=0.85,
                           level=MOVING, name="simpler_raw_label")
        self.raw_plot.yaxis.formatter.use_scientific = False

        # (b) n/T in two lengths
        self.ratio = ColumnDataSource(name="simpler_ratio", data={"x": [], "y": []})
        self.ratio_marks = ColumnDataSource(name="simpler_ratio_marks", data={
            "x": [], "y": [], "label": [], "align": [], "dx": [], "label_narrow": [], "align_narrow": [],
            "dx_narrow": []})
        self.ratio_plot = _figure("simpler_ratio_plot", text(lang, "simpler_ratio_title"),
                                  text(lang, "simpler_ratio_x"), "", 300, counts="", x_range=Range1d(-0.02, 1.08),
                                  y_range=Range1d(-0.9, 2.0))  # 2.0: a phone's two-line label over T's row
        self.ratio_line = Span(dimension="height", location=0, line_color=COLORS["target"], line_width=2,
                               line_dash="dashed", name="simpler_ratio_line")
        self.ratio_plot.add_layout(self.ratio_line)
        self.ratio_plot.scatter(x="x", y="y", source=self.ratio, marker="dash", angle=np.pi / 2, size=26,
                                line_color=COLORS["bar"], line_width=2, name="simpler_ratio_ticks")
        self.ratio_plot.scatter(x="x", y="y", source=self.ratio_marks, marker="diamond", size=22,
                                fill_color=COLORS["target"], line_color=COLORS["ink"], name="simpler_ratio_dots")
        ratio_labels = self.ratio_plot.text(
            x="x", y="y", text="label", text_align="align", source=self.ratio_marks, y_offset=-18,
            x_offset={"field": "dx"}, text_baseline="bottom", text_font_size=LABEL_SIZE, text_color=COLORS["ink"],
            background_fill_color="white", background_fill_alpha=0.85, name="simpler_ratio_labels")
        # On a phone "between tokens 12 and 13 of 300" ran past the figure's right edge: two lines in smaller
        # type, each on the side of its mark with room for it.
        columns_when_narrow(self.ratio_plot,
                            [(ratio_labels.glyph, {"text": "label", "text_align": "align", "x_offset": "dx"})],
                            "simpler_ratio_labels_narrow")
        smaller_type_when_narrow(self.ratio_plot, [ratio_labels.glyph], "11pt", "simpler_ratio_label_size")
        self.ratio_plot.yaxis.ticker = [0, 1]
        self.ratio_plot.ygrid.visible = False

        # (c) a learned table
        self.learned_scores = ColumnDataSource(name="simpler_learned_scores", data={
            "k": [], "score": [], "p": [], "slot": [], "legend": []})
        self.sinusoid_scores = ColumnDataSource(name="simpler_sinusoid_scores", data={
            "k": [], "score": [], "p": [], "slot": [], "legend": []})
        self.sinusoid_curve = ColumnDataSource(name="simpler_sinusoid_curve", data={"k": [], "score": []})
        shared_y = Range1d(0, 1, name="simpler_scores_y")
        self.learned_plot = _figure("simpler_learned_plot", text(lang, "simpler_learned_title"),
                                    text(lang, "simpler_scores_x"), text(lang, "simpler_scores_y"), 430,
                                    x_range=Range1d(-1, 1, name="simpler_learned_x"), y_range=shared_y)
        self.sinusoid_plot = _figure("simpler_sinusoid_plot", text(lang, "simpler_sinusoid_title"),
                                     text(lang, "simpler_scores_x"), text(lang, "simpler_scores_y"), 430,
                                     x_range=Range1d(-1, 1, name="simpler_sinusoid_x"), y_range=shared_y)
        curve = self.sinusoid_plot.line(x="k", y="score", source=self.sinusoid_curve, line_width=4,
                                        line_color=COLORS["curve"], name="simpler_sinusoid_line")
        self.k_lines = []
        self._legend_rows: list[LegendRows] = []
        for fig, source, label in ((self.learned_plot, self.learned_scores, None),
                                   (self.sinusoid_plot, self.sinusoid_scores, curve)):
            span = Span(dimension="height", location=0, line_color=COLORS["target"], line_width=2,
                        line_dash="dotted", level=MOVING,
                        name=f"{fig.name.removesuffix('_plot')}_k_line")
            fig.add_layout(span)
            self.k_lines.append(span)
            dots = fig.scatter(x="k", y="score", source=source, size=SLOT_SIZES[2], line_width=2.5, fill_alpha=0,
                               marker=factor_mark("slot", list(SLOT_MARKERS), list(SLOTS)),
                               line_color=factor_cmap("slot", list(SLOT_COLORS), list(SLOTS)),
                               name=f"{source.name}_glyph")
            items = [LegendItem(label={"field": "legend"}, renderers=[dots])]
            if label is not None:
                items.insert(0, LegendItem(label=text(lang, "simpler_sinusoid_curve"), renderers=[label]))
            fig.add_layout(Legend(items=items, location="top_left", label_text_font_size=TICK_SIZE,
                                  name=f"{fig.name.removesuffix('_plot')}_legend"), "below")
            self._legend_rows += detach_legends(fig)

        self.neighbours = ColumnDataSource(name="simpler_neighbours", data={"p": [], "learned": [], "sinusoid": []})
        self.neighbours_plot = _figure("simpler_neighbours_plot", text(lang, "simpler_neighbours_title"),
                                       text(lang, "simpler_neighbours_x"), text(lang, "simpler_neighbours_y"), 360,
                                       x_range=Range1d(-0.5, 1, name="simpler_neighbours_x"),
                                       y_range=Range1d(-1.05, 1.25))
        nb = self.neighbours_plot
        self.no_rows_box = BoxAnnotation(left=0, fill_color=COLORS["bar"], fill_alpha=0.2, hatch_pattern="/",
                                         hatch_alpha=0.3, name="simpler_no_rows_box")
        nb.add_layout(self.no_rows_box)
        self.pos_line = Span(dimension="height", location=0, line_color=COLORS["target"], line_width=3,
                             line_dash="dashed", level=MOVING, name="simpler_pos_line")
        nb.add_layout(self.pos_line)
        sin_line = nb.line(x="p", y="sinusoid", source=self.neighbours, line_width=4, line_color=COLORS["curve"],
                           name="simpler_neighbours_sinusoid")
        # Dots too: with two positions (T = 2) each line has one point, and draws nothing.
        sin_dots = nb.scatter(x="p", y="sinusoid", source=self.neighbours, size=11, marker="circle",
                              fill_color=COLORS["curve"], line_color="white", name="simpler_neighbours_sinusoid_dots")
        learned = nb.line(x="p", y="learned", source=self.neighbours, line_width=2.5, line_dash="dashed",
                          line_color=COLORS["pos"], name="simpler_neighbours_learned")
        learned_dots = nb.scatter(x="p", y="learned", source=self.neighbours, size=10, marker="square",
                                  fill_color=COLORS["pos"], line_color="white", name="simpler_neighbours_dots")
        nb.add_layout(neighbours_legend := Legend(items=[
            LegendItem(label=text(lang, "simpler_neighbours_sinusoid"), renderers=[sin_line, sin_dots]),
            LegendItem(label=text(lang, "simpler_neighbours_learned"), renderers=[learned, learned_dots]),
        ], location="top_left", orientation="horizontal", label_text_font_size=TICK_SIZE,
           name="simpler_neighbours_legend"), "below")
        stacked_when_narrow(nb, neighbours_legend)
        detach_legends(nb)
        self.no_row = LiveHTML(name="simpler_no_row", sizing_mode="stretch_width", css=".pe-live{font-size:1.15rem}")
        # In place of the "neighbours" passage when a table has a single row: no neighbour to compare with.
        self.one_row_note = self.note_box("one_row")

        self._values: dict[str, str] = {}
        self.choice.param.watch(lambda _: (self._update_ratio(), self.refresh_code()), "other_length")
        self.choice.param.watch(lambda _: self._update_tables(), "trained")
        self._update_sizes()
        self._update_ratio()

    # ------------------------------------------------------------------
    # Updates: each watcher recomputes only what its parameters change.
    # ------------------------------------------------------------------

    @param.depends("state.d_model", "state.T", watch=True)
    def _update_sizes(self) -> None:
        with pn.io.hold():
            self._update_raw()
            self._update_tables()

    @param.depends("state.base", watch=True)
    def _update_base(self) -> None:
        # The sinusoid's products, curve and neighbours (the raw position and pos/T know no base).
        self._update_tables()

    def _update_raw(self) -> None:
        s = self.state
        last = max(s.T - 1, LESSON_POS)
        positions = np.arange(last + 1, dtype=np.float64)
        send_changes(self.raw_share, {"pos": positions, "share": core.raw_position_share(positions, s.d_model)})
        self.raw_plot.x_range.update(start=-0.01 * last, end=1.02 * last)
        self._update_pos()

    @param.depends("state.pos", watch=True)
    def _update_pos(self) -> None:
        s = self.state
        share = float(core.raw_position_share(s.pos, s.d_model))
        with pn.io.hold():
            # The label goes on the side of the dot that has room: above it low in the figure, below it high.
            self.raw_marker.data = {"pos": [s.pos], "share": [share],
                                    "label": [text(s.lang, "simpler_raw_marker", pos=s.pos, share=percent(share, 2))],
                                    "side": ["bottom" if share < 0.5 else "top"], "dy": [-4 if share < 0.5 else 4]}
            self._update_ratio_marks()
            self._update_row()

    @param.depends("state.T", watch=True)
    def _update_ratio(self) -> None:
        s, length = self.state, self.choice.other_length
        yours = core.relative_position(np.arange(1, s.T + 1), s.T)
        other = core.relative_position(np.arange(1, length + 1), length)
        self.ratio.data = {"x": np.concatenate([yours, other]),
                           "y": np.concatenate([np.ones(yours.size), np.zeros(other.size)])}
        self.ratio_plot.yaxis.major_label_overrides = {
            1: text(s.lang, "simpler_ratio_yours", T=s.T), 0: text(s.lang, "simpler_ratio_other", length=length)}
        self._update_ratio_marks()

    def _update_ratio_marks(self) -> None:
        s, length = self.state, self.choice.other_length
        n = s.pos + 1
        value = float(core.relative_position(n, s.T))
        same = core.same_ratio_token(n, s.T, length)
        if same == round(same):
            tokens = [round(same)]
        else:
            tokens = [t for t in (int(np.floor(same)), int(np.ceil(same))) if 1 <= t <= length]
        marks = {"x": [value, *(float(core.relative_position(t, length)) for t in tokens)],
                 "y": [1.0, *(0.0 for _ in tokens)]}
        # The desktop's labels (from 0.6 on they read leftwards) and a phone's (two lines, on the side with room).
        for suffix in ("", "_narrow"):
            labels = [text(s.lang, f"simpler_ratio_mark{suffix}", n=t, T=T, value=x)
                      for t, T, x in zip([n, *tokens], [s.T, *(length for _ in tokens)], marks["x"], strict=True)]
            if len(tokens) == 2:  # no token of L gets the value: one label for the two around it
                labels[1:] = [text(s.lang, f"simpler_ratio_between{suffix}", below=tokens[0], above=tokens[1],
                                   T=length), ""]
            if suffix:
                start, end = self.ratio_plot.x_range.start, self.ratio_plot.x_range.end
                per_px = (end - start) / NARROW_RATIO_FRAME_PX
                wide = [(LABEL_GAP_PX + NARROW_CHAR_PX * max(map(len, label.split("\n")))) * per_px
                        for label in labels]
                aligns = ["left" if x + w <= end or end - x >= x - start else "right"
                          for x, w in zip(marks["x"], wide, strict=True)]
            else:
                aligns = ["left" if x < 0.6 else "right" for x in marks["x"]]
            # Clear of the dashed line through the value (and of the diamond), on the side the label reads to.
            marks.update({f"label{suffix}": labels, f"align{suffix}": aligns,
                          f"dx{suffix}": [LABEL_GAP_PX if align == "left" else -LABEL_GAP_PX for align in aligns]})
        self.ratio_line.location = value
        send_changes(self.ratio_marks, marks)
        self._values.update({
            "n": str(n), "ratio": number(value, 4), "other_length": str(length),
            "same_place": self._same_place(same, tokens),
        })

    def _update_tables(self) -> None:
        s = self.state
        rows = min(s.T, self.choice.trained)
        # Sliced from the largest table drawn in this process: a new T, trained count or d_model draws nothing.
        table = learned_rows(rows, s.d_model)
        pe = core.encoding(s.T, s.d_model, s.base)
        learned = self._samples(table, s.lang)
        sinusoid = self._samples(pe, s.lang)
        k = np.arange(-(s.T - 1), s.T)
        curve = core.relative_scores(k, s.d_model, s.base)
        near = core.neighbour_similarity(table)
        p = np.arange(max(s.T - 1, 1))
        learned_near = np.full(p.size, np.nan)
        learned_near[:near.size] = near
        sin_near = core.neighbour_similarity(pe) if s.T > 1 else np.full(1, np.nan)
        low = float(min(curve.min(), learned["score"].min()))
        high = float(max(curve.max(), learned["score"].max()))
        spread = max(high - low, 1.0)
        with pn.io.hold():
            # A d_model step keeps the sampled pairs and their legend: only the scores go.
            send_changes(self.learned_scores, learned)
            send_changes(self.sinusoid_scores, sinusoid)
            for entry in self._legend_rows:
                entry.follow()
            send_changes(self.sinusoid_curve, {"k": k, "score": curve})
            self.learned_plot.y_range.update(start=low - 0.08 * spread, end=high + 0.08 * spread)
            for fig in (self.learned_plot, self.sinusoid_plot):
                fig.x_range.update(start=-(s.T - 1) - 1, end=s.T)
            send_changes(self.neighbours, {"p": p, "learned": learned_near, "sinusoid": sin_near})
            self.neighbours_plot.x_range.update(start=-0.5, end=max(s.T - 1.5, 0.5))
            self.no_rows_box.left = rows - 0.5
            self.no_rows_box.visible = rows < s.T
            self._update_k()
            self._update_row()
        self._values.update({
            "trained": str(self.choice.trained), "last_trained": str(self.choice.trained - 1), "rows": str(rows),
            "neighbour_sinusoid": number(float(sin_near[0]), 3) if s.T > 1 else "—",
            "neighbour_learned": number(float(np.max(np.abs(near))), 3) if near.size else "—",
        })
        one_row = "simpler_one_row_T" if s.T == 1 else "simpler_one_row_trained"
        self.passage_or_note("neighbours", self.one_row_note, "" if rows > 1 else text(
            s.lang, one_row, value=self._values["neighbour_sinusoid"]))
        self.refresh_text()

    def _same_place(self, same: float, tokens: list[int]) -> str:
        """Where ``same`` (``n L / T``, not always whole) falls in the other text, given the ``tokens`` marked
        for it: the one that holds it, the two around it, or (below 1) token 1 alone."""
        lang = self.state.lang
        if same == round(same):
            return text(lang, "simpler_same_token", n=tokens[0])
        if len(tokens) == 1:
            return text(lang, "simpler_same_before_first")
        return text(lang, "simpler_same_between", below=tokens[0], above=tokens[1], value=number(same, 2))

    def _samples(self, table: np.ndarray, lang: str) -> dict[str, object]:
        """``table[p] · table[p+k]`` for a few starts p over the table's rows (``distance``'s sampling)."""
        p, q, columns = sample_columns(table.shape[0], lambda start: text(lang, "simpler_scores_legend", p=start))
        return {**columns, "score": core.table_dot_scores(table, p, q)}

    @param.depends("state.k", watch=True)
    def _update_k(self) -> None:
        for span in self.k_lines:
            span.location = self.state.k

    def _update_row(self) -> None:
        s, trained = self.state, self.choice.trained
        self.pos_line.location = s.pos
        key = "simpler_row" if s.pos < trained else "simpler_no_row"
        self.no_row.object = html.escape(text(s.lang, key, pos=s.pos, trained=trained,
                                              positions=positions(trained - 1)))

    # ------------------------------------------------------------------

    def live_values(self) -> dict[str, str]:
        s = self.state
        share = float(core.raw_position_share(s.pos, s.d_model))
        return {
            **self._values,
            "d_model": str(s.d_model), "T": str(s.T), "pos": str(s.pos),
            # Two decimals, as the lesson prints its 300: at pos = 300 the two numbers are one.
            "raw_value": str(s.pos), "share": percent(share, 2),
            "share_lesson": percent(float(core.raw_position_share(LESSON_POS, s.d_model)), 2),
            "lesson_pos": str(LESSON_POS),
            "rest": number(float(np.sum(core.raw_position_rows(0, s.d_model)[1:] ** 2)), 2),
            "half_ratio": number(float(core.relative_position(4, 8)), 1),
            "half_token": number(core.same_ratio_token(4, 8, 300), 0),
        }

    def cell_context(self) -> dict[str, object]:
        return {"other_length": self.choice.other_length}

    def _slider(self, name: str) -> pn.widgets.Widget:
        return FastIntSlider.from_param(self.choice.param[name], name=text(self.state.lang, name),
                                        sizing_mode="stretch_width", stylesheets=[WIDGET_STYLESHEET])

    def layout(self) -> list[pn.viewable.Viewable]:
        controls_c = pn.GridBox(self.control_panel(("k",), columns=1), self._slider("trained"), ncols=2,
                                sizing_mode="stretch_width")
        return [
            self.passage("intro"),
            self.passage("raw"), self.control_panel(("d_model", "pos"), columns=2),
            pn.pane.Bokeh(self.raw_plot, sizing_mode="stretch_width"),
            self.passage("ratio"),
            pn.GridBox(self.control_panel(("T",), columns=1), self._slider("other_length"), ncols=2,
                       sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.ratio_plot, sizing_mode="stretch_width"),
            self.passage("learned"), self.passage("neighbours"), self.one_row_note, controls_c,
            figure_row(pn.pane.Bokeh(self.learned_plot, sizing_mode="stretch_width"),
                       pn.pane.Bokeh(self.sinusoid_plot, sizing_mode="stretch_width")),
            pn.pane.Bokeh(self.neighbours_plot, sizing_mode="stretch_width"), self.no_row,
            self.passage("honest"),
        ]
