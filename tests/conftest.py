"""Shared fixtures: the app served in-process, and Debian's Chromium for Playwright."""

from __future__ import annotations

import os
import shutil

import pytest

from app.server import running

CHROMIUM = os.environ.get("PE_CHROMIUM", "/usr/bin/chromium")
#: Without the background-networking flags Chromium keeps dialling out, and this
#: machine's closed network refuses every attempt.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def app_url():
    """Base URL of the explorable, served in this process on a free loopback port."""
    with running() as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Launch Debian's Chromium; under CI a missing browser fails the run instead of skipping."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        message = f"Chromium not found at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def console_errors(page):
    """Errors the page logs or throws; tests assert it stays empty."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


@pytest.fixture
def local_bus(monkeypatch):
    """This process's in-memory room bus (no Redis, one process), fresh for the test."""
    from components import roombus as rooms

    monkeypatch.delenv("PE_REDIS_URL", raising=False)
    monkeypatch.setenv("PE_NUM_PROCS", "1")
    monkeypatch.delenv("PE_PROCESSES", raising=False)
    rooms.reset_bus()
    yield rooms.bus()
    rooms.reset_bus()
