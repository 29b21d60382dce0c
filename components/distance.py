"""Score against distance: S(k) = PE_p · PE_p+k is the same curve for every start p.

One figure, ``distance_plot``:

* the curve ``S(k) = Σ cos(ωᵢ·k)`` for every offset ``k`` in ``-(T-1) … T-1``
  (closed form, ``core.relative_scores``), with its maximum ``S(0) = d_model/2``
  drawn as a dashed line and labelled;
* markers for the products ``PE_p · PE_p+k`` of actual encoding rows
  (``core.dot_scores``) for a few start positions ``p`` spread over the table:
  computed without the closed form, they land on the curve, which is the
  visible proof that only the distance matters;
* the current offset ``k``: a vertical line, a dot on the curve and its value.

What is resent on a change:
* d_model, T, base: the curve (at most 4095 points), the samples (bounded),
  the axis ranges, the maximum's line and label, and the marker;
* k: the marker source only (one row);
* mistake (a published bug, ``core.mistake_columns``): the samples, products
  of that bug's rows, which then leave the curve (but for the split layout,
  a permutation of columns); the curve stays the correct closed form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColumnDataSource,
    HoverTool,
    Legend,
    LegendItem,
    Range1d,
)
from bokeh.plotting import figure
from bokeh.transform import factor_cmap, factor_mark

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import text
from components.describe import Description
from components.legend import detach_legends, moved_when_narrow
from components.sources import send_changes
from components.theme import (
    COLORS,
    LABEL_SIZE,
    MOVING,
    TICK_SIZE,
    level_line,
    smaller_type_when_narrow,
    style_figure,
)

#: How many start positions p get their products drawn.
SAMPLE_STARTS = 4
#: Targets p + k drawn per start at most; above this T the targets are a grid
#: (always with k = 0), so a 2048-position table sends ~200 markers, not 8000.
MAX_TARGETS_PER_START = 49
#: One colour and one shape per start slot; hollow shapes, so coinciding
#: markers of different starts (the whole point) stay visible on top of each other.
SLOT_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
SLOT_MARKERS = ("circle", "square", "triangle", "diamond")
#: Shrinking sizes, so that markers of all starts at one k nest inside each other;
#: on a grid (large T) starts never share a k, and one small size keeps the curve visible.
SLOT_SIZES = (27, 19, 16, 11)
GRID_SIZE = 12
SLOTS = tuple(str(i) for i in range(SAMPLE_STARTS))


def sample_starts(T: int) -> np.ndarray:
    """Up to ``SAMPLE_STARTS`` start positions spread from the first row to the last."""
    return np.unique(np.round(np.linspace(0, T - 1, SAMPLE_STARTS)).astype(np.int64))


def sample_targets(T: int, start: int) -> np.ndarray:
    """The positions ``q = p + k`` sampled for one start: all of them, or a grid that includes ``p``."""
    if T <= MAX_TARGETS_PER_START:
        return np.arange(T, dtype=np.int64)
    grid = np.round(np.linspace(0, T - 1, MAX_TARGETS_PER_START - 1)).astype(np.int64)
    return np.union1d(grid, [start])


def curve_data(T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """The closed-form curve for every offset the table can hold."""
    k = np.arange(-(T - 1), T, dtype=np.int32)
    # float64 on purpose: 4095 points are 32 kB, and float32 would lose the
    # sixth decimal the label and the lesson show (S ≈ 512 at d_model = 1024).
    # S(-k) = S(k) (a sum of cosines): k >= 0 only, mirrored. relative_scores_range gets those
    # from ~2 sqrt(T) d_model sines and cosines by angle addition, not T d_model / 2 cosines:
    # the same numbers to ~1e-12 at T = 2048, d_model = 1024, where it takes ~3 ms instead of ~13.
    half = core.relative_scores_range(T, d_model, base)
    return {"k": k, "score": np.concatenate([half[:0:-1], half])}


@functools.lru_cache(maxsize=16)
def sample_pairs(T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p, q, slot)`` of the sampled products of a table of ``T`` rows: each start of ``sample_starts(T)``
    (its index in ``slot``) with each of its ``sample_targets``. Remembered per T (read-only arrays): a
    d_model or base step samples the same pairs."""
    starts = sample_starts(T)
    targets = [sample_targets(T, int(s)) for s in starts]
    p = np.concatenate([np.full(t.size, s, dtype=np.int64) for s, t in zip(starts, targets, strict=True)])
    slot = np.concatenate([np.full(t.size, i) for i, t in enumerate(targets)])
    arrays = (p, np.concatenate(targets), slot)
    for array in arrays:
        array.flags.writeable = False
    return arrays


def sample_columns(T: int, legend: Callable[[int], str]) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    """``(p, q, columns)`` of the sampled products of a table of ``T`` rows: the pairs, and the columns every
    plot of them shows besides its scores (``k``, ``p``, ``slot``; ``legend``: ``legend(start)`` per start)."""
    p, q, slot = sample_pairs(T)
    labels = {int(s): legend(int(s)) for s in sample_starts(T)}
    return p, q, {"k": (q - p).astype(np.int32), "p": p.astype(np.int32), "slot": [SLOTS[i] for i in slot],
                  "legend": [labels[int(s)] for s in p]}


def samples_data(T: int, d_model: int, base: float, lang: str,
                 mistake: str = "none") -> dict[str, np.ndarray | list[str]]:
    """Products of actual encoding rows, ``PE_p · PE_q`` at ``k = q - p``, for a few starts ``p``.

    The rows are those of ``mistake`` (``core.dot_scores``), the correct ones by default.
    """
    p, q, columns = sample_columns(T, lambda start: text(lang, "distance_samples", starts=start))
    slot = sample_pairs(T)[2]
    return {
        **columns,
        "score": core.dot_scores(p, q, d_model, base, mistake=mistake),
        "size": (np.asarray(SLOT_SIZES, dtype=np.float32)[slot] if T <= MAX_TARGETS_PER_START
                 else np.full(slot.size, GRID_SIZE, dtype=np.float32)),
    }


def marker_data(k: int, d_model: int, base: float, lang: str, top: float) -> dict[str, list]:
    """One row: the current offset, its score, and the label shown at the top of the plot on the offset's line.

    ``top`` is the top of the score axis. Above the maximum S(0) = d_model/2 the
    plot holds no point of the curve (every other score is lower), so a label
    there covers nothing; it sits beside the dotted line through the dot, on the
    side towards the middle, so that it stays inside the plot.
    """
    score, label = _marker(k, d_model, base, lang)
    inward = 1 if k < 0 else -1
    return {"k": [k], "score": [score], "label": [label],
            "label_y": [top], "align": ["left" if inward > 0 else "right"], "x_offset": [8 * inward]}


# A room's followers in one process are handed the same state: its score and sentences are worked out once
# there, not once per follower (issue #44's fan-out). Keyed by plain values; each caller builds its own lists.
@functools.lru_cache(maxsize=256)
def _marker(k: int, d_model: int, base: float, lang: str) -> tuple[float, str]:
    score = float(core.relative_scores(k, d_model, base))
    return score, text(lang, "distance_marker", k=k, score=score)


@functools.lru_cache(maxsize=256)
def _description(k: int, d_model: int, base: float, lang: str) -> str:
    return text(lang, "describe_distance", k=k, score=_marker(k, d_model, base, lang)[0], maximum=d_model / 2)


def describe(state: ExplorerState) -> str:
    """What the score curve shows now, in a sentence (its text alternative)."""
    return _description(state.k, state.d_model, state.base, state.lang)


class ScoreCurve(pn.viewable.Viewer):
    """S(k) against k, with the row products of a few starts on top of it."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        lang = state.lang
        self.curve = ColumnDataSource(name="distance", data={"k": [], "score": []})
        self.samples = ColumnDataSource(name="distance_samples", data={"k": [], "score": [], "p": [], "slot": [],
                                                                       "size": [], "legend": []})
        self.marker = ColumnDataSource(name="distance_marker", data={
            "k": [], "score": [], "label": [], "label_y": [], "align": [], "x_offset": []})

        self.figure = figure(
            name="distance_plot", title=text(lang, "distance_plot_title"),
            x_range=Range1d(-1, 1, name="distance_k_range"), y_range=Range1d(0, 1, name="distance_score_range"),
            height=540, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.figure
        fig.xaxis.ticker = BasicTicker(min_interval=1, desired_num_ticks=9)
        fig.xaxis.axis_label = text(lang, "distance_x")
        fig.yaxis.axis_label = text(lang, "distance_y")

        # The maximum's label sits at the end of the axis away from k (``_place_max_label``): centred over the
        # peak, the k line crossed its text for every k near 0.
        self.max_line, self.max_label = level_line(fig, "distance_max_line", "distance_max_label",
                                                   text_align="center", text_baseline="bottom", y_offset=10,
                                                   level=MOVING)
        self.max_line.line_alpha = 0.7

        fig.vspan(x="k", source=self.marker, line_color=COLORS["target"], line_width=2, line_dash="dotted",
                  level=MOVING, name="distance_marker_line")
        curve = fig.line(x="k", y="score", source=self.curve, line_color=COLORS["curve"], line_width=4,
                         name="distance_curve")
        samples = fig.scatter(
            x="k", y="score", source=self.samples, size="size", line_width=2.5, fill_alpha=0,
            marker=factor_mark("slot", list(SLOT_MARKERS), list(SLOTS)),
            line_color=factor_cmap("slot", list(SLOT_COLORS), list(SLOTS)),
            name="distance_samples_glyph",
        )
        fig.scatter(x="k", y="score", source=self.marker, size=20, fill_color=COLORS["target"],
                    line_color="white", line_width=2, level=MOVING, name="distance_marker_dot")
        marker_label = fig.text(
            x="k", y="label_y", text="label", text_align="align", x_offset="x_offset", y_offset=6, text_baseline="top",
            source=self.marker, text_font_size=LABEL_SIZE, text_font_style="bold", text_color=COLORS["target_text"],
            background_fill_color="white", background_fill_alpha=0.85, padding=3, level=MOVING,
            name="distance_marker_label")

        fig.add_tools(HoverTool(renderers=[curve], mode="vline", tooltips=[
            (text(lang, "k"), "@k"), (text(lang, "distance_y"), "@score{0.000000}"),
        ]))
        legend = Legend(items=[
            LegendItem(label=text(lang, "distance_curve"), renderers=[curve]),
            LegendItem(label={"field": "legend"}, renderers=[samples]),
        ], location="top_left", label_text_font_size=TICK_SIZE, glyph_width=34, glyph_height=30,
           name="distance_legend")
        fig.add_layout(legend, "right")
        moved_when_narrow(fig, legend, grow_px=200)  # its five entries, one under the other
        # On a phone "S(3) = 12.272398" in 15 pt was wider than half the frame, running past the axis.
        smaller_type_when_narrow(fig, [marker_label.glyph, self.max_label], "11pt", "distance_label_size")
        self._legend_rows = detach_legends(fig)
        style_figure(fig)

        self._layout = pn.Column(pn.pane.Bokeh(fig, sizing_mode="stretch_width"),
                                 Description(state, text(lang, "distance_title"), describe, ("d_model", "base", "k"),
                                             name="distance_description"),
                                 sizing_mode="stretch_width", name="distance_view")
        self._update_curve()

    @param.depends("state.d_model", "state.T", "state.base", "state.mistake", watch=True)
    def _update_curve(self) -> None:
        s = self.state
        curve = curve_data(s.T, s.d_model, s.base)
        samples = samples_data(s.T, s.d_model, s.base, s.lang, s.mistake)
        peak = float(core.relative_scores(0, s.d_model, s.base))  # d_model / 2: every cosine is 1
        low = float(min(curve["score"].min(), samples["score"].min()))
        if s.T == 1:
            # One offset, k = 0, one score: an axis around that point alone (15.9 … 16.3) reads as a scale
            # of nothing; from 0 up, the point reads as the d_model/2 it is.
            low = min(low, 0.0)
        # A bug's products may pass the peak (a row longer than √(d_model/2)).
        high = peak if s.mistake == "none" else max(peak, float(samples["score"].max()))
        spread = max(high - low, 1.0)
        pad = max(1.0, 0.02 * (s.T - 1))  # the largest marker is ~1 k wide at T = 24
        with pn.io.hold():
            # A d_model or base step keeps the offsets, the sampled pairs and their legend: only scores go.
            send_changes(self.curve, curve)
            send_changes(self.samples, samples)
            for entry in self._legend_rows:
                entry.follow()
            self.figure.x_range.update(start=-(s.T - 1) - pad, end=s.T - 1 + pad)
            # Room above the peak for two labels (the maximum's, and the marker's at the top), below the lowest
            # point for the markers.
            self.figure.y_range.update(start=low - 0.08 * spread, end=high + 0.3 * spread)
            self.max_line.location = peak
            # Presented, the label's type is 1.8 times larger and the legend takes ~490 px of a 1280-px window:
            # the whole sentence was wider than half the frame, and the k line crossed it whatever its side.
            self.max_label.update(y=peak, text=text(s.lang, "distance_max_short" if s.present else "distance_max",
                                                    value=f"{peak:g}"))
            title = text(s.lang, "distance_plot_title" if s.mistake == "none" else "distance_plot_title_mistake")
            if self.figure.title.text != title:
                self.figure.title.text = title
            self._update_marker()

    @param.depends("state.k", watch=True)
    def _update_marker(self) -> None:
        s = self.state
        # A T change clamps k and then resends the table; the second call finds nothing new.
        send_changes(self.marker, marker_data(s.k, s.d_model, s.base, s.lang, self.figure.y_range.end))
        self._place_max_label()

    def _place_max_label(self) -> None:
        # On the half of the axis that k is not on (k and −k lie on either side of the peak at 0); with one
        # offset (T = 1) there is no other half: just right of the k line (k's own label is left of it). Bokeh
        # sends only what changes (the side).
        s, x_range = self.state, self.figure.x_range
        if s.T == 1:
            self.max_label.update(x=0, x_offset=12, text_align="left")
        elif s.k >= 0:
            self.max_label.update(x=x_range.start, x_offset=8, text_align="left")
        else:
            self.max_label.update(x=x_range.end, x_offset=-8, text_align="right")

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
