"""Profile one kind of update in process with pyinstrument (a development tool, not part of the run).

    python -m bench.profile k lesson [--app naive] [--repeats 50]

Builds ``/`` exactly as ``bench.run``'s server part does, changes the slider of
the parameter back and forth and prints pyinstrument's call tree.
"""

from __future__ import annotations

import argparse
import os

from bench.common import SIZES, apply_step, find_slider_model, session_in_process


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("param")
    parser.add_argument("size", choices=list(SIZES))
    parser.add_argument("--app", default="app", choices=["app", "naive"])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    from bokeh.protocol import Protocol
    from pyinstrument import Profiler

    from app.model.strings import text

    with session_in_process(args.app, SIZES[args.size]) as (page, root, events):
        model = find_slider_model(page, root, text("en", args.param))
        step = getattr(model, "step", None) or 1
        protocol = Protocol()
        profiler = Profiler(interval=0.0005)
        with profiler:
            for i in range(args.repeats):
                new = model.value + (-step if i % 2 == 0 else step)
                events.clear()
                apply_step(model, new, events, protocol)
        print(profiler.output_text(unicode=True, color=False, show_all=os.environ.get("PROFILE_ALL") == "1"))


if __name__ == "__main__":
    main()
