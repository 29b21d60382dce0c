"""Section 5, «one clock per pair»: the pair clocks with live ω, wavelength and the turn ωᵢ·k."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.prose import section_prose
from app.model.state import ExplorerState
from app.model.strings import text
from components.lesson.hands import ClocksSection
from tests.helpers import parsed, press, source_data, wait_for_source, wait_until

_PROSE_VALUES = """(name) => {
  for (const doc of (window.Bokeh?.documents ?? [])) {
    const m = doc.get_model_by_name(name);
    if (m) return m.values instanceof Map ? Object.fromEntries(m.values) : m.values;
  }
  return null;
}"""


def omega(i: int, d_model: int, base: float = 10_000.0) -> float:
    """Pair i's speed, written out from the paper: 1 / base^(2i/d_model)."""
    return 1.0 / base ** (2 * i / d_model)


def test_lesson_numbers_at_the_default_state():
    values = ClocksSection(ExplorerState(lang="en")).live_values()
    # Pair 0 turns one radian per position: 2π ≈ 6.28 positions a turn, 3 rad for k = 3.
    assert values["omega"] == "1.000" and values["wavelength"] == "6.28"
    assert values["turn"] == "3.000" and values["turn_fraction"] == f"{3 / (2 * math.pi):.3f}" == "0.477"
    assert values["slowest"].startswith("the last of them, pair 15, turns 0.000178 rad per position")
    assert values["slowest"].endswith("it barely moves")
    assert values["target"] == "3"
    # One pair is no "last of them, pair 0": pair 0 turns a radian per position.
    one = ClocksSection(ExplorerState(lang="es", d_model=2)).live_values()["slowest"]
    assert "0" in one and "rápida" in one


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 64), data=st.data())
def test_live_numbers_follow_the_state(half, data):
    d_model = 2 * half
    pair = data.draw(st.integers(0, half - 1))
    k = data.draw(st.integers(-23, 23))
    base = data.draw(st.sampled_from([10, 1_000, 10_000, 1_000_000]))
    section = ClocksSection(ExplorerState(lang="en", d_model=d_model, base=base))
    section.state.param.update(pair=pair, k=k)
    w = omega(pair, d_model, base)
    values = section.live_values()
    # Four significant digits for ω and the turn, three for the fraction, however slow the pair:
    # a slow pair's ω printed to four decimals (0.0002) disagreed with its own wavelength.
    assert parsed(values["omega"]) == pytest.approx(w, rel=5e-4)
    assert parsed(values["wavelength"]) == pytest.approx(2 * math.pi / w, abs=5e-3)
    assert parsed(values["turn"]) == pytest.approx(w * k, rel=5e-4, abs=1e-300)
    assert parsed(values["turn_fraction"]) == pytest.approx(w * k / (2 * math.pi), rel=5e-3, abs=1e-300)
    assert "-" not in values["turn"] + values["turn_fraction"]  # a minus sign, not a hyphen


def test_the_slowest_pair_at_the_lesson_size_reads_consistently():
    # Pair 15 of 32 at base 10 000: ω = 10000^(-15/16) = 1.778e-4 rad, 2π/ω = 35 332.95 positions.
    section = ClocksSection(ExplorerState(lang="en"))
    section.state.param.update(pair=15, k=23)
    values = section.live_values()
    assert values["omega"] == "0.0001778" and values["wavelength"] == "35\u202f332.95"
    assert parsed(values["omega"]) * parsed(values["wavelength"]) == pytest.approx(2 * math.pi, rel=1e-3)
    assert values["turn"] == "0.004090" and values["turn_fraction"] == "0.000651"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_last_pair_barely_moves_only_where_it_does(lang):
    """"Barely moves at the paper's base" was said at every base: at base 2 the last pair of 32 turns
    0.52 rad a position and goes round almost twice within T = 24. The sentence now gives the last pair's
    turn per position and across the table, and says "barely moves" only under a tenth of a turn."""
    barely = {"en": "it barely moves", "es": "apenas se mueve"}[lang]
    goes_round = {"en": "goes round", "es": "da la vuelta"}[lang]
    for base, T, says in ((10_000, 24, barely), (2, 24, goes_round), (20, 24, None)):
        section = ClocksSection(ExplorerState(lang=lang, base=base, T=T))
        shown = section.live_values()["slowest"]
        w = omega(15, 32, base)
        across = w * (T - 1)
        numbers = [parsed(found) for found in re.findall(r"\d[\d.\u202f]*", shown.split(",", 2)[2])]
        assert numbers[0] == pytest.approx(w, rel=5e-3)
        assert numbers[1] == pytest.approx(across, rel=5e-3)
        assert numbers[2] == pytest.approx(across / (2 * math.pi), rel=5e-2)
        assert (barely in shown) == (across / (2 * math.pi) < 0.1)
        if says is not None:
            assert shown.endswith(says)
        else:  # base 20: 0.22 of a turn across the table, neither still nor round
            assert barely not in shown and goes_round not in shown
    # The numbers follow the state: the sentence is a live number of the section.
    section = ClocksSection(ExplorerState(lang=lang))
    section.state.base = 2
    assert section.live_values()["slowest"].endswith(goes_round)


def test_passages_and_view_update_in_place():
    state = ExplorerState(lang="es")
    section = ClocksSection(state)
    parts = section.layout()
    assert section.prose.title == "Un reloj por pareja"
    assert section_prose("hands", "en").title == "One clock per pair"
    assert set(section.prose.parts) == {"intro", "try", "play"}
    assert section.view in parts
    hands = section.view.pair_hands
    state.k = 5
    assert section.passage("try").values["turn"] == "5.000"
    assert section.view.pair_hands is hands
    # The pos+k hand tip is (sin 5, cos 5) for pair 0.
    np.testing.assert_allclose([hands.data["x"][1], hands.data["y"][1]], [math.sin(5), math.cos(5)], atol=1e-3)
    state.pair = 1
    assert section.passage("try").values["omega"] == f"{omega(1, 32):.4f}"


def test_the_try_passage_gives_way_to_a_note_at_one_position():
    """At T = 1 neither pos nor k can move: "raise k one step at a time" would ask for the impossible."""
    state = ExplorerState(lang="en", T=1)
    section = ClocksSection(state)
    section.__panel__()
    assert state.param.k.bounds == (0, 0) and state.param.pos.bounds == (0, 0)
    assert section.passage("play").hidden and "single position, 0" in section.one_position_note.object
    state.T = 2
    assert not section.passage("play").hidden and section.one_position_note.object == ""
    assert "one step at a time" in section.prose.parts["play"].html
    state.T, state.lang = 1, "es"
    assert "una sola posición, la 0" in section.one_position_note.object


@pytest.mark.browser
def test_hands_page_live_numbers_follow_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/hands?lang=en&d_model=32&T=24&k=3")

    def values() -> dict | None:
        return page.evaluate(_PROSE_VALUES, "hands_try_text")

    wait_until(lambda: (values() or {}).get("turn") == "3.000", message="the guide never showed ω·k = 3")
    wait_for_source(page, "pair_clock", lambda d: len(d["x"]) == 2)
    press(page, text("en", "k"), "ArrowRight")
    wait_until(lambda: (values() or {}).get("turn") == "4.000", message="k + 1 never reached the guide")
    big = wait_for_source(page, "pair_clock", lambda d: abs(d["x"][1] - math.sin(4)) < 2e-3)
    assert abs(big["y"][1] - math.cos(4)) < 2e-3
    press(page, text("en", "pair"), "ArrowRight")
    w1 = omega(1, 32)
    wait_until(lambda: (values() or {}).get("omega") == f"{w1:.4f}", message="pair 1's ω never shown")
    assert values()["turn"] == f"{4 * w1:.3f}"
    assert source_data(page, "clocks") is not None
    assert console_errors == []
