"""Past the lesson, section «extrapolation»: past the training length.

A model trained on texts of ``T_train`` positions reads a text of ``T`` positions (``T >= T_train``,
``app.model.state``). Every number comes from ``app.model.core`` (its ``extrapolation`` module):

* ``extrapolation_angles_plot``: per pair, the largest angle training showed it, ``ω_i·(T_train − 1)``
  (a grey bar), against the largest angle it meets in the text, ``ω'_i·(T − 1)``, for the ladder as
  trained (hollow marks) and for one stretched ladder (filled marks) chosen by the buttons of ``state.stretch``
  (Position Interpolation, "NTK-aware", YaRN). A pair that meets angles training never showed it is
  drawn as a triangle, the others as circles (``core.unseen_pairs``): shape, not colour alone.
* ``extrapolation_scores_plot``: ``S(k) = Σ cos(ω'_i k)`` for k = 0 … T − 1, the trained ladder's
  and the chosen scheme's (``core.scores_range_from_frequencies``), the training range shaded; a learned
  table's ``row_0 · row_k`` (the seeded stand-in ``core.learned_table``), which has no value past
  ``T_train − 1`` (a gap, and a label that says so); and ALiBi's biases ``−m_j·|k|`` for 8 heads
  (``core.alibi_biases``) on an axis of their own, on the right.

What is resent on a change:
* d_model, T, T_train, base: both sources (at most T_MAX rows of scores, d_model/2 rows of angles), the
  ALiBi lines, the ranges and the training box;
* ``stretch`` (its buttons): nothing but which columns two glyphs and a filter read (every scheme's numbers
  are in the sources already).
"""

from __future__ import annotations

import collections
import functools
import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxAnnotation,
    CDSView,
    ColumnDataSource,
    GroupFilter,
    Label,
    Legend,
    LegendItem,
    LinearAxis,
    Range1d,
    Span,
)
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model import core
from app.model.datasets import ALIBI_HEADS, extrapolation_ladders, learned_rows
from app.model.state import STRETCHES
from app.model.strings import number, significant, text
from components.legend import detach_legends, two_columns_if_they_fit
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, MOVING, TICK_SIZE, smaller_type_when_narrow, style_figure

#: The ladders whose angles and scores the sources hold: the trained one, then the stretched ones.
LADDERS: tuple[str, ...] = ("sinusoidal", *STRETCHES)
#: The seed of the learned table's stand-in rows (the same table in every session).
LEARNED_SEED = 0
#: Where a mark of the stretched ladder sits beside its pair, and the trained one on the other side, so the
#: two never cover each other (in pairs, on the x axis).
NUDGE = 0.18
#: The value of an ``unseen_<ladder>`` column for each group of marks.
UNSEEN = {"seen": 0, "unseen": 1}
#: Past this many pairs the marks are drawn on every ``stride``-th pair only (and where a ladder's marks change
#: shape), at full size: at 512 pairs circles and triangles 2 px apart read as one band, also when shrunk with
#: the pitch (as they were). Every pair keeps its bar, and the source every number.
MOST_MARKED_PAIRS = 64


def mark_stride(pairs: int) -> int:
    """Every how many pairs a mark is drawn, for ``pairs`` pairs (1: every pair)."""
    return max(1, math.ceil(pairs / MOST_MARKED_PAIRS))


def marked_pairs(unseen: dict[str, np.ndarray], pairs: int) -> list[int]:
    """The pairs whose marks are drawn: every ``mark_stride``-th one, the last one, and on each side of every
    place where a ladder's marks change shape (``unseen``: one 0/1 flag per pair for each ladder)."""
    stride = mark_stride(pairs)
    if stride == 1:
        return list(range(pairs))
    marked = set(range(0, pairs, stride)) | {pairs - 1}
    for flags in unseen.values():
        changes = np.flatnonzero(np.diff(np.asarray(flags, dtype=np.int8))) + 1
        marked.update(changes.tolist())
        marked.update((changes - 1).tolist())
    return sorted(marked)


def angle_data(T_train: int, T: int, d_model: int, base: float) -> dict[str, np.ndarray | list]:
    """One row per pair: the training reach, each ladder's largest angle at T, and whether it is unseen (1) or
    not (0), ``unseen_<ladder>``.

    Angles of exactly 0 (T_train = 1, T = 1) are NaN: a log axis has no place for them.
    """
    pairs = np.arange(d_model // 2)
    reach = core.training_angles(T_train, d_model, base)
    data: dict[str, np.ndarray | list] = {"pair": pairs, "trained": _positive(reach)}
    unseen = _unseen(T_train, T, d_model, base)
    for name, omega in _ladders(T_train, T, d_model, base).items():
        data[name] = _positive((T - 1) * omega)
        # 1 where the pair meets angles training never showed it: a small binary column, where a list of
        # words cost the serializer ~1 µs an entry (4 ms of a 1024-wide step).
        data[f"unseen_{name}"] = unseen[name].astype(np.int8)
    # 1 where the pair's marks are drawn (``marked_pairs``): a column of the source the step sends anyway, not a
    # filter's list sent beside it (a d_model step at 1024 paid ~3 ms more for that, p50).
    marked = np.zeros(pairs.size, dtype=np.int8)
    marked[marked_pairs({name: data[f"unseen_{name}"] for name in unseen}, pairs.size)] = 1
    data["marked"] = marked
    return data


@functools.lru_cache(maxsize=4)
def _ladders(T_train: int, T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """``extrapolation_ladders``, read-only: a step's angles, scores and live numbers read them once."""
    ladders = extrapolation_ladders(T_train, T, d_model, base)
    for omega in ladders.values():
        omega.flags.writeable = False
    return ladders


@functools.lru_cache(maxsize=4)
def _unseen(T_train: int, T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """Per ladder, read-only: which pairs meet angles training never showed them (``core.unseen_pairs``)."""
    unseen = {name: core.unseen_pairs(T_train, T, d_model, base, frequencies=omega)
              for name, omega in _ladders(T_train, T, d_model, base).items()}
    for marks in unseen.values():
        marks.flags.writeable = False
    return unseen


def score_data(T_train: int, T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """One row per offset k = 0 … T − 1: each ladder's S(k), and the learned table's row_0 · row_k (NaN past
    T_train − 1, where the table has no row)."""
    k = np.arange(T)
    data: dict[str, np.ndarray] = {"k": k}
    for name, omega in _ladders(T_train, T, d_model, base).items():
        # The trained ladder's S(k) does not depend on T_train: a T_train step reuses it.
        data[name] = (_trained_scores(T, d_model, base) if name == "sinusoidal"
                      else core.scores_range_from_frequencies(T, omega))
    defined = core.learned_defined(k, T_train)
    learned = np.full(T, np.nan)
    learned[defined] = _learned_scores(T_train, T, d_model)
    data["learned"] = learned
    return data


@functools.lru_cache(maxsize=4)
def _trained_scores(T: int, d_model: int, base: float) -> np.ndarray:
    """S(k) = core.relative_scores for k = 0 … T − 1, read-only (shared by the steps that reuse it)."""
    scores = core.relative_scores_range(T, d_model, base)
    scores.flags.writeable = False
    return scores


#: Per d_model, the learned table's ``row_0 · row_k`` for the rows drawn so far (a few d_models, newest last).
_LEARNED: collections.OrderedDict[int, np.ndarray] = collections.OrderedDict()


def _learned_scores(T_train: int, T: int, d_model: int) -> np.ndarray:
    """The learned table's ``row_0 · row_k`` for k = 0 … T_train − 1, read-only.

    Row k of ``core.learned_table`` does not depend on how many rows are drawn, so the scores of a longer table
    hold those of every shorter one: a T_train step slices what was computed, and a longer T_train computes
    twice the rows (up to T). The rows themselves are sliced from the process's table (``learned_rows``).
    """
    drawn = _LEARNED.pop(d_model, np.empty(0))
    if drawn.size < T_train:
        rows = min(T, max(T_train, 2 * drawn.size))
        drawn = core.table_dot_scores(learned_rows(rows, d_model, LEARNED_SEED), 0, np.arange(rows))
        drawn.flags.writeable = False
    _LEARNED[d_model] = drawn
    while len(_LEARNED) > 4:
        _LEARNED.popitem(last=False)
    return drawn[:T_train]


def alibi_data(T: int, heads: int = ALIBI_HEADS) -> dict[str, list]:
    """One row per head: its slope ``m_j`` and its line ``−m_j·|k|`` over k = 0 … T − 1, by its two ends.

    The bias is linear in k ≥ 0, so the segment between k = 0 and k = T − 1 is the line drawn through every
    offset: two points per head, not T (the section's table, ``/data/extrapolation_scores.csv``, has them all).
    """
    slopes = core.alibi_slopes(heads)
    ends = np.array([0, max(T - 1, 0)])
    return {"head": list(range(1, heads + 1)), "slope": slopes.tolist(), "xs": [ends] * heads,
            "ys": list(core.alibi_biases(ends, slopes))}


@functools.lru_cache(maxsize=8)
def _live_numbers(T_train: int, T: int, d_model: int, base: float) -> tuple[tuple[str, str], ...]:
    """The section's live numbers, formatted (its passages and its description read them in one step: once)."""
    pairs = d_model // 2
    scale = core.scale_factor(T_train, T)
    reach = core.training_angles(T_train, d_model, base)
    unseen = {name: int(marks.sum()) for name, marks in _unseen(T_train, T, d_model, base).items()}
    ramp = core.yarn_ramp(T_train, d_model, base)
    slopes = core.alibi_slopes(ALIBI_HEADS)
    values = {
        "T_train": str(T_train), "T": str(T), "last_train": str(T_train - 1), "last": str(T - 1),
        "pairs": str(pairs), "scale": number(scale, 2),
        "never_turned": str(int(np.sum(reach < 2 * math.pi))),
        **{f"unseen_{name}": str(count) for name, count in unseen.items()},
        "yarn_kept": str(int(np.sum(ramp >= 1))), "yarn_interpolated": str(int(np.sum(ramp <= 0))),
        "yarn_factor": number(core.yarn_attention_factor(scale), 3),
        "yarn_score_factor": number(core.yarn_attention_factor(scale) ** 2, 3),
        "alibi_first": number(float(slopes[0]), 3), "alibi_last": significant(float(slopes[-1]), 3),
        "alibi_far": number(float(core.alibi_biases(T - 1, slopes[:1])[0]), 1),
        # With one pair (d_model 2) the NTK base has no exponent: the passage says so instead (live_values).
        "ntk_base": number(core.ntk_base(T_train, T, d_model, base), 0) if d_model >= 4 else "",
    }
    return tuple(values.items())


def _positive(angles: np.ndarray) -> np.ndarray:
    return np.where(angles > 0, angles, np.nan)


class PastTrainingLength(LessonSection):
    """Per-pair angles against the training range, and the scores past the edge, for each scheme."""

    slug = "extrapolation"
    controls = ("T_train", "T", "d_model", "base", "stretch")
    # The sliders; the stretch buttons change which ladder is drawn, not a number of the text.
    live_on = ("T_train", "T", "d_model", "base")
    # pos and k move nothing here.
    plays = False
    text_reads_state_only = True

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang

        # Per-pair angles.
        self.angles = ColumnDataSource(name="extrapolation_angles",
                                       data={"pair": [], "trained": [],
                                             **{name: [] for name in LADDERS},
                                             **{f"unseen_{name}": [] for name in LADDERS}, "marked": []})
        self.angles_figure = fig = figure(
            name="extrapolation_angles_plot", title=text(lang, "extrapolation_angles_title"), height=470,
            sizing_mode="stretch_width", tools="", toolbar_location=None, y_axis_type="log",
            x_range=Range1d(-0.6, 0.6, name="extrapolation_angles_x_range"),
            y_range=Range1d(1e-3, 10, name="extrapolation_angles_y_range"))
        fig.xaxis.axis_label = text(lang, "extrapolation_pair")
        fig.yaxis.axis_label = text(lang, "extrapolation_angle")
        # The bars rise from the bottom of the axis (a log axis has no 0): ``_update_sizes`` moves both together.
        self.bars = bars = fig.vbar(x="pair", width=0.75, bottom=1e-4, top="trained", source=self.angles,
                        fill_color=COLORS["bar"], fill_alpha=0.45, line_color=None, name="extrapolation_trained_bars")
        self.turn_line = Span(dimension="width", location=2 * math.pi, line_color=COLORS["ink"], line_width=2,
                              line_dash="dotted", name="extrapolation_turn_line")
        fig.add_layout(self.turn_line)
        # At the right-hand end, above the slow pairs' marks (far below one turn), not over the fast ones'.
        self.turn_label = Label(x=0, y=2 * math.pi, x_offset=-4, y_offset=4, text_align="right",
                                text=text(lang, "extrapolation_turn"), text_font_size=TICK_SIZE,
                                text_color=COLORS["ink"], background_fill_color="white", background_fill_alpha=0.8,
                                name="extrapolation_turn_label")
        fig.add_layout(self.turn_label)
        # Each ladder's marks in two renderers, the pairs meeting unseen angles (triangles) and the others
        # (circles), filtered by a column: a stretch button changes which columns they read, not the data.
        self.filters: dict[tuple[str, str], GroupFilter] = {}
        self.marks: dict[tuple[str, str], object] = {}
        # The pairs that have marks (the source's ``marked``), one filter for the four renderers.
        self.marked = GroupFilter(column_name="marked", group=1, name="extrapolation_marked_pairs")
        # Beside their pair by a transform in the page: two columns fewer to send on a d_model step.
        looks = {"trained": {"x": dodge("pair", -NUDGE), "fill_color": "white", "line_color": COLORS["pos"],
                             "line_width": 2.5},
                 "stretched": {"x": dodge("pair", NUDGE), "fill_color": COLORS["target"], "line_color": COLORS["ink"],
                               "line_width": 1}}
        for role, look in looks.items():
            for group, marker in (("seen", "circle"), ("unseen", "triangle")):
                column = "unseen_sinusoidal" if role == "trained" else f"unseen_{state.stretch}"
                flt = GroupFilter(column_name=column, group=UNSEEN[group])
                self.filters[(role, group)] = flt
                self.marks[(role, group)] = fig.scatter(
                    y="sinusoidal" if role == "trained" else state.stretch, source=self.angles,
                    view=CDSView(filter=flt & self.marked), marker=marker, size=13 if marker == "circle" else 16,
                    level=MOVING, name=f"extrapolation_{role}_{group}_marks", **look)
        # Legend keys: renderers with a fixed look only (``detach_legends`` draws their swatches), so that a shape
        # and a fill each say one thing.
        self.stretched_item = LegendItem(label=self._stretched_label(),
                                         renderers=[self.marks[("stretched", "seen")]])
        items = [LegendItem(label=text(lang, "extrapolation_legend_trained_reach"), renderers=[bars]),
                 LegendItem(label=text(lang, "extrapolation_legend_untouched"), renderers=[self.marks[("trained",
                                                                                                       "seen")]]),
                 self.stretched_item,
                 # The swatch is a drawn mark's (tests/unit/test_legend.py): the trained ladder's triangle.
                 LegendItem(label=text(lang, "extrapolation_legend_unseen"),
                            renderers=[self.marks[("trained", "unseen")]])]
        # Below the figure, in two columns: inside, it covered the bars of the slow pairs or the fast pairs' marks.
        angles_legend = Legend(items=items, ncols=2, location="top_left", label_width=250,
                               label_text_font_size=TICK_SIZE, border_line_color=None,
                               name="extrapolation_angles_legend")
        fig.add_layout(angles_legend, "below")
        # One column where two would pass the figure's edge, its labels in lines no longer than the screen: on a
        # phone, and presented at 1280 px in Spanish, the canvas cut one column, or the start of both, away.
        two_columns_if_they_fit(fig, angles_legend)
        style_figure(fig, counts="x")
        detach_legends(fig)

        # Scores past the edge.
        self.scores = ColumnDataSource(name="extrapolation_scores",
                                       data={"k": [], **{name: [] for name in LADDERS}, "learned": []})
        self.alibi = ColumnDataSource(name="extrapolation_alibi", data={"head": [], "slope": [], "xs": [], "ys": []})
        self.scores_figure = sf = figure(
            name="extrapolation_scores_plot", title=text(lang, "extrapolation_scores_title"), height=470,
            sizing_mode="stretch_width", tools="", toolbar_location=None,
            x_range=Range1d(-0.5, 1, name="extrapolation_scores_x_range"),
            y_range=Range1d(-1, 1, name="extrapolation_scores_y_range"))
        sf.xaxis.axis_label = text(lang, "extrapolation_k")
        sf.yaxis.axis_label = text(lang, "extrapolation_score")
        self.training_box = BoxAnnotation(left=-0.5, right=0.5, fill_color=COLORS["bar"], fill_alpha=0.18,
                                          name="extrapolation_training_box")
        sf.add_layout(self.training_box)
        self.training_label = Label(x=-0.5, y=0, y_units="screen", x_offset=4, y_offset=8,
                                    text=text(lang, "extrapolation_training_range"), text_font_size=TICK_SIZE,
                                    text_color=COLORS["ink"], name="extrapolation_training_label")
        sf.add_layout(self.training_label)
        # On a 360 px phone (a frame of ~180 px) "entrenado: k < T_train" ran into the ALiBi axis.
        smaller_type_when_narrow(sf, [self.training_label], "11pt", "extrapolation_training_label_size")
        sf.extra_y_ranges = {"alibi": Range1d(-1, 0.05, name="extrapolation_alibi_range")}
        sf.add_layout(LinearAxis(y_range_name="alibi", axis_label=text(lang, "extrapolation_alibi_axis"),
                                 name="extrapolation_alibi_axis"), "right")
        alibi = sf.multi_line(xs="xs", ys="ys", source=self.alibi, y_range_name="alibi", line_color=COLORS["bar"],
                              line_width=2, line_dash="dashdot", name="extrapolation_alibi_lines")
        untouched = sf.line(x="k", y="sinusoidal", source=self.scores, line_color=COLORS["curve"], line_width=3,
                            name="extrapolation_untouched_curve")
        self.stretched_curve = sf.line(x="k", y=state.stretch, source=self.scores, line_color=COLORS["target"],
                                       line_width=3, line_dash="dashed", name="extrapolation_stretched_curve")
        learned = sf.line(x="k", y="learned", source=self.scores, line_color=COLORS["selected"], line_width=2.5,
                          line_dash="dotted", name="extrapolation_learned_curve")
        # At the frame's right end, right-aligned, on two lines: past the edge of the trained rows it ran off the
        # frame once T_train neared T, and on a phone its one line was wider than the whole frame.
        self.no_value_label = Label(x=1, y=0, y_units="screen", x_offset=-6, y_offset=40, text_align="right",
                                    text=text(lang, "extrapolation_no_learned"), text_font_size=TICK_SIZE,
                                    text_font_style="bold", text_color=COLORS["selected_text"],
                                    background_fill_color="white", background_fill_alpha=0.85,
                                    name="extrapolation_no_learned_label")
        sf.add_layout(self.no_value_label)
        self.stretched_score_item = LegendItem(label=self._stretched_label("extrapolation_legend_stretched_score"),
                                               renderers=[self.stretched_curve])
        scores_legend = Legend(items=[
            LegendItem(label=text(lang, "extrapolation_legend_untouched_score"), renderers=[untouched]),
            self.stretched_score_item,
            LegendItem(label=text(lang, "extrapolation_legend_learned"), renderers=[learned]),
            LegendItem(label=text(lang, "extrapolation_legend_alibi", heads=ALIBI_HEADS), renderers=[alibi]),
        ], ncols=2, location="top_left", label_width=250, label_text_font_size=TICK_SIZE, border_line_color=None,
            name="extrapolation_scores_legend")
        sf.add_layout(scores_legend, "below")
        two_columns_if_they_fit(sf, scores_legend)
        style_figure(sf, counts="x")
        sf.yaxis[0].major_label_text_font_size = TICK_SIZE
        detach_legends(sf)

        self._update_sizes()

    def _stretched_label(self, key: str = "extrapolation_legend_stretched") -> str:
        if key == "extrapolation_legend_stretched_score" and self.state.stretch == "yarn":
            key += "_yarn"  # YaRN's curve leaves out its logit factor (the prose says so; the legend too)
        return text(self.state.lang, key, scheme=text(self.state.lang, f"stretch_{self.state.stretch}"))

    @param.depends("state.d_model", "state.T", "state.base", "state.T_train", watch=True)
    def _update_sizes(self) -> None:
        s = self.state
        if not self.inputs_changed("sizes", "d_model", "T", "base", "T_train"):
            return
        angles = angle_data(s.T_train, s.T, s.d_model, s.base)
        scores = score_data(s.T_train, s.T, s.d_model, s.base)
        with pn.io.hold():
            send_changes(self.angles, angles)
            send_changes(self.scores, scores)
            send_changes(self.alibi, alibi_data(s.T))
            shown = np.concatenate([np.asarray(angles[name], dtype=float) for name in ("trained", *LADDERS)])
            shown = shown[np.isfinite(shown)]
            low, high = (float(shown.min()), float(shown.max())) if shown.size else (0.1, 2 * math.pi)
            # A decade of room below the smallest mark (for the legend) and half of one above 2π and the largest.
            self.angles_figure.y_range.update(start=low / 10, end=max(high, 2 * math.pi) * 3)
            self.bars.glyph.bottom = low / 10
            self.angles_figure.x_range.update(start=-0.6, end=s.d_model // 2 - 0.4)
            stride = mark_stride(s.d_model // 2)
            self.angles_figure.xaxis.axis_label = (text(s.lang, "extrapolation_pair") if stride == 1 else
                                                   text(s.lang, "extrapolation_pair_thinned", stride=stride))
            self.turn_label.x = s.d_model // 2 - 0.4
            curves = np.concatenate([scores[name] for name in (*LADDERS, "learned")])
            curves = curves[np.isfinite(curves)]
            top = max(float(np.abs(curves).max()), 1.0)
            self.scores_figure.y_range.update(start=-top * 1.1, end=top * 1.1)
            steepest = float(core.alibi_slopes(ALIBI_HEADS)[0]) * max(s.T - 1, 1)
            # Both axes' zeros at one height: the biases fall from it into the lower half, under the scores.
            self.scores_figure.extra_y_ranges["alibi"].update(start=-steepest * 1.1, end=steepest * 1.1)
            self.scores_figure.x_range.update(start=-0.5, end=max(s.T - 0.5, 1.5))
            self.training_box.right = s.T_train - 0.5
            self.no_value_label.x = self.scores_figure.x_range.end
            self.no_value_label.visible = s.T_train < s.T

    @param.depends("state.stretch", watch=True)
    def _update_scheme(self) -> None:
        scheme = self.state.stretch
        with pn.io.hold():
            for group in ("seen", "unseen"):
                self.filters[("stretched", group)].column_name = f"unseen_{scheme}"
                self.marks[("stretched", group)].glyph.y = scheme
            self.stretched_curve.glyph.y = scheme
            label = self._stretched_label()
            self.stretched_item.label = label
            self.stretched_score_item.label = self._stretched_label("extrapolation_legend_stretched_score")

    def live_values(self) -> dict[str, str]:
        s = self.state
        values = dict(_live_numbers(s.T_train, s.T, s.d_model, s.base))
        if s.d_model < 4:
            values["ntk_base"] = text(s.lang, "extrapolation_ntk_one_pair")
        return values

    def describe(self) -> str:
        v = self.live_values()
        return text(self.state.lang, "describe_extrapolation", T_train=v["T_train"], T=v["T"], scale=v["scale"],
                    pairs=v["pairs"], untouched=v["unseen_sinusoidal"], interpolation=v["unseen_interpolation"],
                    ntk=v["unseen_ntk"], yarn=v["unseen_yarn"])

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(self.live_on, columns=4),
                self.control_panel(("stretch",), columns=1),
                pn.pane.Bokeh(self.angles_figure, sizing_mode="stretch_width"), self.passage("angles"),
                pn.pane.Bokeh(self.scores_figure, sizing_mode="stretch_width"), self.passage("scores"),
                self.passage("schemes")]
