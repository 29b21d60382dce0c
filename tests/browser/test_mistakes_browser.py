"""The «mistakes» section in a real Chromium: the switch by keyboard changes mistake_norms to the
right numbers (a row length built here from the bug's formula), and the address loads a mistake."""

from __future__ import annotations

import math

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from tests.helpers import wait_for_source, wait_until

pytestmark = pytest.mark.browser


def norms_by_hand(T: int, d: int, column) -> np.ndarray:
    return np.array([math.sqrt(sum(column(pos, j, d) ** 2 for j in range(d))) for pos in range(T)])


def dim_index(pos: int, j: int, d: int) -> float:
    return (math.sin if j % 2 == 0 else math.cos)(pos / 10_000 ** (2 * j / d))


def sin_only(pos: int, j: int, d: int) -> float:
    return math.sin(pos / 10_000 ** (2 * (j // 2) / d))


def test_switch_changes_the_row_lengths(page, app_url, console_errors):
    page.goto(f"{app_url}/mistakes?lang=en&d_model=32&T=24&k=3")
    data = wait_for_source(page, "mistake_norms", lambda d: len(d["norm"]) == 24)
    np.testing.assert_allclose(data["norm"], 4.0, rtol=0, atol=1e-12)

    group = page.get_by_role("button", name="none (correct)")
    expect(group).to_have_count(1)
    # Keyboard only: the option is a button; focus it and press Enter.
    page.get_by_role("button", name="sines only").focus()
    page.keyboard.press("Enter")
    data = wait_for_source(page, "mistake_norms", lambda d: d["norm"][0] < 1e-12)
    np.testing.assert_allclose(data["norm"], norms_by_hand(24, 32, sin_only), rtol=0, atol=1e-12)
    # the samples now come from the bug's rows and leave the curve
    samples = wait_for_source(page, "mistakes_distance_samples", lambda d: np.max(np.abs(
        d["score"] - core.relative_scores(d["k"], 32))) > 1.0)
    table = np.array([[sin_only(pos, j, 32) for j in range(32)] for pos in range(24)])
    np.testing.assert_allclose(samples["score"], [table[int(p)] @ table[int(p + k)]
                                                  for p, k in zip(samples["p"], samples["k"], strict=True)],
                               rtol=0, atol=1e-12)
    expect(page.locator("p.ck").first).to_contain_text("rows measure 0.0000 to 3.1672")
    wait_until(lambda: "mistake=sin_only" in page.evaluate("() => window.location.href"),
               message="the address never took the mistake")
    assert console_errors == []


def test_address_loads_a_mistake(page, app_url, console_errors):
    page.goto(f"{app_url}/mistakes?lang=en&d_model=32&T=24&mistake=dim_index")
    data = wait_for_source(page, "mistake_norms", lambda d: len(d["norm"]) == 24 and abs(d["norm"][1] - 4) > 1e-3)
    np.testing.assert_allclose(data["norm"], norms_by_hand(24, 32, dim_index), rtol=0, atol=1e-12)
    bars = wait_for_source(page, "mistakes_ladder", lambda d: len(d["x"]) == 32)  # one bar per column under a bug
    np.testing.assert_allclose(bars["wavelength"], [2 * math.pi * 10_000 ** (2 * j / 32) for j in range(32)],
                               rtol=1e-9)
    expect(page.get_by_role("button", name="i read as column j")).to_have_count(1)
    assert console_errors == []


@pytest.mark.parametrize("route", ["shift", "explore"])
def test_a_mistake_carried_to_another_page_is_said_and_can_be_turned_off(page, app_url, route, console_errors):
    """The shift section's text says its checks pass to rounding; a mistake kept in the address from the
    mistakes section made them fail right under that sentence, with nothing saying why."""
    page.goto(f"{app_url}/{route}?lang=en&d_model=32&T=24&k=3&mistake=sin_only")
    note = page.get_by_role("status").filter(has_text="published variant “sines only”")
    expect(note).to_be_visible(timeout=20_000)
    expect(page.locator("p.ck").first).to_contain_text("rows measure 0.0000 to 3.1672")
    page.get_by_role("button", name="Back to the correct table").click()
    expect(page.locator("p.ck").first).to_contain_text("largest deviation", timeout=10_000)
    expect(page.locator("p.ck").first).not_to_contain_text("rows measure")
    expect(note).to_be_hidden()
    wait_until(lambda: "mistake=sin_only" not in page.evaluate("() => window.location.href"),
               message="the mistake stayed in the address")
    assert console_errors == []


def test_no_mistake_no_note(page, app_url):
    page.goto(f"{app_url}/shift?lang=en&d_model=32&T=24")
    expect(page.locator("p.ck").first).to_contain_text("largest deviation", timeout=20_000)
    assert page.get_by_role("status").filter(has_text="published variant").count() == 0


def test_bad_mistake_in_the_address_gives_a_notice(page, app_url):
    page.goto(f"{app_url}/mistakes?lang=en&mistake=%3Cb%3Ebad")
    data = wait_for_source(page, "mistake_norms", lambda d: len(d["norm"]) == 24)
    np.testing.assert_allclose(data["norm"], 4.0, rtol=0, atol=1e-12)
    expect(page.get_by_text("is not an option")).to_have_count(1)


def test_the_heatmaps_hover_names_each_columns_pair_and_function(page):
    # The hover's own code, run in Chromium for every column of every layout, against the bugs' formulas:
    # pair i's columns are (2i, 2i+1), or (i, d/2 + i) with every sine first; a sine on column 2i, on the
    # first half, or on every column when the cosines are gone.
    from app.model.state import ExplorerState
    from components.ladder import WavelengthLadder

    state = ExplorerState(lang="en", d_model=8, T=24)
    hover = WavelengthLadder(state)._column_hover
    d = 8
    by_hand = {
        "none": ([j // 2 for j in range(d)], ["sine" if j % 2 == 0 else "cosine" for j in range(d)]),
        "split_layout": ([j % (d // 2) for j in range(d)], ["sine" if j < d // 2 else "cosine" for j in range(d)]),
        "sin_only": ([j // 2 for j in range(d)], ["sine"] * d),
    }
    for mistake, (pairs, kinds) in by_hand.items():
        state.mistake = mistake
        shown = page.evaluate("""([code, args, d]) => {
            const f = new Function(...Object.keys(args), 'value', 'format', code);
            const run = (value, format) => f(...Object.values(args), value, format);
            return [...Array(d).keys()].map((j) => [run(j + 0.3, 'pair'), run(j + 0.7, 'kind'), run(j + 0.5, 'dim')]);
        }""", [hover.code, dict(hover.args), d])
        assert [int(p) for p, _, _ in shown] == pairs, mistake
        assert [k for _, k, _ in shown] == kinds, mistake
        assert [int(c) for _, _, c in shown] == list(range(d))
