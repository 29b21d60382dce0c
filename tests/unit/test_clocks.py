"""The pair clocks view without a browser: its sources against independent computations.

Expected values are computed here from scratch with ``math`` (one pair, one
position at a time), not with app.core, so a shared mistake cannot hide.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import text
from components.clocks import (
    ROW_SIZE,
    SENT_DECIMALS,
    STRIP_COLUMNS,
    STRIP_LIST_PAIRS,
    PairClocks,
    arc_label,
    format_wavelength,
    row_window,
)

BASE = 10_000.0
#: The row's hand columns are sent rounded to SENT_DECIMALS; a tip minus its
#: (also rounded) centre is within one unit of the last decimal.
F32 = 10.0 ** -SENT_DECIMALS


def omega(i: int, d_model: int, base: float = BASE) -> float:
    return 1.0 / base ** (2 * i / d_model)


def tip(i: int, p: float, d_model: int, base: float = BASE) -> tuple[float, float]:
    """(PE[p, 2i], PE[p, 2i+1]) from the paper's formula, one number at a time."""
    angle = p / base ** (2 * i / d_model)
    return math.sin(angle), math.cos(angle)


def view_for(**values) -> PairClocks:
    return PairClocks(ExplorerState(**values))


def direction(angle: float) -> tuple[float, float]:
    """Unit vector of a Bokeh angle (anticlockwise from +x)."""
    return math.cos(angle), math.sin(angle)


# --------------------------------------------------------------------------
# core.rotation_block
# --------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(d_model=st.integers(1, 64).map(lambda n: 2 * n), k=st.integers(-2047, 2047), data=st.data(),
       base=st.sampled_from([2, 10, 10_000, 1_000_000]))
def test_rotation_block_is_the_block_of_rotation(d_model, k, data, base):
    pair = data.draw(st.integers(0, d_model // 2 - 1))
    block = core.rotation_block(pair, k, d_model, base)
    full = core.rotation(k, d_model, base)
    np.testing.assert_array_equal(block, full[2 * pair:2 * pair + 2, 2 * pair:2 * pair + 2])


def test_rotation_block_moves_pos_to_pos_plus_k_lesson_numbers():
    # d_model = 32, k = 3: every pair's block carries PE[p] to PE[p + 3], whatever p.
    for i in range(16):
        block = core.rotation_block(i, 3, 32)
        c, s = math.cos(3 * omega(i, 32)), math.sin(3 * omega(i, 32))
        np.testing.assert_allclose(block, [[c, s], [-s, c]], rtol=0, atol=1e-15)
        for p in (0, 5, 20):
            np.testing.assert_allclose(block @ tip(i, p, 32), tip(i, p + 3, 32), rtol=0, atol=1e-13)


@pytest.mark.parametrize("args, message", [
    ((16, 3, 32), "pair must be an integer in 0 .. d_model/2 - 1 = 15; got 16"),
    ((-1, 3, 32), "pair must be an integer >= 0"),
    ((1.0, 3, 32), "pair must be an integer >= 0; got 1.0"),
    ((True, 3, 32), "pair must be"),
    ((0, float("nan"), 32), "k must be finite"),
    ((0, [1, 2], 32), "k must be a single"),
    ((0, 3, 31), "d_model must be an even integer"),
])
def test_rotation_block_rejects_bad_arguments(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        core.rotation_block(*args)


# --------------------------------------------------------------------------
# The row window
# --------------------------------------------------------------------------

@settings(max_examples=300)
@given(pairs=st.integers(1, 512), data=st.data())
def test_row_window_holds_the_pair_and_is_clamped(pairs, data):
    pair = data.draw(st.integers(0, pairs - 1))
    start, stop = row_window(pair, pairs)
    assert 0 <= start <= pair < stop <= pairs
    assert stop - start == min(ROW_SIZE, pairs)
    # Centred whenever there is room on both sides; otherwise flush with an end.
    if ROW_SIZE // 2 <= pair < pairs - ROW_SIZE // 2:
        assert pair - start == ROW_SIZE // 2
    elif pairs > ROW_SIZE:
        assert start == 0 or stop == pairs


@pytest.mark.parametrize("d_model", [2, 4, 8, 10, 12, 14, 16, 18, 32])
def test_the_row_goes_in_two_lines_on_a_phone_inside_its_frame(d_model):
    """A desktop's row is one line of up to nine clocks; a phone's (the ``_narrow`` twins) up to five to a line,
    else two lines, the first the longer: nine in one line were 30 px across on a 390 px phone."""
    view = view_for(d_model=d_model, T=24)
    faces, frame = view.faces.data, view.row_frame.data
    count = min(d_model // 2, 9)
    per_line = count if count <= 5 else (count + 1) // 2
    assert faces["x"] == pytest.approx([2.6 * j for j in range(count)]) and faces["y"] == [0.0] * count
    assert faces["x_narrow"] == pytest.approx([2.6 * (j % per_line) for j in range(count)])
    assert faces["y_narrow"] == pytest.approx([-3.7 * (j // per_line) for j in range(count)])
    for suffix in ("", "_narrow"):
        xs, ys = faces[f"x{suffix}"], faces[f"y{suffix}"]
        # Each face (radius 1) and its numbers above and below (to 1.7 radii from its centre) inside the frame,
        # with no more than a clock's width to spare on the right.
        assert frame[f"left{suffix}"][0] <= min(xs) - 1 and max(xs) + 1 <= frame[f"right{suffix}"][0] <= max(xs) + 2
        assert frame[f"top{suffix}"][0] >= max(ys) + 1.7 and frame[f"bottom{suffix}"][0] <= min(ys) - 1.7
        assert frame[f"bottom{suffix}"][0] >= min(ys) - 2.0


def test_row_window_examples():
    assert row_window(0, 16) == (0, 9)
    assert row_window(8, 16) == (4, 13)
    assert row_window(15, 16) == (7, 16)
    assert row_window(511, 512) == (503, 512)
    assert row_window(2, 4) == (0, 4)


# --------------------------------------------------------------------------
# Hands against the formula
# --------------------------------------------------------------------------

def assert_row_hands(view: PairClocks) -> None:
    s = view.state
    data = view.hands.data
    start, stop = row_window(s.pair, s.d_model // 2)
    assert list(data["pair"]) == list(range(start, stop))
    assert list(view.faces.data["pair"]) == list(range(start, stop))
    for column in ("x", "y", "x_narrow", "y_narrow"):
        np.testing.assert_array_equal(data[column], view.faces.data[column])
    for j, i in enumerate(range(start, stop)):
        # A hand is a ray of one radius from its clock's centre: its tip is the centre + (PE[p, 2i], PE[p, 2i+1]).
        for prefix, p in (("pos", s.pos), ("target", s.pos + s.k)):
            np.testing.assert_allclose(direction(float(data[f"{prefix}_angle"][j])), tip(i, p, s.d_model, s.base),
                                       atol=F32, err_msg=f"{i} {prefix}")
        assert_arc(float(data["arc_start"][j]), float(data["arc_end"][j]), i, s)


def assert_arc(arc_start: float, arc_end: float, i: int, s: ExplorerState) -> None:
    """The wedge runs from one hand to the other, the short way the sign of k says."""
    turn = s.k * omega(i, s.d_model, s.base)
    length = arc_end - arc_start
    assert length >= -F32
    assert abs(length - math.fmod(abs(turn), 2 * math.pi)) <= F32 + 1e-12
    pos_dir, target_dir = tip(i, s.pos, s.d_model, s.base), tip(i, s.pos + s.k, s.d_model, s.base)
    # Bokeh draws anticlockwise from start to end; the hand turns clockwise as
    # positions grow, so for k > 0 the arc starts at the pos+k hand.
    first, last = (target_dir, pos_dir) if s.k > 0 else (pos_dir, target_dir)
    np.testing.assert_allclose(direction(arc_start), first, atol=F32)
    np.testing.assert_allclose(direction(arc_end), last, atol=F32)


def assert_pair_clock(view: PairClocks) -> None:
    s = view.state
    data = view.pair_hands.data
    assert data["hand"] == ["pos", "target"] and data["position"] == [s.pos, s.pos + s.k]
    for j, p in enumerate((s.pos, s.pos + s.k)):
        np.testing.assert_allclose((data["x"][j], data["y"][j]), tip(s.pair, p, s.d_model, s.base), atol=F32)
    arc = {"start": data["arc_start"], "end": data["arc_end"]}
    assert_arc(arc["start"][0], arc["end"][0], s.pair, s)


def assert_strip(view: PairClocks) -> None:
    s = view.state
    data = view.strip.data
    pairs = s.d_model // 2
    assert data["pair"].tolist() == list(range(pairs))
    # Short JSON numbers for a few pairs, a float32 buffer for many (what each costs on the wire).
    if pairs <= STRIP_LIST_PAIRS:
        assert isinstance(data["angle_code"], list)
    else:
        assert data["angle_code"].dtype == np.uint8
    assert data["x"].dtype == np.float32
    for i in range(pairs):
        # The code is the nearest of 256 directions: within half a step (pi / 256) of the hand.
        angle = float(data["angle_code"][i]) * 2 * math.pi / 256
        np.testing.assert_allclose(direction(angle), tip(i, s.pos, s.d_model, s.base), atol=math.pi / 256 + 1e-9)
    # Reading order, every centre distinct, at most STRIP_COLUMNS per line.
    centres = set(zip(data["x"].tolist(), data["y"].tolist(), strict=True))
    assert len(centres) == pairs
    assert data["x"].max() < STRIP_COLUMNS
    columns = min(pairs, STRIP_COLUMNS)
    assert all(data["x"][i] == i % columns and data["y"][i] == -(i // columns) for i in range(pairs))


def assert_span(view: PairClocks) -> None:
    """The strip's rectangles cover exactly the row's pairs, and the selected pair is marked."""
    s = view.state
    data = view.strip.data
    start, stop = row_window(s.pair, s.d_model // 2)
    span = view.span.data
    inside = set()
    for left, right, top, bottom in zip(span["left"], span["right"], span["top"], span["bottom"], strict=True):
        inside |= {int(i) for i, x, y in zip(data["pair"], data["x"], data["y"], strict=True)
                   if left < x < right and bottom < y < top}
    assert inside == set(range(start, stop))
    sel = view.strip_selected.data
    assert (sel["x"][0], sel["y"][0]) == (data["x"][s.pair], data["y"][s.pair])


def assert_consistent(view: PairClocks) -> None:
    assert_row_hands(view)
    assert_pair_clock(view)
    assert_strip(view)
    assert_span(view)


def test_lesson_numbers_d_model_32_k_3():
    view = view_for(d_model=32, T=24, k=3)
    data = view.hands.data
    # pos = 0: every pos hand points straight up (row 0 is (0, 1, 0, 1, ...)): Bokeh's angle pi/2.
    np.testing.assert_allclose(data["pos_angle"], math.pi / 2, atol=F32)
    # pos + k = 3, pair 0 turns one radian per position: the hand is 3 rad clockwise from 12 o'clock, whose tip
    # (sin 3, cos 3) is Bokeh's angle pi/2 - 3 (anticlockwise from 3 o'clock).
    assert abs(data["target_angle"][0] - (math.pi / 2 - 3)) < F32
    # One row of nine on a desktop, 2.6 radii apart; on a phone five over four, 3.7 radii between the rows.
    assert data["x"] == pytest.approx([2.6 * j for j in range(9)]) and data["y"] == [0.0] * 9
    assert data["x_narrow"] == pytest.approx([2.6 * j for j in (0, 1, 2, 3, 4, 0, 1, 2, 3)])
    assert data["y_narrow"] == pytest.approx([0.0] * 5 + [-3.7] * 4)
    # 9 clocks, fast on the left: the first pair has the shortest wavelength (2 pi).
    assert data["pair"] == list(range(9))
    # The row's first clock names λ, the others give the number only (they fit between the clocks).
    # (A number carries a word joiner, so that BokehJS sets it level with the named first label.)
    assert view.faces.data["wavelength_label"][:3] == ["λ = 6.3", "11.2\u2060", "19.9\u2060"]
    assert view.faces.data["pair_label"][0] == "i = 0"
    for pos in (0, 7, 23):
        view.state.pos = pos
        assert_consistent(view)


def test_hand_columns_are_short_lists():
    # Resent on every step of k or pos: short JSON numbers, not binary buffers.
    view = view_for(d_model=1024, T=2048, pos=2047, k=-2047, pair=511)
    for column in ("x", "y", "x_narrow", "y_narrow", "pos_angle", "target_angle", "arc_start", "arc_end"):
        values = view.hands.data[column]
        assert isinstance(values, list) and len(values) == ROW_SIZE
        assert all(len(repr(v).split(".")[-1]) <= SENT_DECIMALS for v in values), values
    assert_consistent(view)


@settings(max_examples=40, deadline=None)
@given(d_model=st.integers(1, 512).map(lambda n: 2 * n), T=st.integers(1, 2048),
       base=st.sampled_from([2, 100, 10_000, 1_000_000]), data=st.data())
def test_hands_match_the_formula_for_random_states(d_model, T, base, data):
    pair = data.draw(st.integers(0, d_model // 2 - 1), label="pair")
    pos = data.draw(st.integers(0, T - 1), label="pos")
    k = data.draw(st.integers(-(T - 1), T - 1), label="k")
    view = view_for(d_model=d_model, T=T, base=base, pair=pair, pos=pos, k=k)
    assert_consistent(view)


# --------------------------------------------------------------------------
# What a change sends
# --------------------------------------------------------------------------

class Sent:
    """Every Bokeh change event of the view's figures, as the server would send them."""

    def __init__(self, view: PairClocks):
        self.doc = Document()
        for fig in (view.row_figure, view.strip_figure, view.pair_figure):
            self.doc.add_root(fig)
        self.events: list = []
        self.doc.on_change(self.events.append)

    def clear(self) -> None:
        self.events.clear()

    def changes(self) -> dict[str, set[str]]:
        """Name (or type) of each changed model -> the attributes or columns that changed."""
        out: dict[str, set[str]] = {}
        for event in self.events:
            key = event.model.name or type(event.model).__name__
            if isinstance(event, ColumnDataChangedEvent):
                out.setdefault(key, set()).update(event.cols or event.model.data)
            elif isinstance(event, ModelChangedEvent):
                cols = set(event.model.data) if event.attr == "data" else {event.attr}
                out.setdefault(key, set()).update(cols)
        return out

    def numbers(self) -> int:
        """How many array elements the events carry."""
        total = 0
        for event in self.events:
            if isinstance(event, ColumnDataChangedEvent):
                total += sum(len(event.model.data[c]) for c in (event.cols or event.model.data))
            elif isinstance(event, ModelChangedEvent) and event.attr == "data":
                total += sum(len(v) for v in event.model.data.values())
            else:
                total += 1
        return total


HANDS = {"clocks", "pair_clock"}
#: Text that follows pos / k: the legend entries and the big clock's labels.
LABELS = {"LegendItem", "pair_clock_pos_label", "pair_clock_target_label", "pair_clock_arc_label"}


def test_changing_k_sends_only_hands_and_labels():
    view = view_for(d_model=1024, T=2048, pair=300, pos=100, k=3)
    figures = (view.row_figure, view.strip_figure, view.pair_figure)
    renderers = [list(f.renderers) for f in figures]
    sent = Sent(view)
    view.state.k = 4
    changes = sent.changes()
    assert set(changes) <= HANDS | LABELS, changes
    assert set(changes) >= HANDS
    # k moves only the pos+k hands and the arcs' far ends; the pos hands, the centres and (k > 0:
    # Bokeh draws anticlockwise from the pos+k hand to the pos hand) the arcs' ends at the pos hand stay.
    assert changes["clocks"] == {"target_angle", "arc_start"}
    assert changes["pair_clock"] == {"position", "x", "y", "arc_start"}
    assert sent.numbers() <= 4 * 9 + 3 * 2 + 2 + len(LABELS)
    assert [list(f.renderers) for f in figures] == renderers  # nothing rebuilt
    assert_consistent(view)


def test_changing_pos_sends_hands_and_one_strip_column():
    view = view_for(d_model=1024, T=2048, pair=300, pos=100, k=3)
    sent = Sent(view)
    view.state.pos = 101
    changes = sent.changes()
    assert set(changes) <= HANDS | LABELS | {"clock_strip"}, changes
    assert changes["clock_strip"] == {"angle_code"}  # not the 512 centres, not the pair numbers
    # 512 float32 angles (one per pair) + the row and big clock hands.
    assert sent.numbers() <= 512 + 120
    assert_consistent(view)


def test_changing_pair_moves_the_window_without_touching_the_strip_hands():
    view = view_for(d_model=1024, T=2048, pair=300, pos=100, k=3)
    sent = Sent(view)
    view.state.pair = 301
    changes = sent.changes()
    assert "clock_strip" not in changes and "clock_strip_labels" not in changes
    assert {"clock_faces", "clocks", "clock_strip_span", "clock_strip_selected", "pair_clock"} <= set(changes)
    assert sent.numbers() <= 200
    assert_consistent(view)
    # At the end the window stays put: the faces change colour, the span does not move.
    view.state.pair = 511
    sent.clear()
    view.state.pair = 510
    changes = sent.changes()
    assert "clock_strip_span" not in changes
    # Only the highlight moves between two faces: no labels, no centres.
    assert changes["clock_faces"] == {"line_color", "line_width", "label_color"}
    assert_consistent(view)


def test_T_alone_sends_nothing():
    view = view_for(d_model=64, T=24, pos=5, k=3)
    sent = Sent(view)
    view.state.T = 100
    assert sent.events == []


# --------------------------------------------------------------------------
# Size changes
# --------------------------------------------------------------------------

def test_shrinking_d_model_keeps_everything_consistent():
    view = view_for(d_model=1024, T=512, pair=400, pos=77, k=-5)
    view.state.d_model = 32
    assert view.state.pair == 15
    assert list(view.hands.data["pair"]) == list(range(7, 16))
    assert len(view.strip.data["angle_code"]) == 16
    assert_consistent(view)
    view.state.d_model = 4
    assert list(view.hands.data["pair"]) == [0, 1]
    assert_consistent(view)
    view.state.d_model = 1024
    assert_consistent(view)


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["d_model", "T", "pair", "pos", "k", "base"]),
                                st.floats(0, 1)), min_size=1, max_size=8))
def test_any_sequence_of_changes_stays_consistent(steps):
    view = view_for(d_model=32, T=24, k=3)
    s = view.state
    for name, u in steps:
        low, high = {"d_model": (1, 512), "T": (1, 2048), "pair": (0, s.d_model // 2 - 1), "pos": (0, s.T - 1),
                     "k": (-(s.T - 1), s.T - 1), "base": (0, 17)}[name]
        value = low + round(u * (high - low))
        if name == "d_model":
            value *= 2
        if name == "base":
            value = s.param.base.objects[value]
        setattr(s, name, value)
    assert_consistent(view)


# --------------------------------------------------------------------------
# Texts, the block
# --------------------------------------------------------------------------

def block_numbers(markup: str) -> list[float]:
    table = markup[markup.index("<table>"):markup.index("<td colspan")]
    cells = [c for c in re.findall(r"<td(?: rowspan=2)?>([^<]+)", table) if c not in "·="]
    return [float(c.replace("\u2212", "-")) for c in cells]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_block_shows_the_matrix_that_carries_pos_to_pos_plus_k(lang):
    view = view_for(d_model=32, T=24, k=3, pos=5, pair=2, lang=lang)
    markup = view.block.object
    m00, m01, before0, after0, m10, m11, before1, after1 = block_numbers(markup)
    w = omega(2, 32)
    np.testing.assert_allclose([m00, m01, m10, m11], [math.cos(3 * w), math.sin(3 * w), -math.sin(3 * w),
                                                      math.cos(3 * w)], atol=6e-5)
    np.testing.assert_allclose([before0, before1], tip(2, 5, 32), atol=6e-5)
    np.testing.assert_allclose([after0, after1], tip(2, 8, 32), atol=6e-5)
    assert text(lang, "block_title", pair=2, k=3) in markup
    assert text(lang, "block_caption_target", target=8) in markup


def test_big_clock_texts():
    view = view_for(d_model=32, T=24, k=20, pos=2, pair=0, lang="es")
    assert view.labels["pos"].text == "pos = 2"
    assert view.labels["target"].text == "pos + k = 22"
    # 20 rad is 3 whole turns and 20 - 6 pi = 1.150 rad.
    assert view.labels["arc"].text == "ω·k = 20.00 rad"
    assert view.labels["turns"].text == text("es", "clock_arc_turns", sign="", turns=3, rest=20 - 6 * math.pi)
    assert view.labels["turns"].text == "= (3 × 2π + 1.150) rad"
    assert arc_label("en", -20.0) == ("ω·k = \u221220.00 rad", "= \u2212(3 × 2π + 1.150) rad")
    assert arc_label("en", -1.0) == ("ω·k = \u22121.000 rad", "")
    # Four significant digits, however slow the pair: the last pair of 32 turns 10000^(-15/16) = 1.778e-4 rad
    # per position (to three decimals that printed "ω·k = 0.000 rad" beside a hand that had turned).
    assert arc_label("en", 10000 ** (-15 / 16)) == ("ω·k = 0.0001778 rad", "")
    assert text("es", "pair_clock_title", pair=0, omega=1.0) in view.pair_title.object


def test_wavelength_labels_stay_short():
    assert format_wavelength(2 * math.pi) == "6.3"
    assert format_wavelength(35_332.9) == "35\u2009333"
    assert format_wavelength(2 * math.pi * 1e6) == "6\u2009283\u2009185"


def test_the_view_has_no_player_of_its_own():
    """The page's one play control (components/animation.py) runs pos; the view carries none."""
    import panel as pn

    view = view_for(d_model=32, T=24, pos=0, k=3, lang="en")
    assert not view.__panel__().select(pn.widgets.Player)
