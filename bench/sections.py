"""Server time of one state change with some of the lesson's sections built, in process (a development tool).

    python -m bench.sections gram,rope pos [--size lesson] [--query T_train=1024] [--repeats 30] [--as-step] [--walk]
                             [--profile [--show-all]]

Builds the sections (their slugs, as in ``app.lesson.SECTIONS``) on one session
state in one Bokeh document, as awake sections of ``/`` are, then moves the
parameter back and forth by one step (``base``: to the next value of its list)
and serializes each change's ``PATCH-DOC``. Prints the median time and bytes;
``--as-step`` makes each change inside ``components.widgets.one_message()``, as a served
slider step is made (without it: as a preset, a room's teacher or an address); ``--walk`` moves
the parameter one step further each time (a drag: every value new, so nothing cached by value
helps), instead of back and forth between two values;
``--profile`` adds pyinstrument's call tree.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time
from urllib.parse import parse_qsl

from bench.common import SIZES


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sections")
    parser.add_argument("slugs", help="comma-separated section slugs, e.g. gram,rope")
    parser.add_argument("param")
    parser.add_argument("--size", default="lesson", choices=list(SIZES))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--show-all", action="store_true", help="with --profile: every frame (Panel's, Bokeh's too)")
    parser.add_argument("--as-step", action="store_true",
                        help="make each change inside components.widgets.one_message(), as a served step is")
    parser.add_argument("--query", default="", metavar="KEY=VALUE&...",
                        help="more of the state, as in a page's address, e.g. T_train=1024 (as bench.extrapolation "
                             "opens the section: costs that grow with it are invisible at the default)")
    parser.add_argument("--walk", action="store_true",
                        help="a new value at every change (as a drag), not back and forth between two")
    args = parser.parse_args(argv)

    import panel as pn
    from bokeh.document import Document
    from bokeh.document.events import DocumentPatchedEvent
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc

    from app import fastsync
    from app.lesson import SECTIONS
    from app.model.state import BASES, ExplorerState, parse_query
    from components import widgets

    fastsync.install()
    doc = Document()
    with set_curdoc(doc):
        state = ExplorerState(**parse_query({**SIZES[args.size], **dict(parse_qsl(args.query))})[0])
        column = pn.Column(*(SECTIONS[slug](state) for slug in args.slugs.split(",")))
        doc.add_root(column.get_root(doc))
        doc.models.flush_synced()  # sent to the browser: synced, as in bench.run.session_in_process
        pn.state._connected[doc] = True  # as a served session after the browser's document_ready
        pn.state._thread_id_[doc] = threading.get_ident()
        events: list = []
        doc.on_change(events.append)
        start = getattr(state, args.param)
        if args.param == "base":
            ladder, at = list(BASES), BASES.index(start)
        else:
            low, high = state.param[args.param].bounds
            step = getattr(state.param[args.param], "step", None) or 1  # d_model moves by 2
            ladder = list(range(low, high + 1, step))
            at = ladder.index(start)
        # Up from the start while there is room, else down; a walk goes on in that direction.
        direction = 1 if at + 1 < len(ladder) else -1
        values = [ladder[at + direction * (i + 1)] for i in range(args.repeats)
                  if 0 <= at + direction * (i + 1) < len(ladder)]
        if not args.walk:
            values = [values[0] if i % 2 == 0 else start for i in range(args.repeats)]
        protocol, times, sizes = Protocol(), [], []
        profiler = None
        if args.profile:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005)
        for i, value in enumerate(values):
            if i == 2 and profiler is not None:
                profiler.start()
            events.clear()
            began = time.perf_counter()
            with widgets.one_message() if args.as_step else contextlib.nullcontext():
                setattr(state, args.param, value)
            sent = [e for e in events if isinstance(e, DocumentPatchedEvent)]
            message = protocol.create("PATCH-DOC", sent) if sent else None
            times.append((time.perf_counter() - began) * 1000)
            sizes.append(len(message.content_json) + sum(len(b.to_bytes()) for b in message.buffers)
                         if message else 0)
        if profiler is not None:
            profiler.stop()
        kept = times[2:]
        p95 = statistics.quantiles(kept, n=20, method="inclusive")[-1] if len(kept) > 1 else kept[0]
        print(f"{args.slugs} {args.param} at the {args.size} size{' (walk)' if args.walk else ''}: "
              f"median {statistics.median(kept):.1f} ms, p95 {p95:.1f} ms, "
              f"{statistics.median(sizes[2:]):.0f} bytes ({len(kept)} changes)")
        if profiler is not None:
            print(profiler.output_text(unicode=True, color=False, show_all=args.show_all))


if __name__ == "__main__":
    main()
