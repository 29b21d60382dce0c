"""The integer sliders' own link to the state (``components.controls.linked_slider``): what from_param's did.

Each check sets one side and reads the other; the expected values come from the state's documented bounds
(k within ±(T − 1), pos within 0 … T − 1), not from the link.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.state import ExplorerState
from app.model.strings import text
from components.controls import widget_for
from components.widgets import FastIntSlider


@pytest.fixture
def state() -> ExplorerState:
    return ExplorerState(T=24, k=3, pos=5, lang="en")


def test_a_slider_starts_from_the_parameter(state):
    k, d_model = widget_for(state, "k"), widget_for(state, "d_model")
    assert isinstance(k, FastIntSlider)
    assert (k.value, k.value_throttled, k.start, k.end, k.step) == (3, 3, -23, 23, 1)
    assert (d_model.value, d_model.start, d_model.end, d_model.step) == (32, 2, 1024, 2)
    assert k.label == k.name == text("en", "k")


def test_the_two_sides_follow_each_other(state):
    k = widget_for(state, "k")
    state.k = -7
    assert k.value == -7
    k.value = 11
    assert state.k == 11


def test_a_narrower_table_narrows_the_slider_and_clamps_both_sides(state):
    k, pos = widget_for(state, "k"), widget_for(state, "pos")
    state.k = 20
    state.T = 10
    assert (k.start, k.end, k.value, state.k) == (-9, 9, 9, 9)
    assert (pos.end, pos.value) == (9, 5)


def test_a_value_past_the_state_s_bound_comes_back_as_the_bound(state):
    k = widget_for(state, "k")
    state.k = 23
    k.value = 40  # a slider drawn with older bounds: the state takes the nearest bound
    assert state.k == 23 and k.value == 23


@settings(max_examples=40, deadline=None)
@given(moves=st.lists(st.tuples(st.sampled_from(["state", "slider", "T"]), st.integers(-60, 60)), max_size=12))
def test_the_slider_always_shows_the_state_s_value_and_bounds(moves):
    state = ExplorerState(T=24, k=3, lang="es")
    k = widget_for(state, "k")
    for side, value in moves:
        if side == "T":
            state.T = max(1, min(abs(value), 2048))
        elif side == "state":
            state.k = value
        else:
            k.value = value
        assert (k.value, k.start, k.end) == (state.k, -(state.T - 1), state.T - 1)
        assert abs(state.k) <= state.T - 1
