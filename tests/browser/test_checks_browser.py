"""The live checks at the largest size in a real Chromium: the sentences come from the worker thread.

The server runs in this process (``app_url``), so the test wraps
``components.checks.run_later`` to see where the work and the writing ran, and
compares what the page prints with ``app.model.core``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from playwright.sync_api import expect

from app.model import core
from app.model.strings import text
from components import checks
from tests.helpers import wait_until

pytestmark = pytest.mark.browser

T_HANDLE = '.noUi-handle[aria-valuemin="1.0"][aria-valuemax="2048.0"]'
K_HANDLE = '.noUi-handle[aria-valuemin^="-"]'


def printed_numbers(card) -> tuple[int, float] | None:
    """(count, error) of the rotation sentence, once the card holds one."""
    words = card.inner_text().rstrip(". \n").split()
    return (int(words[-4]), float(words[-1])) if len(words) > 4 else None


def test_largest_table_checks_arrive_from_the_worker_and_are_right(page, app_url, monkeypatch, console_errors):
    where: dict[str, set[str]] = {"work": set(), "apply": set()}
    real = checks.run_later

    def recording(work, apply):
        def traced_work():
            where["work"].add(threading.current_thread().name)
            return work()

        def traced_apply(result):
            where["apply"].add(threading.current_thread().name)
            apply(result)

        real(traced_work, traced_apply)

    monkeypatch.setattr(checks, "run_later", recording)
    page.goto(f"{app_url}/checks?lang=en&d_model=1024&T=2048&k=3&pos=0")
    cards = page.locator("p.ck")
    expect(cards).to_have_count(3)
    expect(cards.nth(1)).to_contain_text("over 2045 positions")  # the page build checks inline

    page.locator(T_HANDLE).focus()
    page.locator(T_HANDLE).press("ArrowLeft")  # T = 2047: a new table, checked on the worker
    expect(cards.nth(1)).to_contain_text("over 2044 positions", timeout=15_000)
    count, error = wait_until(lambda: printed_numbers(cards.nth(1)), message="no rotation sentence")
    assert count == 2044
    assert error == pytest.approx(core.rotation_residual(3, 2047, 1024), rel=0.05) and error < 1e-11
    norm_error = float(cards.nth(0).inner_text().rstrip(". \n").split()[-1])
    expected = np.max(np.abs(np.linalg.norm(core.encoding(2047, 1024), axis=1) - np.sqrt(512)))
    assert norm_error == pytest.approx(expected, rel=0.05)
    expect(cards.nth(0)).to_contain_text(text("en", "check_norm", expected=np.sqrt(512), error=0).split(":")[0])

    # Three quick steps of k: each a new rotation; whatever arrives late for k = 4 or 5 is dropped.
    page.locator(K_HANDLE).focus()
    for _ in range(3):
        page.locator(K_HANDLE).press("ArrowRight")
    expect(cards.nth(2)).to_contain_text(text("en", "check_target_inside", target=6, positions="0 … 2046"))
    expect(cards.nth(1)).to_contain_text("over 2041 positions", timeout=15_000)
    count, error = wait_until(lambda: printed_numbers(cards.nth(1)), message="no rotation sentence")
    assert count == 2041 and error == pytest.approx(core.rotation_residual(6, 2047, 1024), rel=0.05)

    assert where["work"] and all(name.startswith("live-checks") for name in where["work"])
    assert where["apply"] and not any(name.startswith("live-checks") for name in where["apply"])
    assert console_errors == []
