"""A server stopped under an open page: the page says so in its language, comes back by itself when the
server answers again (same address, same view), and past its bound of reloads waits for its Reload button."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app.model.strings import text
from app.server import free_port
from tests.helpers import press, wait_for_source, wait_until

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
#: The page asks again after at most 10 s (components/connection.py), then reloads: the bound on its way back.
BACK_WITHIN_S = 20.0


def start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1"],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def alive() -> bool:
        assert process.poll() is None, "the server stopped"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    wait_until(alive, timeout=60, interval=0.2, message="the server never answered")
    return process


def stop_server(process: subprocess.Popen, signum: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(signum)
        process.wait(timeout=20)


def open_at_k4(page, port: int, lang: str):
    """The distance page with k moved from 3 to 4 by its slider (so k=4 is in the address); its alert locator."""
    page.goto(f"http://127.0.0.1:{port}/distance?lang={lang}&d_model=32&T=24&k=3")
    wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [3])
    alert = page.get_by_role("alert").filter(has_text=text(lang, "connection_lost"))
    assert alert.count() == 0 or not alert.is_visible()
    press(page, text(lang, "k"), "ArrowRight")
    wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4])
    wait_until(lambda: "k=4" in page.evaluate("() => window.location.href"),
               message="the slider did not write k=4 into the address")
    return alert


def reloaded(page) -> bool:
    """Whether the page is a new one (the marker set on the old one is gone)."""
    try:
        return page.evaluate("() => window.__pe_old_page === undefined")
    except Exception:  # Playwright's error while the page navigates
        return False


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_killed_server_is_announced_and_the_page_comes_back_by_itself(page, lang):
    port = free_port()
    server = start_server(port)
    try:
        alert = open_at_k4(page, port, lang)
        address = page.evaluate("() => window.location.href")
        page.evaluate("() => { window.__pe_old_page = true; }")

        stop_server(server, signal.SIGKILL)
        alert.wait_for(state="visible", timeout=20_000)
        assert alert.get_attribute("aria-live") == "assertive"
        assert alert.get_attribute("data-retry") == "on"
        assert text(lang, "connection_auto") in alert.inner_text()
        assert page.get_by_role("button", name=text(lang, "connection_reload")).is_visible()
        page.screenshot(path=f"/tmp/connection-lost-{lang}.png")

        server = start_server(port)
        answered = time.monotonic()
        wait_until(lambda: reloaded(page), timeout=BACK_WITHIN_S, interval=0.1,
                   message="the page did not reload by itself once the server answered")
        took = time.monotonic() - answered
        wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4], timeout=30)
        assert page.evaluate("() => window.location.href") == address
        assert not page.get_by_text(text(lang, "connection_lost")).is_visible()
        # The reload is counted for the tab's bound on reloads of its own.
        assert len(json.loads(page.evaluate("() => sessionStorage.getItem('pe-connection-reloads')"))) == 1
        print(f"back {took:.1f} s after the server answered")
    finally:
        stop_server(server)


def test_after_three_reloads_of_its_own_the_page_waits_for_its_reload_button(page):
    lang = "en"
    port = free_port()
    server = start_server(port)
    try:
        alert = open_at_k4(page, port, lang)
        # As if this tab had just reloaded itself three times (a websocket that fails as soon as it opens).
        page.evaluate("() => sessionStorage.setItem('pe-connection-reloads', JSON.stringify("
                      "[Date.now() - 3000, Date.now() - 2000, Date.now() - 1000]))")
        page.evaluate("() => { window.__pe_old_page = true; }")

        stop_server(server)
        alert.wait_for(state="visible", timeout=20_000)
        assert alert.get_attribute("data-retry") == "off"
        assert text(lang, "connection_auto") not in alert.inner_text()
        assert not reloaded(page)

        server = start_server(port)
        page.get_by_role("button", name=text(lang, "connection_reload")).click()
        wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4], timeout=30)
        assert reloaded(page)
        href = page.evaluate("() => window.location.href")
        assert "k=4" in href and f"lang={lang}" in href
        assert not page.get_by_text(text(lang, "connection_lost")).is_visible()
    finally:
        stop_server(server)
