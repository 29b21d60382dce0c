"""The Dockerfile's start and health-check commands, run here (there is no Docker engine)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from app.server import free_port
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def instruction(name: str) -> str:
    """The last instruction ``name`` of the Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    lines = [line for line in joined.splitlines() if line.startswith(name + " ")]
    assert lines, f"no {name} in the Dockerfile"
    return lines[-1][len(name) + 1:].strip()


def image_env() -> dict[str, str]:
    """The ENV of the image: KEY=VALUE pairs."""
    return dict(re.findall(r"(\w+)=(\S+)", instruction("ENV")))


def test_image_runs_as_a_non_root_user():
    assert instruction("USER") not in ("root", "0")


def test_start_command_serves_and_healthcheck_passes():
    command = json.loads(instruction("CMD"))
    assert command[:3] == ["python", "-m", "app"] and "0.0.0.0" in command
    port = free_port()
    env = {**os.environ, **image_env(), "PE_PORT": str(port), "PE_ALLOWED_ORIGINS": f"example.org,localhost:{port}"}
    process = subprocess.Popen([sys.executable, *command[1:]], cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def page_served() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    return response.status == 200
            except OSError:
                assert process.poll() is None, process.stdout.read().decode()
                return False

        wait_until(page_served, timeout=60, interval=0.2, message="the container's start command never served /")
        health = json.loads(instruction("HEALTHCHECK").split("CMD", 1)[1])
        result = subprocess.run([sys.executable, *health[1:]], env=env, capture_output=True, timeout=30)
        assert result.returncode == 0, result.stderr.decode()
    finally:
        process.terminate()
        process.wait(timeout=20)
        # The image runs one worker per core (PE_NUM_PROCS=0); none may outlive the parent.
        wait_until(lambda: subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True).returncode == 1,
                   timeout=20, interval=0.1, message="server workers outlived the start command")


def test_healthcheck_fails_when_nothing_listens():
    health = json.loads(instruction("HEALTHCHECK").split("CMD", 1)[1])
    env = {**os.environ, "PE_PORT": str(free_port())}
    result = subprocess.run([sys.executable, *health[1:]], env=env, capture_output=True, timeout=30)
    assert result.returncode != 0
