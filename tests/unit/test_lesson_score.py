"""Section «score»: the four terms of q·k and the position-position term from every start.

Expected values are derived here without the functions under test: S(k) as a plain sum of
cosines, encoding rows from math.sin/math.cos, the four terms as (W_Q x_m)·(W_K x_n) taken
apart by hand, and the aligned claim from the angles read back out of W_Qᵀ W_K.
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
from components.lesson.score import WhatScoresSee
from tests.helpers import printed, row_by_hand

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")




def score_by_hand(k: float, d_model: int, base: float = 10_000) -> float:
    return math.fsum(math.cos(k / base ** (2 * i / d_model)) for i in range(d_model // 2))


def blocks_of(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale s_i and angle φ_i of every 2×2 block [[s cos φ, s sin φ], [−s sin φ, s cos φ]] on the diagonal."""
    c, s = np.diag(a)[0::2], a[np.arange(0, a.shape[0], 2), np.arange(1, a.shape[0], 2)]
    return np.hypot(c, s), np.arctan2(s, c)


# --------------------------------------------------------------------------
# The core
# --------------------------------------------------------------------------

def test_the_lessons_numbers():
    assert score_by_hand(0, 32) == 16
    assert round(score_by_hand(1, 32), 3) == 15.314
    assert round(score_by_hand(3, 32), 6) == 12.272398
    assert float(core.relative_scores(3, 32)) == pytest.approx(score_by_hand(3, 32), abs=1e-12)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_intros_example_of_a_curve_that_is_not_monotone(lang):
    # The passage quotes S(16) and S(19) at d_model 32 as its example of S rising again: both
    # numbers by hand, and the rise is real.
    intro = section_prose("score", lang).parts["intro"].html
    assert all(f">{tex}</span>" in intro for tex in ("7.925", "k = 16", "10.573", "k = 19"))
    assert round(score_by_hand(16, 32), 3) == 7.925 and round(score_by_hand(19, 32), 3) == 10.573
    assert score_by_hand(19, 32) > score_by_hand(16, 32)


@pytest.mark.parametrize("heads", core.HEADS)
def test_four_terms_add_up_to_q_dot_k(heads):
    T, d, m, n = 24, 32, 5, 9
    w_q, w_k = core.head_weights(d, heads)
    e = core.embeddings(T, d)
    x_m, x_n = e[m] + row_by_hand(m, d), e[n] + row_by_hand(n, d)
    terms = core.qk_terms(m, n, T, d, heads)
    assert terms.shape == (4,)
    assert terms.sum() == pytest.approx(float((w_q @ x_m) @ (w_k @ x_n)), abs=1e-10)
    # Each term alone: the query side from one part, the key side from one part.
    parts = {"e": (e[m], e[n]), "p": (row_by_hand(m, d), row_by_hand(n, d))}
    for value, name in zip(terms, core.SCORE_TERMS, strict=True):
        expected = (w_q @ parts[name[0]][0]) @ (w_k @ parts[name[1]][1])
        assert value == pytest.approx(float(expected), abs=1e-10), name


def test_aligned_weights_are_a_rotation_times_scaled_rotations():
    d = 16
    w_q, w_k = core.head_weights(d, "aligned")
    np.testing.assert_allclose(w_q.T @ w_q, np.eye(d), atol=1e-12)
    a = w_q.T @ w_k
    mask = np.kron(np.eye(d // 2), np.ones((2, 2))).astype(bool)
    np.testing.assert_allclose(a[~mask], 0, atol=1e-12)
    np.testing.assert_allclose(np.diag(a)[0::2], np.diag(a)[1::2], atol=1e-12)  # [[a, b], [-b, a]]
    np.testing.assert_allclose(a[np.arange(0, d, 2), np.arange(1, d, 2)], -a[np.arange(1, d, 2), np.arange(0, d, 2)],
                               atol=1e-12)
    np.testing.assert_allclose(core.query_key_matrix(d, "aligned"), a, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 24).map(lambda h: 2 * h), T=st.integers(1, 60), data=st.data(),
       base=st.sampled_from([10, 500, 10_000, 1_000_000]))
def test_aligned_position_term_is_a_function_of_the_distance(d, T, data, base):
    k = data.draw(st.integers(-(T - 1), T - 1))
    starts, values = core.position_term_by_start(k, T, d, "aligned", base)
    assert starts.tolist() == [m for m in range(T) if 0 <= m + k < T]
    scale, phi = blocks_of(core.query_key_matrix(d, "aligned"))
    expected = math.fsum(s * math.cos(k / base ** (2 * i / d) + f)
                         for i, (s, f) in enumerate(zip(scale, phi, strict=True)))
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9 * d)


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 16).map(lambda h: 2 * h), T=st.integers(1, 30), data=st.data())
def test_position_term_by_start_is_each_rows_product(d, T, data):
    k = data.draw(st.integers(-(T + 2), T + 2))
    heads = data.draw(st.sampled_from(core.HEADS))
    a = core.query_key_matrix(d, heads)
    starts, values = core.position_term_by_start(k, T, d, heads)
    expected = [row_by_hand(m, d) @ a @ row_by_hand(m + k, d) for m in range(T) if 0 <= m + k < T]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-10)
    assert len(starts) == len(expected)
    # With A = I it is the score curve itself, at every start.
    pe = core.encoding(T, d)
    _, plain = core.position_term_by_start_of(pe, pe, k)
    np.testing.assert_allclose(plain, score_by_hand(k, d), rtol=0, atol=1e-10)


def test_random_heads_spread_out_with_the_start():
    _, values = core.position_term_by_start(3, 24, 32, "random")
    assert values.max() - values.min() > 1.0
    _, aligned = core.position_term_by_start(3, 24, 32, "aligned")
    assert aligned.max() - aligned.min() < 1e-12


def test_embeddings_do_not_depend_on_T_and_are_as_long_as_PE_on_average():
    np.testing.assert_array_equal(core.embeddings(10, 32), core.embeddings(200, 32)[:10])
    big = core.embeddings(512, 256)
    assert np.mean(np.sum(big ** 2, axis=1)) == pytest.approx(256 / 2, rel=0.02)
    assert not np.array_equal(core.embeddings(4, 32, seed=1), core.embeddings(4, 32))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: core.head_weights(32, "learned"), "heads must be one of"),
    (lambda: core.head_weights(31), "d_model must be an even integer"),
    (lambda: core.qk_terms(0, 24, 24, 32), r"n must be an integer in 0 \.\. T-1 = 23"),
    (lambda: core.qk_terms(-1, 2, 24, 32), "m must be an integer >= 0"),
    (lambda: core.position_term_by_start(1.5, 24, 32), "k must be an integer"),
    (lambda: core.position_term_by_start_of(np.zeros((4, 6)), np.zeros((4, 8)), 1), "pe_a must have the shape"),
    (lambda: core.qk_terms_of(np.zeros((4, 8)), np.zeros((4, 8)), np.zeros((6, 6)), 0, 1), "a must have shape"),
    (lambda: core.embeddings(0, 32), "T must be an integer >= 1"),
    (lambda: core.embeddings(4, 32, seed=-1), "seed must be an integer >= 0"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------
# The section, without a browser
# --------------------------------------------------------------------------

@pytest.fixture
def section() -> tuple[ExplorerState, WhatScoresSee]:
    state = ExplorerState(d_model=32, T=24, k=3, pos=0, lang="en")
    return state, WhatScoresSee(state)


def test_terms_follow_pos_k_and_heads_in_place(section):
    state, view = section
    source = view.terms
    assert list(source.data["term"]) == ["ee", "ep", "pe", "pp"]
    np.testing.assert_allclose(source.data["value"], core.qk_terms(0, 3, 24, 32, "random"), atol=1e-12)
    state.pos = 7
    assert view.terms is source
    np.testing.assert_allclose(source.data["value"], core.qk_terms(7, 10, 24, 32, "random"), atol=1e-12)
    state.heads = "aligned"
    np.testing.assert_allclose(source.data["value"], core.qk_terms(7, 10, 24, 32, "aligned"), atol=1e-12)
    total = core.qk_terms(7, 10, 24, 32, "aligned").sum()
    # "score", not qᵀk: k is the offset on this page (n = pos + k), not the key vector.
    assert "score = e·e + e·p + p·e + p·p = " + printed(total, ".3f") in view.total.object


def test_pp_by_start_is_flat_only_with_aligned_heads(section):
    state, view = section
    source = view.by_start
    values = np.asarray(source.data["value"])
    assert np.asarray(source.data["m"]).tolist() == list(range(21))
    assert values.max() - values.min() > 1.0
    state.heads = "aligned"
    assert view.by_start is source
    values = np.asarray(source.data["value"])
    assert values.max() - values.min() < 1e-12
    state.k = -5
    assert np.asarray(source.data["m"]).tolist() == list(range(5, 24))
    np.testing.assert_allclose(source.data["value"], core.position_term_by_start(-5, 24, 32, "aligned")[1], atol=1e-12)


def test_marker_is_the_start_pos_and_equals_the_pp_bar(section):
    state, view = section
    state.pos = 4
    assert np.asarray(view.marker.data["m"]).tolist() == [4]
    assert view.marker.data["value"][0] == pytest.approx(view.terms.data["value"][3], abs=1e-12)


def test_target_outside_the_table_empties_the_bars_and_says_why(section):
    state, view = section
    state.pos = 23
    assert np.isnan(view.terms.data["value"]).all()
    assert "26 falls outside the table" in view.total.object


def test_size_change_rebuilds_tables(section):
    state, view = section
    state.d_model = 8
    np.testing.assert_allclose(view.terms.data["value"], core.qk_terms(0, 3, 24, 8, "random"), atol=1e-12)
    state.T = 3  # k is clamped to 2 in the same step
    assert state.k == 2
    np.testing.assert_allclose(view.by_start.data["value"], core.position_term_by_start(2, 3, 8)[1], atol=1e-12)


def test_live_numbers(section):
    _, view = section
    values = view.live_values()
    assert values["half"] == "16" and values["S_one"] == "15.314" and values["S_k"] == "12.272"
    assert values["dots_level"] == "all 21 dots stand at one height" and values["target"] == "3"
    assert set(section_prose("score", "en").keys()) <= set(values)
    assert set(section_prose("score", "es").keys()) == set(section_prose("score", "en").keys())


def test_the_spread_of_pp_is_said_as_a_range_or_as_one_value(section):
    state, view = section
    _, pp = core.position_term_by_start(3, 24, 32, "random")
    assert view.live_values()["pp_range"] == f"they range from {printed(pp.min(), '.3f')} to {printed(pp.max(), '.3f')}"
    state.k = 23  # one start only: m = 0
    _, pp = core.position_term_by_start(23, 24, 32, "random")
    assert pp.size == 1
    assert view.live_values()["pp_range"] == f"there is only one start, and it gives {printed(pp[0], '.3f')}"
    assert view.live_values()["dots_level"] == "the dots stand at one height (here only one fits)"
    state.lang = "es"
    assert view.live_values()["pp_range"].startswith("solo hay una posición de partida")
    assert view.live_values()["dots_level"] == "los puntos quedan a la misma altura (aquí solo cabe uno)"
    state.k = 3
    assert view.live_values()["dots_level"] == "los 21 puntos quedan a la misma altura"


def test_every_figure_and_source_is_named_and_listed():
    view = WhatScoresSee(ExplorerState(lang="en"))
    root = pn.panel(view).get_root(Document())
    models = [m for m in root.references() if isinstance(m, Plot) or (isinstance(m, ColumnDataSource) and m.data)]
    names = [m.name for m in models]
    assert all(names) and len(set(names)) == len(names)
    assert {"qk_terms", "pp_by_start", "score_terms_plot", "score_pp_plot"} <= set(names)
    assert set(names) <= set(re.findall(r"`([a-z_]+)`", README))


def test_aligned_heads_say_one_value_for_every_start():
    """With aligned heads p·p is the same for every start: "from −4.954 to −4.954" said it as a range."""
    section = WhatScoresSee(ExplorerState(lang="en", heads="aligned"))
    starts, pp = section.pp_by_start()
    assert starts.size > 1 and np.ptp(pp) < 1e-9
    assert section.live_values()["pp_range"] == f"they all give {pp[0]:.3f}".replace("-", "\u2212")
    assert " to " in WhatScoresSee(ExplorerState(lang="en", heads="random")).live_values()["pp_range"]
