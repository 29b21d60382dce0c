"""The app with every speed patch off (``PE_STOCK=1``), in Chromium: one route per kind of page still works.

An upgrade of Panel or Bokeh that moves a private name turns the patch using it off
(``components.internals``); these tests hold that the app is then still right, only slower: a lesson
section, ``/explore``, a single view and a room, each driven by the keyboard and compared with
``app.model.core``. The server runs as its own process (``python -m app``), as a deployment does, since
the patches are process-wide.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from app.model import core
from app.model.prose import section_prose
from app.model.state import BASES
from app.model.strings import text
from components.ladder import heatmap_values
from tests.helpers import model_property, plots_drawn, press, source_data, wait_for_source, wait_until
from tests.servers import _stop, answers, free_port

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stock_server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """``python -m app`` with ``PE_STOCK=1`` on a free loopback port; yields its URL and its log file."""
    port = free_port()
    log = tmp_path_factory.mktemp("stock") / "server.log"
    env = {**os.environ, "PE_STOCK": "1"}
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1"],
                                   cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(f"{url}/liveness") or process.poll() is not None, timeout=90,
                   message="the stock server never answered")
        assert process.poll() is None, log.read_text(errors="replace")
        yield url, log
    finally:
        _stop(process)


@pytest.fixture
def stock_url(stock_server) -> str:
    return stock_server[0]


def test_the_stock_server_runs_without_its_speed_patches(stock_server):
    """The mode is on (the server says so once per patch), so the tests below do test stock behaviour."""
    _, log = stock_server
    said = log.read_text(errors="replace")
    line = next((line for line in said.splitlines() if "speed patches off (stock" in line), "")
    # Those asked before the server starts; "no delay" and the page scripts are asked per connection and page.
    for patch in ("fast widgets", "cached defaults", "cached references"):
        assert patch in line, said[-2000:]


def test_a_stock_page_carries_its_own_title_in_its_html(stock_server):
    """The page's own title, in its language, is in the HTML itself, before any script, with no patch: pn.serve
    gives every session of a route one title (Spanish) and Panel's default is "Panel Application"."""
    url, _ = stock_server
    for route, lang, section in (("/?lang=es", "es", None), ("/clocks?lang=en", "en", None),
                                 ("/shift?lang=es", "es", "shift"), ("/shift?lang=en", "en", "shift")):
        words = [text(lang, "page_title")] + ([section_prose(section, lang).title] if section else [])
        with urllib.request.urlopen(f"{url}{route}", timeout=30) as response:
            said = html.unescape(re.search(r"<title>(.*?)</title>", response.read().decode()).group(1))
        assert all(word in said for word in words), (route, said)


def test_a_lesson_section_follows_its_offset_slider(page, stock_url, console_errors):
    page.goto(f"{stock_url}/shift?lang=en&d_model=32&T=24&k=3&pos=0")

    def is_m_k(k: int):
        def check(data: dict) -> bool:
            image = np.asarray(data["image"][0], dtype=float)
            return image.shape == (32, 32) and np.allclose(image, core.rotation(k, 32), atol=1e-6)
        return check

    wait_for_source(page, "rotation_matrix", is_m_k(3), timeout=40)
    press(page, "offset k", "ArrowRight")
    wait_for_source(page, "rotation_matrix", is_m_k(4), timeout=20)
    assert console_errors == []


def test_explore_follows_d_model_and_the_discrete_base_slider(page, stock_url, console_errors):
    page.goto(f"{stock_url}/explore?lang=en&d_model=32&T=24")
    wait_for_source(page, "heatmap", lambda d: len(d["image"]) == 1, timeout=40)
    press(page, text("en", "d_model"), "ArrowRight", times=2)
    data = wait_for_source(page, "heatmap", lambda d: d["image"][0].shape == (24, 36), timeout=20)
    np.testing.assert_allclose(heatmap_values(data["image"][0]), core.encoding(24, 36), atol=1.0 / 256 + 1e-6)

    # The base slider is a DiscreteSlider: in stock mode Panel's own title (a Div above an untitled
    # inner slider), so its handle is found by the accessible name the page gives it (components/a11y.py).
    handle = page.locator(f'.noUi-handle[aria-label="{text("en", "base")}"]')
    assert handle.count() == 1
    assert float(handle.get_attribute("aria-valuemax")) == len(BASES) - 1
    handle.focus()
    handle.press("ArrowLeft")

    def base_in_address() -> float | None:
        query = parse_qs(urlparse(page.evaluate("() => location.href")).query)
        return float(query["base"][0]) if "base" in query else None

    base = wait_until(lambda: base_in_address() not in (None, 10000.0) and base_in_address(), timeout=20,
                      message="the base slider did not move the state")
    ladder = wait_for_source(page, "ladder", lambda d: np.allclose(d["wavelength"], core.wavelengths(36, base)),
                             timeout=20)
    assert len(ladder["wavelength"]) == 18
    assert console_errors == []


def test_a_single_view_follows_its_slider(page, stock_url, console_errors):
    page.goto(f"{stock_url}/distance?lang=en&d_model=32&T=24&k=3")
    marker = wait_for_source(page, "distance_marker", timeout=40)
    k = int(marker["k"][0])
    press(page, text("en", "k"), "ArrowRight", times=2)
    marker = wait_for_source(page, "distance_marker", lambda d: int(d["k"][0]) == k + 2, timeout=20)
    assert float(np.asarray(marker["score"])[0]) == pytest.approx(core.relative_scores(k + 2, 32), abs=1e-6)
    assert console_errors == []


def test_a_room_follower_follows_the_teacher(browser, stock_url):
    teacher = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US").new_page()
    student = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US").new_page()
    errors: list[str] = []
    for page in (teacher, student):
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        teacher.goto(f"{stock_url}/explore?lang=en")
        wait_until(lambda: plots_drawn(teacher, 1), timeout=40, message="the teacher's page was not drawn")
        teacher.get_by_role("button", name=text("en", "room_start")).click()
        link = wait_until(lambda: model_property(teacher, "room_link", "text"), timeout=20, message="no join link")
        student.goto(link)
        wait_for_source(student, "distance_marker", timeout=40)
        wait_until(lambda: model_property(student, "room_box", "mode") == "following", timeout=20,
                   message="the student's page is not following")
        k = int(source_data(teacher, "distance_marker")["k"][0])
        press(teacher, text("en", "k"), "ArrowRight", times=2)
        wait_until(lambda: int(source_data(student, "distance_marker")["k"][0]) == k + 2, timeout=20,
                   message="the student's page did not follow k")
    finally:
        teacher.context.close()
        student.context.close()
    assert errors == []
