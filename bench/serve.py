"""Start an app for the benchmark: ``python -m bench.serve {app,naive,floor,timeline} PORT [PROCS]``.

Sessions are discarded 1 s after their websocket closes (Bokeh's defaults are
15 s, checked every 17 s) so that the memory part sees closed sessions go
within its run; nothing else differs from ``python -m app`` (one BLAS thread per process included).
"""

from __future__ import annotations

import sys

from app.blas import one_blas_thread
from bench.app_server import SESSION_OPTIONS, serve_app

# As ``python -m app`` does: without it the benchmark timed a server that the app's own command never runs.
one_blas_thread()



def main(argv: list[str]) -> None:
    which, port = argv[0], int(argv[1])
    procs = int(argv[2]) if len(argv) > 2 else 1
    if which == "app":
        serve_app(port, procs)
    elif which == "naive":
        from bench.naive_app import serve

        if procs != 1:
            raise SystemExit("the naive baseline is served by one process")
        serve(port, **SESSION_OPTIONS)
    elif which == "timeline":  # the app with a key press's steps logged (bench/timeline.py)
        from bench.timeline import serve as serve_timed

        serve_timed(port)
    elif which == "floor":
        from bench.floor_app import serve as serve_floor

        if procs != 1:
            raise SystemExit("the floor is served by one process")
        serve_floor(port, **SESSION_OPTIONS)
    else:
        raise SystemExit(f"unknown app {which!r}: app, naive, floor or timeline")


if __name__ == "__main__":
    main(sys.argv[1:])
