"""The rooms' HTTP routes: a join link's QR code, and (for the deployment test) the sessions a process built.

``/room_qr.svg?room=ID&path=/route`` draws the join link of room ``ID`` on
page ``/route`` as the browser reaches this server (``Host``, and
``X-Forwarded-Proto`` behind a proxy), so the QR code is made here and no
other host is asked. ``/pe_sessions`` answers only when ``PE_SESSION_STATS=1``
(the tests and the benchmark set it): this process's pid, a hash of each session id it built, and
the delays from a teacher's change to its application in this process's followers (seconds).
"""

from __future__ import annotations

import io
import json
import os

import segno
from tornado.web import RequestHandler

from app import collector
from app.model.routes import page_paths
from app.model.state import valid_room_id
from components.room import SESSIONS_BUILT, public_origin
from components.roombus import APPLIED_DELAYS


def join_link(origin: str, path: str, room: str) -> str:
    """The address a follower opens: the teacher's page with ``follow=ROOM``."""
    return f"{origin}{path}?follow={room}"


def qr_svg(link: str) -> bytes:
    """``link`` as a QR code in SVG, black on white, with a quiet zone (medium error correction)."""
    buffer = io.BytesIO()
    segno.make(link, error="m").save(buffer, kind="svg", scale=8, border=4, dark="#000000", light="#ffffff",
                                     xmldecl=False, svgns=True, title=link)
    return buffer.getvalue()


class RoomQRHandler(RequestHandler):
    """The QR code of a room's join link; 400 for a room id or page that is not one."""

    def get(self) -> None:
        room = self.get_argument("room", "")
        path = self.get_argument("path", "/")
        if not valid_room_id(room) or path not in page_paths():
            self.set_status(400)
            self.finish("not a room id or not a page")
            return
        headers = {name: value for name, value in self.request.headers.get_all()}
        self.set_header("Content-Type", "image/svg+xml")
        self.set_header("Cache-Control", "no-store")
        self.finish(qr_svg(join_link(public_origin(headers), path, room)))


class SessionStatsHandler(RequestHandler):
    """This process's pid, the (hashed) ids of the sessions it built and its cycle collector's passes
    (``app.collector.summary``); 404 unless PE_SESSION_STATS=1."""

    def get(self) -> None:
        if os.environ.get("PE_SESSION_STATS") != "1":
            self.set_status(404)
            self.finish()
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"pid": os.getpid(), "sessions": list(SESSIONS_BUILT),
                                "applied_delays": list(APPLIED_DELAYS), "collector": collector.summary()}))


def room_patterns() -> list[tuple[str, type[RequestHandler]]]:
    """Routes for ``pn.serve(extra_patterns=...)``."""
    return [(r"/room_qr\.svg", RoomQRHandler), (r"/pe_sessions", SessionStatsHandler)]
