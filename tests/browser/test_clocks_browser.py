"""The pair clocks in a real Chromium: the hands in the page are app.core's, and they move."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from app.model.strings import text
from components.clocks import SENT_DECIMALS
from components.theme import COLORS
from tests.helpers import press, slider_handle, source_data, wait_for_source, wait_until

pytestmark = pytest.mark.browser

#: The row's hand angles are sent rounded to SENT_DECIMALS: a tip within half of that of the exact one.
F32 = 10.0 ** -SENT_DECIMALS


#: The strip's hands point in one of 256 directions: within half a step of the exact one.
STRIP = np.pi / 256 + 1e-9


def strip_angle(data: dict) -> np.ndarray:
    """The strip's Bokeh angles, decoded from its one-byte direction codes."""
    return np.asarray(data["angle_code"], dtype=float) * 2 * np.pi / 256


def rows(positions: list[int], d_model: int) -> np.ndarray:
    return core.encoding_rows(np.asarray(positions, dtype=float), d_model)


def row_matches(data: dict, pos: int, k: int, d_model: int, pairs: range) -> bool:
    """The row's hands (rays of one radius, by Bokeh's angle) end at centre + (PE[p, 2i], PE[p, 2i+1]) for p = pos
    and pos + k."""
    if data["pair"].astype(int).tolist() != list(pairs):
        return False
    pe = rows([pos, pos + k], d_model)
    cols = np.array(pairs)
    return all(np.allclose(np.cos(data[f"{hand}_angle"]), pe[p, 2 * cols], atol=F32)
               and np.allclose(np.sin(data[f"{hand}_angle"]), pe[p, 2 * cols + 1], atol=F32)
               for p, hand in enumerate(("pos", "target")))


def big_clock_matches(data: dict, pair: int, pos: int, k: int, d_model: int) -> bool:
    pe = rows([pos, pos + k], d_model)
    return (data["position"].astype(int).tolist() == [pos, pos + k]
            and np.allclose(data["x"], pe[:, 2 * pair], atol=F32)
            and np.allclose(data["y"], pe[:, 2 * pair + 1], atol=F32))


def count_sends(page, name: str) -> None:
    """From now on, count in ``window.__sends[name]`` every new data the page's source receives."""
    page.evaluate("""(name) => {
      window.__sends = window.__sends ?? {};
      window.__sends[name] = 0;
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name(name);
        if (m) {
          m.properties.data.change.connect(() => window.__sends[name]++);
          m.streaming.connect(() => window.__sends[name]++);
          m.patching.connect(() => window.__sends[name]++);
        }
      }
    }""", name)


def sends(page, name: str) -> int:
    return page.evaluate("(name) => window.__sends[name]", name)


def test_clocks_page_shows_core_numbers_and_follows_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=en&d_model=32&T=24&k=3")
    row = wait_for_source(page, "clocks", lambda d: len(d["pair"]) == 9)
    assert row_matches(row, 0, 3, 32, range(9))
    # Pair 0 turns one radian per position: at pos + k = 3 its hand is 3 rad clockwise from 12 o'clock, Bokeh's
    # angle pi/2 - 3.
    assert abs(row["target_angle"][0] - (np.pi / 2 - 3)) < F32
    assert big_clock_matches(source_data(page, "pair_clock"), 0, 0, 3, 32)
    strip = source_data(page, "clock_strip")
    assert len(strip["angle_code"]) == 16
    # Each tiny hand points along (PE[pos, 2i], PE[pos, 2i+1]); Bokeh angles run anticlockwise from +x.
    np.testing.assert_allclose(np.sin(strip_angle(strip)), rows([0], 32)[0, 1::2], atol=STRIP)
    np.testing.assert_allclose(np.cos(strip_angle(strip)), rows([0], 32)[0, 0::2], atol=STRIP)
    expect(page.get_by_role("heading", name=text("en", "block_title", pair=0, k=3), exact=True)).to_be_visible()
    count_sends(page, "clock_strip")
    count_sends(page, "clock_faces")

    press(page, text("en", "k"), "ArrowRight")
    wait_for_source(page, "clocks", lambda d: row_matches(d, 0, 4, 32, range(9)))
    wait_for_source(page, "pair_clock", lambda d: big_clock_matches(d, 0, 0, 4, 32))
    expect(page.get_by_role("heading", name=text("en", "block_title", pair=0, k=4), exact=True)).to_be_visible()
    assert sends(page, "clock_strip") == 0 and sends(page, "clock_faces") == 0  # k moves hands only

    press(page, text("en", "pos"), "ArrowRight", times=2)
    wait_for_source(page, "clocks", lambda d: row_matches(d, 2, 4, 32, range(9)))
    wait_for_source(page, "pair_clock", lambda d: big_clock_matches(d, 0, 2, 4, 32))
    strip = wait_for_source(page, "clock_strip", lambda d: np.allclose(np.cos(strip_angle(d)), rows([2], 32)[0, 0::2],
                                                                      atol=STRIP))
    np.testing.assert_allclose(np.sin(strip_angle(strip)), rows([2], 32)[0, 1::2], atol=STRIP)
    assert sends(page, "clock_strip") >= 1 and sends(page, "clock_faces") == 0

    press(page, text("en", "pair"), "ArrowRight", times=6)
    # Pair 6 is past the middle of the first window: the row slides to 2 .. 10.
    wait_for_source(page, "pair_clock", lambda d: big_clock_matches(d, 6, 2, 4, 32))
    faces = wait_for_source(page, "clock_faces", lambda d: d["pair"].astype(int).tolist() == list(range(2, 11)))
    assert list(faces["line_color"]).index(COLORS["selected"]) == 4
    wait_for_source(page, "clocks", lambda d: row_matches(d, 2, 4, 32, range(2, 11)))
    span = source_data(page, "clock_strip_span")
    assert span["left"].tolist() == [1.5] and span["right"].tolist() == [10.5]
    assert console_errors == []


def test_play_turns_pos_forward_and_loops(page, app_url, console_errors):
    page.goto(f"{app_url}/clocks?lang=es&d_model=32&T=5&k=1")
    wait_for_source(page, "clocks", lambda d: len(d["pair"]) == 9)
    pos_handle = slider_handle(page, text("es", "pos"))
    expect(pos_handle).to_have_attribute("aria-valuenow", "0.0")
    play = page.get_by_role("button", name=text("es", "animation_play"))
    expect(play).to_have_count(1)

    seen: list[int] = []

    def wrapped() -> bool:
        seen.append(int(float(pos_handle.get_attribute("aria-valuenow"))))
        return 4 in seen and seen[-1] < 4 and seen.index(4) < len(seen) - 1

    play.click()
    # Forward one step at a time up to T - 1 = 4, then round to the start again.
    wait_until(wrapped, timeout=20, message="pos never went round")
    page.get_by_role("button", name=text("es", "animation_pause")).click()
    # Samples may miss a frame on a busy machine, so: it went up, and it only ever
    # came down to the start of the loop.
    moves = [(a, b) for a, b in itertools.pairwise(seen) if b != a]
    assert any(b > a for a, b in moves), seen
    assert all(b <= 1 for a, b in moves if b < a), seen

    # The clocks followed: whatever pos the player stopped at, the hands are there
    # (read together, since a step may still be on its way when pause is pressed).
    def hands_at_slider_pos() -> bool:
        pos = int(float(pos_handle.get_attribute("aria-valuenow")))
        return (big_clock_matches(source_data(page, "pair_clock"), 0, pos, 1, 32)
                and row_matches(source_data(page, "clocks"), pos, 1, 32, range(9)))

    wait_until(hands_at_slider_pos, message="the hands are not where the pos slider says")
    assert console_errors == []
