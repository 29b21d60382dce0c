"""Rooms under load: a teacher moves k at 5 Hz, N followers over two app processes with Redis.

    python -m bench.rooms                  # 100 and 300 followers, and the nginx path; ~6 min on 2 cores
    python -m bench.rooms --quick          # shorter drives
    python -m bench.run --parts rooms      # the same, as a part of the benchmark

Everything runs as plain processes on free loopback ports: a ``redis-server`` and
``deploy/run-local --procs 2 --redis-url …`` (nginx in front of two app processes). The teacher and
the followers are Bokeh-protocol clients (``bench.protocol``, no browser), all in this process:

* the teacher opens ``PAGE`` on the first process, starts a room (``room_start``) and changes k
  5 times a second (a triangle over -20 … 20), noting when each value was sent;
* the followers open ``PAGE?follow=ROOM``, half on each process (straight to the app ports),
  and note when each new k arrives (the slider's ``value`` in a ``PATCH-DOC``) and when the data
  that goes with it has arrived; latency = that arrival − when the teacher sent that value;
* at the end every follower must show the teacher's last k (errors otherwise), and the skipped
  states (moves a follower never saw because a later one came first) are counted;
* where the time goes: the teacher's own key → data, the fan-out (first and last follower of each
  move), the app processes' CPU share (``/proc``), and what the bench client itself used.

The nginx path: ``CLIENTS`` clients change k at 5 Hz (closed loop) straight to an app process and
as many through nginx, at the same time; p95 key → data of both. Results: docs/bench/rooms.json (the latest
run, committed) and the section between the markers in docs/performance.md made from it; every run's own
file in bench/results/rooms-<time>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime as dt
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, DocTable, cpu_seconds, free_port, log, machine, stats  # noqa: E402
from bench.protocol import DATA_MARKERS, BokehClient, objects  # noqa: E402

TABLE = DocTable("rooms", ROOT / "docs" / "performance.md", "rooms",
                 before="### A 1,000-student lecture (on paper, from the runs above)")
#: The page the teacher shows and the followers open: the score curve with its controls.
PAGE = "/distance"
QUERY = {"lang": "en", "d_model": "32", "T": "24", "k": "0"}
RATE_HZ = 5.0
FOLLOWERS = (100, 300)
#: Clients of the nginx comparison.
CLIENTS = 5
#: Issue #44's targets, per number of followers: p95 (ms) and the share of states a follower may skip.
TARGETS = {100: (150.0, None), 300: (600.0, 0.20)}
TARGET_NGINX_MS = 5.0


def triangle(step: int, low: int = -20, high: int = 20) -> int:
    """k for the teacher's ``step``-th move: up and down between low and high, never the same twice in a row."""
    span = high - low
    phase = (step + 1) % (2 * span)
    return low + (phase if phase <= span else 2 * span - phase)


@contextlib.contextmanager
def stack(procs: int = 2):
    """redis-server and deploy/run-local; yields (nginx port, [app ports], [app pids])."""
    from tests.servers import redis_server, sessions_of

    with redis_server() as redis_url:
        port = free_port()
        process = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "run-local"), "--port", str(port),
                                    "--procs", str(procs), "--redis-url", redis_url],
                                   cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   env={**os.environ, "PE_SESSION_STATS": "1"})
        try:
            ports: list[int] = []
            deadline = time.monotonic() + 120
            for line in process.stdout:
                found = re.search(r"on ports ([\d, ]+);", line)
                if found:
                    ports = [int(p) for p in found.group(1).split(",")]
                    break
                if time.monotonic() > deadline:
                    break
            if not ports:
                raise RuntimeError("deploy/run-local did not start")
            # The rest of its output is read (and dropped) while it runs: a pipe left full would block the
            # supervisor, and the app processes that share its output, at their next log line.
            threading.Thread(target=collections.deque, args=(process.stdout, 0), daemon=True).start()
            pids = [sessions_of(f"http://127.0.0.1:{app_port}", "")["pid"] for app_port in ports]
            yield port, ports, pids
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def model_id(client: BokehClient, name: str) -> str:
    """The id of the model named ``name`` (for an ESM component: its data model, which holds its properties)."""
    found = [ref["id"] for ref in objects(client.doc) if ref.get("attributes", {}).get("name") == name]
    if len(found) != 1:
        raise LookupError(f"{len(found)} models named {name!r}")
    return found[0]


async def start_room(teacher: BokehClient) -> str:
    """Click the teacher's ``room_start`` and return the room id from ``room_link``'s text."""
    await teacher.send("PATCH-DOC", {"events": [{"kind": "ModelChanged", "model": {"id": model_id(
        teacher, "room_start")}, "attr": "clicks", "new": 1}]})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        message = await teacher.receive(30)
        found = re.search(r"follow=([a-z2-9]{6})", message.content)
        if found:
            return found.group(1)
    raise TimeoutError("no room link")


class Follower:
    """A follower client and what it saw: (arrival time, k) of each new k, with its data."""

    def __init__(self, client: BokehClient, k_id: str) -> None:
        self.client = client
        self.pattern = re.compile(r'"model":\{"id":"' + re.escape(k_id) + r'"\},"attr":"value","new":(-?\d+)')
        self.seen: list[tuple[float, int]] = []
        self.k: int | None = None
        self.waiting: int | None = None  # a k whose data has not arrived yet
        self.errors: list[str] = []

    async def listen(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                message = await self.client.receive(0.5)
            except TimeoutError:
                continue
            except Exception as error:
                self.errors.append(type(error).__name__)
                return
            now = time.perf_counter()
            if message.msgtype != "PATCH-DOC":
                continue
            found = self.pattern.search(message.content)
            if found:
                self.k = int(found.group(1))
                self.waiting = self.k
            if self.waiting is not None and any(m in message.content for m in DATA_MARKERS):
                self.seen.append((now, self.waiting))
                self.waiting = None


async def open_followers(ports: list[int], room: str, count: int, concurrency: int = 6) -> list[BokehClient]:
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int) -> BokehClient:
        async with gate:
            client = BokehClient("127.0.0.1", ports[index % len(ports)], PAGE, {**QUERY, "follow": room})
            await client.open(timeout=180)
            return client

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def scenario(ports: list[int], pids: list[int], count: int, seconds: float) -> dict[str, Any]:
    from app.model.strings import text

    teacher = BokehClient("127.0.0.1", ports[0], PAGE, QUERY)
    await teacher.open(timeout=60)
    room = await start_room(teacher)
    t0 = time.perf_counter()
    clients = await open_followers(ports, room, count)
    log(f"rooms: {count} followers open in {time.perf_counter() - t0:.0f} s")
    k_id = teacher.slider_id(text("en", "k"))
    followers = [Follower(c, c.slider_id(text("en", "k"))) for c in clients]
    stop = asyncio.Event()
    listeners = [asyncio.create_task(f.listen(stop)) for f in followers]
    await asyncio.sleep(1.0)  # let the followers' first (joining) updates settle; not a synchronisation
    sent: list[tuple[float, int]] = []
    teacher_latency: list[float] = []
    from tests.servers import sessions_of

    applied_before = [len(sessions_of(f"http://127.0.0.1:{port}", "")["applied_delays"]) for port in ports]
    cpu_before = [cpu_seconds(pid) for pid in pids]
    bench_before = resource.getrusage(resource.RUSAGE_SELF)
    period, start, step = 1.0 / RATE_HZ, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        value = triangle(step)
        step += 1
        at = time.perf_counter()
        await teacher.set_value(k_id, value)
        sent.append((at, value))
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            latency, _ = await teacher.until_data(timeout=period, quiet=0.0)
            teacher_latency.append(latency * 1000)
        await asyncio.sleep(max(0.0, start + step * period - time.perf_counter()))
    wall = time.perf_counter() - start
    final = sent[-1][1]
    # Every follower must come to the last state; wait for it (bounded).
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline and any(f.k != final for f in followers):
        await asyncio.sleep(0.05)  # polling interval
    cpu = [(cpu_seconds(pid) - before) / wall for pid, before in zip(pids, cpu_before, strict=True)]
    bench_after = resource.getrusage(resource.RUSAGE_SELF)
    bench_cpu = (bench_after.ru_utime + bench_after.ru_stime - bench_before.ru_utime - bench_before.ru_stime) / wall
    stop.set()
    await asyncio.gather(*listeners)
    # In the app: from the teacher's change (its session's clock) to the end of each follower's update.
    applied = [1000 * d for port, before in zip(ports, applied_before, strict=True)
               for d in sessions_of(f"http://127.0.0.1:{port}", "")["applied_delays"][before:]]

    latencies, skipped, per_move = [], 0, {}
    for follower in followers:
        moves = [(t, k) for t, k in sent]
        index = 0
        for arrival, k in follower.seen:
            # The move this k answers: the latest send of that value before it arrived.
            candidates = [i for i, (t, v) in enumerate(moves) if v == k and t <= arrival]
            if not candidates:
                continue
            i = candidates[-1]
            if i >= index:
                skipped += i - index
                index = i + 1
                latency = (arrival - moves[i][0]) * 1000
                latencies.append(latency)
                per_move.setdefault(i, []).append(latency)
    first = [min(v) for v in per_move.values()]
    last = [max(v) for v in per_move.values()]
    errors = sum(1 for f in followers if f.k != final) + sum(len(f.errors) for f in followers)
    # Which kind: a socket that failed (the follower stopped listening), or one still behind at the end.
    failed = [f.errors[0] for f in followers if f.errors]
    behind = [final - f.k if f.k is not None else None for f in followers if not f.errors and f.k != final]
    for client in (teacher, *clients):
        client.close()
    return {
        "followers": count, "moves": len(sent), "rate_hz": len(sent) / wall, "latency_ms": stats(latencies),
        "errors": errors, "skipped": skipped, "skipped_share": skipped / max(1, skipped + len(latencies)),
        "teacher_ms": stats(teacher_latency), "applied_in_app_ms": stats(applied),
        "first_follower_ms": stats(first), "last_follower_ms": stats(last),
        "app_cpu_share": cpu, "bench_cpu_share": bench_cpu,
        "failed_sockets": len(failed), "failure_kinds": sorted(set(failed)), "behind_at_end": len(behind),
        "never_followed": sum(1 for f in followers if f.k is None),
    }


async def closed_loop(port: int, seconds: float) -> dict[str, Any]:
    """``CLIENTS`` clients changing k at 5 Hz through ``port``, each waiting for its data; key → data in ms."""
    from app.model.strings import text

    clients = [BokehClient("127.0.0.1", port, PAGE, QUERY) for _ in range(CLIENTS)]
    for client in clients:
        await client.open(timeout=60)
    latencies: list[float] = []

    async def run(client: BokehClient, offset: float) -> None:
        k_id = client.slider_id(text("en", "k"))
        await asyncio.sleep(offset)
        start, step = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            await client.set_value(k_id, triangle(step))
            step += 1
            latency, _ = await client.until_data(timeout=5.0, quiet=0.0)
            latencies.append(latency * 1000)
            await asyncio.sleep(max(0.0, start + step / RATE_HZ - time.perf_counter()))

    await asyncio.gather(*(run(c, i / RATE_HZ / CLIENTS) for i, c in enumerate(clients)))
    for client in clients:
        client.close()
    return stats(latencies)


async def both_paths(direct_port: int, nginx_port: int, seconds: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The direct and the nginx clients at the same time: a slow moment of the machine falls on both
    (run one after the other, either path's p95 moved by tens of ms between runs)."""
    direct, nginx = await asyncio.gather(closed_loop(direct_port, seconds), closed_loop(nginx_port, seconds))
    return direct, nginx


def part_rooms(quick: bool, *, write: bool = True, followers: tuple[int, ...] = FOLLOWERS,
               command: str = "") -> dict[str, Any]:
    """The benchmark's ``rooms`` part (bench.run): followers, then the nginx path; publishes its results and
    the doc's section (``TABLE``) unless ``write`` is false. ``command``: how the run was asked for."""
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    seconds = 15.0 if quick else 30.0
    # The machine (its load) as it was at the start, not when the report is rendered.
    results: dict[str, Any] = {"page": PAGE, "seconds": seconds, "scenarios": [], "machine": machine(),
                               "started": started,
                               "command": command or "python -m bench.run" + (" --quick" if quick else "")}
    with stack() as (nginx_port, ports, pids):
        for count in (n for n in followers if n > 0):  # --followers 0: the nginx path only
            log(f"rooms: {count} followers")
            try:
                results["scenarios"].append(asyncio.run(scenario(ports, pids, count, seconds)))
            except Exception as error:  # one scenario's failure (a timeout) keeps the others' results
                log(f"rooms: {count} followers failed: {error!r}")
                results["scenarios"].append({"followers": count, "failed": repr(error)[:300]})
            save_partial(results)
        log("rooms: nginx path")
        try:
            results["direct_ms"], results["nginx_ms"] = asyncio.run(both_paths(ports[0], nginx_port, seconds))
        except Exception as error:
            log(f"rooms: nginx path failed: {error!r}")
            results["nginx_failed"] = repr(error)[:300]
        save_partial(results)
    if write:
        TABLE.publish(results, render(results))
    return results


#: Where a run's results so far are kept while it runs (replaced by the stamped file at its end).
PARTIAL = RESULTS / "rooms-partial.json"


def save_partial(results: dict[str, Any]) -> None:
    """Write what has been measured so far, so that a run cut short still has its results."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    PARTIAL.write_text(json.dumps(results, indent=1), encoding="utf-8")


def fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [f"Run: {results['started']}, `{results['command']}`, {m['cpu']} ({m['cores']} cores, load average "
             f"{m['loadavg_at_start']} at the start: shared with other work). Page `{results['page']}`, "
             f"teacher at {RATE_HZ:g} Hz for {results['seconds']:g} s; followers over 2 app processes, Redis pub/sub.",
             "", "| followers | moves | p50 ms | p95 ms | target p95 | errors | skipped states "
             "| teacher key→data p50 / p95 | applied in the app p50 / p95 | first follower p50 / p95 "
             "| last follower p50 / p95 | app CPU (each process) | bench client CPU |",
             "|---:|---:|---:|---:|---|---:|---:|---|---|---|---|---|---:|"]
    for s in results["scenarios"]:
        if "failed" in s:
            lines.append(f"| {s['followers']} | failed: {s['failed'][:80]} |" + " |" * 11)
            continue
        lat = s["latency_ms"]
        target = "reported"
        if s["followers"] in TARGETS:
            p95, skipped = TARGETS[s["followers"]]
            ok = (lat["p95"] is not None and lat["p95"] <= p95 and s["errors"] == 0
                  and (skipped is None or s["skipped_share"] <= skipped))
            limits = f"≤ {p95:g} ms" + ("" if skipped is None else f", ≤ {skipped:.0%} skipped")
            target = f"{limits} {'✔' if ok else '✘'}"
        lines.append(
            f"| {s['followers']} | {s['moves']} | {fmt(lat['p50'])} | {fmt(lat['p95'])} | {target} | {s['errors']} "
            f"| {s['skipped']} ({100 * s['skipped_share']:.0f} %) "
            f"| {fmt(s['teacher_ms']['p50'])} / {fmt(s['teacher_ms']['p95'])} "
            f"| {fmt(s['applied_in_app_ms']['p50'])} / {fmt(s['applied_in_app_ms']['p95'])} "
            f"| {fmt(s['first_follower_ms']['p50'])} / {fmt(s['first_follower_ms']['p95'])} "
            f"| {fmt(s['last_follower_ms']['p50'])} / {fmt(s['last_follower_ms']['p95'])} "
            f"| {' / '.join(f'{100 * c:.0f} %' for c in s['app_cpu_share'])} | {100 * s['bench_cpu_share']:.0f} % |")
    if "direct_ms" not in results:
        return "\n".join([*lines, "", f"nginx path: failed ({results.get('nginx_failed', 'not run')})."])
    direct, nginx = results["direct_ms"], results["nginx_ms"]
    gap = None if direct["p95"] is None or nginx["p95"] is None else nginx["p95"] - direct["p95"]
    ok = "✔" if gap is not None and gap <= TARGET_NGINX_MS else "✘"
    lines += ["", f"nginx path ({CLIENTS} clients changing k at {RATE_HZ:g} Hz, closed loop, key → data): "
              f"direct p50 {fmt(direct['p50'])} / p95 {fmt(direct['p95'])} ms, through nginx p50 {fmt(nginx['p50'])} "
              f"/ p95 {fmt(nginx['p95'])} ms: p95 difference {fmt(gap)} ms (target ≤ {TARGET_NGINX_MS:g} ms {ok})."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rooms", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 s drives instead of 30 s")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite the section in docs/performance.md")
    parser.add_argument("--followers", default=",".join(map(str, FOLLOWERS)), help="comma-separated follower counts")
    args = parser.parse_args(argv)
    command = ("python -m bench.rooms" + (" --quick" if args.quick else "")
               + (f" --followers {args.followers}" if args.followers != ",".join(map(str, FOLLOWERS)) else ""))
    results = part_rooms(args.quick, write=False, followers=tuple(int(n) for n in args.followers.split(",")),
                         command=command)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"rooms-{stamp}.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    PARTIAL.unlink(missing_ok=True)
    section = render(results)
    print(section)
    if not args.no_doc:
        TABLE.publish(results, section)


if __name__ == "__main__":
    main()
