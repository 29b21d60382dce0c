"""Profile one kind of update in process with pyinstrument (a development tool, not part of the run).

    python -m bench.profile k lesson [--app naive] [--repeats 50]

Builds ``/`` exactly as ``bench.run``'s server part does, changes the slider of
the parameter back and forth and prints pyinstrument's call tree.
"""

from __future__ import annotations

import argparse
import os
import threading

from bench.run import SIZES, build_page, find_slider_model


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("param")
    parser.add_argument("size", choices=list(SIZES))
    parser.add_argument("--app", default="app", choices=["app", "naive"])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    import panel as pn
    from bokeh.document import Document
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc
    from pyinstrument import Profiler

    from app.strings import text

    doc = Document()
    with set_curdoc(doc):
        page = build_page(args.app, SIZES[args.size])
        root = page.get_root(doc)
        doc.add_root(root)
        pn.state._connected[doc] = True
        pn.state._thread_id_[doc] = threading.get_ident()
        events: list = []
        doc.on_change(events.append)
        model = find_slider_model(page, root, text("en", args.param))
        step = getattr(model, "step", None) or 1
        profiler = Profiler(interval=0.0005)
        with profiler:
            for i in range(args.repeats):
                new = model.value + (-step if i % 2 == 0 else step)
                events.clear()
                model.set_from_json("value", new)
                model.set_from_json("value_throttled", new)
                from bokeh.document.events import DocumentPatchedEvent

                sent = [e for e in events if isinstance(e, DocumentPatchedEvent)]
                if sent:
                    message = Protocol().create("PATCH-DOC", sent)
                    _ = message.content_json, [b.to_bytes() for b in message.buffers]
        print(profiler.output_text(unicode=True, color=False, show_all=os.environ.get("PROFILE_ALL") == "1"))


if __name__ == "__main__":
    main()
