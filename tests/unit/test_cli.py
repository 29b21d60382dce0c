"""``python -m app``: its options, and several server processes sharing one port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from app.__main__ import parse_args
from app.model import core
from app.model.strings import text
from app.server import free_port
from tests.helpers import press, wait_for_source, wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_and_environment(monkeypatch):
    for name in ("PE_PORT", "PE_ADDRESS", "PE_ALLOWED_ORIGINS", "PE_NUM_PROCS"):
        monkeypatch.delenv(name, raising=False)
    args = parse_args([])
    assert (args.port, args.address, args.allow_websocket_origin, args.num_procs) == (5006, None, [], 1)
    monkeypatch.setenv("PE_NUM_PROCS", "0")
    monkeypatch.setenv("PE_ALLOWED_ORIGINS", "example.org, localhost:80")
    args = parse_args([])
    assert args.num_procs == 0 and args.allow_websocket_origin == ["example.org", "localhost:80"]
    assert parse_args(["--num-procs", "3"]).num_procs == 3


def test_negative_process_count_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--num-procs", "-2"])
    assert "--num-procs must be 0 (one per core) or more" in capsys.readouterr().err


def pids_in_group(group: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,pgid="], capture_output=True, text=True).stdout
    return [int(pid) for pid, pgid in (line.split() for line in out.splitlines()) if int(pgid) == group]


@pytest.fixture(scope="module")
def two_process_url():
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1",
                                "--num-procs", "2"], cwd=ROOT, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"

    def alive() -> bool:
        assert process.poll() is None, process.stderr.read().decode()[-3000:]
        try:
            with urllib.request.urlopen(f"{url}/liveness", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    wait_until(alive, timeout=60, interval=0.2, message="python -m app --num-procs 2 never answered")
    try:
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)
        try:  # the workers get SIGTERM when the parent ends, and take a moment to stop
            wait_until(lambda: pids_in_group(process.pid) == [], timeout=20, interval=0.1,
                       message="server workers outlived their parent")
        finally:
            for pid in pids_in_group(process.pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.browser
def test_every_session_works_whichever_process_answers(page, two_process_url):
    url, process = two_process_url
    assert len(pids_in_group(process.pid)) == 3  # the parent and two workers
    # The page and its websocket may reach different workers; each load must still work.
    for k in (3, 5, 7, 9):
        page.goto(f"{url}/distance?lang=en&d_model=32&T=24&k={k}")
        wait_for_source(page, "distance_marker", lambda d, k=k: list(d["k"]) == [k])
        press(page, text("en", "k"), "ArrowRight")
        marker = wait_for_source(page, "distance_marker", lambda d, k=k: list(d["k"]) == [k + 1])
        np.testing.assert_allclose(marker["score"], [core.relative_scores(k + 1, 32)], rtol=1e-12)


def test_workers_stop_with_their_parent(two_process_url):
    _url, process = two_process_url
    process.terminate()
    process.wait(timeout=20)
    wait_until(lambda: pids_in_group(process.pid) == [], timeout=20, interval=0.1,
               message="server workers kept running after their parent was terminated")
