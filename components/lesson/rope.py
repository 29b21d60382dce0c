"""Past the lesson, section «rope»: position inside the look (rotary position embedding).

The same seeded word ``e`` at every position and the same seeded head ``W_Q, W_K``
(``core.seeded_head``), two ways of giving it position:

* ``rope_plot``: rotary, ``(R_m q)·(R_n k)`` with ``q = W_Q e``, ``k = W_K e``
  (``core.rope_scores``): every diagonal one colour;
* ``additive_plot``: additive, ``(W_Q(e + PE_m))·(W_K(e + PE_n))`` (``core.additive_scores``):
  the diagonals change colour, since the cross terms see m and n apart;
* ``rope_clock_plot``: the selected pair of q turned to m = pos and of k turned to
  n = pos + k, as two hands, with the angle between them (it depends on n − m only).

Both matrices cover m, n < ``min(T, MOST_POSITIONS)``; the cell (pos, pos + k) is marked.

What is resent on a change:
* d_model, T, base: both matrices' scores (their m, n columns only when T changes which
  cells there are; at most 64 × 64 rows), a colour range when its rounded limit
  changes (``colour_limit``), then the hands;
* pair, pos, k: the marked cell (one row), the hands (two rows), the arc (one row)
  and the angle's text.
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, Range1d
from bokeh.plotting import figure

from app.model import core
from app.model.strings import number, positions, text
from components.figure_row import figure_row, fixed_figure_box
from components.figure_theme import PRESENT_FONT_SCALE
from components.ladder import PALETTE
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, LABEL_SIZE, MOVING, TICK_SIZE, readout, style_figure
from components.widgets import LiveHTML

#: Positions along each side of the two score matrices at most (64 × 64 cells each).
MOST_POSITIONS = 64
#: The seed of the word and the head, the same in both matrices.
SEED = 0
HAND_DECIMALS = 4
#: The colour scales' limits: one of these times a power of ten, so that many base and T steps keep the
#: scale (each change of a colour mapper's low or high makes the browser recolour every cell of its
#: matrix once more).
NICE_LIMITS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def matrix_data(scores: np.ndarray) -> dict[str, np.ndarray]:
    """One row per cell: ``m`` (row), ``n`` (column) and the score."""
    m, n = np.indices(scores.shape, dtype=np.int32)
    return {"m": m.ravel(), "n": n.ravel(), "score": scores.ravel()}


def colour_limit(top: float) -> float:
    """The smallest ``NICE_LIMITS`` value times a power of ten that is at least ``top`` (> 0), so a matrix
    whose largest |score| is ``top`` spans at least three quarters of its colour scale."""
    if not top > 0:
        return 1.0
    scale = 10.0 ** math.floor(math.log10(top))
    return next(scale * nice for nice in NICE_LIMITS if scale * nice >= top)


def diagonal_spread(scores: np.ndarray) -> float:
    """The largest change of the score along any diagonal (n − m fixed): 0 for a rotary matrix."""
    count = scores.shape[0]
    return max((float(np.ptp(np.diagonal(scores, offset))) for offset in range(-(count - 1), count)), default=0.0)


def pair_angle(vector: np.ndarray, pair: int) -> float:
    """Direction of pair ``pair`` of ``vector`` in its plane, radians (coordinate 2i on x, 2i+1 on y)."""
    return math.atan2(float(vector[2 * pair + 1]), float(vector[2 * pair]))


#: How far a hand's label sits from its tip, along the circle (screen pixels).
LABEL_GAP_PX = 16
#: Tips further than this from the vertical axis (|x| on the unit circle) get labels that run inwards.
SIDE = 0.3
#: Hands closer than this (radians) place their labels away from each other; further apart, a label
#: that runs inwards sits on the outer side of its own hand.
CLOSE = 0.7


def _label_places(start: float, end: float, k_ahead: bool, gap: float = LABEL_GAP_PX) -> dict[str, list]:
    """Screen offsets and alignments of the q and k hands' labels (hand angles ``start``, ``end``, radians;
    ``gap`` px from the tip).

    Near the top and bottom of the circle (|x| <= ``SIDE``) a label moves from its tip along the
    circle, away from the other hand (the hand ahead counterclockwise, the k hand if ``k_ahead``,
    counterclockwise; the other clockwise), and the text runs on in that direction. Further out,
    where it could run out of the figure, the text runs inwards, over the face. It then lies along its
    own hand, so when the hands are far apart (``CLOSE``) it sits on the side of the tip away from the
    horizontal axis, where its own hand, rising or falling to the centre, does not run under it; when
    they are close it moves away from the other hand's label instead, as at the top and bottom.
    """
    close = abs(math.remainder(end - start, 2 * math.pi)) < CLOSE
    places: dict[str, list] = {"dx": [], "dy": [], "align": []}
    for angle, ahead in ((start, not k_ahead), (end, k_ahead)):
        sign = 1.0 if ahead else -1.0
        tx, ty = -math.sin(angle) * sign, math.cos(angle) * sign  # unit tangent, away from the other hand
        side = abs(math.cos(angle)) > SIDE
        runs_right = math.cos(angle) < 0 if side else tx > 0
        # The text starts a gap beyond the tip in the direction it runs, so it never covers the tip.
        places["dx"].append(gap if runs_right else -gap)
        outer = -gap if math.sin(angle) >= 0 else gap
        places["dy"].append(outer if side and not close else round(-gap * ty, 1))  # screen y: down
        places["align"].append("left" if runs_right else "right")
    return places


class RotaryPosition(LessonSection):
    """Rotary against additive: the same word and head, the score matrices side by side."""

    slug = "rope"
    controls = ("d_model", "T", "base", "pair", "pos", "k")
    live_on = ("d_model", "T", "base", "pair", "pos", "k")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.rope = ColumnDataSource(name="rope_scores", data={"m": [], "n": [], "score": []})
        self.additive = ColumnDataSource(name="additive_scores", data={"m": [], "n": [], "score": []})
        self.cell = ColumnDataSource(name="rope_cell", data={"m": [], "n": []})
        self.hands = ColumnDataSource(name="rope_hands", data={"x": [], "y": [], "label": [], "color": [],
                                                               "dash": [], "marker": [], "dx": [], "dy": [],
                                                               "align": []})
        self.arc = ColumnDataSource(name="rope_arc", data={"start": [], "end": []})
        self._spreads = (0.0, 0.0)
        self._head: tuple[int, np.ndarray, np.ndarray] | None = None

        self.mappers = []
        self.figures = []
        for source, name, title in ((self.rope, "rope_plot", "rope_title"),
                                    (self.additive, "additive_plot", "additive_title")):
            mapper = LinearColorMapper(palette=PALETTE, low=-1, high=1, name=f"{name}_colors")
            fig = figure(name=name, title=text(lang, title), x_range=Range1d(-0.5, 1, name=f"{name}_n_range"),
                         y_range=Range1d(1, -0.5, name=f"{name}_m_range"), height=520, sizing_mode="stretch_width",
                         tools="", toolbar_location=None, match_aspect=True)
            cells = fig.rect(x="n", y="m", width=1, height=1, source=source, line_color=None,
                             fill_color={"field": "score", "transform": mapper}, name=f"{name}_cells")
            # A cell's square outline, a dark frame inside a light one: seen on the palette's pale middle and on
            # its dark ends alike, in either theme (the dark theme swaps the two: ``figure_theme.dark_color``).
            fig.rect(x="n", y="m", width=1, height=1, source=self.cell, fill_alpha=0, line_color="white",
                     line_width=7, level=MOVING, name=f"{name}_cell_halo")
            fig.rect(x="n", y="m", width=1, height=1, source=self.cell, fill_alpha=0, line_color=COLORS["ink"],
                     line_width=3, level=MOVING, name=f"{name}_cell_mark")
            fig.add_tools(HoverTool(renderers=[cells], tooltips=[
                ("m", "@m"), ("n", "@n"), (text(lang, "rope_hover_score"), "@score{0.0000}")]))
            fig.add_layout(ColorBar(color_mapper=mapper, title=text(lang, "rope_colorbar"), orientation="horizontal",
                                    height=14, location=(0, 0), major_label_text_font_size=TICK_SIZE,
                                    title_text_font_size=TICK_SIZE, name=f"{name}_colorbar"), "below")
            fig.xaxis.axis_label = text(lang, "rope_n")
            fig.yaxis.axis_label = text(lang, "rope_m")
            style_figure(fig, counts="xy")
            self.mappers.append(mapper)
            self.figures.append(fig)

        clock = self.clock_figure = figure(name="rope_clock_plot", title="", x_range=Range1d(-1.7, 1.7),
                                           y_range=Range1d(-1.7, 1.7), width=540, height=540, tools="",
                                           toolbar_location=None, match_aspect=True)
        clock.circle(x=0, y=0, radius=1, fill_color="#fafafa", line_color="#bbbbbb", line_width=2,
                     name="rope_clock_face")
        clock.annular_wedge(x=0, y=0, inner_radius=0, outer_radius=0.35, start_angle="start", end_angle="end",
                            source=self.arc, fill_color=COLORS["selected"], fill_alpha=0.35, line_color=None,
                            name="rope_arc_wedge")
        clock.segment(x0=0, y0=0, x1="x", y1="y", source=self.hands, line_color="color", line_width=5,
                      line_dash={"field": "dash"}, name="rope_hand_lines")
        clock.scatter(x="x", y="y", source=self.hands, marker={"field": "marker"}, size=20, fill_color="color",
                      line_color="white", line_width=2, name="rope_hand_tips")
        # Each label sits beside its tip on the side away from the other hand (``_label_places``), so the
        # two never cover each other however close the hands are.
        clock.text(x="x", y="y", text="label", source=self.hands, x_offset="dx", y_offset="dy",
                   text_align="align", text_baseline="middle",
                   text_font_size=LABEL_SIZE, text_font_style="bold", text_color="color",
                   background_fill_color="white", background_fill_alpha=0.8, name="rope_hand_labels")
        clock.xaxis.axis_label = "2i"
        clock.yaxis.axis_label = "2i + 1"
        style_figure(clock)
        self.angle = LiveHTML(name="rope_angle", sizing_mode="stretch_width")
        self.window = LiveHTML(name="rope_window", sizing_mode="stretch_width")
        # In place of the "compare" passage at T = 1: one cell, no diagonal with two cells to compare.
        self.one_cell_note = self.note_box("one_cell")

        self.matrices = pn.Column(
            figure_row(*(pn.pane.Bokeh(f, sizing_mode="stretch_width") for f in self.figures)),
            self.window, sizing_mode="stretch_width", name="rope_view")
        self.hands_view = figure_row(fixed_figure_box(clock), self.angle, name="rope_hands_view")
        self._update_sizes()
        self._update_title()

    def head(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(e, W_Q, W_K, q, k)`` of the seeded word and head, computed once per d_model."""
        d_model = self.state.d_model
        if self._head is None or self._head[0] != d_model:
            e, w_q, w_k = core.seeded_head(d_model, SEED)
            self._head = (d_model, (e, w_q, w_k, w_q @ e, w_k @ e))
        return self._head[1]

    @param.depends("state.d_model", "state.T", "state.base", watch=True)
    def _update_sizes(self) -> None:
        s = self.state
        e, w_q, w_k, q, k = self.head()
        count = min(s.T, MOST_POSITIONS)
        rope = core.rope_scores(q, k, count, s.base)
        additive = core.additive_scores(e, w_q, w_k, count, s.base)
        self._spreads = (diagonal_spread(rope), diagonal_spread(additive))
        self.passage_or_note("compare", self.one_cell_note, "" if s.T > 1 else text(s.lang, "rope_one_cell"))
        with pn.io.hold():
            send_changes(self.rope, matrix_data(rope))
            send_changes(self.additive, matrix_data(additive))
            for fig, mapper, scores in zip(self.figures, self.mappers, (rope, additive), strict=True):
                top = colour_limit(float(np.abs(scores).max()))
                mapper.update(low=-top, high=top)
                fig.x_range.update(start=-0.5, end=count - 0.5)
                fig.y_range.update(start=count - 0.5, end=-0.5)
            self.window.object = readout(s.lang, "rope_window", positions=positions(count - 1))
            self._update_hands()

    @param.depends("state.pair", "state.pos", "state.k", watch=True)
    def _update_hands(self) -> None:
        s = self.state
        _, _, _, q, k = self.head()
        m, n = s.pos, s.target
        count = min(s.T, MOST_POSITIONS)
        turned_q = core.rope_rotate(q, m, s.base)
        turned_k = core.rope_rotate(k, n, s.base)
        start, end = pair_angle(turned_q, s.pair), pair_angle(turned_k, s.pair)
        between = math.remainder(end - start, 2 * math.pi)  # in [−π, π]: the shorter way round
        inside = 0 <= m < count and 0 <= n < count
        with pn.io.hold():
            send_changes(self.cell, {"m": [m if inside else math.nan], "n": [n if inside else math.nan]})
            send_changes(self.hands, {
                "x": [round(math.cos(start), HAND_DECIMALS), round(math.cos(end), HAND_DECIMALS)],
                "y": [round(math.sin(start), HAND_DECIMALS), round(math.sin(end), HAND_DECIMALS)],
                "label": [text(s.lang, "rope_hand_q", m=m), text(s.lang, "rope_hand_k", n=n)],
                "color": [COLORS["pos"], COLORS["target"]],
                "dash": ["solid", "dashed"], "marker": ["circle", "square"],
                # In presentation the labels are PRESENT_FONT_SCALE times taller: as much further from the tips.
                **_label_places(start, end, k_ahead=between >= 0,
                                gap=LABEL_GAP_PX * (PRESENT_FONT_SCALE if s.present else 1))})
            lo, hi = (start, start + between) if between >= 0 else (start + between, start)
            send_changes(self.arc, {"start": [round(lo, HAND_DECIMALS)], "end": [round(hi, HAND_DECIMALS)]})
            # Radians as every other angle of the lesson; degrees beside them for the reader's eye.
            self.angle.object = readout(s.lang, "rope_angle", angle=between, degrees=math.degrees(between),
                                        offset=n - m)

    @param.depends("state.pair", watch=True)
    def _update_title(self) -> None:
        # m and n are on the hands' labels; the title names the pair only, so that it fits the figure in
        # presentation mode's type size too.
        self.clock_figure.title.text = text(self.state.lang, "rope_clock_title", pair=self.state.pair)

    def live_values(self) -> dict[str, str]:
        s = self.state
        count = min(s.T, MOST_POSITIONS)
        slowest = float(core.wavelengths(s.d_model, s.base)[-1])
        return {
            "rope_spread": f"{self._spreads[0]:.1e}",
            "additive_spread": f"{self._spreads[1]:.2f}",
            "last": str(count - 1),
            # Whole positions for a long wavelength; 2π ≈ 6.28 (d_model = 2) is not "6".
            "wavelength": number(slowest, 2 if slowest < 100 else 0),
            "base": f"{s.base:,}".replace(",", "\u202f"),
            "marked": self._marked(count),
        }

    def _marked(self, count: int) -> str:
        """Which cell the square outline marks, and why there is none on the figures when it lies beyond them."""
        s = self.state
        m, n = s.pos, s.target
        key = ("rope_ring_table" if not 0 <= n < s.T else
               "rope_ring_corner" if max(m, n) >= count else "rope_ring_inside")
        # text() prints the numbers with a true minus.
        return text(s.lang, key, m=m, n=n, count=count, positions=positions(s.T - 1))

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.passage("compare"), self.one_cell_note, self.control_panel(),
                self.matrices, self.passage("hands"), self.hands_view, self.passage("where")]
