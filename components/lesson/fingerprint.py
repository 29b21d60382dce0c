"""Lesson section 3, «one wave is ambiguous; many are a fingerprint».

The learner chooses which pairs take part (``pairs_from`` … ``pairs_to``) and
sees, for every position q of the table, how far ``PE_q`` is from ``PE_pos``
through those pairs only (``core.fingerprint_distances``): with the slowest
pair alone every bar lies on the floor, with all the pairs no other position
comes close. Below, the chosen pairs' hands at ``pos`` and at the closest other
position, as a row of dials: the lesson's odometer.

What is resent on a change:
* pos: the distances (not q), the two marks, the dials' hands, the live numbers;
* pairs_from / pairs_to: the same, the y range and the dials' faces if their number changed;
* d_model, T, base: everything.
"""

from __future__ import annotations

import html
import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, DataRange1d, HoverTool, Label, LabelSet, Range1d, Span
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model import core
from app.model.strings import number, text
from components.legend import detach_legends, moved_when_narrow, stacked_when_narrow
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.stylesheets import WIDGET_STYLESHEET
from components.theme import (
    COLORS,
    LABEL_SIZE,
    MOVING,
    WRAP,
    centres_wide_and_narrow,
    columns_when_narrow,
    html_pane,
    named_once,
    smaller_type_when_narrow,
    style_figure,
)

#: Dials drawn at most; more chosen pairs are sampled evenly (first and last always shown).
MAX_DIALS = 16
#: Centre-to-centre distance of two dials (radius 1).
DIAL_STEP = 2.6
#: On a phone, more than this many dials go in two rows (sixteen in one row were 16 px wide each at 390 px)…
ONE_ROW_ON_A_PHONE = 8
#: … this far apart, centre to centre: a dial's radius above and below, its number (11 pt, ~1.1 radii at a
#: phone's ~14 px a radius) under it, and a gap.
DIAL_ROW_STEP = 3.7
#: A hand's length, in dial radii.
HAND = 0.92
#: A dial's number hangs this far under its centre, in dial radii.
LABEL_BELOW = 1.15


#: The slowest wavelength at the lesson's sizes (d_model 32, base 10 000), for its claim about 3 and 300; one
#: decimal, as the lesson prints it (35 332.9).
LESSON_SLOW_WAVELENGTH = number(float(core.wavelengths(32, 10_000)[-1]), 1)


def short(value: float) -> str:
    """A distance for a label or the prose: 2 decimals from 1 up, 3 below, 2 significant digits below 0.01."""
    if value >= 1:
        return number(value, 2)
    if value >= 0.01:
        return number(value, 3)
    return "0" if value == 0 else f"{value:.2g}"


def nearest_label(lang: str, ties: tuple[int, ...], distance: float) -> str:
    """The closest positions' label: one position, or every one as close (pos - j and pos + j, in order)."""
    if len(ties) == 1:
        return text(lang, "fingerprint_nearest_label", q=ties[0], distance=short(distance))
    return text(lang, "fingerprint_nearest_label_ties", first=", ".join(map(str, ties[:-1])), last=ties[-1],
                distance=short(distance))


#: The dials' columns placed twice, for a desktop's one row and a phone's two (``_narrow``); and their frame's.
_DIAL_PLACES = ("cx", "cy")
_FRAME_SIDES = ("left", "right", "top", "bottom")


def dial_pairs(pairs_from: int, pairs_to: int) -> np.ndarray:
    """The pairs drawn as dials: all of ``pairs_from .. pairs_to``, or ``MAX_DIALS`` of them evenly spread."""
    count = pairs_to - pairs_from + 1
    if count <= MAX_DIALS:
        return np.arange(pairs_from, pairs_to + 1)
    return np.unique(np.rint(np.linspace(pairs_from, pairs_to, MAX_DIALS)).astype(int))


class Fingerprint(LessonSection):
    """Distances from PE_pos through a chosen range of pairs, presets for the lesson's claims, and the dials."""

    slug = "fingerprint"
    controls = ("pairs_from", "pairs_to", "pos", "d_model", "T")
    live_on = ("pairs_from", "pairs_to", "pos", "d_model", "T", "base")
    text_reads_state_only = True

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.distances = ColumnDataSource(name="fingerprint_distances", data={"q": [], "distance": []})
        self.marks = ColumnDataSource(name="fingerprint_marks", data={"q": [], "distance": [], "label": [],
                                                                      "marker": [], "color": [], "align": [],
                                                                      "dx": [], "label_y": []})
        self.dials = ColumnDataSource(name="fingerprint_dials", data={
            name: [] for name in ("pair", "label", "pos_angle", "near_angle",
                                  *(f"{name}{suffix}" for name in _DIAL_PLACES for suffix in ("", "_narrow")))})
        self.dials_frame = ColumnDataSource(name="fingerprint_dials_frame", data={
            f"{name}{suffix}": [] for name in _FRAME_SIDES for suffix in ("", "_narrow")})

        self.plot = figure(name="fingerprint_plot", title=text(lang, "fingerprint_plot_title"), height=380,
                           sizing_mode="stretch_width", x_range=Range1d(-0.5, 23.5), y_range=Range1d(0, 8.5),
                           tools="", toolbar_location=None)
        bars = self.plot.vbar(x="q", top="distance", width=0.8, source=self.distances, color=COLORS["bar"],
                              name="fingerprint_bars")
        self.pos_line = Span(dimension="height", location=0, line_color=COLORS["pos"], line_width=2,
                             line_dash="dashed", level=MOVING, name="fingerprint_pos_line")
        self.max_line = Span(dimension="width", location=8, line_color=COLORS["ink"], line_width=2,
                             line_dash="dotted", name="fingerprint_max_line")
        self.max_label = Label(x=-0.5, y=8, text="", text_font_size=LABEL_SIZE, x_offset=8,
                               y_offset=4, name="fingerprint_max_label", text_color=COLORS["ink"],
                               background_fill_color="white", background_fill_alpha=0.85)
        self.pos_label = Label(x=0, y=8, text="", text_font_size=LABEL_SIZE, text_color=COLORS["pos"], x_offset=6,
                               y_offset=4, level=MOVING, name="fingerprint_pos_label")
        for model in (self.pos_line, self.max_line, self.max_label, self.pos_label):
            self.plot.add_layout(model)
        # On a phone "ninguna pasa de 2√n = 8.00" ran into "pos = 0" over the frame's top.
        smaller_type_when_narrow(self.plot, [self.max_label, self.pos_label], "11pt", "fingerprint_label_size")
        # The closest position's label floats above every bar (it covered the bars beside q), joined to its
        # diamond by a dotted leader.
        self.plot.segment(x0="q", y0="distance", x1="q", y1="label_y", source=self.marks, line_color="color",
                          line_width=2, line_dash="dotted", level=MOVING, name="fingerprint_marks_leader")
        self.plot.scatter(x="q", y="distance", marker="marker", color="color", size=18, line_color="white",
                          source=self.marks, level=MOVING, name="fingerprint_marks_glyph")
        # An annotation added after the pos line, so that where they meet its box is drawn over the line.
        self.plot.add_layout(LabelSet(x="q", y="label_y", text="label", source=self.marks,
                                      text_font_size=LABEL_SIZE, text_color="color", text_align="align",
                                      x_offset="dx", y_offset=0, text_baseline="middle",
                                      background_fill_color="white", background_fill_alpha=0.85,
                                      level=MOVING, name="fingerprint_marks_text"))
        self.plot.add_tools(HoverTool(renderers=[bars], tooltips=[("q", "@q"),
                                                                  ("‖PE_pos − PE_q‖", "@distance{0.0000}")]))
        self.plot.xaxis.axis_label = text(lang, "fingerprint_x")
        self.plot.yaxis.axis_label = text(lang, "fingerprint_y")
        style_figure(self.plot, counts="x")

        self.dials_plot = figure(name="fingerprint_dials_plot", title="", height=250, sizing_mode="stretch_width",
                                 match_aspect=True, tools="", toolbar_location=None)
        frame = self.dials_plot.quad(left="left", right="right", top="top", bottom="bottom", source=self.dials_frame,
                                     fill_alpha=0, line_alpha=0, name="fingerprint_dials_frame_glyph")
        # Ranges follow the invisible frame only, so the dials stay round at any width.
        self.dials_plot.x_range = DataRange1d(renderers=[frame], range_padding=0)
        self.dials_plot.y_range = DataRange1d(renderers=[frame], range_padding=0)
        faces = self.dials_plot.circle(x="cx", y="cy", radius=1, source=self.dials, fill_color="#f4f4f4",
                                       line_color=COLORS["bar"], line_width=2, name="fingerprint_faces")
        # Rays from the centres, by angle: the same columns serve a desktop's row and a phone's two (a step of pos
        # sends two angles a dial, not four coordinates for each placement).
        self.near_hands = self.dials_plot.ray(x="cx", y="cy", length=HAND, angle="near_angle", source=self.dials,
                                              line_width=4, line_color=COLORS["target"], line_dash="dashed",
                                              legend_label=text(lang, "fingerprint_legend_near"),
                                              name="fingerprint_near_hands")
        pos_hands = self.dials_plot.ray(x="cx", y="cy", length=HAND, angle="pos_angle", source=self.dials,
                                        line_width=4, line_color=COLORS["pos"],
                                        legend_label=text(lang, "fingerprint_legend_pos"),
                                        name="fingerprint_pos_hands")
        # Each number a set distance under its dial's centre: the centres' columns (and their phone twins) place it.
        dial_labels = self.dials_plot.text(x="cx", y=dodge("cy", -LABEL_BELOW), text="label", source=self.dials,
                                           text_align="center", text_baseline="top", text_font_size=LABEL_SIZE,
                                           text_color=COLORS["ink"], name="fingerprint_dial_labels")
        # On a phone sixteen dials in a row were 16 px wide, "10" ran into "11" in 15 pt, "i = 0" off the figure's
        # left, and the key's one row off the screen: two rows of dials twice the size, numbered in 11 pt.
        smaller_type_when_narrow(self.dials_plot, [dial_labels.glyph], "11pt", "fingerprint_dial_label_size")
        columns_when_narrow(self.dials_plot, [
            (frame.glyph, {side: side for side in _FRAME_SIDES}),
            (faces.glyph, {"x": "cx", "y": "cy"}),
            (self.near_hands.glyph, {"x": "cx", "y": "cy"}),
            (pos_hands.glyph, {"x": "cx", "y": "cy"}),
            (dial_labels.glyph, {"x": "cx", "y": "cy"}),
        ], "fingerprint_dials_narrow")
        self.dials_plot.legend.location = "top_left"
        self.dials_plot.legend.orientation = "horizontal"
        self.dials_plot.legend.label_text_font_size = LABEL_SIZE
        self.dials_plot.legend.name = "fingerprint_dials_legend"
        stacked_when_narrow(self.dials_plot, self.dials_plot.legend[0])
        # Inside the frame, the stacked key lay over a phone's first row of dials: between the title and the
        # dials there, the figure 40 px taller to hold it.
        moved_when_narrow(self.dials_plot, self.dials_plot.legend[0], sides=("center", "above"), grow_px=40)
        detach_legends(self.dials_plot)
        # Hidden at T = 1, where there is no closest position to draw a hand for.
        [self.near_legend] = [item for item in self.dials_plot.legend[0].items
                              if item.label.value == text(lang, "fingerprint_legend_near")]
        self.dials_plot.axis.visible = False
        self.dials_plot.grid.visible = False
        style_figure(self.dials_plot)
        self.dials_note = self.note_box("dials")
        self.far_note = self.note_box("far")
        # In place of the "closest" passage when the table has one row (T = 1): there is no other position.
        self.alone_note = self.note_box("alone")

        self.buttons = []
        for key, handler in (("fingerprint_slowest", self.slowest_only), ("fingerprint_fastest", self.fastest_only),
                             ("fingerprint_all", self.all_pairs)):
            button = pn.widgets.Button(label=text(lang, key), color="primary", variant="outline",
                                       css_classes=[key], stylesheets=[WIDGET_STYLESHEET])
            button.on_click(lambda _event, handler=handler: handler())
            self.buttons.append(button)
        self.presets = pn.Row(html_pane(f'<p class="pe-readout">{html.escape(text(lang, "fingerprint_presets"))}:</p>'),
                              *self.buttons, sizing_mode="stretch_width", name="fingerprint_presets",
                              styles=WRAP)

        self._update_table()

    # ---- presets -------------------------------------------------------------
    def slowest_only(self) -> None:
        last = self.state.d_model // 2 - 1
        self.state.param.update(pairs_from=last, pairs_to=last)

    def fastest_only(self) -> None:
        self.state.param.update(pairs_from=0, pairs_to=0)

    def all_pairs(self) -> None:
        self.state.param.update(pairs_from=0, pairs_to=self.state.d_model // 2 - 1)

    # ---- data ------------------------------------------------------------------
    def _distances(self) -> np.ndarray:
        s = self.state
        return core.fingerprint_distances(s.pos, s.T, s.d_model, s.base, s.pairs_from, s.pairs_to)

    def nearest(self) -> tuple[int, float] | None:
        """The other position closest to pos through the chosen pairs, and its distance (None when T = 1)."""
        return core.nearest_other(self._distances(), self.state.pos)

    @param.depends("state.d_model", "state.T", "state.base", watch=True)
    def _update_table(self) -> None:
        with pn.io.hold():
            self.plot.x_range.update(start=-0.5, end=self.state.T - 0.5)
            self._update_choice()

    @param.depends("state.pos", "state.pairs_from", "state.pairs_to", watch=True)
    def _update_choice(self) -> None:
        if not self.inputs_changed("choice", "pos", "pairs_from", "pairs_to", "d_model", "T", "base"):
            return
        s = self.state
        lang = s.lang
        distances = self._distances()
        ties = core.nearest_others(distances, s.pos)
        nearest = None if ties is None else (ties[0][0], ties[1])
        top = 2.0 * math.sqrt(s.pairs_to - s.pairs_from + 1)
        with pn.io.hold():
            send_changes(self.distances, {"q": np.arange(s.T), "distance": distances})
            rows = [(s.pos, 0.0, "", "inverted_triangle", COLORS["pos"], "left", 12, 0.0)]
            # Above the tallest bar, by a tenth of the scale (the label's half height at the figure's size); when
            # that reaches the maximum's line, a row above the line's own labels.
            above = float(distances.max()) + 0.1 * top
            above = above if above <= 0.85 * top else 1.24 * top
            if nearest is not None:
                q, d = nearest
                # The label reads away from pos, unless the figure's edge on that side is too close to
                # hold it; then towards pos, its box drawn over the pos line.
                room = q if q < s.pos else s.T - 1 - q
                left = (q < s.pos) == (room >= 0.25 * s.T)
                rows.append((q, d, nearest_label(lang, ties[0], d), "diamond", COLORS["target"],
                             "right" if left else "left", -12 if left else 12, above))
                # pos - j and pos + j are equally far: each gets its diamond, the one label names both.
                rows.extend((other, d, "", "diamond", COLORS["target"], "left", 0, d) for other in ties[0][1:])
            send_changes(self.marks, {name: [row[j] for row in rows] for j, name in
                                      enumerate(("q", "distance", "label", "marker", "color", "align", "dx",
                                                 "label_y"))})
            self.pos_line.location = s.pos
            self.plot.y_range.update(start=0, end=top * (1.36 if above > top else 1.14))
            self.max_line.location = top
            # The maximum's label sits at the edge away from pos, so the dashed pos line never crosses it;
            # the pos label reads away from the nearer edge, so it is never cut off.
            right = s.pos >= (s.T - 1) / 2
            # Above its line, as the pos label: below it, it lay over the tallest bars.
            self.max_label.update(x=-0.5 if right else s.T - 0.5, text_align="left" if right else "right",
                                  x_offset=8 if right else -8, y=top,
                                  text=text(lang, "fingerprint_max_label", value=short(top)))
            self.pos_label.update(x=s.pos, y=top, text_align="right" if right else "left",
                                  x_offset=-6 if right else 6,
                                  text=text(lang, "fingerprint_pos_label", pos=s.pos))
            self.far_note.object = f'<p class="nt">{html.escape(self.far_note_text())}</p>'
            self.passage_or_note("closest", self.alone_note,
                                 "" if nearest is not None else text(lang, "fingerprint_no_other"))
            self._update_dials(nearest)

    def _update_dials(self, nearest: tuple[int, float] | None) -> None:
        s = self.state
        pairs = dial_pairs(s.pairs_from, s.pairs_to)
        positions = [s.pos] if nearest is None else [s.pos, nearest[0]]
        rows = core.encoding_rows(np.asarray(positions, dtype=np.float64), s.d_model, s.base)
        # A hand points at (PE[., 2i], PE[., 2i+1]) = (sin, cos): 12 o'clock at angle 0, clockwise, like a clock;
        # as Bokeh's angle (anticlockwise from 3 o'clock), atan2(cos, sin).
        angles = np.round(np.arctan2(rows[:, 2 * pairs + 1], rows[:, 2 * pairs]), 6)
        places, frames = {}, {}
        for suffix, (cx, cy) in centres_wide_and_narrow(pairs.size, ONE_ROW_ON_A_PHONE, DIAL_STEP,
                                                         DIAL_ROW_STEP).items():
            places.update({f"cx{suffix}": cx, f"cy{suffix}": cy})
            # Room above the first row for the key on a desktop (a phone's is above the frame), and under the last
            # row for its numbers: ~0.8 radii at a desktop's 26 px a radius, ~1.1 on a phone.
            frames.update({f"left{suffix}": [-1.4], f"right{suffix}": [float(cx.max()) + 1.4],
                           f"top{suffix}": [1.3 if suffix else 1.9],
                           f"bottom{suffix}": [float(cy.min()) - (2.4 if suffix else 1.9)]})
        send_changes(self.dials, {
            # "i = " once, then numbers only: sixteen "i = 10" labels ran into each other on a narrow page.
            "pair": pairs, "label": named_once(text(s.lang, "fingerprint_dial_label", pair=int(pairs[0])),
                                               map(str, pairs[1:].tolist())),
            # With no other position there is no second hand: it points with the first, hidden.
            "pos_angle": angles[0], "near_angle": angles[-1], **places})
        self.near_hands.visible = nearest is not None
        self.near_legend.visible = nearest is not None
        send_changes(self.dials_frame, frames)
        self.dials_plot.title.text = (text(s.lang, "fingerprint_dials_title_alone", pos=s.pos) if nearest is None
                                      else text(s.lang, "fingerprint_dials_title", pos=s.pos, q=nearest[0]))
        count = s.pairs_to - s.pairs_from + 1
        note = text(s.lang, "fingerprint_dials_sampled", shown=pairs.size, count=count)
        self.dials_note.object = "" if count <= MAX_DIALS else f'<p class="nt">{html.escape(note)}</p>'

    # ---- prose -----------------------------------------------------------------
    def describe(self) -> str:
        s = self.state
        nearest = self.nearest()
        if nearest is None:
            return text(s.lang, "describe_fingerprint_alone", pairs_from=s.pairs_from, pairs_to=s.pairs_to, pos=s.pos)
        return text(s.lang, "describe_fingerprint", pairs_from=s.pairs_from, pairs_to=s.pairs_to, pos=s.pos,
                    q=nearest[0], distance=number(nearest[1], 3),
                    largest=number(2.0 * math.sqrt(s.pairs_to - s.pairs_from + 1), 3))

    def live_values(self) -> dict[str, str]:
        s = self.state
        last = s.d_model // 2 - 1
        nearest = self.nearest()
        slow_omega = float(core.frequencies(s.d_model, s.base)[-1])
        return {
            # "pair 15 alone", not "pairs 15 … 15 (1 in all)" (the "slowest pair only" button).
            "chosen_pairs": text(s.lang, "fingerprint_chosen_one", first=s.pairs_from) if s.pairs_from == s.pairs_to
            else text(s.lang, "fingerprint_chosen_many", first=s.pairs_from, last=s.pairs_to,
                      count=s.pairs_to - s.pairs_from + 1),
            "every_pair": (text(s.lang, "fingerprint_every_pair", pairs=last + 1) if last > 0
                           else text(s.lang, "fingerprint_every_pair_one")),
            "pos": str(s.pos),
            "T": str(s.T),
            "nearest_q": "—" if nearest is None else str(nearest[0]),
            "nearest_distance": "—" if nearest is None else short(nearest[1]),
            "max_distance": short(2.0 * math.sqrt(s.pairs_to - s.pairs_from + 1)),
            "slow_pair": str(last),
            "slow_wavelength": number(2 * math.pi / slow_omega, 1),
            "lesson_slow_wavelength": LESSON_SLOW_WAVELENGTH,
            "slow_angle": short(297 * slow_omega),
            "slow_3_300": short(float(core.fingerprint_distance(3, 300, s.d_model, s.base, last, last))),
            "all_3_300": short(float(core.fingerprint_distance(3, 300, s.d_model, s.base))),
            "all_max": short(2.0 * math.sqrt(last + 1)),
            "chosen_3_300": short(float(core.fingerprint_distance(3, 300, s.d_model, s.base, s.pairs_from,
                                                                  s.pairs_to))),
        }

    def far_note_text(self) -> str:
        """Whether position 300 is a bar of the figure, for the 3-against-300 numbers."""
        s = self.state
        return text(s.lang, "fingerprint_far_inside" if s.T > 300 else "fingerprint_far_outside", T=s.T)

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(), self.presets,
                pn.pane.Bokeh(self.plot, sizing_mode="stretch_width"), self.passage("closest"), self.alone_note,
                self.passage("numbers"), self.far_note, pn.pane.Bokeh(self.dials_plot, sizing_mode="stretch_width"),
                self.dials_note, self.passage("odometer"), self.passage("try")]
