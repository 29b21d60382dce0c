"""Lesson section «shift»: M_k's corner, the block shown, and a matrix that pos leaves alone.

M_k is rebuilt here by hand, block by block with math.cos/math.sin, and the
identity PE[p + k] = M_k PE[p] is checked against rows built the same way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.prose import section_prose
from app.model.state import BASES, ExplorerState
from components.lesson.shift import MATRIX_SIZE, ShiftIsRotation, block_markup, signed
from tests.helpers import row_by_hand


def rotation_by_hand(k: float, d_model: int, base: float, size: int) -> np.ndarray:
    n = min(size, d_model)
    m = np.zeros((n, n))
    for i in range(n // 2):
        a = k / base ** (2 * i / d_model)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    return m




# --------------------------------------------------------------------------
# Core.
# --------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(d_half=st.integers(1, 200), k=st.integers(-2047, 2047), base=st.sampled_from(BASES),
       size=st.sampled_from([2, 8, 64]))
def test_corner_is_m_k_by_hand_and_orthonormal(d_half, k, base, size):
    d_model = 2 * d_half
    corner = core.rotation_corner(k, d_model, base, size)
    np.testing.assert_allclose(corner, rotation_by_hand(k, d_model, base, size), rtol=0, atol=1e-12)
    np.testing.assert_allclose(corner.T @ corner, np.eye(corner.shape[0]), rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(d_half=st.integers(1, 32), k=st.integers(-300, 300), p=st.integers(-300, 300))
def test_whole_matrix_moves_any_row_by_k(d_half, k, p):
    d_model = 2 * d_half
    m = core.rotation_corner(k, d_model, 10_000, 64)  # d_model <= 64: the whole M_k
    shifted = m @ row_by_hand(p, d_model, 10_000)
    np.testing.assert_allclose(shifted, row_by_hand(p + k, d_model, 10_000), rtol=0, atol=1e-9)
    assert np.linalg.norm(shifted) == pytest.approx(math.sqrt(d_model / 2))


@pytest.mark.parametrize(("args", "message"), [
    ((3, 32, 10_000, 63), "size must be an even integer >= 2; got 63"),
    ((3, 32, 10_000, 0), "size must be an even integer >= 2; got 0"),
    ((3, 31, 10_000, 64), "d_model must be an even integer >= 2; got 31"),
    ((float("nan"), 32, 10_000, 64), "k must be finite"),
    ((3, 32, 1.0, 64), "base must be a finite real number > 1"),
])
def test_corner_validates(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        core.rotation_corner(*args)


# --------------------------------------------------------------------------
# The section.
# --------------------------------------------------------------------------

@pytest.fixture
def section() -> ShiftIsRotation:
    return ShiftIsRotation(ExplorerState(d_model=32, T=24, base=10_000, k=3, pos=0, lang="en"))


def test_matrix_source_is_m_k_and_pos_does_not_touch_it(section):
    s = section.state
    source = section.matrix
    assert set(source.data) == {"image", "x", "y", "dw", "dh"}
    image = source.data["image"][0]
    assert image.dtype == np.float32 and image.shape == (32, 32)
    np.testing.assert_allclose(image, rotation_by_hand(3, 32, 10_000, 64), atol=1e-7)
    for pos in (5, 17, 23):
        s.pos = pos
        assert source.data["image"][0] is image  # not even reassigned: nothing is sent
    s.k = 4
    assert section.matrix is source
    np.testing.assert_allclose(source.data["image"][0], rotation_by_hand(4, 32, 10_000, 64), atol=1e-7)
    assert "M\u2084" in section.plot.title.text and "32 × 32" in section.plot.title.text


def test_wide_encoding_shows_the_corner_and_says_so(section):
    s = section.state
    s.d_model = 2  # one pair: one block, said without "its 1 blocks"
    assert "2 × 2, with one 2 × 2 block per pair (1 in all)" in section.note.object
    s.d_model = 512
    assert section.matrix.data["image"][0].shape == (MATRIX_SIZE, MATRIX_SIZE)
    assert section.matrix.data["dw"] == [64]
    np.testing.assert_allclose(section.matrix.data["image"][0], rotation_by_hand(3, 512, 10_000, 64), atol=1e-7)
    assert section.plot.title.text == "M\u2083: 64 × 64 corner of 512 × 512"
    assert "64 × 64" in section.note.object
    s.pair = 40
    assert section.outline.data["left"] == []
    assert "outside the corner" in section.block.object
    s.pair = 5
    assert section.outline.data == {"left": [10], "right": [12], "top": [10], "bottom": [12]}


def test_block_numbers_are_the_lesson_block(section):
    # Pair 0 turns 1 rad per position: for k = 3 the block is [[cos 3, sin 3], [-sin 3, cos 3]].
    markup = section.block.object
    c, s_ = math.cos(3), math.sin(3)
    for value in (c, s_, -s_):
        assert signed(value) in markup
    assert signed(c) == "−0.9900" and signed(s_) == "0.1411"
    # PE at 0 = (0, 1) goes to PE at 3 = (sin 3, cos 3).
    assert markup.index("PE at pos = 0") < markup.index("PE at pos + k = 3")
    section.state.pos = 7
    assert "PE at pos = 7" in section.block.object
    assert signed(math.sin(10)) in section.block.object and signed(math.cos(10)) in section.block.object


def test_every_change_writes_the_block_once_with_its_new_numbers(section, monkeypatch):
    """A d_model step moves the matrix and the pair's outline at once: the block is still built once."""
    from components.lesson import shift

    built = []
    monkeypatch.setattr(shift, "block_markup", lambda *args: built.append(args) or f"<p>{len(built)}</p>")
    s = section.state
    for name, value in (("d_model", 8), ("k", 5), ("pair", 2), ("pos", 4), ("base", 100.0), ("T", 30)):
        built.clear()
        setattr(s, name, value)
        expected = [] if name == "T" else [("en", s.pair, s.k, s.pos, s.d_model, s.base)]
        assert built == expected, name


def test_block_markup_is_escaped():
    assert "<script" not in block_markup("en", 0, 3, 0, 32, 10_000)


def test_live_values_and_checks(section):
    for lang in ("es", "en"):
        assert section_prose("shift", lang).keys() <= set(section.live_values())
    values = section.live_values()
    assert values["norm"] == "4" and values["k"] == "3" and values["angle"] == "3.000"
    section.state.pair = 15
    # 3 · 10000^(-30/32) = 5.335e-4 rad: four significant digits, as the block's caption prints it
    # (four decimals read 0.0005 here beside 0.0005335 in the caption).
    assert section.live_values()["angle"] == "0.0005335"
    words = section.checks.rotation.object.rsplit(" ", 1)[-1].rstrip(".</p>")
    assert float(words) < 1e-13


def test_signed_has_no_negative_zero():
    assert signed(-0.00001) == "0.0000" and signed(-1) == "−1.0000"


def test_the_block_caption_keeps_a_slow_pairs_angle():
    # Pair 15 of 32 at base 10 000, k = 3: 3 · 10000^(-15/16) = 5.335e-4 rad (four decimals printed 0.0005,
    # and at d_model 1024, base 10^6 the caption read 0.0000 for an angle of 3e-6).
    assert "angle ω·k = 0.0005335 rad" in block_markup("en", 15, 3, 0, 32, 10_000.0)
    assert f"{3 * 1e6 ** (-1022 / 1024):.4g}" == "3.082e-06"
    assert "angle ω·k = 0.000003082 rad" in block_markup("en", 511, 3, 0, 1024, 1e6)
