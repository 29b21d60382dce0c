"""``deploy/run-local``: N app processes on free loopback ports and nginx on one port, in the foreground.

    deploy/run-local --port 8080 --procs 2 [--redis-url redis://127.0.0.1:6379/0] [--public-name HOST[:PORT]]

nginx runs as a plain process (``nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'``) with its
pid, logs, temp and cache files in a temporary directory, never as a system service. SIGINT
(Ctrl-C) or SIGTERM stops every process it started and removes that directory; so does any of
them ending on its own. Rooms need ``--redis-url`` with more than one process (the app says so).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.nginx import render  # noqa: E402

#: Seconds an app process may take to answer /liveness, and nginx to answer.
START_TIMEOUT_S = 60.0
#: Seconds a process gets to stop after SIGTERM before SIGKILL.
STOP_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _die_with_parent() -> None:
    # A child ends when run-local ends, even if run-local is killed (Linux prctl PR_SET_PDEATHSIG).
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="deploy/run-local", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the port nginx listens on")
    parser.add_argument("--procs", type=int, default=2, help="app processes (default %(default)s)")
    parser.add_argument("--redis-url", default=os.environ.get("PE_REDIS_URL", ""),
                        help="Redis for rooms across processes (default: $PE_REDIS_URL)")
    parser.add_argument("--address", default="127.0.0.1", help="what nginx listens on (default %(default)s)")
    parser.add_argument("--public-name", action="append", default=[], metavar="HOST[:PORT]",
                        help="the name browsers use, when not localhost:PORT; repeat for more")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx", help="the nginx binary")
    args = parser.parse_args(argv)
    if args.procs < 1:
        parser.error(f"--procs must be 1 or more, not {args.procs}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stop["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    state_dir = tempfile.mkdtemp(prefix="pe-run-local-")
    os.chmod(state_dir, 0o755)  # nginx's workers (user nobody under root) write its temp files here
    children: list[subprocess.Popen] = []
    origins = [f"localhost:{args.port}", f"127.0.0.1:{args.port}", *args.public_name]
    try:
        ports = [free_port() for _ in range(args.procs)]
        env = {**os.environ, "PE_PROCESSES": str(args.procs)}  # python -m app asks for one BLAS thread itself
        if args.redis_url:
            env["PE_REDIS_URL"] = args.redis_url
        for port in ports:
            command = [sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1",
                       "--use-xheaders", "--num-procs", "1",
                       *[flag for origin in origins for flag in ("--allow-websocket-origin", origin)]]
            children.append(subprocess.Popen(command, cwd=ROOT, env=env, preexec_fn=_die_with_parent))
        deadline = time.monotonic() + START_TIMEOUT_S
        for port in ports:
            while not answers(f"http://127.0.0.1:{port}/liveness"):
                if time.monotonic() > deadline or stop["signal"] or any(c.poll() is not None for c in children):
                    raise RuntimeError(f"the app process on port {port} did not start")
                time.sleep(0.1)  # polling interval
        config = Path(state_dir, "nginx.conf")
        config.write_text(render([f"127.0.0.1:{port}" for port in ports], f"{args.address}:{args.port}", state_dir,
                                 error_log=f"{state_dir}/error.log"))
        children.append(subprocess.Popen(
            [args.nginx, "-p", state_dir, "-c", str(config), "-e", f"{state_dir}/error.log", "-g", "daemon off;"],
            preexec_fn=_die_with_parent))
        while not answers(f"http://127.0.0.1:{args.port}/liveness"):
            if time.monotonic() > deadline or stop["signal"] or children[-1].poll() is not None:
                log = Path(state_dir, "error.log")
                raise RuntimeError("nginx did not start: " + (log.read_text()[-2000:] if log.exists() else ""))
            time.sleep(0.1)  # polling interval
        rooms = "rooms through Redis" if args.redis_url else (
            "rooms in process" if args.procs == 1 else "rooms off (need --redis-url)")
        print(f"Serving the explorable on http://{args.address}:{args.port}/ through nginx: {args.procs} app "
              f"process(es) on ports {', '.join(map(str, ports))}; {rooms}. Ctrl-C stops all.", flush=True)
        while stop["signal"] is None:
            ended = [c for c in children if c.poll() is not None]
            if ended:
                print(f"run-local: {ended[0].args[0]} ended with {ended[0].returncode}; stopping", file=sys.stderr)
                return 1
            time.sleep(0.2)  # the foreground loop's tick, until a signal or a child's end
        return 0
    except RuntimeError as error:
        print(f"run-local: {error}", file=sys.stderr)
        return 1
    finally:
        for child in reversed(children):
            if child.poll() is None:
                child.send_signal(signal.SIGQUIT if child is children[-1] and len(children) > args.procs
                                  else signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in children:
            try:
                child.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
