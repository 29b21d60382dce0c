"""The pair clocks: every pair of coordinates is a wheel turning at its own speed.

The lesson's odometer picture. Pair ``i`` is a clock whose hand tip *is* the
pair's two coordinates, ``x = PE[pos, 2i] = sin(theta)``, ``y = PE[pos, 2i+1] =
cos(theta)`` with ``theta = omega_i * pos``: the hand starts at 12 o'clock and
turns clockwise as ``pos`` grows. A second hand shows ``pos + k`` and a wedge
the net arc ``omega_i * k`` between the two (its direction follows the sign of k).

Three figures and a matrix:
* a row of up to ``ROW_SIZE`` clocks around the selected pair, fast on the left;
* a strip of tiny clocks for *all* pairs (only the ``pos`` hand), with the span
  of the row outlined and the selected pair marked;
* the selected pair's clock, large, with axes in PE coordinates, next to its
  2x2 block of ``M_k`` applied to ``PE[pos]``;
* (the page's play control, ``components.animation``, advances ``pos`` so the clocks run).

What is resent on a change (sources split by the parameters they depend on):
* d_model, base: every face (row and strip) and then every hand;
* pair: the row's faces and hands only when the row window moves, the strip's
  span and selected mark, the big clock's hands, title and the block;
* pos: the row's hands (9 clocks), the strip's hand angles (one float32 per
  pair, as a single-column update), the big clock's hands and the block;
* k: the row's hands, the big clock's hands and the block; the strip not at all.
T changes nothing here (``pos`` is clamped by the state, which then counts as a
``pos`` change).
"""

from __future__ import annotations

import html
import math
from functools import lru_cache

import numpy as np
import panel as pn
import param
from bokeh.core.property.vectorization import value
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    DataRange1d,
    IndexFilter,
    Label,
    Legend,
    LegendItem,
    LinearInterpolator,
)
from bokeh.plotting import figure
from bokeh.transform import dodge, transform

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import minus_sign, significant, text
from components.describe import Description
from components.legend import detach_legends, stacked_when_narrow
from components.sources import send_changes
from components.theme import (
    COLORS,
    MOVING,
    WRAP,
    centres_wide_and_narrow,
    columns_when_narrow,
    html_pane,
    named_once,
    smaller_type_when_narrow,
    style_figure,
)
from components.widgets import LiveHTML

#: Clocks in the row at most: readable at 1280 px next to the sidebar.
ROW_SIZE = 9
#: Distance between two clock centres in the row, in clock radii.
ROW_SPACING = 2.6
#: On a phone, more clocks than this go in two rows (nine in one row were 30 px across at 390 px) …
ONE_ROW_ON_A_PHONE = 5
#: … this far apart, centre to centre, in radii: a face's radius above and below, its numbers (11 pt, ~0.55 radii
#: at a phone's ~27 px a radius) over and under it, and a gap.
PHONE_ROW_STEP = 3.7
#: How much taller the row's figure is on a phone, for its second row and its key's three lines.
PHONE_GROW_PX = 80
#: Tiny clocks per line of the strip; 512 pairs make 8 lines.
STRIP_COLUMNS = 64
STRIP_RADIUS = 0.42
#: Radius of the wedge that marks the arc omega*k (the face has radius 1).
ARC_RADIUS = 0.55
#: Decimals of the small columns resent on every step of k or pos (hand tips, arc
#: angles), sent as JSON lists: 1e-3 of a clock's radius is a sixth of a pixel on
#: the large clock, and nine short numbers cost a fraction of a binary buffer
#: (its own header frame, a reference object and the payload frame).
SENT_DECIMALS = 3
FACE_COLOR = "#bbbbbb"
FACE_FILL = "#fafafa"
LABEL_SIZE = "13pt"
TWO_PI = 2.0 * math.pi


# --------------------------------------------------------------------------
# Geometry: pure functions of the state's numbers (tested without a browser).
# --------------------------------------------------------------------------

def row_window(pair: int, pairs: int, size: int = ROW_SIZE) -> tuple[int, int]:
    """``(start, stop)`` of the pairs in the row: ``size`` of them around ``pair``, clamped at the ends."""
    start = min(max(pair - size // 2, 0), max(pairs - size, 0))
    return start, min(pairs, start + size)


def bokeh_angle(theta: np.ndarray) -> np.ndarray:
    """Bokeh's direction (radians anticlockwise from +x) of a clock hand at angle ``theta``.

    The clock measures clockwise from 12 o'clock, so the direction is
    ``pi/2 - theta``; wrapped into ``[0, 2 pi)`` first so that float32 keeps
    its precision for the huge angles of fast pairs at large ``pos``.
    """
    return np.mod(0.5 * np.pi - np.asarray(theta, dtype=np.float64), TWO_PI)


def arc_angles(theta_pos: np.ndarray, turn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (Bokeh angles, drawn anticlockwise) of the net arc from ``theta_pos`` by ``turn``.

    ``turn = omega * k`` may span several full turns; only what is left over
    (with the sign of ``k``) is drawn: clockwise from the ``pos`` hand when
    ``k > 0``, anticlockwise when ``k < 0``.
    """
    turn = np.asarray(turn, dtype=np.float64)
    net = np.sign(turn) * np.mod(np.abs(turn), TWO_PI)
    start = bokeh_angle(theta_pos)
    # Bokeh draws anticlockwise from start to end: for a clockwise (k > 0)
    # arc that is from the pos+k hand back to the pos hand.
    return start - np.maximum(net, 0.0), start - np.minimum(net, 0.0)


def format_wavelength(wavelength: float) -> str:
    """A wavelength short enough to sit under a small clock: 6.3, 19.9, 35 333."""
    if wavelength < 1000:
        return f"{wavelength:.1f}"
    return f"{wavelength:,.0f}".replace(",", "\u2009")


def row_places(count: int) -> dict[str, list[float]]:
    """The centres of a row of ``count`` clocks: ``x``, ``y`` in one line (a desktop), and their ``_narrow`` twins in
    up to two lines (a phone, ``ONE_ROW_ON_A_PHONE``), the first the longer."""
    places = {}
    for suffix, (x, y) in centres_wide_and_narrow(count, ONE_ROW_ON_A_PHONE, ROW_SPACING, PHONE_ROW_STEP).items():
        places[f"x{suffix}"], places[f"y{suffix}"] = short(x), short(y)
    return places


def row_frame(places: dict[str, list[float]]) -> dict[str, list[float]]:
    """The box the row's figure shows around the clocks of ``row_places`` (at least one) and their numbers, for
    each placement: 1.3 radii beside the outer faces, 1.7 above and under the outer rows' centres."""
    frame = {}
    for suffix in ("", "_narrow"):
        x, y = places[f"x{suffix}"], places[f"y{suffix}"]
        frame.update({f"left{suffix}": [min(x) - 1.3], f"right{suffix}": [round(max(x) + 1.3, 6)],
                      f"top{suffix}": [max(y) + 1.7], f"bottom{suffix}": [round(min(y) - 1.7, 6)]})
    return frame


def row_faces(start: int, stop: int, pair: int, d_model: int, base: float, lang: str) -> dict[str, list]:
    """The row's static part: one face per pair in ``start .. stop-1`` with its labels."""
    pairs = np.arange(start, stop)
    lam = core.wavelengths(d_model, base)[start:stop]
    selected = pairs == pair
    return {
        "pair": pairs.tolist(),
        **row_places(pairs.size),
        "pair_label": [text(lang, "clock_pair_label", pair=int(i)) for i in pairs],
        # "λ = 6.3  11.2  19.9 …": the name once, so that the numbers fit between the clocks on a narrow
        # page and in presentation mode's double type.
        "wavelength_label": named_once(text(lang, "clock_wavelength", wavelength=format_wavelength(lam[0])),
                                       map(format_wavelength, lam[1:])) if lam.size else [],
        "line_color": [COLORS["selected"] if s else FACE_COLOR for s in selected],
        "line_width": [4.0 if s else 2.0 for s in selected],
        "label_color": [COLORS["selected"] if s else COLORS["ink"] for s in selected],
    }


def short(values: np.ndarray) -> list[float]:
    """``values`` rounded to ``SENT_DECIMALS`` as a list (sent as short JSON numbers)."""
    return np.round(np.asarray(values, dtype=np.float64), SENT_DECIMALS).tolist()


def row_hands(start: int, stop: int, pos: int, k: int, d_model: int, base: float) -> dict[str, list]:
    """The row's moving part: both hands and the arc of every pair in ``start .. stop-1``, and the clocks' centres.

    A hand is a ray of one radius from its clock's centre towards the encoding's own coordinates, read from
    ``core.encoding_rows``: the ``pos`` hand of pair i ends at ``centre + (PE[pos, 2i], PE[pos, 2i+1])`` (sin, cos:
    12 o'clock at 0, clockwise), which as Bokeh's angle (anticlockwise from 3 o'clock) is
    ``atan2(PE[pos, 2i+1], PE[pos, 2i])``, rounded to ``SENT_DECIMALS``. By angle, so that a phone's placement of
    the clocks (``row_places``) needs twins of the centres only, not of every tip.
    """
    rows = core.encoding_rows(np.array([pos, pos + k], dtype=np.float64), d_model, base)
    angles = np.arctan2(rows[:, 2 * start + 1:2 * stop:2], rows[:, 2 * start:2 * stop:2])
    arc_start, arc_end = arc_angles(core.angles(pos, d_model, base)[start:stop],
                                    core.angles(k, d_model, base)[start:stop])
    return {
        "pair": list(range(start, stop)), **row_places(stop - start),
        "pos_angle": short(angles[0]), "target_angle": short(angles[1]),
        "arc_start": short(arc_start), "arc_end": short(arc_end),
    }


def strip_shape(pairs: int) -> tuple[int, int]:
    """``(columns, lines)`` of the strip: at most ``STRIP_COLUMNS`` tiny clocks per line."""
    columns = min(pairs, STRIP_COLUMNS)
    return columns, -(-pairs // columns)


def strip_place(pairs: np.ndarray | int, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre of each pair's tiny clock: reading order, line 0 at the top (y = 0, -1, ...)."""
    pairs = np.asarray(pairs)
    return (pairs % columns).astype(np.float32), (-(pairs // columns)).astype(np.float32)


def strip_faces(pos: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """Every pair's tiny clock: centre and the direction of its ``pos`` hand."""
    pairs = np.arange(d_model // 2)
    x, y = strip_place(pairs, strip_shape(pairs.size)[0])
    return {"pair": pairs.astype(np.int32), "x": x, "y": y, **strip_hands(pos, d_model, base)}


#: The strip's hands point in one of this many directions (1.4 degrees apart: a third
#: of a pixel at the tip of a tiny clock's hand), so a direction is one byte.
STRIP_DIRECTIONS = 256
#: Up to this many pairs the strip's codes travel as a JSON list; beyond, as a uint8 buffer.
STRIP_LIST_PAIRS = 64


def strip_hands(pos: int, d_model: int, base: float) -> dict[str, np.ndarray | list[int]]:
    """The only column of the strip that moves with ``pos``: each hand's direction as a code.

    Code ``c`` is the Bokeh angle ``c * 2 pi / STRIP_DIRECTIONS`` (the figure's
    ``LinearInterpolator`` turns it back into an angle in the browser), the
    nearest to the hand's exact direction. 512 pairs send 512 bytes, not 2 KB.
    """
    turns = bokeh_angle(core.angles(pos, d_model, base)) / TWO_PI
    codes = (np.rint(turns * STRIP_DIRECTIONS) % STRIP_DIRECTIONS).astype(np.uint8)
    return {"angle_code": codes.tolist() if codes.size <= STRIP_LIST_PAIRS else codes}


def strip_span(start: int, stop: int, columns: int) -> dict[str, list[float]]:
    """Rectangles around the row's pairs on the strip: one per strip line the window touches."""
    rects: dict[str, list[float]] = {"left": [], "right": [], "top": [], "bottom": []}
    first = start
    while first < stop:
        line = first // columns
        last = min(stop, (line + 1) * columns) - 1
        rects["left"].append(first % columns - 0.5)
        rects["right"].append(last % columns + 0.5)
        rects["top"].append(-line + 0.5)
        rects["bottom"].append(-line - 0.5)
        first = last + 1
    return rects


def strip_line_labels(pairs: int, columns: int) -> dict[str, list]:
    """The first pair of every strip line, written at its left end."""
    firsts = list(range(0, pairs, columns))
    if len(firsts) == 1:
        firsts = []  # one line needs no line numbers
    return {"x": [-0.7] * len(firsts), "y": [-float(i // columns) for i in firsts], "text": [str(i) for i in firsts]}


def pair_clock_hands(pair: int, pos: int, k: int, d_model: int, base: float) -> dict[str, list]:
    """The large clock: tips of its two hands and the arc between them, as one source.

    Row ``j`` is the hand of ``p = pos, pos + k``; its tip is ``(PE[p, 2i], PE[p, 2i+1])``.
    The arc from the ``pos`` hand by ``omega_i * k`` is drawn from the first row only
    (the second repeats it): one source, so a step sends one event, not two.
    Rounded to ``SENT_DECIMALS`` (1e-3 of the radius: a sixth of a pixel on the large clock).
    """
    rows = core.encoding_rows(np.array([pos, pos + k], dtype=np.float64), d_model, base)
    start, end = arc_angles(core.angles(pos, d_model, base)[pair], core.angles(k, d_model, base)[pair])
    return {
        "hand": ["pos", "target"],
        "position": [pos, pos + k],
        "x": short(rows[:, 2 * pair]),
        "y": short(rows[:, 2 * pair + 1]),
        "arc_start": short([start, start]),
        "arc_end": short([end, end]),
        "color": [COLORS["pos"], COLORS["target"]],
        # The pos+k hand is drawn thinner on top, so both show when they coincide (slow pairs).
        "width": [9.0, 4.0],
    }


def arc_label(lang: str, turn: float) -> tuple[str, str]:
    """``omega k`` in radians, and (second line, empty under one turn) as whole turns plus the rest."""
    turns = int(abs(turn) // TWO_PI)
    arc = text(lang, "clock_arc", angle=significant(turn, 4))
    if turns == 0:
        return arc, ""
    return arc, text(lang, "clock_arc_turns", sign="" if turn > 0 else "\u2212", turns=turns,
                     rest=abs(turn) - turns * TWO_PI)


def _number(x: float) -> str:
    # Typographic minus so that the columns of the matrix line up and read as numbers.
    return minus_sign(f"{x:.4f}")


#: The block's look. The markup is resent on every step of k, pos or pair, so
#: cells are styled by their place (it lives in the block's own shadow root)
#: and the optional end tags are left out. Row 1: matrix, matrix, ·, PE[pos],
#: =, product; row 2 (the operators span both rows): matrix, matrix, PE[pos],
#: product; row 3: the captions (the first spans two columns: PE[pos] is its 3rd cell).
#: The matrix and the vectors sit between square brackets, as on the board (bars read as a
#: determinant): a side's border is the bracket's upright, a short stroke drawn as a background
#: at its top or bottom corner is its serif.
BLOCK_CSS = f"""
h3 {{ font-size: 1.25rem; margin: 0.3em 0 0.5em 0; }}
p {{ font-size: 1.15rem; line-height: 1.4; }}
table {{ border-collapse: collapse; font-size: 1.1rem; font-variant-numeric: tabular-nums;
         --pe-serif: linear-gradient(var(--pe-ink), var(--pe-ink)); }}
td {{ padding: 0.15em 0.45em; text-align: right; }}
tr:not(:last-child) td:first-child,
tr:first-child td:is(:nth-child(4), :nth-child(6)),
tr:nth-child(2) td:is(:nth-child(3), :nth-child(4)) {{ border-left: 2px solid var(--pe-ink); }}
tr:not(:last-child) td:nth-child(2),
tr:first-child td:is(:nth-child(4), :nth-child(6)),
tr:nth-child(2) td:is(:nth-child(3), :nth-child(4)) {{ border-right: 2px solid var(--pe-ink); }}
tr:first-child td:first-child {{ background: var(--pe-serif) left top / 0.4em 2px no-repeat; }}
tr:nth-child(2) td:first-child {{ background: var(--pe-serif) left bottom / 0.4em 2px no-repeat; }}
tr:first-child td:nth-child(2) {{ background: var(--pe-serif) right top / 0.4em 2px no-repeat; }}
tr:nth-child(2) td:nth-child(2) {{ background: var(--pe-serif) right bottom / 0.4em 2px no-repeat; }}
tr:first-child td:is(:nth-child(4), :nth-child(6)) {{
  background: var(--pe-serif) left top / 0.4em 2px no-repeat, var(--pe-serif) right top / 0.4em 2px no-repeat; }}
tr:nth-child(2) td:is(:nth-child(3), :nth-child(4)) {{
  background: var(--pe-serif) left bottom / 0.4em 2px no-repeat,
              var(--pe-serif) right bottom / 0.4em 2px no-repeat; }}
td[rowspan] {{ font-size: 1.5rem; padding: 0 0.4em; text-align: center; }}
tr:last-child td {{ font-size: 0.95rem; text-align: center; padding-top: 0.4em; color: var(--pe-muted); }}
tr:last-child td:nth-child(3) {{ color: var(--pe-t-pos-text, {COLORS["pos"]}); }}
tr:last-child td:nth-child(5) {{ color: var(--pe-t-target-text, {COLORS["target_text"]}); }}
/* A phone held upright: the whole product on the screen (at 1.1rem it needs ~480 px and scrolled inside). */
@media (max-width: 480px) {{
  table {{ font-size: 0.8rem; }}
  td {{ padding: 0.1em 0.2em; }}
  td[rowspan] {{ font-size: 1.1rem; padding: 0 0.15em; }}
  tr:last-child td {{ font-size: 0.75rem; }}
}}
"""


def block_html(lang: str, pair: int, pos: int, k: int, d_model: int, base: float) -> str:
    """The 2x2 block of M_k written out, applied to pair ``pair`` of ``PE[pos]``.

    The right-hand side is the matrix product itself; the line below gives
    ``PE[pos + k]`` straight from the formula so the two can be compared.
    """
    block = core.rotation_block(pair, k, d_model, base)
    rows = core.encoding_rows(np.array([pos, pos + k], dtype=np.float64), d_model, base)
    before, direct = rows[0, 2 * pair:2 * pair + 2], rows[1, 2 * pair:2 * pair + 2]
    after = block @ before
    esc = html.escape
    m, b, a = ([_number(x) for x in row] for row in (block.ravel(), before, after))
    table = (
        f"<table><tr><td>{m[0]}<td>{m[1]}<td rowspan=2>·<td>{b[0]}<td rowspan=2>=<td>{a[0]}"
        f"<tr><td>{m[2]}<td>{m[3]}<td>{b[1]}<td>{a[1]}"
        f'<tr><td colspan=2>{esc(text(lang, "block_caption_matrix", pair=pair, k=k))}<td>'
        f'<td>{esc(text(lang, "block_caption_pos", pos=pos))}<td>'
        f'<td>{esc(text(lang, "block_caption_target", target=pos + k))}</table>'
    )
    check = text(lang, "block_check", target=pos + k, sin=_number(direct[0]), cos=_number(direct[1]),
                 error=float(np.max(np.abs(after - direct))))
    # A minus sign (not a hyphen) in "1.1e-16", so the line never breaks inside the number.
    check = check.replace("e-", "e\u2212")
    return f'<h3>{esc(text(lang, "block_title", pair=pair, k=k))}</h3>{table}<p>{esc(check)}'


# --------------------------------------------------------------------------
# The view.
# --------------------------------------------------------------------------

def _clock_figure(name: str, height: int, frame: ColumnDataSource, **options) -> figure:
    """A figure whose ranges fit ``frame`` (an invisible rectangle) with equal x and y scales.

    ``match_aspect`` only works with data ranges, so the ranges follow the
    frame renderer alone (hands and labels never move them) and the clocks
    stay round whatever width the page gives the figure.
    """
    options.setdefault("sizing_mode", "stretch_width")
    fig = figure(name=name, height=height, match_aspect=True, tools="", toolbar_location=None, **options)
    box = fig.quad(left="left", right="right", top="top", bottom="bottom", source=frame, fill_alpha=0,
                   line_alpha=0, name=f"{name}_frame")
    fig.x_range = DataRange1d(renderers=[box], range_padding=0)
    fig.y_range = DataRange1d(renderers=[box], range_padding=0)
    fig.axis.visible = False
    fig.grid.visible = False
    fig.min_border_left = fig.min_border_right = fig.min_border_top = 10
    return style_figure(fig)


def _heading(lang: str, key: str) -> pn.pane.HTML:
    """A figure's title as HTML, which wraps on a narrow page where a Bokeh title would be cut."""
    return html_pane(f'<h3 class="pe-figure-title">{html.escape(text(lang, key))}</h3>', sizing_mode="stretch_width")


@lru_cache(maxsize=64)
def pair_frequency(d_model: int, base: float, pair: int) -> float:
    """ωᵢ of one pair (``core.frequencies``), kept: a step of pos or k does not change it."""
    return float(core.frequencies(d_model, base)[pair])


def describe(state: ExplorerState) -> str:
    """What the selected pair's clock shows now, in a sentence (the clocks' text alternative)."""
    s = state
    omega = pair_frequency(s.d_model, s.base, s.pair)
    return text(s.lang, "describe_clocks", pair=s.pair, omega=omega, wavelength=TWO_PI / omega, pos=s.pos,
                target=s.target,
                theta=(omega * s.pos) % TWO_PI, theta_target=(omega * s.target) % TWO_PI,
                arc=omega * s.k)


class PairClocks(pn.viewable.Viewer):
    """One clock per pair, the selected pair's clock large, and its block of M_k."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        lang = state.lang
        self._window = (-1, -1)  # so the first _update_window always draws

        # -- the row -----------------------------------------------------------
        self.row_frame = ColumnDataSource(name="clock_row_frame", data={
            f"{side}{suffix}": [] for side in ("left", "right", "top", "bottom") for suffix in ("", "_narrow")})
        self.faces = ColumnDataSource(name="clock_faces", data=row_faces(0, 0, 0, 2, 10.0, lang))
        self.hands = ColumnDataSource(name="clocks", data=row_hands(0, 0, 0, 0, 2, 10.0))
        self.row_figure = _clock_figure("clock_row_plot", 220, self.row_frame)
        f = self.row_figure
        face = f.circle(x="x", y="y", radius=1.0, source=self.faces, fill_color=FACE_FILL, line_color="line_color",
                        line_width="line_width", level=MOVING, name="clock_faces_glyph")
        # 12 o'clock, where every hand starts at pos = 0. Marks and numbers sit a set distance (in radii) from their
        # clock's centre: one column of centres (and its phone twin) places them all.
        noon = f.scatter(x="x", y=dodge("y", 1.0), marker="dash", angle=0.5 * np.pi, size=12, line_width=2,
                         source=self.faces, line_color=FACE_COLOR, level=MOVING, name="clock_noon")
        pair_text = f.text(x="x", y=dodge("y", 1.12), text="pair_label", source=self.faces, text_align="center",
                           text_baseline="bottom", text_font_size=LABEL_SIZE, text_color="label_color",
                           text_font_style="bold", level=MOVING, name="clock_pair_text")
        lambda_text = f.text(x="x", y=dodge("y", -1.12), text="wavelength_label", source=self.faces,
                             text_align="center", text_baseline="top", text_font_size=LABEL_SIZE,
                             text_color=COLORS["ink"], level=MOVING, name="clock_lambda_text")
        # On a phone the clocks are ~70 px apart in two rows: their labels a little smaller, so that "111.7" and
        # "198.7" keep apart (decided in the browser, which knows the width; restored when wider).
        smaller_type_when_narrow(f, [pair_text.glyph, lambda_text.glyph], "11pt", "clock_row_label_size")
        arc = f.wedge(x="x", y="y", radius=ARC_RADIUS, start_angle="arc_start", end_angle="arc_end",
                      source=self.hands, fill_color=COLORS["target"], fill_alpha=0.25, line_color=None,
                      level=MOVING, name="clock_arcs")
        # The pos+k hand is drawn thinner on top, so both show when they coincide (slow pairs).
        pos = f.ray(x="x", y="y", length=1.0, angle="pos_angle", source=self.hands, line_color=COLORS["pos"],
                    line_width=7, line_cap="round", level=MOVING, name="clock_pos_hands")
        target = f.ray(x="x", y="y", length=1.0, angle="target_angle", source=self.hands,
                       line_color=COLORS["target"], line_width=3, line_cap="round", level=MOVING,
                       name="clock_target_hands")
        pins = f.scatter(x="x", y="y", size=7, source=self.hands, color=COLORS["ink"], level=MOVING,
                         name="clock_pins")
        # On a phone (a frame under 560 px) the clocks go in two rows (row_places' _narrow twins), the frame with them.
        centre = {"x": "x", "y": "y"}
        columns_when_narrow(f, [*((glyph, centre) for glyph in (face.glyph, noon.glyph, pair_text.glyph,
                                                                lambda_text.glyph, arc.glyph, pos.glyph,
                                                                target.glyph, pins.glyph)),
                                (f.select_one({"name": "clock_row_plot_frame"}).glyph,
                                 {side: side for side in ("left", "right", "top", "bottom")})],
                            "clock_row_places")
        legend_items = {
            "pos": LegendItem(renderers=[pos], label=value(text(lang, "clock_legend_pos"))),
            "target": LegendItem(renderers=[target], label=value(text(lang, "clock_legend_target"))),
            "arc": LegendItem(renderers=[arc], label=value(text(lang, "clock_arc_legend"))),
        }
        row_legend = Legend(items=list(legend_items.values()), orientation="horizontal",
                            label_text_font_size=LABEL_SIZE, border_line_alpha=0, name="clock_row_legend",
                            margin=0, padding=4, location="center")
        f.add_layout(row_legend, "above")
        stacked_when_narrow(f, row_legend, grow_px=PHONE_GROW_PX)
        detach_legends(f)

        # -- the strip of all pairs ----------------------------------------------
        self.strip_frame = ColumnDataSource(name="clock_strip_frame", data={"left": [], "right": [], "top": [],
                                                                            "bottom": []})
        self.strip = ColumnDataSource(name="clock_strip", data=strip_faces(0, 2, 10.0))
        self.strip_labels = ColumnDataSource(name="clock_strip_labels", data=strip_line_labels(1, 1))
        self.span = ColumnDataSource(name="clock_strip_span", data=strip_span(0, 0, 1))
        self.strip_selected = ColumnDataSource(name="clock_strip_selected", data={"x": [], "y": []})
        self.strip_figure = _clock_figure("clock_strip_plot", 200, self.strip_frame)
        g = self.strip_figure
        span = g.quad(left="left", right="right", top="top", bottom="bottom", source=self.span,
                      fill_color=COLORS["selected"], fill_alpha=0.12, line_color=COLORS["selected"], line_width=2,
                      level=MOVING, name="clock_strip_span_glyph")
        g.circle(x="x", y="y", radius=STRIP_RADIUS, source=self.strip, fill_color=FACE_FILL,
                 line_color=FACE_COLOR, level=MOVING, name="clock_strip_faces")
        g.circle(x="x", y="y", radius=STRIP_RADIUS, source=self.strip_selected, fill_alpha=0,
                 line_color=COLORS["selected"], line_width=3, level=MOVING, name="clock_strip_selected_glyph")
        code_to_angle = LinearInterpolator(x=[0, STRIP_DIRECTIONS], y=[0.0, TWO_PI], clip=False)
        strip_hand = g.ray(x="x", y="y", length=STRIP_RADIUS, angle=transform("angle_code", code_to_angle),
                           source=self.strip,
                           line_color=COLORS["pos"], line_width=2, level=MOVING, name="clock_strip_hands")
        g.text(x="x", y="y", text="text", source=self.strip_labels, text_align="right", text_baseline="middle",
               text_font_size="11pt", text_color=COLORS["ink"], level=MOVING, name="clock_strip_line_labels")
        # Legends name the colours; the values (pos = 5) are on the large clock and the sliders.
        strip_legend = Legend(items=[LegendItem(renderers=[strip_hand], label=value(text(lang, "clock_legend_pos"))),
                                     LegendItem(renderers=[span], label=value(text(lang, "clocks_strip_span")))],
                              orientation="horizontal", label_text_font_size=LABEL_SIZE, border_line_alpha=0,
                              margin=0, padding=4, location="center", name="clock_strip_legend")
        g.add_layout(strip_legend, "above")
        stacked_when_narrow(g, strip_legend)
        detach_legends(g)

        # -- the selected pair, large ----------------------------------------------
        self.pair_hands = ColumnDataSource(name="pair_clock", data=pair_clock_hands(0, 0, 0, 2, 10.0))
        lim = 1.5
        # Deeper at the bottom: two lines of text about the arc sit under the face.
        self.pair_frame = ColumnDataSource(name="pair_clock_frame", data={"left": [-lim], "right": [lim],
                                                                         "top": [lim], "bottom": [-lim - 0.25]})
        # Up to 470 px wide, at least 320 (a CSS floor: Panel would add a min_width to the row's and keep
        # the block from wrapping under the clock on a narrow page).
        self.pair_figure = _clock_figure("pair_clock_plot", 460, self.pair_frame, max_width=470,
                                         styles={"flex": "1 1 470px", "min-width": "320px"})
        p = self.pair_figure
        p.axis.visible = True
        p.grid.visible = True
        p.min_border_left, p.min_border_bottom = 100, 80
        p.circle(x=0, y=0, radius=1.0, fill_color=FACE_FILL, line_color=COLORS["selected"], line_width=3,
                 name="pair_clock_face")
        p.wedge(x=0, y=0, radius=0.4, start_angle="arc_start", end_angle="arc_end", source=self.pair_hands,
                view=CDSView(filter=IndexFilter([0])), fill_color=COLORS["target"], fill_alpha=0.3,
                line_color=COLORS["target"], level=MOVING, name="pair_clock_arc_glyph")
        p.segment(x0=0, y0=0, x1="x", y1="y", source=self.pair_hands, line_color="color", line_width="width",
                  line_cap="round", level=MOVING, name="pair_clock_hands")
        p.scatter(x="x", y="y", source=self.pair_hands, size=14, color="color", level=MOVING, name="pair_clock_tips")
        p.scatter(x=0, y=0, size=10, color=COLORS["ink"], level=MOVING, name="pair_clock_pin")
        corner = lim - 0.06
        self.labels = {
            "pos": Label(x=-corner, y=corner, text="", text_align="left", text_baseline="top",
                         text_color=COLORS["pos"], text_font_size="15pt", text_font_style="bold",
                         name="pair_clock_pos_label"),
            "target": Label(x=corner, y=corner, text="", text_align="right", text_baseline="top",
                            text_color=COLORS["target_text"], text_font_size="15pt", text_font_style="bold",
                            name="pair_clock_target_label"),
            "arc": Label(x=0, y=-corner, text="", text_align="center", text_baseline="bottom",
                         text_color=COLORS["ink"], text_font_size=LABEL_SIZE, name="pair_clock_arc_label"),
            "turns": Label(x=0, y=-corner - 0.22, text="", text_align="center", text_baseline="bottom",
                           text_color=COLORS["ink"], text_font_size=LABEL_SIZE, name="pair_clock_turns_label"),
        }
        for label in self.labels.values():
            label.level = MOVING
            p.add_layout(label)
        p.xaxis.axis_label = text(lang, "pair_clock_x")
        p.yaxis.axis_label = text(lang, "pair_clock_y")
        p.xaxis.ticker = p.yaxis.ticker = [-1.0, -0.5, 0.0, 0.5, 1.0]
        style_figure(p)

        # At least 420 px where the page has them, the page's width on a phone (a Bokeh min_width of 420 made a
        # 390 px phone's /explore scroll sideways); a matrix wider than that scrolls inside its own box.
        narrow = {"min-width": "min(420px, 100%)"}
        self.block = LiveHTML(name="rotation_block", css=BLOCK_CSS + "table { display: block; overflow-x: auto; }",
                              sizing_mode="stretch_width", styles=narrow)
        note = html_pane(f'<p class="pe-readout">{html.escape(text(lang, "block_note"))}</p>',
                         max_width=720, sizing_mode="stretch_width", styles=narrow)
        self.pair_title = LiveHTML(name="pair_clock_title", sizing_mode="stretch_width")
        self._layout = pn.Column(
            _heading(lang, "clocks_row_title"),
            pn.pane.Bokeh(self.row_figure, sizing_mode="stretch_width"),
            _heading(lang, "clocks_strip_title"),
            pn.pane.Bokeh(self.strip_figure, sizing_mode="stretch_width"),
            self.pair_title,
            # The block goes under the clock when the two do not fit side by side (a narrow iframe, a
            # projector's 1280 px in presentation mode, where both carry double type).
            pn.Row(pn.pane.Bokeh(self.pair_figure),
                   # In rem, as the table's type: double in presentation mode, and so its width.
                   pn.Column(self.block, note, sizing_mode="stretch_width", styles={"flex": "1 1 27rem"}),
                   sizing_mode="stretch_width", styles=WRAP),
            Description(state, text(lang, "clocks_title"), describe, ("d_model", "base", "pair", "pos", "k"),
                        name="clocks_description"),
            sizing_mode="stretch_width", name="clocks_view",
        )
        self._update_sizes()

    # -- updates, split by what they depend on ------------------------------------

    @param.depends("state.d_model", "state.base", watch=True)
    def _update_sizes(self) -> None:
        s = self.state
        pairs = s.d_model // 2
        columns, lines = strip_shape(pairs)
        self.strip.data = strip_faces(s.pos, s.d_model, s.base)
        self.strip_labels.data = strip_line_labels(pairs, columns)
        # Room on the left for the line labels (up to "448").
        self.strip_frame.data = {"left": [-2.6 if lines > 1 else -0.7], "right": [columns - 0.3],
                                 "top": [0.6], "bottom": [-lines + 0.4]}
        self.strip_figure.height = 80 + 20 * lines
        self._window = (-1, -1)
        self._update_window()

    @param.depends("state.pair", watch=True)
    def _update_window(self) -> None:
        """The row's faces follow the window, which moves only when the selected pair nears no end."""
        s = self.state
        pairs = s.d_model // 2
        window = row_window(s.pair, pairs)
        # Inside the same window only the selected face's colours and width change.
        send_changes(self.faces, row_faces(*window, s.pair, s.d_model, s.base, s.lang))
        if window != self._window:
            send_changes(self.row_frame, row_frame(row_places(window[1] - window[0])))
            self.span.data = strip_span(*window, strip_shape(pairs)[0])
            self._window = window
            self._update_row_hands()
        x, y = strip_place(s.pair, strip_shape(pairs)[0])
        self.strip_selected.data = {"x": [float(x)], "y": [float(y)]}
        title = text(s.lang, "pair_clock_title", pair=s.pair, omega=float(core.frequencies(s.d_model, s.base)[s.pair]))
        self.pair_title.object = f'<h3 class=pe-figure-title>{html.escape(title)}</h3>'
        self._update_pair_clock()

    @param.depends("state.pos", watch=True)
    def _update_pos(self) -> None:
        s = self.state
        # One column instead of the whole source: pos moves only the strip's hands.
        self.strip.data.update(strip_hands(s.pos, s.d_model, s.base))
        self._update_row_hands()
        self._update_pair_clock()

    @param.depends("state.k", watch=True)
    def _update_k(self) -> None:
        self._update_row_hands()
        self._update_pair_clock()

    def _update_row_hands(self) -> None:
        # Only the columns that differ travel: a k step moves the pos+k hands and the arcs,
        # a pos step both hands, a shifted window keeps its centres.
        s = self.state
        send_changes(self.hands, row_hands(*self._window, s.pos, s.k, s.d_model, s.base))

    def _update_pair_clock(self) -> None:
        s = self.state
        send_changes(self.pair_hands, pair_clock_hands(s.pair, s.pos, s.k, s.d_model, s.base))
        self.labels["pos"].text = text(s.lang, "clock_hand_pos", pos=s.pos)
        self.labels["target"].text = text(s.lang, "clock_hand_target", target=s.target)
        self.labels["arc"].text, self.labels["turns"].text = arc_label(
            s.lang, float(core.angles(s.k, s.d_model, s.base)[s.pair]))
        self.block.object = block_html(s.lang, s.pair, s.pos, s.k, s.d_model, s.base)

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
