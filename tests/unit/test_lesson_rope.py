"""Section «rope»: rotary scores depend on n − m alone; the additive scheme's do not.

The rotation is built here from its formula, block by block, independently of app.core.
"""

from __future__ import annotations

import math
import re

import numpy as np
import panel as pn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import BASES, ExplorerState
from components.lesson.rope import CLOSE, LABEL_GAP_PX, RotaryPosition, _label_places, colour_limit
from tests.helpers import press, printed, source_data, wait_for_source, wait_until


def rotation_by_hand(m: float, d_model: int, base: float) -> np.ndarray:
    """R_m: pair i turned by m * base^(-2i/d_model), counter-clockwise in the plane (x_2i, x_2i+1)."""
    r = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        theta = m / base ** (2 * i / d_model)
        c, s = math.cos(theta), math.sin(theta)
        r[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return r


def pe_by_hand(pos: float, d_model: int, base: float) -> np.ndarray:
    row = []
    for i in range(d_model // 2):
        angle = pos / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return np.array(row)


sizes = st.integers(1, 32).map(lambda h: 2 * h)


@settings(max_examples=40, deadline=None)
@given(d_model=sizes, count=st.integers(1, 20), base=st.sampled_from(BASES), seed=st.integers(0, 2**32 - 1),
       m=st.integers(-500, 500))
def test_rotary_scores_depend_on_the_offset_only(d_model, count, base, seed, m):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d_model) * 3, rng.normal(size=d_model)
    np.testing.assert_allclose(core.rope_rotate(q, m, base), rotation_by_hand(m, d_model, base) @ q, atol=1e-12)
    np.testing.assert_allclose(core.rope_rotation(m, d_model, base), rotation_by_hand(m, d_model, base), atol=1e-15)
    scores = core.rope_scores(q, k, count, base)
    scale = 1e-12 * (1 + np.abs(q).sum() * np.abs(k).sum())
    for a in range(count):
        for b in range(count):
            by_hand = (rotation_by_hand(a, d_model, base) @ q) @ (rotation_by_hand(b, d_model, base) @ k)
            assert scores[a, b] == pytest.approx(by_hand, abs=scale)
            relative = q @ rotation_by_hand(b - a, d_model, base) @ k
            assert scores[a, b] == pytest.approx(relative, abs=scale)
    for offset in range(-(count - 1), count):
        assert np.ptp(np.diagonal(scores, offset)) <= scale
    offsets = np.arange(-(count - 1), count)
    np.testing.assert_allclose(core.rope_relative(q, k, offsets, base),
                               [q @ rotation_by_hand(x, d_model, base) @ k for x in offsets], atol=scale)


def test_the_encodings_shift_is_the_rotary_rotation_backwards():
    # core.rotation(k) maps PE[p] (pairs stored as (sin, cos)) to PE[p + k]: it is R_{-k}.
    for k in (-5, 0, 3, 17):
        np.testing.assert_allclose(rotation_by_hand(-k, 16, 1e4) @ pe_by_hand(4, 16, 1e4), pe_by_hand(4 + k, 16, 1e4),
                                   atol=1e-12)
        np.testing.assert_allclose(core.rope_rotation(k, 16), core.rotation(-k, 16), atol=0)


def test_additive_scores_by_hand_and_their_diagonals():
    e, w_q, w_k = core.seeded_head(16, 0)
    scores = core.additive_scores(e, w_q, w_k, 12)
    for m, n in ((0, 0), (3, 7), (11, 2)):
        by_hand = (w_q @ (e + pe_by_hand(m, 16, 1e4))) @ (w_k @ (e + pe_by_hand(n, 16, 1e4)))
        assert scores[m, n] == pytest.approx(by_hand, abs=1e-10)
    assert max(np.ptp(np.diagonal(scores, d)) for d in range(-11, 12)) > 0.5  # random heads: not distance-only
    # With W_Q = W_K = I and no word, only PE_m · PE_n is left: distance-only again.
    plain = core.additive_scores(np.zeros(16), np.eye(16), np.eye(16), 12)
    assert max(np.ptp(np.diagonal(plain, d)) for d in range(-11, 12)) < 1e-12


def test_seeded_head_is_reproducible_and_arguments_are_checked():
    a, b = core.seeded_head(8, 3), core.seeded_head(8, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], core.seeded_head(8, 4)[0])
    with pytest.raises(ValueError, match="len\\(q\\) \\(d_model\\) must be an even integer"):
        core.rope_scores(np.ones(3), np.ones(3), 4)
    with pytest.raises(ValueError, match="q and k must have the same length"):
        core.rope_scores(np.ones(4), np.ones(6), 4)
    with pytest.raises(ValueError, match="w_k must be a \\(d_model, d_model\\)"):
        core.additive_scores(np.ones(4), np.eye(4), np.eye(6), 3)
    with pytest.raises(ValueError, match="positions must broadcast"):
        core.rope_rotate(np.ones((3, 4)), np.arange(5))
    with pytest.raises(ValueError, match="count must be an integer >= 1"):
        core.rope_scores(np.ones(4), np.ones(4), 0)


def test_section_matrices_and_hands():
    state = ExplorerState(d_model=32, T=24, pos=0, k=3, pair=0, lang="en")
    view = RotaryPosition(state)
    e, w_q, w_k = core.seeded_head(32, 0)
    q, k = w_q @ e, w_k @ e
    data = view.rope.data
    assert len(data["score"]) == 24 * 24
    for row in (0, 100, 575):
        m, n = int(data["m"][row]), int(data["n"][row])
        assert data["score"][row] == pytest.approx(q @ rotation_by_hand(n - m, 32, 1e4) @ k, abs=1e-10)
        by_hand = (w_q @ (e + pe_by_hand(m, 32, 1e4))) @ (w_k @ (e + pe_by_hand(n, 32, 1e4)))
        assert view.additive.data["score"][row] == pytest.approx(by_hand, abs=1e-10)
    angle = view.angle.object
    rope_data = view.rope.data
    state.pos = 9
    assert view.rope.data is rope_data  # a pos step does not resend the matrices
    assert view.angle.object == angle  # the angle depends on n - m only
    assert view.cell.data == {"m": [9], "n": [12]}
    assert view.hands.data["label"] == ["q at m = 9", "k at n = 12"]
    state.param.update(pos=0, k=-3)  # n = -3: RoPE turns any n; the label prints it with a minus sign
    assert view.hands.data["label"] == ["q at m = 0", "k at n = \u22123"]
    state.param.update(pos=9, k=3)
    # m and n are on the hands; the title names the pair alone, so it stays short enough for the figure
    # in presentation mode's type (the earlier title with both positions was cut off there).
    assert view.clock_figure.title.text == f"Pair {state.pair} of q and of k"
    qa = rotation_by_hand(9, 32, 1e4) @ q
    assert view.hands.data["x"][0] == pytest.approx(qa[0] / math.hypot(qa[0], qa[1]), abs=1e-4)
    state.T = 200
    assert len(view.rope.data["score"]) == 64 * 64 and len(view.additive.data["score"]) == 64 * 64
    assert view.live_values()["rope_spread"].endswith(("e-15", "e-14", "e-13"))
    state.pair = 2
    assert view.clock_figure.title.text == "Pair 2 of q and of k"


def test_one_position_has_no_diagonal_to_compare():
    """At T = 1 the comparison read "additive: along a diagonal it changes by up to 0.00"."""
    state = ExplorerState(T=1, lang="en")
    view = RotaryPosition(state)
    view.__panel__()
    assert view.passage("compare").hidden and "single cell" in view.one_cell_note.object
    state.T = 2
    assert not view.passage("compare").hidden and view.one_cell_note.object == ""


@pytest.mark.browser
@pytest.mark.parametrize(("sizes", "ring", "drawn"), [
    ({}, "(0, 3)", True),
    ({"d_model": 512, "T": 512, "pos": 300, "k": -200}, "(300, 100), outside the 64 × 64 corner drawn", False),
    ({"pos": 20, "k": 10}, "(20, 30), outside the table (positions 0 … 23)", False),
    ({"T": 24, "pos": 63 - 40, "k": -23}, "(23, 0)", True),
])
def test_the_text_names_the_ringed_cell_and_says_when_the_figures_cannot_show_it(sizes, ring, drawn):
    """"The ringed cell is m = pos, n = pos + k" at pos 300: the figures draw m, n < 64, and showed no ring."""
    section = RotaryPosition(ExplorerState(lang="en", **sizes))
    assert section.live_values()["marked"] == ring
    cell = section.cell.data
    assert (not math.isnan(cell["m"][0])) == drawn


def test_the_slowest_wavelength_keeps_its_decimals_when_short():
    # 2π·base^(1 − 2/d_model) at d_model = 2 is 2π: "6.28", not "6".
    assert RotaryPosition(ExplorerState(lang="en", d_model=2)).live_values()["wavelength"] == f"{2 * math.pi:.2f}"
    assert RotaryPosition(ExplorerState(lang="en")).live_values()["wavelength"] == "35\u202f333"


def test_rope_page_follows_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/rope?lang=en&d_model=32&T=24&pos=0&k=3&pair=0")
    data = wait_for_source(page, "rope_scores", lambda d: len(d["score"]) == 576)
    e, w_q, w_k = core.seeded_head(32, 0)
    q, k = w_q @ e, w_k @ e
    expected = [q @ rotation_by_hand(n - m, 32, 1e4) @ k for m, n in zip(data["m"], data["n"], strict=True)]
    np.testing.assert_allclose(data["score"], expected, atol=1e-10)
    additive = wait_for_source(page, "additive_scores", lambda d: len(d["score"]) == 576)
    x = {p: e + pe_by_hand(p, 32, 1e4) for p in range(24)}
    by_hand = [(w_q @ x[m]) @ (w_k @ x[n]) for m, n in zip(additive["m"], additive["n"], strict=True)]
    np.testing.assert_allclose(additive["score"], by_hand, atol=1e-10)

    def angle_text() -> str:
        return page.locator(".pe-live").filter(has_text="Angle from q to k").inner_text()

    def angle_by_hand(m: int, n: int) -> str:
        """The readout's angle, radians then degrees, from pair 0 of the rotated q and k (the shorter way)."""
        a, b = rotation_by_hand(m, 32, 1e4) @ q, rotation_by_hand(n, 32, 1e4) @ k
        turn = math.remainder(math.atan2(b[1], b[0]) - math.atan2(a[1], a[0]), 2 * math.pi)
        return f"{printed(turn, '.3f')} rad = {printed(math.degrees(turn), '.1f')}°"

    wait_until(lambda: angle_by_hand(0, 3) in angle_text(), message="angle never shown")
    press(page, "position pos", "ArrowRight", times=2)
    wait_for_source(page, "rope_hands", lambda d: list(d["label"]) == ["q at m = 2", "k at n = 5"])
    # n − m is 3 again: the same angle (RoPE's relative property, seen on the hands).
    assert angle_by_hand(2, 5) in angle_text() and angle_by_hand(2, 5) == angle_by_hand(0, 3)
    press(page, "offset k", "ArrowRight")
    wait_until(lambda: angle_by_hand(2, 6) in angle_text(), message="angle did not follow k")
    assert source_data(page, "rope_cell")["n"].tolist() == [6]
    assert console_errors == []


def test_hands_close_at_the_top_get_labels_on_either_side():
    # k just counterclockwise of q, both near twelve o'clock: k's label runs left, q's right.
    places = _label_places(math.pi / 2 - 0.05, math.pi / 2 + 0.05, k_ahead=True)
    assert places["align"] == ["left", "right"]
    assert places["dx"] == [LABEL_GAP_PX, -LABEL_GAP_PX]
    # Swapped, so are the sides.
    assert _label_places(math.pi / 2 + 0.05, math.pi / 2 - 0.05, k_ahead=False)["align"] == ["right", "left"]


@given(st.floats(0, 2 * math.pi), st.floats(-0.5, 0.5).filter(lambda d: abs(d) > 1e-3))
def test_labels_move_apart_along_the_circle_and_run_inwards_at_the_sides(start, gap):
    end = start + gap
    places = _label_places(start, end, k_ahead=gap > 0)
    # Screen offsets turned back to the plot's y-up frame, projected on the counterclockwise tangent at
    # each tip: the hand ahead counterclockwise moves counterclockwise, the other clockwise.
    ahead_q, ahead_k = gap < 0, gap > 0
    for angle, dy, ahead in ((start, places["dy"][0], ahead_q), (end, places["dy"][1], ahead_k)):
        along = -dy * math.cos(angle)  # the tangent's y part is cos(angle); screen dy points down
        if abs(math.cos(angle)) > 0.05:
            assert (along > 0) == ahead
    for angle, align in ((start, places["align"][0]), (end, places["align"][1])):
        if abs(math.cos(angle)) > 0.3:  # near the sides the text runs towards the centre
            assert align == ("left" if math.cos(angle) < 0 else "right")


@pytest.mark.parametrize(("q_deg", "k_deg"), [(-10, -96), (167, 60), (190, 300), (20, 170)])
def test_a_label_running_inwards_sits_off_its_own_hand_when_the_hands_are_far_apart(q_deg, k_deg):
    """At pos 3, k 2 (pair 0) the q hand points at -10 degrees and its label, running inwards along the
    hand on the side away from the k hand, hid the hand. With the hands far apart, the label sits on the
    tip's outer side (away from the horizontal axis), where the hand, on its way to the centre, is not."""
    start, end = math.radians(q_deg), math.radians(k_deg)
    assert abs(math.remainder(end - start, 2 * math.pi)) >= CLOSE
    between = math.degrees(math.remainder(end - start, 2 * math.pi))
    places = _label_places(start, end, k_ahead=between >= 0)
    for angle, dy in ((start, places["dy"][0]), (end, places["dy"][1])):
        if abs(math.cos(angle)) > 0.3:  # a side tip: its label runs inwards
            assert (dy < 0) == (math.sin(angle) >= 0), "screen dy < 0 is up: above the tip when it is above"


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_colour_limit_covers_the_largest_score_and_leaves_no_more_than_a_third_unused(top):
    limit = colour_limit(top)
    assert top <= limit <= top * 4 / 3 * (1 + 1e-9)  # at least three quarters of the scale in use
    mantissa = limit / 10 ** math.floor(math.log10(limit) + 1e-12)
    assert any(math.isclose(mantissa, nice, rel_tol=1e-9) for nice in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10))


def test_a_base_step_keeps_the_colour_scale_and_sends_the_scores_only():
    """Many base steps leave both colour scales alone (at d_model 32: 7 of the 17), so each matrix gets
    one change (its new scores), not three (scores, low, high), each of which makes the browser recolour
    every cell; the m and n columns are never resent."""
    from bokeh.document import Document
    from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent

    state = ExplorerState(d_model=32, T=24)
    section = RotaryPosition(state)
    doc = Document()
    for root in (pn.Column(*section.layout()).get_root(doc),):
        doc.add_root(root)
    events: list = []
    doc.on_change(events.append)
    kept = 0
    for base in BASES[1:]:
        events.clear()
        state.base = base
        scores = [e for e in events if isinstance(e, ColumnDataChangedEvent)
                  and e.model.name in ("rope_scores", "additive_scores")]
        assert scores and all(list(e.cols) == ["score"] for e in scores)
        colours = [e for e in events if isinstance(e, ModelChangedEvent) and e.attr in ("low", "high")]
        kept += not colours
        for mapper in section.mappers:
            assert mapper.low == -mapper.high
    assert kept >= len(BASES[1:]) // 3
    rope = np.abs(core.rope_scores(*section.head()[3:], 24, state.base)).max()
    assert section.mappers[0].high == colour_limit(rope)


def test_presented_hand_labels_keep_their_larger_type_off_the_hands():
    """In presentation type 1.8 times taller, "q at m = 0" beside a level hand covered it (16 px from the tip): the
    labels stand as much further off."""
    reading = RotaryPosition(ExplorerState(lang="en", pos=0, k=3)).hands.data
    presented = RotaryPosition(ExplorerState(lang="en", pos=0, k=3, present=True)).hands.data
    for key in ("dx", "dy"):
        assert [abs(v) for v in presented[key]] == pytest.approx([abs(v) * 1.8 for v in reading[key]], abs=0.11)
    assert presented["align"] == reading["align"]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_text_calls_the_cell_mark_what_the_figure_draws(lang):
    """The text spoke of a ring where the figures draw a square frame around the cell (a rect glyph)."""
    from bokeh.models import Rect

    from app.model.strings import STRINGS_DIR

    section = RotaryPosition(ExplorerState(lang=lang))
    marks = [r.glyph for fig in section.figures for r in fig.renderers if r.name and r.name.endswith("_cell_mark")]
    assert len(marks) == 2 and all(isinstance(glyph, Rect) and glyph.width == glyph.height for glyph in marks)
    words = (STRINGS_DIR / lang / "rope.md").read_text(encoding="utf-8").lower()
    assert ("square outline" if lang == "en" else "recuadro") in words
    assert not any(re.search(rf"\b{ring}\b", words) for ring in ("ring", "ringed", "anillo", "circle", "círculo"))
