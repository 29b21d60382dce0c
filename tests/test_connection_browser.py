"""A server restart under an open page: the page says so in its language, and a reload restores the view."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from app.model.strings import text
from app.server import free_port
from tests.helpers import press, wait_for_source, wait_until

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent


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


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_stopped_server_is_announced_and_a_reload_restores_the_view(page, lang):
    port = free_port()
    server = start_server(port)
    try:
        page.goto(f"http://127.0.0.1:{port}/distance?lang={lang}&d_model=32&T=24&k=3")
        wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [3])
        alert = page.get_by_role("alert").filter(has_text=text(lang, "connection_lost"))
        assert alert.count() == 0 or not alert.is_visible()
        press(page, text(lang, "k"), "ArrowRight")  # k = 4, written into the address by the slider
        wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4])
        wait_until(lambda: "k=4" in page.evaluate("() => window.location.href"),
                   message="the slider did not write k=4 into the address")

        stop_server(server)
        alert.wait_for(state="visible", timeout=20_000)
        assert alert.get_attribute("aria-live") == "assertive"
        button = page.get_by_role("button", name=text(lang, "connection_reload"))
        assert button.is_visible()
        page.screenshot(path=f"/tmp/connection-lost-{lang}.png")

        server = start_server(port)
        button.click()
        wait_for_source(page, "distance_marker", lambda d: list(d["k"]) == [4], timeout=30)
        href = page.evaluate("() => window.location.href")
        assert "k=4" in href and f"lang={lang}" in href
        assert not page.get_by_text(text(lang, "connection_lost")).is_visible()
    finally:
        stop_server(server)
