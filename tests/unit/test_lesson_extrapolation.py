"""Section «extrapolation»: the angles and scores it draws, against NumPy written out here (not app.core).

The published formulas, by hand: Position Interpolation (Chen et al. 2023) turns every pair at
``ω_i·T_train/T``; NTK-aware scaling (bloc97 2023) raises the base to ``base·s^(d/(d−2))``; YaRN (Peng et
al. 2023) ramps from interpolation (fewer than 1 turn in training) to the trained pair (more than 32 turns);
ALiBi (Press et al. 2022) with 8 heads has slopes 1/2, 1/4, …, 1/256.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from components.lesson.extrapolation import PastTrainingLength, marked_pairs

D, T_TRAIN, T, BASE = 64, 32, 128, 10_000


def by_hand(d_model: int, T_train: int, T: int, base: float) -> dict[str, np.ndarray]:
    """Each ladder's frequencies, straight from the papers' formulas."""
    i = np.arange(d_model // 2)
    omega = base ** (-2.0 * i / d_model)
    s = max(1.0, T / T_train)
    turns = T_train * omega / (2 * np.pi)
    gamma = np.clip((turns - 1.0) / (32.0 - 1.0), 0.0, 1.0)
    return {
        "sinusoidal": omega,
        "interpolation": omega * T_train / T if T_train < T else omega,
        "ntk": (base * s ** (d_model / (d_model - 2))) ** (-2.0 * i / d_model),
        "yarn": (1 - gamma) * omega / s + gamma * omega,
    }


def unseen_by_hand(omega: np.ndarray, read: np.ndarray, T_train: int, T: int) -> list[int]:
    """1 for a pair that never turned in training and meets a larger angle at T, else 0."""
    reach = omega * (T_train - 1)
    return [int(r < 2 * np.pi and f * (T - 1) > r) for r, f in zip(reach, read, strict=True)]


def column(source, name: str) -> np.ndarray:
    return np.asarray(source.data[name], dtype=float)


@pytest.fixture
def section() -> PastTrainingLength:
    view = PastTrainingLength(ExplorerState(lang="en", d_model=D, T_train=T_TRAIN, T=T, base=BASE))
    view.__panel__()
    return view


def test_angles_of_every_ladder_against_the_training_reach(section):
    ladders = by_hand(D, T_TRAIN, T, BASE)
    omega = ladders["sinusoidal"]
    angles = section.angles
    np.testing.assert_array_equal(column(angles, "pair"), np.arange(D // 2))
    np.testing.assert_allclose(column(angles, "trained"), omega * (T_TRAIN - 1), rtol=1e-12)
    for name, read in ladders.items():
        np.testing.assert_allclose(column(angles, name), read * (T - 1), rtol=1e-12, err_msg=name)
        assert list(angles.data[f"unseen_{name}"]) == unseen_by_hand(omega, read, T_TRAIN, T), name
    # The numbers the module's docstring quotes for these sizes, and the ones the prose says.
    assert list(angles.data["unseen_sinusoidal"]).count(1) == 26
    values = section.live_values()
    assert values["never_turned"] == str(int(np.sum(omega * (T_TRAIN - 1) < 2 * np.pi))) == "26"
    assert values["unseen_interpolation"] == "26"  # every pair that never turned, by a fraction of a step
    assert values["scale"] == "4.00"
    assert values["ntk_base"] == f"{BASE * 4 ** (64 / 62):,.0f}".replace(",", "\u202f")
    assert values["yarn_factor"] == f"{0.1 * math.log(4) + 1:.3f}"


def test_ntk_keeps_pair_0_and_slows_the_last_pair_by_s(section):
    ntk, omega = column(section.angles, "ntk"), by_hand(D, T_TRAIN, T, BASE)["sinusoidal"]
    assert ntk[0] == pytest.approx(omega[0] * (T - 1))
    assert ntk[-1] == pytest.approx(omega[-1] * (T - 1) / 4)


def test_scores_past_the_edge(section):
    k = np.arange(T)
    scores = section.scores
    np.testing.assert_array_equal(column(scores, "k"), k)
    for name, read in by_hand(D, T_TRAIN, T, BASE).items():
        expected = np.array([sum(math.cos(f * step) for f in read) for step in k])
        np.testing.assert_allclose(column(scores, name), expected, atol=1e-9, err_msg=name)
    # Position Interpolation's curve is the trained one stretched s = 4 times along k.
    np.testing.assert_allclose(column(scores, "interpolation")[::4],
                               column(scores, "sinusoidal")[: T // 4], atol=1e-9)
    learned = column(scores, "learned")
    table = core.learned_table(T_TRAIN, D)  # the seeded stand-in rows themselves are data, not a formula
    np.testing.assert_allclose(learned[:T_TRAIN], [table[0] @ table[step] for step in range(T_TRAIN)], atol=1e-9)
    assert np.isnan(learned[T_TRAIN:]).all()  # no row past T_train - 1: a gap, never a number
    # The label sits at the far end of k, right-aligned: inside the frame whatever T_train is.
    assert section.no_value_label.visible and section.no_value_label.x == T - 0.5
    assert section.training_box.right == T_TRAIN - 0.5


def test_alibi_slopes_and_biases_for_8_heads(section):
    alibi = section.alibi.data
    assert alibi["head"] == list(range(1, 9))
    np.testing.assert_allclose(alibi["slope"], [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])
    for m, xs, ys in zip(alibi["slope"], alibi["xs"], alibi["ys"], strict=True):
        # A straight line from k = 0 to k = T - 1: its two ends draw every offset's -m |k|.
        np.testing.assert_array_equal(xs, [0, T - 1])
        np.testing.assert_allclose(ys, [0, -m * (T - 1)])
    assert section.live_values()["alibi_far"] == "\u221263.5"


def test_a_slider_step_updates_the_same_figures_and_sources_in_place(section):
    figures = (section.angles_figure, section.scores_figure)
    sources = (section.angles, section.scores, section.alibi)
    state = section.state
    state.T = 100
    state.T_train = 50
    state.base = 500
    assert (section.angles_figure, section.scores_figure) == figures
    assert (section.angles, section.scores, section.alibi) == sources
    ladders = by_hand(D, 50, 100, 500)
    for name, read in ladders.items():
        np.testing.assert_allclose(column(section.angles, name), read * 99, rtol=1e-12, err_msg=name)
        assert list(section.angles.data[f"unseen_{name}"]) == unseen_by_hand(ladders["sinusoidal"], read, 50, 100)
    assert len(section.scores.data["k"]) == 100
    assert np.isnan(column(section.scores, "learned")[50:]).all() and not np.isnan(column(section.scores,
                                                                                            "learned")[:50]).any()
    assert section.training_box.right == 49.5
    state.T = 40  # below T_train: the state brings T_train down with it, and the section follows
    assert state.T_train == 40
    assert not section.no_value_label.visible
    assert section.live_values()["unseen_sinusoidal"] == "0"
    assert set(section.angles.data["unseen_yarn"]) == {0}


def test_the_stretch_buttons_change_what_is_drawn_not_the_data(section):
    data = section.angles.data
    section.state.stretch = "yarn"
    assert section.angles.data is data
    assert section.stretched_curve.glyph.y == "yarn"
    assert {section.filters[("stretched", g)].column_name for g in ("seen", "unseen")} == {"unseen_yarn"}
    assert section.marks[("stretched", "unseen")].glyph.y == "yarn"
    label = section.stretched_item.label
    assert getattr(label, "value", label) == "YaRN, at T − 1 (filled)"
    # The trained ladder's marks keep their own column.
    assert section.filters[("trained", "unseen")].column_name == "unseen_sinusoidal"


def test_the_marks_thin_out_where_the_pairs_crowd_and_every_pair_keeps_its_bar(section):
    """At 512 pairs circles and triangles 2 px apart read as one band: marks are drawn on every 8th pair and on
    both sides of each change of shape, full size; the bars and the source keep every pair."""
    def marks() -> dict[tuple[str, str], float]:
        return {key: renderer.glyph.size for key, renderer in section.marks.items()}

    full = {("trained", "seen"): 13, ("trained", "unseen"): 16, ("stretched", "seen"): 13,
            ("stretched", "unseen"): 16}
    assert column(section.angles, "marked").tolist() == [1] * 32 and marks() == full  # 32 pairs: every one marked
    assert section.angles_figure.xaxis.axis_label == "pair i"
    section.state.param.update(d_model=1024)
    marked = np.flatnonzero(column(section.angles, "marked")).tolist()
    assert len(column(section.angles, "pair")) == 512 and marks() == full
    assert set(range(0, 512, 8)) <= set(marked) and 511 in marked
    # Where the trained ladder's pairs stop having turned in training: both sides marked, by hand.
    reach = BASE ** (-2.0 * np.arange(512) / 1024) * (T_TRAIN - 1)
    first_unturned = int(np.argmax(reach < 2 * np.pi))
    assert {first_unturned - 1, first_unturned} <= set(marked)
    assert len(marked) <= 64 + 1 + 4 * 4  # the stride, the last pair, two sides of at most two changes per ladder
    for renderer in section.marks.values():
        assert section.marked in renderer.view.filter.operands  # each mark renderer reads the one filter
    assert section.angles_figure.xaxis.axis_label == "pair i (a mark every 8 pairs, and where marks change shape)"
    section.state.d_model = 128  # 64 pairs: every one marked again
    assert column(section.angles, "marked").tolist() == [1] * 64
    assert section.angles_figure.xaxis.axis_label == "pair i"


@given(pairs=st.integers(65, 2048), cuts=st.lists(st.integers(1, 2047), max_size=4))
def test_marked_pairs_leave_no_gap_longer_than_the_stride_and_mark_every_change(pairs, cuts):
    flags = np.zeros(pairs, dtype=np.int8)
    for cut in cuts:
        flags[cut % pairs:] ^= 1  # a change of shape at each cut
    marked = marked_pairs({"one": flags}, pairs)
    stride = math.ceil(pairs / 64)
    assert marked == sorted(set(marked)) and marked[0] == 0 and marked[-1] == pairs - 1
    assert max(np.diff(marked)) <= stride
    for i in np.flatnonzero(np.diff(flags)) + 1:
        assert i - 1 in marked and i in marked


@pytest.mark.parametrize("sizes", [{"d_model": 2, "T": 1, "T_train": 1}, {"d_model": 2, "T": 5, "T_train": 1},
                                   {"d_model": 1024, "T": 2048, "T_train": 3}])
def test_the_edges_build_and_say_something(sizes):
    view = PastTrainingLength(ExplorerState(lang="es", **sizes))
    view.__panel__()
    values = view.live_values()
    assert all(values.values())
    assert view.describe()
    if sizes["d_model"] == 2:
        assert values["ntk_base"] == "indefinida con una sola pareja"
