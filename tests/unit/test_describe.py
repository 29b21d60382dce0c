"""Figure descriptions without a browser: the sentences say the numbers of the formulas, in both languages,
and follow the state."""

from __future__ import annotations

import math

import pytest

from app.lesson import SECTIONS
from app.model.state import ExplorerState
from components import checks, clocks, distance, ladder
from components.describe import Description


def omega(pair: int, d_model: int, base: float = 10000.0) -> float:
    """ωᵢ = base^(−2i/d), written out here rather than read from app.core."""
    return base ** (-2 * pair / d_model)


def test_clocks_sentence_has_the_pair_s_numbers():
    s = ExplorerState(lang="en", d_model=32, T=24, pair=3, pos=7, k=3)
    w = omega(3, 32)
    sentence = clocks.describe(s)
    assert f"Pair 3 turns {w:.4g} rad per position, wavelength {2 * math.pi / w:.1f}" in sentence
    assert f"at pos 7 its hand points at {(7 * w) % (2 * math.pi):.2f} rad" in sentence
    assert f"at pos + k = 10 at {(10 * w) % (2 * math.pi):.2f} rad" in sentence
    assert f"it turns ω·k = {3 * w:.4g} rad" in sentence
    # The slowest pair's speed keeps its digits (to three decimals it read 0.000 rad per position).
    slow = clocks.describe(ExplorerState(lang="en", d_model=32, T=24, pair=15, k=3))
    assert f"Pair 15 turns {omega(15, 32):.4g} rad per position" in slow and "0.0001778" in slow


def test_distance_sentence_is_the_lesson_s_score():
    s = ExplorerState(lang="en", d_model=32, T=24, k=3)
    score = sum(math.cos(3 * omega(i, 32)) for i in range(16))
    assert distance.describe(s).startswith(f"S(k) at k = 3: {score:.2f}; the maximum is S(0) = d_model/2 = 16")
    assert f"{score:.2f}" == "12.27"  # the first lesson's printed value


def test_ladder_sentence_counts_the_pairs_whose_wavelength_is_at_most_T():
    s = ExplorerState(lang="en", d_model=32, T=24, pair=2, pos=22, k=3)
    turning = sum(2 * math.pi / omega(i, 32) <= 24 for i in range(16))
    sentence = ladder.describe(s)
    assert f"Pairs with a wavelength of at most T = 24: {turning} of 16." in sentence
    assert "pos + k = 25 lies outside the table" in sentence
    s.mistake = "dim_index"
    assert "columns with a wavelength of at most T = 24: " in ladder.describe(s) and " of 32." in ladder.describe(s)


def test_checks_sentence():
    s = ExplorerState(lang="es", d_model=32, T=24, k=-5)
    sentence = checks.describe(s)
    # 24 - |-5| = 19 positions p have p + k in the table; with |k| = T - 1 only one does (no "las 1 posiciones").
    assert "√(d_model/2) = 4.000" in sentence and "(19 en total)" in sentence
    assert "(1 in all)" in checks.describe(ExplorerState(lang="en", d_model=32, T=24, k=23))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_section_describes_itself_in_its_language_or_leaves_it_to_its_view(lang):
    state = ExplorerState(lang=lang)
    for slug, section in SECTIONS.items():
        sentence = section(state).describe()
        if slug in ("wavelengths", "hands"):
            assert sentence == "", "the view shown there has its own description"
        elif section.controls:
            assert sentence, slug
            assert ("Valores ahora" if lang == "en" else "Values now") not in sentence, slug


def test_description_follows_the_state_and_sends_only_changes():
    state = ExplorerState(lang="en", d_model=32, k=3)
    calls = []

    def sentence(s: ExplorerState) -> str:
        calls.append(s.k)
        return f"k is {s.k}"

    described = Description(state, "Score", sentence, ("k",), name="score_description")
    assert described.text == "k is 3"
    state.k = 5
    assert described.text == "k is 5"
    state.pos = 4  # not followed
    assert calls == [3, 5]


def test_a_section_description_changes_with_its_slider():
    state = ExplorerState(lang="en", d_model=32, k=3)
    section = SECTIONS["terms"](state)
    described = section.description()
    assert described is not None and described.name == "terms_description"
    before = described.text
    state.k = 4
    terms = [math.cos(4 * omega(i, 32)) for i in range(16)]
    assert described.text != before and described.text.startswith(f"S(4) = {sum(terms):.4f}")
