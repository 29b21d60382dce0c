"""``deploy/run-local``: N app processes on free loopback ports and nginx on one port, in the foreground, kept running.

    deploy/run-local --port 8080 --procs 2 [--redis-url redis://127.0.0.1:6379/0] [--public-name HOST[:PORT]]
                     [--status-file PATH]

nginx runs as a plain process (``nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'``) with its
pid, logs, temp and cache files in a temporary directory, never as a system service. Rooms need
``--redis-url`` with more than one process (the app says so).

A supervisor, not a fuse. When an app process or nginx ends on its own (a crash, the OOM killer, a
stray ``kill``), that one alone is started again, with the same command on the same port, after a
delay that doubles with each end in a row (0.5 s, 1 s, 2 s, ... at most 30 s); a process that has
answered and stayed up 30 s starts from 0.5 s again. The others keep running, and so do their
browsers' connections; nginx sends the dead process's browsers to another one meanwhile. Every end,
start and first answer after a start is a ``run-local:`` line. After 5 ends in a row (none of them
after 30 s of answering) a WARNING line says so, and the process is still started again, at most
every 30 s: in front of a class a process that comes back on its own is worth more than one start's
CPU every 30 s, and whatever kills it (memory, a port taken meanwhile) may go away. A restarted
process that does not answer within 60 s is killed, which counts as an end.

The first start is different: if a process does not answer within 60 s, or ends, run-local says so
and stops everything (a wrong nginx binary or a broken app will not mend itself).

Only SIGINT (Ctrl-C), SIGTERM or SIGHUP stops everything: nginx gets SIGQUIT, the app processes
SIGTERM; whatever still runs 10 s later is killed, and the temporary directory is removed.

Each child runs in a process group of its own, for two reasons: Ctrl-C in the terminal reaches
run-local alone, which stops the children in order; and nginx's workers, which outlive a killed
master and keep serving on its port (so a new master could not bind), are killed with their group.

``--status-file PATH``: a JSON file, rewritten (atomically) whenever a process starts, ends or first
answers: every process's name, pid (``null`` while it waits to be started again), port, whether it
answers, and its restarts. Tests and scripts read it instead of parsing the log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.nginx import render  # noqa: E402

#: Seconds an app process may take to answer /liveness, and nginx to answer.
START_TIMEOUT_S = 60.0
#: Seconds the processes get to stop after SIGTERM (nginx: SIGQUIT) before SIGKILL.
STOP_TIMEOUT_S = 10.0
#: The delay before the first restart after an end; it doubles with each end in a row ...
FIRST_DELAY_S = 0.5
#: ... up to this.
MAX_DELAY_S = 30.0
#: A process that answered and stayed up this long starts its delays again from FIRST_DELAY_S.
STABLE_S = 30.0
#: Ends in a row that earn a WARNING line (and again at each multiple).
ENDS_FOR_WARNING = 5
#: The supervisor's tick: how often it looks at its children.
TICK_S = 0.2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str, *, any_status: bool = False, timeout: float = 2.0) -> bool:
    """Whether ``url`` answers 200 (or, with ``any_status``, answers at all: nginx says 502 while no app does)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return any_status
    except OSError:
        return False


def _child_setup() -> None:
    # A group of its own (see the module's docstring), and the end of the child when run-local ends,
    # even if run-local is killed (Linux prctl PR_SET_PDEATHSIG).
    import ctypes

    os.setpgid(0, 0)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _signal_group(pgid: int, signum: int) -> None:
    # The group outlives its leader while any member (an orphaned nginx worker) lives; an empty group is gone.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _how_it_ended(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"exit code {code}"


def say(message: str, *, problem: bool = False) -> None:
    print(f"run-local: {message}", file=sys.stderr if problem else sys.stdout, flush=True)


@dataclass
class Supervised:
    """One child: how to start it, how to tell that it answers, and its restart history."""

    name: str
    port: int
    command: list[str]
    health_url: str
    any_status: bool = False
    env: dict[str, str] | None = None
    cwd: Path | None = None
    stop_signal: int = signal.SIGTERM
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    answering: bool = False
    restarts: int = 0
    ends_in_a_row: int = 0
    restart_at: float | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, preexec_fn=_child_setup)
        self.started_at = time.monotonic()
        self.answering = False
        self.restart_at = None
        say(f"{self.name} pid {self.process.pid} on port {self.port}")

    def answers(self) -> bool:
        # Short: a process that accepts but hangs must not hold up the watch over the others.
        return answers(self.health_url, any_status=self.any_status, timeout=0.5)

    def status(self) -> dict:
        return {"name": self.name, "pid": self.process.pid if self.process else None, "port": self.port,
                "answering": self.answering, "restarts": self.restarts, "ends_in_a_row": self.ends_in_a_row}


def restart_delay(ends_in_a_row: int) -> float:
    """Seconds before starting a process again after its ``ends_in_a_row``-th end in a row (1 or more)."""
    return min(FIRST_DELAY_S * 2 ** (ends_in_a_row - 1), MAX_DELAY_S)


def write_status(path: str | None, children: list[Supervised], *, stopping: bool = False) -> None:
    if not path:
        return
    apps = [child.status() for child in children if child.name != "nginx"]
    nginx = [child.status() for child in children if child.name == "nginx"]
    text = json.dumps({"pid": os.getpid(), "stopping": stopping, "apps": apps, "nginx": nginx[0] if nginx else None})
    partial = f"{path}.{os.getpid()}.tmp"
    Path(partial).write_text(text)
    os.replace(partial, path)  # a reader never sees half a file


def supervise_once(child: Supervised, status_path: str | None, children: list[Supervised]) -> None:
    """One tick for one child: notice its end, start it again when its delay is over, note its first answer."""
    now = time.monotonic()
    if child.process is not None and child.process.poll() is not None:
        pid, code = child.process.pid, child.process.returncode
        _signal_group(pid, signal.SIGKILL)  # nginx's orphaned workers still hold the port
        stayed_up = child.answering and now - child.started_at >= STABLE_S
        child.ends_in_a_row = 1 if stayed_up else child.ends_in_a_row + 1
        delay = restart_delay(child.ends_in_a_row)
        child.process, child.answering, child.ended_at, child.restart_at = None, False, now, now + delay
        say(f"{child.name} (pid {pid}, port {child.port}) ended with {_how_it_ended(code)}; "
            f"starting it again in {delay:g} s", problem=True)
        if child.ends_in_a_row >= ENDS_FOR_WARNING and child.ends_in_a_row % ENDS_FOR_WARNING == 0:
            say(f"WARNING: {child.name} ended {child.ends_in_a_row} times in a row without staying up "
                f"{STABLE_S:g} s; still starting it again, at most every {MAX_DELAY_S:g} s (its own lines above "
                "say why; Ctrl-C stops all)", problem=True)
        write_status(status_path, children)
    elif child.process is None and child.restart_at is not None and now >= child.restart_at:
        child.restarts += 1
        try:
            child.start()
        except OSError as error:  # its binary gone or not runnable: an end like any other, retried later
            child.ends_in_a_row += 1
            delay = restart_delay(child.ends_in_a_row)
            child.restart_at = now + delay
            say(f"{child.name} could not be started ({error}); trying again in {delay:g} s", problem=True)
        write_status(status_path, children)
    elif child.process is not None and not child.answering:
        if child.answers():
            child.answering = True
            say(f"{child.name} (pid {child.process.pid}) answers again, "
                f"{time.monotonic() - child.ended_at:.1f} s after it ended")
            write_status(status_path, children)
        elif now - child.started_at > START_TIMEOUT_S:
            say(f"{child.name} (pid {child.process.pid}) did not answer within {START_TIMEOUT_S:g} s; killing it",
                problem=True)
            _signal_group(child.process.pid, signal.SIGKILL)  # the next tick sees it end


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
    parser.add_argument("--status-file", default=None, metavar="PATH",
                        help="keep a JSON file of every process's pid, port and restarts there")
    args = parser.parse_args(argv)
    if args.procs < 1:
        parser.error(f"--procs must be 1 or more, not {args.procs}")
    if args.status_file and not Path(args.status_file).resolve().parent.is_dir():
        parser.error(f"--status-file: {Path(args.status_file).parent} is not a folder")
    return args


def _wait_for_first_answer(child: Supervised, deadline: float, stop: dict, log: Path | None = None) -> None:
    while not child.answers():
        if stop["signal"]:
            raise RuntimeError(f"{signal.Signals(stop['signal']).name} before every process answered; stopping")
        if time.monotonic() > deadline or child.process.poll() is not None:
            tail = log.read_text()[-2000:] if log is not None and log.exists() else ""
            raise RuntimeError(f"{child.name} on port {child.port} did not start" + (f": {tail}" if tail else ""))
        time.sleep(0.1)  # polling interval
    child.answering = True


def stop_all(children: list[Supervised]) -> None:
    """SIGQUIT to nginx (it finishes what it is sending), SIGTERM to the app processes; SIGKILL after STOP_TIMEOUT_S."""
    running = [child for child in children if child.process is not None]
    for child in running:
        if child.process.poll() is None:
            child.process.send_signal(child.stop_signal)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for child in running:
        try:
            child.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            say(f"{child.name} (pid {child.process.pid}) still runs {STOP_TIMEOUT_S:g} s after "
                f"{signal.Signals(child.stop_signal).name}; killing it", problem=True)
        # Whatever is left of its group (an nginx worker holding open websockets, an orphan) goes too.
        _signal_group(child.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(STOP_TIMEOUT_S)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stop["signal"] = signum

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)
    state_dir = tempfile.mkdtemp(prefix="pe-run-local-")
    os.chmod(state_dir, 0o755)  # nginx's workers (user nobody under root) write its temp files here
    children: list[Supervised] = []
    origins = [f"localhost:{args.port}", f"127.0.0.1:{args.port}", *args.public_name]
    try:
        ports = [free_port() for _ in range(args.procs)]
        env = {**os.environ, "PE_PROCESSES": str(args.procs)}  # python -m app asks for one BLAS thread itself
        if args.redis_url:
            env["PE_REDIS_URL"] = args.redis_url
        for number, port in enumerate(ports, start=1):
            command = [sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1",
                       "--use-xheaders", "--num-procs", "1",
                       *[flag for origin in origins for flag in ("--allow-websocket-origin", origin)]]
            children.append(Supervised(f"app process {number}", port, command,
                                       f"http://127.0.0.1:{port}/liveness", env=env, cwd=ROOT))
            children[-1].start()
        deadline = time.monotonic() + START_TIMEOUT_S
        for child in children:
            _wait_for_first_answer(child, deadline, stop)
        config = Path(state_dir, "nginx.conf")
        config.write_text(render([f"127.0.0.1:{port}" for port in ports], f"{args.address}:{args.port}", state_dir,
                                 error_log=f"{state_dir}/error.log"))
        nginx = Supervised("nginx", args.port,
                           [args.nginx, "-p", state_dir, "-c", str(config), "-e", f"{state_dir}/error.log",
                            "-g", "daemon off;"],
                           f"http://127.0.0.1:{args.port}/liveness", any_status=True, stop_signal=signal.SIGQUIT)
        children.append(nginx)
        nginx.start()
        _wait_for_first_answer(nginx, deadline, stop, log=Path(state_dir, "error.log"))
        write_status(args.status_file, children)
        rooms = "rooms through Redis" if args.redis_url else (
            "rooms in process" if args.procs == 1 else "rooms off (need --redis-url)")
        print(f"Serving the explorable on http://{args.address}:{args.port}/ through nginx: {args.procs} app "
              f"process(es) on ports {', '.join(map(str, ports))}; {rooms}. A process that ends is started "
              "again; Ctrl-C stops all.", flush=True)
        while stop["signal"] is None:
            for child in children:
                if stop["signal"] is None:
                    supervise_once(child, args.status_file, children)
            time.sleep(TICK_S)  # the supervisor's tick, until a signal
        say(f"{signal.Signals(stop['signal']).name}: stopping nginx and the app processes")
        return 0
    except RuntimeError as error:
        say(str(error), problem=True)
        return 1
    finally:
        write_status(args.status_file, children, stopping=True)
        stop_all(children)
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
