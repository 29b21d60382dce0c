"""Starting the Panel server: used by ``python -m app`` and by the tests."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import time
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import panel as pn
from bokeh.settings import settings as bokeh_settings

from app import collector, data_routes, delivery, fastsync
from app.pages import route_titles, routes
from app.room_routes import room_patterns
from components.internals import off
from components.stylesheets import STATIC_DIR

DEFAULT_PORT = 5006

#: Largest websocket message a client may send (bytes). The page only sends small patches (a
#: slider's value: ~200 bytes); a larger message closes that connection (tornado: code 1009).
#: Bokeh's default is 20 MiB. Environment: PE_MAX_MESSAGE_BYTES.
MAX_MESSAGE_BYTES = 1 << 20
#: A session whose page has closed (no websocket left) is removed after this long (ms; Bokeh's
#: default 15 s), so a reload within it reconnects to nothing stale. Environment: PE_SESSION_LIFETIME_MS.
UNUSED_SESSION_LIFETIME_MS = 15_000
#: How often unused sessions are looked for (ms; Bokeh's default 17 s). Environment: PE_SESSION_CHECK_MS.
CHECK_UNUSED_SESSIONS_MS = 10_000

log = logging.getLogger("app")


def limits() -> dict[str, int]:
    """The server's limits for ``pn.serve``: the constants above, or their environment variables."""
    def setting(name: str, default: int) -> int:
        value = os.environ.get(name, "").strip()
        return int(value) if value else default

    return {
        "websocket_max_message_size": setting("PE_MAX_MESSAGE_BYTES", MAX_MESSAGE_BYTES),
        "unused_session_lifetime_milliseconds": setting("PE_SESSION_LIFETIME_MS", UNUSED_SESSION_LIFETIME_MS),
        "check_unused_sessions_milliseconds": setting("PE_SESSION_CHECK_MS", CHECK_UNUSED_SESSIONS_MS),
    }


def _log_callback_failure(error: BaseException) -> None:
    # Panel's handler for an exception in a session's callback (pn.config.exception_handler): one
    # warning line instead of re-raising it into tornado's "Exception in callback" with a traceback.
    # Nothing known reaches it (app.guard checks every change first); it is the net under that.
    log.warning("a session callback failed: %s: %s", type(error).__name__, str(error)[:200])


def _log_to_stderr() -> None:
    # Warnings of app.* (refused messages) as one line each, like Bokeh's own log lines.
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def serve(port: int = DEFAULT_PORT, address: str | None = None,
          allow_websocket_origin: Sequence[str] | None = None, *, threaded: bool = False,
          show: bool = False, **kwargs):
    """Serve every route of the explorable; returns the server (a thread when ``threaded``).

    ``kwargs`` go to ``pn.serve``; they override ``limits()`` (message size, session lifetime).
    """
    pn.extension(notifications=False)
    pn.config.exception_handler = _log_callback_failure
    # Bokeh validates every new session's whole document only to log developers' warnings: three
    # walks of its models, ~20 % of building a page. tests/unit/test_validation.py validates every page
    # kind instead; BOKEH_VALIDATE_DOC=true turns it back on.
    if "BOKEH_VALIDATE_DOC" not in os.environ:
        bokeh_settings.perform_document_validation.set_value(False)
    _log_to_stderr()
    fastsync.install()  # TCP_NODELAY and the message guard on the websocket; must precede pn.serve
    # --- light first load and data downloads (app/delivery.py, app/data_routes.py) ---
    delivery.install()
    if off():  # once per server, whatever was imported before the log had a handler
        log.warning("speed patches off (stock Panel/Bokeh behaviour): %s", ", ".join(off()))
    kwargs = {**delivery.server_options(), **kwargs}
    kwargs["extra_patterns"] = [*kwargs.get("extra_patterns", []), *data_routes.patterns()]
    # --- end ---
    # Rooms (issue 11): the QR code of a join link, and per-process session stats for the deployment test.
    kwargs["extra_patterns"] = [*kwargs.get("extra_patterns", []), *room_patterns()]
    if not threaded:  # a process of its own serves: full collector passes at quiet moments (app/collector.py)
        collector.install()
    return pn.serve(
        routes(), title=route_titles(), port=port, address=address,
        websocket_origin=list(allow_websocket_origin or []) or None,
        threaded=threaded, show=show, liveness=True,
        # No Panel Location model: components.address writes the address bar. Panel's would also
        # parse the query itself (a 500 for ?d_model=%C2%B2: '²'.isdigit() but int('²') fails).
        location=False,
        static_dirs={"assets": str(STATIC_DIR)}, **{**limits(), **kwargs},
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
def serving(port: int | None = None, timeout: float = 30.0, **kwargs) -> Iterator[tuple[str, object]]:
    """Serve the explorable in this process on loopback; yields (base URL, Bokeh server), stops it after.

    For tests, screenshots and benchmarks: waits (polling ``/liveness``) until
    the server answers, and raises ``RuntimeError`` if it does not in ``timeout`` s.
    ``kwargs`` go to ``serve`` (e.g. shorter session lifetimes for a test).
    """
    port = port or free_port()
    server_id = uuid.uuid4().hex
    thread = serve(port=port, address="127.0.0.1", threaded=True, server_id=server_id,
                   allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"], **kwargs)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not is_alive(url):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the explorable did not answer on {url} within {timeout} s")
            time.sleep(0.05)  # polling interval, not a synchronisation delay
        # Panel keeps the Bokeh server of each pn.serve in state._servers, by server_id.
        yield url, pn.state._servers[server_id][0]
    finally:
        thread.stop()


@contextmanager
def running(port: int | None = None, timeout: float = 30.0) -> Iterator[str]:
    """``serving`` that yields the base URL only."""
    with serving(port, timeout) as (url, _server):
        yield url
