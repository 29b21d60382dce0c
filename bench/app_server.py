"""The app as the benchmark serves it: ``python -m app``'s server with sessions discarded 1 s after they close."""

from __future__ import annotations

#: Bokeh server options shared by every app in the benchmark (Bokeh's defaults keep a closed session 15 s,
#: checked every 17 s; the memory part must see closed sessions go within its run).
SESSION_OPTIONS = {"check_unused_sessions_milliseconds": 500, "unused_session_lifetime_milliseconds": 1000}


def serve_app(port: int, procs: int = 1) -> None:
    """Serve the app on 127.0.0.1:``port`` with ``procs`` processes, as ``python -m app --num-procs`` does."""
    from app.server import serve, workers_follow_parent

    if procs != 1:
        workers_follow_parent()
    serve(port=port, address="127.0.0.1", allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"],
          num_procs=procs, **SESSION_OPTIONS)
