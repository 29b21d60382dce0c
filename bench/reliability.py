"""Faults and their cost to everyone else: ``python -m bench.reliability [--quick]``.

Parts (results into docs/bench/reliability.json, and the tables made from them into docs/reliability.md,
between its bench markers):

* ``neighbours`` - one observer session changes k on ``/distance`` and times key -> data
  (the server's last data message), first with the server otherwise quiet, then while
  (a) another client floods changes as fast as it can, in bursts of 1,000 messages,
  (b) other clients each send a change and drop their connection before the answer,
  (c) another client sends hostile values (NaN, 1e300, strings, unknown models) as fast as
  it can. The server is ``python -m bench.serve app`` in a subprocess, one process, as a
  room would hit it; the phases alternate within one run so that they share its conditions.
* ``sessions`` - in this process (to count Bokeh documents): N sessions opened (document
  pulled, page drawn) and closed, then the live documents, sessions and threads once the
  server has reaped them, against the baseline before.

The quiet and loaded medians are measured in the same run; the target is loaded <= 2 x quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import json
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench.common import RESULTS, DocTable, cpu_seconds, log, machine, rss_mb, server, stats
from bench.protocol import BokehClient

ROOT = Path(__file__).resolve().parent.parent
TABLE = DocTable("reliability", ROOT / "docs" / "reliability.md", "bench", before="## Limits, and how to change them")
QUERY = {"lang": "en", "d_model": "32", "T": "24", "k": "3"}
BURST = 1_000
HOSTILE = [float("nan"), float("inf"), 1e300, -1e6, 3.5, "abc", [1, 2], {"a": 1}, None, True]


async def open_client(port: int) -> BokehClient:
    client = BokehClient("127.0.0.1", port, "/distance", QUERY)
    await client.open(timeout=120, expect=("distance_marker",))
    return client


async def drain_until(client: BokehClient, done: asyncio.Event) -> None:
    """Read and drop what the server sends this client (as a fast browser would), message by message."""
    while not done.is_set():
        with contextlib.suppress(TimeoutError):
            await client.receive(0.2)


async def observe(client: BokehClient, changes: int) -> list[float]:
    """key -> data latencies (ms) of ``changes`` changes of k, one at a time."""
    from app.model.strings import text

    model_id = client.slider_id(text("en", "k"))
    latencies = []
    for i in range(changes):
        await client.set_value(model_id, 4 if i % 2 == 0 else 3)
        latency, _ = await client.until_data(timeout=30.0, quiet=0.0)
        latencies.append(latency * 1000)
        with contextlib.suppress(TimeoutError):  # the rest of the answer, so the next change starts clean
            while True:
                await client.receive(0.02)
    return latencies


async def raw_patch(client: BokehClient, events: list[dict]) -> None:
    client._msgid += 1
    await client.conn.write_message(json.dumps({"msgid": f"f{client._msgid}", "msgtype": "PATCH-DOC"}))
    await client.conn.write_message("{}")
    await client.conn.write_message(json.dumps({"events": events}))


async def flood(client: BokehClient, stop, sent) -> None:
    """Bursts of ``BURST`` changes of k, written back to back without waiting for any answer."""
    from app.model.strings import text

    model_id = client.slider_id(text("en", "k"))
    done = asyncio.Event()
    reader = asyncio.create_task(drain_until(client, done))
    value = 0
    try:
        while not stop.is_set():
            for _ in range(BURST):
                value = value % 40 - 20 + 1
                await client.set_value(model_id, value)
                sent.value += 1
            await asyncio.sleep(0)
    finally:
        done.set()
        await reader


async def hostile(client: BokehClient, stop, sent) -> None:
    """Hostile values (and a model that does not exist, one message in 7), as fast as the socket takes them."""
    from app.model.strings import text

    model_id = client.slider_id(text("en", "k"))
    done = asyncio.Event()
    reader = asyncio.create_task(drain_until(client, done))
    i = 0
    try:
        while not stop.is_set():
            value = HOSTILE[i % len(HOSTILE)]
            target = model_id if i % 7 else "p999999999"
            await raw_patch(client, [{"kind": "ModelChanged", "model": {"id": target}, "attr": "value", "new": value}])
            sent.value += 1
            i += 1
            if i % 100 == 0:
                await asyncio.sleep(0)
    finally:
        done.set()
        await reader


async def droppers(clients: list[BokehClient], stop, sent) -> None:
    """Each client sends a change and drops its TCP connection at once, before the server answers."""
    from app.model.strings import text

    for client in clients:
        if stop.is_set():
            break
        await client.set_value(client.slider_id(text("en", "k")), 7)
        client.conn.protocol.stream.close()  # no closing handshake: a tab killed, a network cut
        client.conn = None
        sent.value += 1
        await asyncio.sleep(0.1)


async def _load(kind: str, port: int, stop, ready, sent, clients: int) -> None:
    if kind == "disconnects":
        opened = [await open_client(port) for _ in range(clients)]
        ready.set()
        await droppers(opened, stop, sent)
        return
    client = await open_client(port)
    ready.set()
    await (flood if kind == "flood" else hostile)(client, stop, sent)
    # The session still works: a valid change gets its data (after the queue the load left).
    from app.model.strings import text
    await client.set_value(client.slider_id(text("en", "k")), 5)
    deadline = time.monotonic() + 120
    while True:  # past the replies to the load still queued (OKs, ERRORs) to the data of this change
        message = await client.receive(max(0.1, deadline - time.monotonic()))
        if message.msgtype == "PATCH-DOC" and "S(5) = " in message.content:  # the distance marker's label
            break
    sent.value = -abs(sent.value)  # negative: "finished and answered afterwards"
    client.close()


def load_process(kind: str, port: int, stop, ready, sent, clients: int) -> None:
    """Another client, in its own process (so that its work does not slow the observer's clock)."""
    asyncio.run(_load(kind, port, stop, ready, sent, clients))


def part_neighbours(quick: bool) -> dict[str, Any]:
    import multiprocessing

    changes = 30 if quick else 60
    rounds = 1 if quick else 2
    per_round = 10 if quick else 20
    spawn = multiprocessing.get_context("spawn")
    phases: dict[str, list[float]] = {"quiet": [], "flood": [], "disconnects": [], "hostile": []}
    sent_total = dict.fromkeys(phases, 0)
    answered_after = dict.fromkeys(phases, True)
    with server("app") as (port, pid):
        cpu0 = cpu_seconds(pid)

        async def open_observer() -> BokehClient:
            return await open_client(port)

        loop = asyncio.new_event_loop()
        try:
            observer = loop.run_until_complete(open_observer())
            for _ in range(rounds):
                for name in phases:
                    log("neighbours", name)
                    process = None
                    if name != "quiet":
                        stop, ready, sent = spawn.Event(), spawn.Event(), spawn.Value("q", 0)
                        process = spawn.Process(target=load_process, args=(name, port, stop, ready, sent, per_round))
                        process.start()
                        if not ready.wait(300):
                            raise RuntimeError(f"the {name} load never started")
                        time.sleep(0.5)  # the load is under way before the first timed change
                    phases[name] += loop.run_until_complete(observe(observer, changes))
                    if process is not None:
                        stop.set()
                        process.join(300)
                        if process.exitcode != 0:
                            raise RuntimeError(f"the {name} load failed ({process.exitcode})")
                        sent_total[name] += abs(sent.value)
                        answered_after[name] &= sent.value < 0 or name == "disconnects"
            observer.close()
        finally:
            loop.close()
        out: dict[str, Any] = {name: {**stats(values), "sent": sent_total[name],
                                      "answered_after": answered_after[name]} for name, values in phases.items()}
        out["server_cpu_s"] = cpu_seconds(pid) - cpu0
        out["rss_mb"] = rss_mb(pid)
    return out


def live_documents() -> int:
    from bokeh.document import Document

    gc.collect()
    return sum(isinstance(o, Document) for o in gc.get_objects())


def part_sessions(quick: bool) -> dict[str, Any]:
    from app.server import serving

    count = 50 if quick else 200
    with serving(unused_session_lifetime_milliseconds=1_000, check_unused_sessions_milliseconds=500) as (url, srv):
        port = urlparse(url).port

        async def cycle(n: int) -> None:
            for _ in range(n):
                client = await open_client(port)
                await client.aclose()

        def settled(timeout: float = 60.0) -> None:
            deadline = time.monotonic() + timeout
            while srv.get_sessions() and time.monotonic() < deadline:
                time.sleep(0.1)

        asyncio.run(cycle(2))  # what a process loads once, before the baseline
        settled()
        base = {"documents": live_documents(), "sessions": len(srv.get_sessions()),
                "threads": threading.active_count()}
        log("sessions", count)
        t0 = time.perf_counter()
        asyncio.run(cycle(count))
        opened = time.perf_counter() - t0
        settled()
        time.sleep(1.0)
        after = {"documents": live_documents(), "sessions": len(srv.get_sessions()),
                 "threads": threading.active_count()}
    return {"count": count, "baseline": base, "after": after, "seconds": opened}


def render(results: dict[str, Any]) -> str:
    lines = [f"Run {results['time']} on {results['machine'].get('cpu', '?')}, "
             f"{results['machine'].get('cores', '?')} cores ({'quick' if results['quick'] else 'full'} run).", ""]
    n = results.get("neighbours")
    if n:
        quiet = n["quiet"]["p50"]
        lines += ["| another client meanwhile | observer's key → data, median (ms) | p95 (ms) | changes timed | "
                  "× quiet | load sent |", "|---|---:|---:|---:|---:|---:|"]
        labels = {"quiet": "nothing (quiet)", "flood": f"floods k, bursts of {BURST:,} messages",
                  "disconnects": "sends a change, drops the connection", "hostile": "sends hostile values"}
        for name, label in labels.items():
            row = n[name]
            times = f"{row['p50'] / quiet:.2f}" if quiet else "–"
            sent = f"{row['sent']:,} messages"
            lines.append(f"| {label} | {row['p50']:.1f} | {row['p95']:.1f} | {row['n']} | {times} | "
                         f"{sent if name != 'quiet' else '–'} |")
        fine = n["flood"]["answered_after"] and n["hostile"]["answered_after"]
        lines += ["", f"Server CPU over the run: {n['server_cpu_s']:.1f} s; RSS at the end {n['rss_mb']:.0f} MB; "
                      f"the flooding and the hostile session {'each answered' if fine else 'did NOT both answer'} "
                      "a valid change afterwards."]
    s = results.get("sessions")
    if s:
        lines += ["", f"{s['count']} sessions opened (document pulled, page drawn) and closed in {s['seconds']:.0f} s:",
                  "", "| | live Bokeh documents | sessions | threads |", "|---|---:|---:|---:|",
                  f"| before | {s['baseline']['documents']} | {s['baseline']['sessions']} | "
                  f"{s['baseline']['threads']} |",
                  f"| after, once reaped | {s['after']['documents']} | {s['after']['sessions']} | "
                  f"{s['after']['threads']} |"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer changes and sessions (~2 min)")
    parser.add_argument("--parts", default="neighbours,sessions")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/reliability.md")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"time": dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "quick": args.quick,
                               "machine": machine()}
    parts = {"neighbours": part_neighbours, "sessions": part_sessions}
    for name in args.parts.split(","):
        results[name] = parts[name](args.quick)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"reliability-{dt.datetime.now():%Y%m%d-%H%M%S}.json").write_text(json.dumps(results, indent=1))
    table = render(results)
    print(table)
    if not args.no_doc:
        TABLE.publish(results, table)


if __name__ == "__main__":
    main()
