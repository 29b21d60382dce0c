"""Section «sum»: the width each choice leaves, the ladder a reserve can hold, the cross terms of the sum.

Expected values are derived here without the functions under test: wavelengths as 2π·base^(2i/r),
scores as plain sums of cosines, the cross terms as what is left of (e+PE)·(e'+PE') once e·e' and
PE·PE' are taken away.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Plot
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.prose import section_prose
from app.model.state import ExplorerState
from components.lesson.sum import SumOrConcatenate
from tests.helpers import row_by_hand

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")




# --------------------------------------------------------------------------
# The core
# --------------------------------------------------------------------------

def test_the_lessons_example_64_of_512():
    lam = core.concatenated_wavelengths(64)
    assert lam.size == 32
    assert lam[0] == pytest.approx(2 * math.pi)
    assert lam[-1] == pytest.approx(2 * math.pi * 10_000 ** (1 - 2 / 64))
    assert core.concatenated_wavelengths(0).size == 0


@settings(max_examples=40, deadline=None)
@given(r=st.integers(1, 64).map(lambda h: 2 * h), base=st.sampled_from([2, 100, 10_000, 1_000_000]),
       k=st.integers(-300, 300))
def test_reserved_ladder_and_scores_by_hand(r, base, k):
    expected = [2 * math.pi * base ** (2 * i / r) for i in range(r // 2)]
    np.testing.assert_allclose(core.concatenated_wavelengths(r, base), expected, rtol=1e-12)
    by_hand = math.fsum(math.cos(k / base ** (2 * i / r)) for i in range(r // 2))
    assert float(core.concatenated_scores(k, r, base)) == pytest.approx(by_hand, abs=1e-9)
    assert float(core.concatenated_scores(0, r, base)) == r / 2
    assert float(core.concatenated_scores(k, 0, base)) == 0.0


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 16).map(lambda h: 2 * h), T=st.integers(1, 30), data=st.data())
def test_cross_terms_are_what_the_sum_adds(d, T, data):
    k = data.draw(st.integers(-(T + 1), T + 1))
    starts, cross = core.cross_terms_by_start(k, T, d)
    e = core.embeddings(T, d)
    expected = []
    for m in range(T):
        if 0 <= m + k < T:
            p, q = row_by_hand(m, d), row_by_hand(m + k, d)
            expected.append((e[m] + p) @ (e[m + k] + q) - e[m] @ e[m + k] - p @ q)
    assert starts.tolist() == [m for m in range(T) if 0 <= m + k < T]
    np.testing.assert_allclose(cross, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("k", [0, 5])
def test_cross_terms_spread_as_predicted(k):
    _, cross = core.cross_terms_by_start(k, 2048, 128)
    assert abs(cross.mean()) < 0.15 * core.cross_term_spread(k, 128)
    assert cross.std() == pytest.approx(math.sqrt(128 if k == 0 else 64), rel=0.08)
    assert core.cross_term_spread(k, 128) == pytest.approx(math.sqrt(128 if k == 0 else 64))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: core.concatenated_wavelengths(5), "reserve must be an even integer >= 0"),
    (lambda: core.concatenated_scores(1, -2), "reserve must be an even integer >= 0"),
    (lambda: core.cross_term_spread(0.5, 32), "k must be an integer"),
    (lambda: core.cross_terms_by_start_of(np.zeros((3, 8)), np.zeros((4, 8)), 1), "e must have the shape of pe"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------
# The section, without a browser
# --------------------------------------------------------------------------

@pytest.fixture
def section() -> tuple[ExplorerState, SumOrConcatenate]:
    state = ExplorerState(d_model=32, T=24, k=3, reserve=4, lang="en")
    return state, SumOrConcatenate(state)


def test_width_and_ladders_follow_the_reserve_in_place(section):
    state, view = section
    width, reserved = view.width, view.reserved
    assert list(width.data["part"]) == ["shared", "meaning", "position"]
    assert list(width.data["left"]) == [0, 0, 28] and list(width.data["right"]) == [32, 28, 32]
    assert len(view.ladder.data["pair"]) == 16 and len(reserved.data["pair"]) == 2
    state.reserve = 10
    assert view.width is width and view.reserved is reserved
    assert list(width.data["right"]) == [32, 22, 32]
    np.testing.assert_allclose(reserved.data["wavelength"], [2 * math.pi * 10_000 ** (2 * i / 10) for i in range(5)])
    assert np.isfinite(width.data["x"]).all()
    state.reserve = 0
    assert len(reserved.data["pair"]) == 0 and list(width.data["left"]) == [0, 0, 32]
    # A part with no width has no bar and no label drawn ("position: 0" sat over the meaning bar).
    assert math.isnan(width.data["x"][2]) and np.isfinite(np.asarray(width.data["x"])[:2]).all()
    state.reserve = 32
    assert math.isnan(width.data["x"][1]) and np.isfinite(np.asarray(width.data["x"])[[0, 2]]).all()


def test_at_either_end_of_the_reserve_a_sentence_replaces_the_ladders_comparison(section):
    """At r = d_model the passage compared "16 instead of 16"; at r = 0 "0 instead of 16 … = —"."""
    state, view = section
    view.__panel__()
    assert not view.passage("ladder").hidden and view.ladder_note.object == ""
    state.reserve = 32
    assert view.passage("ladder").hidden and "rung for rung" in view.ladder_note.object
    np.testing.assert_allclose(view.reserved.data["wavelength"], view.ladder.data["wavelength"], rtol=1e-12)
    state.reserve = 0
    assert view.passage("ladder").hidden and "nothing is reserved" in view.ladder_note.object
    state.reserve = 2  # one reserved pair: a single rung, no climb and no steps to compare
    assert view.passage("ladder").hidden and "only one pair fits" in view.ladder_note.object
    assert "16 rungs up to 35\u202f332.9" in view.ladder_note.object  # 2π·10000^(30/32), a narrow no-break space
    state.reserve = 4
    assert not view.passage("ladder").hidden and view.ladder_note.object == ""


def test_a_width_step_that_moves_the_reserve_draws_once(section, monkeypatch):
    """A d_model step keeps the reserve's share of the width (4 of 32 becomes 6 of 48): the state sets the
    reserve first (its watchers run with the new d_model in place), then d_model's own watchers run. The
    reserved ladder is computed once for the figure and once for the live numbers, at the new reserve."""
    state, view = section
    view.__panel__()
    calls = []
    real = core.concatenated_wavelengths
    monkeypatch.setattr(core, "concatenated_wavelengths", lambda *args: calls.append(args) or real(*args))
    state.d_model = 48
    assert state.reserve == 6
    assert [c[0] for c in calls] == [6, 6]
    assert list(view.width.data["right"]) == [48, 42, 48] and len(view.reserved.data["pair"]) == 3


def test_cross_terms_and_levels_follow_k(section):
    state, view = section
    np.testing.assert_allclose(view.cross.data["cross"], core.cross_terms_by_start(3, 24, 32)[1], atol=1e-12)
    levels = dict(zip(view.levels.data["kind"], view.levels.data["y"], strict=True))
    assert levels["sum"] == pytest.approx(12.272398, abs=1e-6) and levels["zero"] == 0
    assert levels["concat"] == pytest.approx(math.cos(3) + math.cos(3 / 100), abs=1e-12)
    source = view.cross
    state.k = -2
    assert view.cross is source
    assert np.asarray(source.data["m"]).tolist() == list(range(2, 24))
    np.testing.assert_allclose(source.data["cross"], core.cross_terms_by_start(-2, 24, 32)[1], atol=1e-12)


def test_the_lessons_example_in_the_live_numbers():
    state = ExplorerState(d_model=512, T=24, reserve=64, lang="es")
    values = SumOrConcatenate(state).live_values()
    assert values["meaning"] == "448" and values["reserved_pairs"] == "32" and values["pairs"] == "256"
    assert values["reserved_half"] == "32" and values["half"] == "256"
    assert set(section_prose("sum", "es").keys()) <= set(values)
    assert set(section_prose("sum", "es").keys()) == set(section_prose("sum", "en").keys())


@pytest.mark.parametrize(("d_model", "reserve", "base"), [(32, 2, 10_000.0), (512, 64, 10_000.0), (8, 8, 500.0)])
def test_the_ladders_steps_are_base_to_the_two_over_width(d_model, reserve, base):
    # One reserved pair still has its step: base^(2/2) = base (it printed "—").
    values = SumOrConcatenate(ExplorerState(d_model=d_model, reserve=reserve, base=base, lang="en")).live_values()
    assert float(values["reserved_step"].replace("\u202f", "")) == pytest.approx(base ** (2 / reserve), abs=0.005)
    assert float(values["step"].replace("\u202f", "")) == pytest.approx(base ** (2 / d_model), abs=0.005)


def test_every_figure_and_source_is_named_and_listed():
    view = SumOrConcatenate(ExplorerState(lang="en"))
    root = pn.panel(view).get_root(Document())
    models = [m for m in root.references() if isinstance(m, Plot) or (isinstance(m, ColumnDataSource) and m.data)]
    names = [m.name for m in models]
    assert all(names) and len(set(names)) == len(names)
    assert all(name.startswith("sum_") for name in names)
    assert set(names) <= set(re.findall(r"`([a-z_]+)`", README))


@pytest.mark.parametrize("values", [{}, {"k": 1}, {"k": 5}, {"k": 2, "reserve": 16}, {"k": -3, "lang": "es"}])
def test_no_level_label_sits_on_a_dot(values):
    """Two level labels sat on cross-term dots. Measured at 1920 × 1080 (docs/screenshots): the figure's frame
    is about 1800 × 345 px, a 13 pt label about 9 px a character and 24 px high, a dot 11 px across. Each
    label's box, from those sizes and the figure's ranges, holds no dot's centre (grown by its radius)."""
    section = SumOrConcatenate(ExplorerState(**{"lang": "en", **values}))
    fig, levels, dots = section.cross_plot, section.levels.data, section.cross.data
    per_x = (fig.x_range.end - fig.x_range.start) / 1800
    per_y = (fig.y_range.end - fig.y_range.start) / 345
    m, cross = np.asarray(dots["m"], dtype=float), np.asarray(dots["cross"], dtype=float)
    for x, align, baseline, offset, y, label in zip(levels["x"], levels["align"], levels["baseline"],
                                                    levels["y_offset"], levels["y"], levels["label"], strict=True):
        width = 9 * len(label) * per_x
        left = x if align == "left" else x - width
        # Screen y runs down: "bottom" puts the text above its anchor, lifted by -offset px; "top" below it.
        bottom = y - offset * per_y if baseline == "bottom" else y - (offset + 24) * per_y
        inside = ((m >= left - 5.5 * per_x) & (m <= left + width + 5.5 * per_x)
                  & (cross >= bottom - 5.5 * per_y) & (cross <= bottom + (24 + 5.5) * per_y))
        assert not inside.any(), (label, m[inside], cross[inside])


#: A phone's cross-terms figure as measured at 360 and 390 px (Chromium, es and en): the smallest frame (px), a
#: label's line (13 pt with its padding) and the widest character, and the key's band from the frame's top.
PHONE_FRAME_PX, PHONE_LINE_PX, PHONE_CHAR_PX, PHONE_KEY_PX = (233, 331), 24, 9.5, 72


@pytest.mark.parametrize("values", [{}, {"lang": "es"}, {"k": 1}, {"k": 2, "reserve": 16, "lang": "es"},
                                    {"d_model": 128, "T": 96, "k": 20}, {"k": 0}, {"k": -3, "lang": "es"}])
def test_on_a_phone_the_level_labels_are_two_lines_inside_the_frame_apart_and_clear_of_the_key(values):
    """On a phone the labels are the ``_narrow`` columns, two lines each: every one inside the frame, on no other
    one and not in the key's band, at the phone's measured sizes."""
    section = SumOrConcatenate(ExplorerState(**{"lang": "en", **values}))
    fig, levels = section.cross_plot, section.levels.data
    per_x = (fig.x_range.end - fig.x_range.start) / PHONE_FRAME_PX[0]
    per_y = (fig.y_range.end - fig.y_range.start) / PHONE_FRAME_PX[1]
    boxes = []
    for x, align, baseline, offset, y, label in zip(
            levels["x_narrow"], levels["align_narrow"], levels["baseline_narrow"], levels["y_offset_narrow"],
            levels["y"], levels["label_narrow"], strict=True):
        lines = label.split("\n")
        assert len(lines) == 2 and lines[0].startswith(("PE·PE", "cross", "términos")), label
        width, height = PHONE_CHAR_PX * max(map(len, lines)) * per_x, PHONE_LINE_PX * len(lines) * per_y
        left = x if align == "left" else x - width
        bottom = y - offset * per_y if baseline == "bottom" else y - offset * per_y - height
        boxes.append((left, left + width, bottom, bottom + height, label))
    for left, right, bottom, top, label in boxes:
        assert fig.x_range.start <= left and right <= fig.x_range.end, label
        assert fig.y_range.start <= bottom and top <= fig.y_range.end - PHONE_KEY_PX * per_y, label
    for n, a in enumerate(boxes):
        for b in boxes[n + 1:]:
            assert not (a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]), (a[4], b[4])
