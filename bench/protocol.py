"""A minimal Bokeh-protocol websocket client, for many clients without a browser.

It speaks just enough of Bokeh's wire protocol (a message is a header, a
metadata and a content text frame, then a header/payload frame pair per
binary buffer) to open a session, pull the document, change a slider's
``value`` the way BokehJS does (a ``PATCH-DOC`` with ``ModelChanged``
events) and time the server's answer. Only loopback addresses are used.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

#: Substrings of a PATCH-DOC's content that mean "data reached the page": a
#: source's ``data`` replaced or patched, or new sources (a rebuilt figure).
DATA_MARKERS = ('"attr":"data"', '"kind":"ColumnsPatched"', '"kind":"ColumnsStreamed"', '"ColumnDataSource"')
#: Seconds allowed for the rest of a message once its first frame has arrived.
REST_TIMEOUT = 60.0


@dataclass
class Message:
    msgtype: str
    content: str
    size: int  # bytes of every frame of the message, as sent


@dataclass
class BokehClient:
    """One websocket session on a Panel/Bokeh server."""

    host: str
    port: int
    path: str = "/"
    args: dict[str, str] = field(default_factory=dict)
    conn: WebSocketClientConnection | None = None
    doc: dict | None = None
    received_bytes: int = 0
    _msgid: int = 0

    async def open(self, timeout: float = 30.0, expect: tuple[str, ...] = ("distance_marker",)) -> None:
        """Connect, wait for the ACK, pull the document, say it is drawn, and pull it again until it is whole.

        The app's ``/`` builds its views below the first one when the browser
        reports the page drawn (``document_ready``); ``expect`` names models
        (one of a later view) that the document must hold before the client
        counts as open, so that every later measurement sees the whole page.
        """
        if not self.host.startswith("127.") and self.host != "localhost":
            raise ValueError("the benchmark only talks to loopback addresses")
        self.session_id = session_id = generate_session_id(secret_key=None, signed=False)
        token = generate_jwt_token(session_id, secret_key=None, signed=False,
                                   extra_payload={"headers": {"Accept-Language": "en"}, "cookies": {}})
        ws_path = self.path.rstrip("/") + "/ws"
        query = f"?{urlencode(self.args)}" if self.args else ""
        request = HTTPRequest(f"ws://{self.host}:{self.port}{ws_path}{query}", request_timeout=timeout)
        self.conn = await asyncio.wait_for(
            websocket_connect(request, subprotocols=["bokeh", token], max_message_size=1 << 30), timeout)
        # As browsers do: a message is three small frames, and with Nagle on the
        # second one would wait for the server's delayed ACK (~40 ms).
        self.conn.protocol.stream.set_nodelay(True)
        ack = await self.receive(timeout)
        if ack.msgtype != "ACK":
            raise RuntimeError(f"expected ACK, got {ack.msgtype}")
        await self.pull(timeout)
        # BokehJS says so once the page is drawn; Panel holds every update back until it hears it.
        ready = {"type": "event", "name": "document_ready", "values": {}}
        await self.send("PATCH-DOC", {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event",
                                                  "msg_data": ready}]})
        while True:
            reply = await self.receive(timeout)
            if reply.msgtype == "OK":
                break
            if reply.msgtype == "ERROR":
                raise RuntimeError(reply.content)
        deadline = asyncio.get_running_loop().time() + timeout
        while not set(expect) <= {o.get("attributes", {}).get("name") for o in objects(self.doc)}:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"the page never held {expect}")
            await self.pull(timeout)  # each pull is a round trip: the later views arrive meanwhile

    async def pull(self, timeout: float) -> None:
        """Replace ``doc`` by the server's whole document (PATCH-DOCs received meanwhile are dropped)."""
        await self.send("PULL-DOC-REQ", {})
        while True:
            reply = await self.receive(timeout)
            if reply.msgtype == "PULL-DOC-REPLY":
                self.doc = json.loads(reply.content)["doc"]
                return
            if reply.msgtype == "ERROR":
                raise RuntimeError(reply.content)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def aclose(self, timeout: float = 10.0) -> None:
        """Close, and wait until the server has closed its end (so the session counts as unused)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
            while await asyncio.wait_for(conn.read_message(), timeout) is not None:
                pass

    async def send(self, msgtype: str, content: dict) -> None:
        self._msgid += 1
        header = json.dumps({"msgid": f"bench{self._msgid}", "msgtype": msgtype})
        await self.conn.write_message(header)
        await self.conn.write_message("{}")
        await self.conn.write_message(json.dumps(content, separators=(",", ":")))

    async def receive(self, timeout: float) -> Message:
        """The next whole message (its buffers are read and counted, not decoded)."""
        # Only the wait for a message's first frame may time out: giving up half way
        # through one would leave the rest to be misread as the next message.
        frames = [await asyncio.wait_for(self.conn.read_message(), timeout)]
        frames += [await asyncio.wait_for(self.conn.read_message(), REST_TIMEOUT) for _ in range(2)]
        if any(frame is None for frame in frames):
            raise ConnectionError("websocket closed")
        header = json.loads(frames[0])
        size = sum(len(f) for f in frames)
        for _ in range(2 * int(header.get("num_buffers", 0))):
            frame = await asyncio.wait_for(self.conn.read_message(), REST_TIMEOUT)
            if frame is None:
                raise ConnectionError("websocket closed")
            size += len(frame)
        self.received_bytes += size
        return Message(header["msgtype"], frames[2], size)

    def slider_id(self, title: str) -> str:
        """The id of the Bokeh slider model whose title is ``title`` (Panel's IntSlider)."""
        found = [ref["id"] for ref in objects(self.doc)
                 if ref.get("attributes", {}).get("title") == title and "Slider" in ref.get("name", "")]
        if len(found) != 1:
            raise LookupError(f"{len(found)} sliders titled {title!r}")
        return found[0]

    async def set_value(self, model_id: str, value: int) -> None:
        """What BokehJS sends for a key press on a slider: ``value`` and ``value_throttled``."""
        events = [{"kind": "ModelChanged", "model": {"id": model_id}, "attr": attr, "new": value}
                  for attr in ("value", "value_throttled")]
        await self.send("PATCH-DOC", {"events": events})

    async def until_data(self, timeout: float, quiet: float = 0.03) -> tuple[float, int]:
        """Wait for the server's answer to a change; return (seconds to its last data message, bytes).

        The server writes every message of one update back to back, so the
        answer is over when nothing more arrives for ``quiet`` seconds after a
        message with data in it.
        """
        t0 = time.perf_counter()
        size, last_data = 0, None
        while True:
            elapsed = time.perf_counter() - t0
            if last_data is None:
                if elapsed >= timeout:
                    raise TimeoutError("no data from the server")
                wait = timeout - elapsed
            else:
                wait = quiet
            try:
                message = await self.receive(wait)
            except TimeoutError:
                if last_data is None:
                    raise TimeoutError("no data from the server") from None
                return last_data, size
            size += message.size
            if message.msgtype == "ERROR":
                raise RuntimeError(message.content[:200])
            if message.msgtype == "PATCH-DOC" and any(m in message.content for m in DATA_MARKERS):
                last_data = time.perf_counter() - t0


def objects(node):
    """Every serialized Bokeh object (``{"type": "object", ...}``) in a document's JSON."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "object" and "id" in item:
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
