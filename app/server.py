"""Starting the Panel server: used by ``python -m app`` and by the tests."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import panel as pn

from app import fastsync
from app.pages import routes
from components.theme import STATIC_DIR

DEFAULT_PORT = 5006


def serve(port: int = DEFAULT_PORT, address: str | None = None,
          allow_websocket_origin: Sequence[str] | None = None, *, threaded: bool = False,
          show: bool = False, **kwargs):
    """Serve every route of the explorable; returns the server (a thread when ``threaded``)."""
    pn.extension(notifications=False)
    fastsync.install()  # TCP_NODELAY on the websocket; must precede pn.serve
    return pn.serve(
        routes(), port=port, address=address, websocket_origin=list(allow_websocket_origin or []) or None,
        threaded=threaded, show=show, liveness=True,
        static_dirs={"assets": str(STATIC_DIR)}, **kwargs,
    )


def _die_with_parent() -> None:
    # Linux prctl(PR_SET_PDEATHSIG, SIGTERM): a worker ends when the process that forked it ends.
    # Elsewhere (no prctl) workers outlive a killed parent, as Tornado's do.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def workers_follow_parent() -> None:
    """Make server processes forked from now on (``num_procs != 1``) stop when their parent stops.

    Tornado's ``fork_processes`` leaves the workers running, still holding the
    port, if only the parent gets SIGTERM (``docker stop``, a supervisor, a test).
    """
    os.register_at_fork(after_in_child=_die_with_parent)


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_alive(url: str) -> bool:
    """Whether the server at ``url`` answers its liveness endpoint."""
    try:
        with urllib.request.urlopen(f"{url}/liveness", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def running(port: int | None = None, timeout: float = 30.0) -> Iterator[str]:
    """Serve the explorable in this process on loopback; yields its base URL, stops it after.

    For tests, screenshots and benchmarks: waits (polling ``/liveness``) until
    the server answers, and raises ``RuntimeError`` if it does not in ``timeout`` s.
    """
    port = port or free_port()
    server = serve(port=port, address="127.0.0.1", threaded=True,
                   allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not is_alive(url):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the explorable did not answer on {url} within {timeout} s")
            time.sleep(0.05)  # polling interval, not a synchronisation delay
        yield url
    finally:
        server.stop()
