"""redis-server and deploy/run-local (nginx + app processes) as plain processes on free loopback ports.

Each is started with its own temporary directory, waited for with a bounded poll and stopped
(SIGTERM, then SIGKILL after a bounded wait) when its ``with`` block ends. Missing binaries skip
the test locally and fail it under CI=true, like Chromium for the browser tests.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def need(binary: str) -> str:
    """The path of ``binary`` (also looked for in /usr/sbin); skip, or fail under CI=true, without it."""
    path = shutil.which(binary) or (f"/usr/sbin/{binary}" if os.access(f"/usr/sbin/{binary}", os.X_OK) else None)
    if path is None:
        message = f"{binary} is not installed (bash tests/install.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def _stop(process: subprocess.Popen, timeout: float = 20.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextmanager
def redis_server(timeout: float = 20.0) -> Iterator[str]:
    """A redis-server of its own on loopback, no persistence; yields its URL."""
    binary = need("redis-server")
    port = free_port()
    folder = tempfile.mkdtemp(prefix="pe-test-redis-")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "",
                                "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
                               stdout=subprocess.DEVNULL)
    try:
        import redis

        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)  # polling interval
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(process)
        shutil.rmtree(folder, ignore_errors=True)


class RedisProcess:
    """A redis-server on a fixed loopback port that a test stops, starts again (empty), pauses and resumes."""

    def __init__(self, port: int | None = None) -> None:
        self.binary = need("redis-server")
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = tempfile.mkdtemp(prefix="pe-test-redis-")
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> None:
        """Start it (no persistence: it starts empty) and wait, bounded, until it answers."""
        import redis

        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.folder, "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"], stdout=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)  # polling interval
        client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.resume()
            _stop(self.process)
            self.process = None

    def pause(self) -> None:
        """SIGSTOP: it keeps its connections open and answers nothing (a stalled Redis)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def redis_process(start: bool = True) -> Iterator[RedisProcess]:
    """A ``RedisProcess`` (started unless ``start`` is false), stopped and removed when the block ends."""
    server = RedisProcess()
    try:
        if start:
            server.start()
        yield server
    finally:
        server.close()


def get(url: str, cookie: str | None = None, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, dict(response.headers.items()), response.read()


def answers(url: str) -> bool:
    try:
        return get(url, timeout=2)[0] == 200
    except OSError:
        return False


@contextmanager
def run_local(procs: int = 2, redis_url: str = "", timeout: float = 120.0,
              status_file: Path | None = None) -> Iterator[str]:
    """``deploy/run-local`` with ``procs`` app processes (session stats on); yields nginx's base URL.

    With ``status_file``, run-local keeps its children's pids and ports there (``run_local_status``)."""
    need("nginx")
    port = free_port()
    command = [sys.executable, str(ROOT / "deploy" / "run-local"), "--port", str(port), "--procs", str(procs)]
    if redis_url:
        command += ["--redis-url", redis_url]
    if status_file is not None:
        command += ["--status-file", str(status_file)]
    env = {**os.environ, "PE_SESSION_STATS": "1"}
    env.pop("PE_REDIS_URL", None)
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        # The status file is written once every process answers, after nginx's first answer.
        while not (answers(f"{url}/liveness") and (status_file is None or status_file.exists())):
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"deploy/run-local did not answer on {url}")
            time.sleep(0.1)  # polling interval
        yield url
    finally:
        _stop(process, timeout=30)


def run_local_status(path: Path) -> dict:
    """run-local's ``--status-file``: ``{"apps": [{"pid", "port", "answering", "restarts", ...}], "nginx": {...}}``."""
    return json.loads(path.read_text())


def live_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that still run (zombies left to an init that does not reap them aside)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # it ended while we looked
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def sessions_of(url: str, cookie: str) -> dict:
    """The app process that ``cookie`` reaches through nginx: its pid and the sessions it built."""
    return json.loads(get(f"{url}/pe_sessions", cookie=cookie)[2])


def keys_per_process(url: str, processes: int, tries: int = 64) -> dict[int, str]:
    """One nginx cookie key (``pe_backend``) per app process: pid -> key (random keys until each is hit)."""
    found: dict[int, str] = {}
    for _ in range(tries):
        key = secrets.token_hex(16)
        found.setdefault(sessions_of(url, f"pe_backend={key}")["pid"], key)
        if len(found) == processes:
            return found
    raise AssertionError(f"{tries} keys reached only {len(found)} of {processes} processes")
