"""What the server lets in: websocket origins, endpoints, static files; and sessions that are let go.

The explorable sits on public course sites: only its own pages may open a session (no foreign
Origin, no look-alike host), nothing but its pages, ``/liveness`` and its static files answers, no
path escapes the static folders, and sessions whose page has closed are reaped on a schedule, so
that after many sessions the live documents, sessions and threads are back to their baseline.
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from bokeh.document import Document
from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from app.model.state import ExplorerState
from app.server import free_port, serving
from bench.protocol import BokehClient
from tests.helpers import run_coroutine, wait_until

ROOT = Path(__file__).resolve().parents[2]
#: A line of app/model/core/ that no page or static file carries.
SECRET = b"__all__"


@pytest.fixture(scope="module")
def server():
    with serving(unused_session_lifetime_milliseconds=500, check_unused_sessions_milliseconds=250) as served:
        yield served


async def ws_accepted(port: int, origin: str, path: str = "/distance", host: str | None = None) -> bool:
    """Whether the server completes a websocket handshake for a page of ``path`` sent with ``origin``."""
    token = generate_jwt_token(generate_session_id(secret_key=None, signed=False), secret_key=None,
                               signed=False, extra_payload={"headers": {}, "cookies": {}})
    headers = {"Origin": origin} | ({"Host": host} if host else {})
    request = HTTPRequest(f"ws://127.0.0.1:{port}{path}/ws", headers=headers, request_timeout=30)
    try:
        conn = await websocket_connect(request, subprotocols=["bokeh", token])
    except HTTPClientError as error:
        assert error.code == 403, error
        return False
    conn.close()
    while await asyncio.wait_for(conn.read_message(), 10) is not None:
        pass
    return True


def accepted(port: int, origin: str, host: str | None = None) -> bool:
    return run_coroutine(ws_accepted(port, origin, host=host))


# -- websocket origins ----------------------------------------------------------------------------

def test_only_the_local_address_may_open_a_websocket(server):
    url, _ = server
    port = urlparse(url).port
    assert accepted(port, f"http://127.0.0.1:{port}")
    assert accepted(port, f"http://localhost:{port}")
    for origin in ("http://evil.example", f"http://evil.example:{port}", "http://localhost.evil.example",
                   f"http://localhost:{port}.evil.example", f"http://127.0.0.1:{port}.evil.example",
                   f"http://127.0.0.1.evil.example:{port}", f"http://localhost:{port + 1}", "null",
                   f"http://evil.example/127.0.0.1:{port}", f"http://user@evil.example#127.0.0.1:{port}"):
        assert not accepted(port, origin), origin
    # DNS rebinding: a foreign name resolving to this server; Origin and Host agree, and both are foreign.
    assert not accepted(port, f"http://evil.example:{port}", host=f"evil.example:{port}")


def test_the_origin_list_from_the_environment_replaces_the_local_default():
    port = free_port()
    env = {**os.environ, "PE_ALLOWED_ORIGINS": "course.example.org, localhost:8080"}
    env.pop("BOKEH_ALLOW_WS_ORIGIN", None)  # Bokeh's own variable would override every list
    process = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port), "--address", "127.0.0.1"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _alive(port, process), timeout=60, interval=0.2, message="the server never answered")
        assert accepted(port, "https://course.example.org")
        assert accepted(port, "http://localhost:8080")
        assert not accepted(port, f"http://127.0.0.1:{port}")
        assert not accepted(port, "https://course.example.org.evil.example")
    finally:
        process.terminate()
        process.wait(timeout=20)


def _alive(port: int, process: subprocess.Popen) -> bool:
    assert process.poll() is None, "the server stopped"
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/liveness", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


# -- endpoints and static files -------------------------------------------------------------------

def get(url: str, raw_path: str) -> tuple[int, bytes]:
    """GET ``raw_path`` exactly as written (no normalisation of ``..`` or of percent escapes)."""
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.putrequest("GET", raw_path, skip_accept_encoding=True)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("path", [
    "/admin", "/admin/", "/debug", "/__debug__", "/autoreload", "/autoload.js/../admin", "/api", "/metrics",
    "/panel-preview", "/livereload", "/.git/config", "/app/model/core/", "/app", "/components", "/tests",
])
def test_no_admin_debug_or_source_endpoint(server, path):
    url, _ = server
    status, body = get(url, path)
    assert status in (400, 403, 404, 405), (path, status)
    assert SECRET not in body


@pytest.mark.parametrize("path", [
    "/static/../app/model/core/", "/assets/../app/model/core/", "/assets/../../app/model/core/",
    "/assets/%2e%2e/app/model/core/", "/assets/%2e%2e%2fapp%2fcore.py", "/assets/..%2fapp%2fcore.py",
    "/assets/%252e%252e%252fapp%252fcore.py", "/static/%2e%2e%2f%2e%2e%2fapp%2fcore.py",
    "/assets/....//app/model/core/", "/assets/..\\app\\core.py", "/assets/%2e%2e%5capp%5ccore.py",
    "/static/extensions/panel/../../../../app/model/core/", "/assets//work/../app/model/core/",
    "/assets/%c0%ae%c0%ae/app/model/core/", "/static/js/../../../../../../etc/passwd",
])
def test_no_path_leaves_the_static_folders(server, path):
    url, _ = server
    status, body = get(url, path)
    assert status != 200 or (SECRET not in body and b"root:" not in body), (path, status)
    assert SECRET not in body and b"root:x:0" not in body


def test_the_static_files_are_served(server):
    url, _ = server
    assert get(url, "/assets/app.css")[0] == 200
    assert get(url, "/static/js/bokeh.min.js")[0] == 200


# -- sessions let go ------------------------------------------------------------------------------

def live_documents() -> int:
    gc.collect()
    return sum(isinstance(o, Document) for o in gc.get_objects())


def live_states() -> int:
    gc.collect()
    return sum(isinstance(o, ExplorerState) for o in gc.get_objects())


def test_sessions_opened_and_closed_are_reaped_back_to_the_baseline(server):
    url, bokeh_server = server
    parsed = urlparse(url)

    async def one_session() -> None:
        client = BokehClient(parsed.hostname, parsed.port, "/distance", {"lang": "en"})
        await client.open(expect=("distance_marker",))
        await client.aclose()

    run_coroutine(one_session())  # everything a session loads once per process, before the baseline
    wait_until(lambda: not bokeh_server.get_sessions(), timeout=20, message="the warm-up session was not reaped: "
               + str([(s.id[:6], s.connection_count) for s in bokeh_server.get_sessions()]))
    documents, states, threads = live_documents(), live_states(), threading.active_count()

    async def many() -> None:
        for _ in range(30):
            await one_session()

    run_coroutine(many())
    wait_until(lambda: not bokeh_server.get_sessions(), timeout=30, message="sessions were not reaped")
    wait_until(lambda: live_documents() <= documents, timeout=30,
               message=f"live documents stayed above the baseline of {documents}")
    # The page's objects too: a session's state, address bar, animation and room box go with it.
    assert live_states() <= states
    assert threading.active_count() <= threads


def test_clients_that_leave_during_the_handshake_leave_no_session_behind(server):
    """A websocket closed while its session is still being built: Bokeh alone keeps that session for good
    (it counts one connection that never closes); the handler lets it go (``NoDelayWSHandler._async_open``)."""
    url, bokeh_server = server
    port = urlparse(url).port

    async def many() -> None:
        for _ in range(30):
            await ws_accepted(port, f"http://127.0.0.1:{port}")

    run_coroutine(many())
    wait_until(lambda: not bokeh_server.get_sessions(), timeout=30, message="sessions of clients that left stayed: "
               + str([(s.id[:6], s.connection_count) for s in bokeh_server.get_sessions()]))
