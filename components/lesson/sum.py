"""Lesson section 8, «sum or concatenate»: what each way of joining meaning and position buys and costs.

Three figures, built once and updated in place:

* ``sum_width_plot``: the d_model coordinates as two bars: summing shares all of them, concatenating
  splits them into d_model − r for meaning and r for position (source ``sum_width``: row, left, right,
  part, label);
* ``sum_ladder_plot``: the wavelengths each choice can write: d_model/2 pairs when summing
  (``sum_ladder``: pair, wavelength), r/2 when concatenating (``sum_reserved_ladder``), both from 2π;
* ``sum_cross_plot``: the cross terms ``e_m·PE_m+k + PE_m·e_m+k`` that summing adds to a dot
  product and concatenating removes, for every start m (``sum_cross``: m, cross), against the
  positional term of each choice (``sum_levels``: y, label).

The embeddings are ``core.embeddings`` (seeded stand-ins), kept per size with the table PE.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    FactorRange,
    Legend,
    LegendItem,
    Range1d,
)
from bokeh.plotting import figure

from app.model import core
from app.model.strings import number, text
from components.legend import detach_legends, stacked_when_narrow
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import (
    COLORS,
    LABEL_SIZE,
    TICK_SIZE,
    columns_when_narrow,
    smaller_type_when_narrow,
    style_figure,
)

#: Meaning and position keep one colour each; shared coordinates are hatched, and every bar is labelled.
PART_COLORS = {"shared": "#CC79A7", "meaning": COLORS["bar"], "position": COLORS["pos"]}
PART_HATCH = {"shared": "/", "meaning": " ", "position": " "}


def label_side(value: float) -> tuple[str, int]:
    """Where a level's label sits: (baseline, y offset) above its line when the line is at or above zero,
    below it otherwise."""
    return ("bottom", -4) if value >= 0 else ("top", 4)


#: The cross terms' figure as the level labels' placement assumes it, on the small side (a 1280 px
#: screen, or a projector's slide, where labels and dots are larger): the frame's width and height (px),
#: a label's height and the width of one of its characters (px, at TICK_SIZE and the presented sizes),
#: a dot's radius (px) and the gap between a label and its line (px). A wider figure only leaves more room.
LABEL_FRAME_PX = (1150, 320)
#: The same frame on a phone, where each label is set on two lines (measured: 233 × 344 px on a 360 px screen,
#: 244 × 331 in Spanish, whose title takes more room; 263 × 338 at 390 px).
NARROW_LABEL_FRAME_PX = (230, 330)
#: The key in the frame's top left corner (width, height, px), where no label goes: on a desktop one line (measured
#: 297 × 52 from the frame's corner at 1280 px), on a phone its label wraps to two lines across the whole frame
#: (72 px high from the frame's top; it hid "PE·PE, summed:" at 390 px).
LEGEND_PX = (300, 54)
NARROW_LEGEND_PX = (NARROW_LABEL_FRAME_PX[0], 74)
LABEL_HEIGHT_PX = 26
LABEL_CHAR_PX = 10
DOT_RADIUS_PX = 8
LABEL_GAP_PX = 4


def level_label_places(dots_x: np.ndarray, dots_y: np.ndarray, levels: list[float], labels: list[str],
                       ends: list[str], sides: list[tuple[str, int]], x_range: tuple[float, float],
                       y_range: tuple[float, float],
                       frame_px: tuple[int, int] = LABEL_FRAME_PX,
                       legend_px: tuple[int, int] = LEGEND_PX) -> list[tuple[float, str, str, int]]:
    """Where each level line's label goes, ``(x, align, baseline, y_offset)``: on no dot and on no other label.

    A label first tries its own end of its line (``ends``: "left" or "right") on its side (``sides``:
    ``label_side``), then the other side, then the other end, then spots along its line from its end
    inwards; where all of them cover a dot, the same again half a label's height further from the line,
    up to a height, never across another level line. Its box is estimated in data units from the frame's size
    (``frame_px``, px) and the ranges, and a dot is under it up to a dot's radius from its edge; a label of
    several lines ("\\n") is as wide as its longest and as high as all of them. The key's corner (``legend_px``,
    top left) counts as a placed label, and a spot past the frame's top or bottom as one on a label. Where no spot
    is free (a table so long that dots fill the whole band), the label takes the spot that covers the fewest dots,
    and never another label or line if it can help it.
    """
    (x0, x1), (y0, y1) = x_range, y_range
    per_x = (x1 - x0) / frame_px[0]
    per_y = (y1 - y0) / frame_px[1]
    margin_x, margin_y = DOT_RADIUS_PX * per_x, DOT_RADIUS_PX * per_y
    placed = [(x0, x0 + legend_px[0] * per_x, y1 - legend_px[1] * per_y, y1)]
    places = []
    for level, label, end, side in zip(levels, labels, ends, sides, strict=True):
        lines = label.split("\n")
        width = max(map(len, lines)) * LABEL_CHAR_PX * per_x
        height = len(lines) * LABEL_HEIGHT_PX
        step = width / 4
        inward = [x0 + i * step for i in range(int((x1 - x0 - width) / step) + 1)] if x1 - x0 > width else []
        spots = [(x0, "left") if end == "left" else (x1, "right"),
                 (x1, "right") if end == "left" else (x0, "left"),
                 *((x, "left") for x in (inward if end == "left" else reversed(inward)))]
        towards = (1, -1) if side[0] == "bottom" else (-1, 1)  # its own side first: +1 above the line

        def box(x: float, align: str, gap: float, level: float = level, width: float = width,
                height: int = height) -> tuple:
            left = x if align == "left" else x - width
            bottom = level + gap * per_y if gap > 0 else level + (gap - height) * per_y
            return left, left + width, bottom, bottom + height * per_y

        def dots_under(b: tuple) -> int:
            # A dot under the label's edge counts: its box grown by a dot's radius holds the dot's centre.
            return int(np.count_nonzero((dots_x >= b[0] - margin_x) & (dots_x <= b[1] + margin_x)
                                        & (dots_y >= b[2] - margin_y) & (dots_y <= b[3] + margin_y)))

        def on_label(b: tuple, level: float = level) -> bool:
            # Another label, or another level line between this label and its own: it would read as that one's;
            # or past the frame's top or bottom, where it is cut.
            return b[2] < y0 or b[3] > y1 or any(
                b[0] < o[1] and o[0] < b[1] and b[2] < o[3] and o[2] < b[3] for o in placed) or any(
                other != level and (b[2] <= other <= b[3] or min(b[2], level) <= other <= max(b[3], level))
                for other in levels)

        # Nearest its line first: at the gap, then half a label's height further each time, up to a height.
        candidates = [(x, align, sign * (LABEL_GAP_PX + lift * LABEL_HEIGHT_PX // 2))
                      for lift in range(3) for x, align in spots for sign in towards]
        scored = [(dots_under(box(*c)) + (len(dots_x) + 1) * on_label(box(*c)), n, c) for n, c in enumerate(candidates)]
        _, _, (x, align, gap) = min(scored)
        placed.append(box(x, align, gap))
        # Screen y runs down: a label above its line has its bottom there, lifted by a negative offset.
        places.append((x, align, "bottom", -gap) if gap > 0 else (x, align, "top", -gap))
    return places


#: The level labels' columns placed for a frame's width, with the text glyph's property each one feeds; each has a
#: ``_narrow`` twin for a phone's frame.
_PLACED_AS = {"x": "x", "text": "label", "text_align": "align", "text_baseline": "baseline", "y_offset": "y_offset"}
_PLACED = tuple(_PLACED_AS.values())


class SumOrConcatenate(LessonSection):
    """x = e + PE shares the width; [e; PE] splits it. The costs and gains of each, in numbers."""

    slug = "sum"
    controls = ("d_model", "T", "base", "reserve", "k")
    live_on = ("d_model", "T", "base", "reserve", "k")
    text_reads_state_only = True

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self._table_key: tuple | None = None
        self._rows = [text(lang, "sum_row_concat"), text(lang, "sum_row_sum")]
        # In place of the ladder passage at r = 0 and r = d_model.
        self.ladder_note = self.note_box("ladder")

        self.width = ColumnDataSource(name="sum_width", data={
            "row": [], "left": [], "right": [], "part": [], "label": [], "label_narrow": [], "color": [], "hatch": [],
            "x": []})
        self.width_plot = figure(
            name="sum_width_plot", title="", y_range=FactorRange(*self._rows, name="sum_width_rows"),
            x_range=Range1d(0, 1, name="sum_width_x_range"), height=230, sizing_mode="stretch_width",
            tools="", toolbar_location=None,
        )
        fig = self.width_plot
        fig.hbar(y="row", left="left", right="right", height=0.7, source=self.width, fill_color="color",
                 hatch_pattern="hatch", hatch_color="white", hatch_alpha=0.6, line_color=COLORS["ink"],
                 name="sum_width_bars")
        labels = fig.text(x="x", y="row", text="label", source=self.width, text_align="center",
                          text_baseline="middle", text_font_size=LABEL_SIZE, text_font_style="bold",
                          text_color=COLORS["ink"], background_fill_color="white", background_fill_alpha=0.9, padding=3,
                          name="sum_width_labels")
        # On a phone "meaning + position, sharing all 32" was wider than the figure, and "meaning: 28" ran into
        # "position: 4": two lines each, in smaller type.
        columns_when_narrow(fig, [(labels.glyph, {"text": "label"})], "sum_width_labels_narrow")
        smaller_type_when_narrow(fig, [labels.glyph], "11pt", "sum_width_label_size")
        fig.xaxis.axis_label = text(lang, "sum_width_x")
        fig.ygrid.grid_line_color = None
        style_figure(fig, counts="x")

        self.ladder = ColumnDataSource(name="sum_ladder", data={"pair": [], "wavelength": [], "legend": []})
        self.reserved = ColumnDataSource(name="sum_reserved_ladder", data={"pair": [], "wavelength": [],
                                                                             "legend": []})
        self.ladder_plot = figure(
            name="sum_ladder_plot", title=text(lang, "sum_ladder_title"), y_axis_type="log",
            x_range=Range1d(-0.5, 1, name="sum_ladder_x_range"), y_range=Range1d(1, 10, name="sum_ladder_y_range"),
            height=400, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.ladder_plot
        summed = fig.scatter(x="pair", y="wavelength", source=self.ladder, marker="circle", size=9,
                             fill_color=PART_COLORS["shared"], line_color=PART_COLORS["shared"],
                             name="sum_ladder_dots")
        reserved = fig.scatter(x="pair", y="wavelength", source=self.reserved, marker="square", size=14,
                               fill_alpha=0, line_color=PART_COLORS["position"], line_width=3,
                               name="sum_reserved_dots")
        ladder_legend = Legend(items=[LegendItem(label={"field": "legend"}, renderers=[summed]),
                                      LegendItem(label={"field": "legend"}, renderers=[reserved])],
                               orientation="horizontal", label_text_font_size=TICK_SIZE, name="sum_ladder_legend")
        fig.add_layout(ladder_legend, "below")  # inside, it hid the last concatenated pairs at the paper's sizes
        stacked_when_narrow(fig, ladder_legend)  # its one row began off screen on a phone
        self._legend_rows = detach_legends(fig)
        fig.xaxis.axis_label = text(lang, "sum_ladder_x")
        fig.yaxis.axis_label = text(lang, "sum_ladder_y")
        style_figure(fig, counts="x")

        self.cross = ColumnDataSource(name="sum_cross", data={"m": [], "cross": []})
        self.levels = ColumnDataSource(name="sum_levels", data={
            "kind": [], "y": [], "x0": [], "x1": [], "x": [], "align": [], "baseline": [], "y_offset": [],
            "label": [], "dash": [], "color": [], **{f"{column}_narrow": [] for column in _PLACED}})
        self.cross_plot = figure(
            name="sum_cross_plot", title=text(lang, "sum_cross_title"),
            x_range=Range1d(-0.5, 1, name="sum_cross_x_range"), y_range=Range1d(-1, 1, name="sum_cross_y_range"),
            height=440, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.cross_plot
        fig.segment(x0="x0", x1="x1", y0="y", y1="y", source=self.levels, line_color="color", line_dash="dash",
                    line_width=3, name="sum_levels_lines")
        fig.scatter(x="m", y="cross", source=self.cross, marker="circle", size=11, fill_color=PART_COLORS["shared"],
                    line_color="white", legend_label=text(lang, "sum_cross_dots"), name="sum_cross_dots")
        # The labels after the dots: where a dot falls on a label, the label's box stays readable.
        labels = fig.text(x="x", y="y", text="label", source=self.levels, text_align="align",
                          text_baseline="baseline", y_offset="y_offset", text_font_size=TICK_SIZE, text_color="color",
                          background_fill_color="white", background_fill_alpha=0.85, padding=2,
                          name="sum_levels_labels")
        # One-line labels of up to 34 characters ran off both sides of a phone's frame.
        columns_when_narrow(fig, [(labels.glyph, _PLACED_AS)], "sum_levels_labels_narrow")
        fig.legend.update(location="top_left", label_text_font_size=TICK_SIZE, name="sum_cross_legend")
        detach_legends(fig)
        fig.xaxis.axis_label = text(lang, "sum_cross_x")
        fig.yaxis.axis_label = text(lang, "sum_cross_y")
        style_figure(fig, counts="x")

        self._update_width()
        self._update_cross()

    # ----------------------------------------------------------------------
    # Width and ladders: d_model, reserve, base
    # ----------------------------------------------------------------------

    @param.depends("state.d_model", "state.reserve", "state.base", watch=True)
    def _update_width(self) -> None:
        if not self.inputs_changed("width", "d_model", "reserve", "base"):
            return
        s = self.state
        d, r = s.d_model, s.reserve
        lang = s.lang
        parts = [  # (row, left, right, part, width); rows as the y axis shows them
            (self._rows[1], 0, d, "shared", d),
            (self._rows[0], 0, d - r, "meaning", d - r),
            (self._rows[0], d - r, d, "position", r),
        ]
        # A label sits in its bar's middle, but not past the axis' ends (a narrow bar at an end).
        room = 0.16 * d
        width = {
            "row": [p[0] for p in parts], "left": [p[1] for p in parts], "right": [p[2] for p in parts],
            "part": [p[3] for p in parts],
            "label": [text(lang, f"sum_part_{p[3]}", width=p[4]) for p in parts],
            "label_narrow": [text(lang, f"sum_part_{p[3]}_narrow", width=p[4]) for p in parts],
            "color": [PART_COLORS[p[3]] for p in parts], "hatch": [PART_HATCH[p[3]] for p in parts],
            # A part of width 0 (r = 0 or r = d_model) has no bar, so its label is not drawn (x NaN): "meaning: 0"
            # sat over the other bar.
            "x": [min(max((p[1] + p[2]) / 2, room), d - room) if p[2] > p[1] else np.nan for p in parts],
        }
        summed = core.wavelengths(d, s.base)
        reserved = core.concatenated_wavelengths(r, s.base)
        with pn.io.hold():
            send_changes(self.width, width)
            self.width_plot.title.text = text(lang, "sum_width_title", d_model=d)
            self.width_plot.x_range.update(start=0, end=d)
            self.ladder.data = {"pair": np.arange(summed.size), "wavelength": summed,
                                "legend": [text(lang, "sum_ladder_sum", pairs=summed.size)] * summed.size}
            self.reserved.data = {"pair": np.arange(reserved.size), "wavelength": reserved,
                                  "legend": [text(lang, "sum_ladder_concat", pairs=reserved.size)] * reserved.size}
            for entry in self._legend_rows:
                entry.follow()
            # The ladder passage compares r/2 pairs with d_model/2: at either end of r there is nothing to compare,
            # and at r = 2 one rung has no climb and no steps.
            self.passage_or_note("ladder", self.ladder_note, "" if 2 < r < d else text(
                lang, "sum_ladder_none" if r == 0 else "sum_ladder_all" if r == d else "sum_ladder_one", d_model=d,
                pairs=summed.size, longest=number(summed[-1], 1)))
            self.ladder_plot.x_range.update(start=-0.5, end=summed.size - 0.5)
            self.ladder_plot.y_range.update(start=summed[0] / 1.6, end=summed[-1] * 1.6)

    # ----------------------------------------------------------------------
    # Cross terms: sizes, reserve and k
    # ----------------------------------------------------------------------

    def _tables(self) -> None:
        s = self.state
        key = (s.d_model, s.T, s.base)
        if key != self._table_key:
            self._pe = core.encoding(s.T, s.d_model, s.base)
            self._e = core.embeddings(s.T, s.d_model)
            self._table_key = key

    def cross_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """The sum's cross terms for every start at the current k (tables kept per size)."""
        self._tables()
        return core.cross_terms_by_start_of(self._e, self._pe, self.state.k)

    @param.depends("state.d_model", "state.T", "state.base", "state.reserve", "state.k", watch=True)
    def _update_cross(self) -> None:
        if not self.inputs_changed("cross", "d_model", "T", "base", "reserve", "k"):
            return
        s = self.state
        starts, cross = self.cross_terms()
        summed = float(core.relative_scores(s.k, s.d_model, s.base))
        concatenated = float(core.concatenated_scores(s.k, s.reserve, s.base))
        x0, x1 = -0.5, max(s.T - 1, 1) + 0.5
        nearest = min(summed, concatenated, key=abs)  # the level line closest to zero's: its label looks away
        sides = [label_side(summed), label_side(concatenated), label_side(-nearest)]
        levels = {
            "kind": ["sum", "concat", "zero"], "y": [summed, concatenated, 0.0],
            "x0": [x0] * 3, "x1": [x1] * 3,
            # Three labels that may sit close together: the sum's at the right, the concatenation's at the
            # left, each on the far side of its line from zero (a label of −0.990 above its line read as the zero
            # line's); the zero line's at the right, on the side away from the level line nearest to it.
            "x": [x1, x0, x1], "align": ["right", "left", "right"],
            "baseline": [side[0] for side in sides], "y_offset": [side[1] for side in sides],
            "label": [text(s.lang, "sum_level_sum", k=s.k, value=summed),
                      text(s.lang, "sum_level_concat", k=s.k, value=concatenated),
                      text(s.lang, "sum_level_zero")],
            "dash": ["dashed", "dotted", "solid"],
            "color": [PART_COLORS["shared"], PART_COLORS["position"], COLORS["ink"]],
        }
        values = np.concatenate([cross, [summed, concatenated, 0.0, s.d_model / 2]])
        low, high = float(values.min()), float(values.max())
        pad = 0.12 * max(high - low, 1.0)
        levels["label_narrow"] = [text(s.lang, f"sum_level_{kind}_narrow", k=s.k, value=value)
                                  for kind, value in zip(levels["kind"], levels["y"], strict=True)]
        # Each label on no dot: its own end and side if free, else another spot along its line; once for a
        # desktop's frame, once for a phone's.
        for suffix, frame_px, legend_px in (("", LABEL_FRAME_PX, LEGEND_PX),
                                            ("_narrow", NARROW_LABEL_FRAME_PX, NARROW_LEGEND_PX)):
            places = level_label_places(np.asarray(starts, dtype=float), np.asarray(cross, dtype=float), levels["y"],
                                        levels[f"label{suffix}"], ["right", "left", "right"], sides, (x0, x1),
                                        (low - pad, high + 2 * pad), frame_px, legend_px)
            levels.update({f"{column}{suffix}": [place[n] for place in places]
                           for n, column in enumerate(("x", "align", "baseline", "y_offset"))})
        with pn.io.hold():
            self.cross.data = {"m": starts, "cross": cross}
            send_changes(self.levels, levels)
            self.cross_plot.x_range.update(start=x0, end=x1)
            self.cross_plot.y_range.update(start=low - pad, end=high + 2 * pad)

    def live_values(self) -> dict[str, str]:
        s = self.state
        d, r = s.d_model, s.reserve
        summed = core.wavelengths(d, s.base)
        reserved = core.concatenated_wavelengths(r, s.base)
        _, cross = self.cross_terms()
        return {
            "d_model": str(d), "reserve": str(r), "meaning": str(d - r),
            "pairs": str(summed.size), "reserved_pairs": str(reserved.size),
            "longest": number(summed[-1], 1),
            "reserved_longest": number(reserved[-1], 1) if reserved.size else "—",
            "reserved_step": number(core.ladder_step(r, s.base), 2) if r else "—",
            "step": number(core.ladder_step(d, s.base), 2),
            "k": str(s.k),
            "S_sum": number(core.relative_scores(s.k, d, s.base), 3),
            "S_concat": number(core.concatenated_scores(s.k, r, s.base), 3),
            "half": number(d / 2, 0), "reserved_half": number(r / 2, 0),
            "cross_rms": number(float(np.sqrt(np.mean(cross ** 2))), 2) if cross.size else "—",
            "spread": number(core.cross_term_spread(s.k, d), 2),
        }

    def layout(self) -> list[pn.viewable.Viewable]:
        return [
            self.passage("intro"), self.control_panel(("d_model", "reserve", "base"), columns=3),
            pn.pane.Bokeh(self.width_plot, sizing_mode="stretch_width"), self.passage("ladder"), self.ladder_note,
            pn.pane.Bokeh(self.ladder_plot, sizing_mode="stretch_width"), self.passage("cross"),
            self.control_panel(("T", "k"), columns=2), pn.pane.Bokeh(self.cross_plot, sizing_mode="stretch_width"),
            self.passage("verdict"),
        ]
