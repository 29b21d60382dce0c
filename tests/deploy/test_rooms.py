"""components.roombus and the room box without a browser: ids, secrets, coalescing, the buses, who may drive."""

from __future__ import annotations

import concurrent.futures
import json
import re
import time
import xml.etree.ElementTree as ET

import pytest
from tornado.ioloop import IOLoop

from app.model.state import ExplorerState
from app.model.strings import text
from app.room_routes import qr_svg
from components import roombus as rooms
from components.room import RoomBox, public_origin
from tests.servers import redis_server


@pytest.fixture
def local_bus(monkeypatch):
    monkeypatch.delenv("PE_REDIS_URL", raising=False)
    monkeypatch.setenv("PE_NUM_PROCS", "1")
    monkeypatch.delenv("PE_PROCESSES", raising=False)
    rooms.reset_bus()
    yield rooms.bus()
    rooms.reset_bus()


class FakeDoc:
    """Just what a Follower uses of a Bokeh document: next-tick callbacks, run when the test says."""

    def __init__(self) -> None:
        self.callbacks: list = []

    def add_next_tick_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def add_timeout_callback(self, callback, _ms) -> None:
        self.callbacks.append(callback)

    def run(self) -> None:
        callbacks, self.callbacks = self.callbacks, []
        for callback in callbacks:
            callback()


def test_room_ids_are_short_and_unambiguous():
    ids = {rooms.new_room_id() for _ in range(200)}
    assert len(ids) > 190
    assert all(re.fullmatch(r"[a-hjkmnp-z2-9]{6}", room) for room in ids)
    assert not any(ch in "".join(ids) for ch in "01ilo")


def test_a_room_is_driven_by_its_secret_only(local_bus):
    room, secret = rooms.create_room(local_bus)
    assert local_bus.exists(room) and rooms.valid_room_id(room)
    assert local_bus.check(room, secret)
    assert not local_bus.check(room, secret + "x")
    assert not local_bus.check(room, "")
    assert not local_bus.check("zzzzzz", secret)
    assert secret not in json.dumps(local_bus.hashes)  # only its hash is kept


def test_a_slow_follower_gets_the_newest_state_once(local_bus):
    room, _ = rooms.create_room(local_bus)
    doc, seen = FakeDoc(), []
    follower = rooms.Follower(room, doc, seen.append, local_bus)
    for seq in range(1, 31):  # a teacher dragging at 30 Hz while the follower's session is busy
        local_bus.publish(room, rooms.encode_state("/explore", "", {"k": str(seq)}, seq))
    assert len(doc.callbacks) == 1  # one pending update, not thirty
    doc.run()
    assert [state["seq"] for state in seen] == [30]
    assert follower.skipped == 29 and follower.applied == 1
    follower.close()
    local_bus.publish(room, rooms.encode_state("/explore", "", {"k": "31"}, 31))
    assert doc.callbacks == []


def test_a_follower_with_unsent_bytes_waits_and_skips(local_bus, monkeypatch):
    room, _ = rooms.create_room(local_bus)
    doc, seen = FakeDoc(), []
    follower = rooms.Follower(room, doc, seen.append, local_bus)  # noqa: F841 (held: the bus holds it weakly)
    backlog = {"bytes": rooms.BACKLOG_BYTES + 1}
    monkeypatch.setattr(rooms, "websocket_backlog", lambda _doc: backlog["bytes"])
    local_bus.publish(room, rooms.encode_state("/", "", {"k": "1"}, 1))
    doc.run()  # still sending: waits
    assert seen == []
    local_bus.publish(room, rooms.encode_state("/", "", {"k": "2"}, 2))
    backlog["bytes"] = 0
    doc.run()
    assert [state["seq"] for state in seen] == [2]


@pytest.mark.parametrize("payload", ["", "null", "[]", "{}", '{"values": 3}', "not json", '{"values": {}, "path": 5}'])
def test_junk_on_the_bus_is_ignored_or_made_harmless(payload):
    state = rooms.decode_state(payload)
    assert state is None or (state["path"] == "/" and state["values"] == {})


def test_several_processes_without_redis_have_no_rooms(monkeypatch):
    monkeypatch.delenv("PE_REDIS_URL", raising=False)
    monkeypatch.setenv("PE_PROCESSES", "2")
    rooms.reset_bus()
    try:
        assert rooms.bus() is None
        box = RoomBox(ExplorerState(lang="en"), "view")
        assert box.mode == "unavailable"
        assert box.panel.message == text("en", "room_needs_redis")
        assert not box.start.shown
        box.start_room()
        assert box.mode == "unavailable"
    finally:
        rooms.reset_bus()


def test_a_student_can_never_drive(local_bus):
    teacher = RoomBox(ExplorerState(lang="en", k=3), "view")
    teacher.start_room()
    room = teacher.room
    assert teacher.mode == "teacher" and teacher.link.text.endswith(f"/?follow={room}")
    teacher.state.k = 5
    teacher.state.k = 6  # without a session (no document to defer to) every change is published at once
    assert json.loads(local_bus.latest(room))["values"]["k"] == "6"

    student = RoomBox(ExplorerState(lang="es", follow=room), "view")
    assert student.mode == "following" and student.state.k == 6 and student.state.lang == "es"
    latest = local_bus.latest(room)
    student.panel.claim = f"{room}:forged-secret"  # what a hostile page could send
    assert student.mode == "following"
    assert student.panel.message == text("es", "room_refused", room=room)
    student.state.k = -4  # the student's own slider
    assert local_bus.latest(room) == latest

    # The teacher's tab, on its next page, claims with the real secret and drives again.
    next_page = RoomBox(ExplorerState(lang="en"), "view")
    next_page.panel.claim = f"{room}:{teacher.secret}"
    assert next_page.mode == "teacher"


def test_the_teachers_earlier_page_stops_driving_when_a_later_one_takes_the_room(local_bus):
    first = RoomBox(ExplorerState(lang="en", k=3), "view")
    first.start_room()
    room = first.room
    later = RoomBox(ExplorerState(lang="en", k=7), "view")
    later.panel.location = "/explore#distance"
    later.panel.claim = f"{room}:{first.secret}"
    assert later.mode == "teacher"
    assert json.loads(local_bus.latest(room))["path"] == "/explore"
    # The earlier page's session lives on until it is reaped; what it still says goes nowhere.
    first.panel.location = "/#hands"
    first.state.k = 1
    latest = json.loads(local_bus.latest(room))
    assert latest["path"] == "/explore" and latest["values"]["k"] == "7"
    assert first.mode == "ended" and first.panel.message == text("en", "room_taken", room=room)
    later.state.k = 8
    assert json.loads(local_bus.latest(room))["values"]["k"] == "8"


def test_a_follower_detaches_and_follows_again(local_bus):
    teacher = RoomBox(ExplorerState(lang="en"), "view")
    teacher.start_room()
    student = RoomBox(ExplorerState(lang="en", follow=teacher.room), "view")
    student.detach.clicks += 1
    assert student.mode == "detached" and student.follow.shown and not student.detach.shown
    teacher.state.k = 9
    teacher.publish()
    student.state.k = 1  # exploring on their own
    assert student.state.k == 1
    student.follow.clicks += 1
    assert student.mode == "following" and student.state.k == 9


@pytest.mark.parametrize(("kind", "path", "slides", "places"), [
    ("lesson", "/", ("shift", "rope"), ("/#shift", "/#rope")),
    ("section", "/hands", ("shift", "rope"), ("/shift#", "/rope#")),
    ("explore", "/explore", ("clocks", "ladder"), ("/explore#clocks", "/explore#ladder")),
    ("view", "/clocks", ("distance", "ladder"), ("/distance#", "/ladder#")),
])
def test_a_presenting_teachers_slide_reaches_followers_as_a_place_not_a_mode(local_bus, kind, path, slides, places):
    """A student joining a teacher who presents got present=1 and slide= applied to a page built without
    slides: a page of no bar and no room box, that never followed the next slide until reloaded."""
    teacher = RoomBox(ExplorerState(lang="en", present=True, slide=slides[0], theme="dark"), kind)
    teacher.panel.location = f"{path}#"
    teacher.start_room()
    student = RoomBox(ExplorerState(lang="es", follow=teacher.room), "lesson")
    assert student.mode == "following"
    assert (student.state.present, student.state.slide, student.state.theme) == (False, "", "light")
    assert student.panel.target == places[0]
    # The teacher's next slide is the follower's next place; the values keep following.
    teacher.state.param.update(slide=slides[1], k=7)
    teacher.publish()
    student.apply(json.loads(local_bus.latest(teacher.room)))
    assert student.state.k == 7 and not student.state.present
    assert student.panel.target == places[1]


def test_a_teacher_who_leaves_presentation_sends_the_page_again(local_bus):
    teacher = RoomBox(ExplorerState(lang="en", present=True, slide="shift"), "lesson")
    teacher.panel.location = "/#"
    teacher.start_room()
    teacher.state.present = False
    teacher.panel.location = "/#shift"  # what the page reports once it shows the whole lesson again
    assert json.loads(local_bus.latest(teacher.room))["section"] == "shift"
    teacher.panel.location = "/#hands"
    assert (json.loads(local_bus.latest(teacher.room))["path"],
            json.loads(local_bus.latest(teacher.room))["section"]) == ("/", "hands")


def test_an_unknown_room_is_said(local_bus):
    student = RoomBox(ExplorerState(lang="en", follow="zzzzzz"), "view")
    assert student.mode == "missing"
    assert student.panel.message == text("en", "room_missing", room="zzzzzz")


def test_public_origin_behind_a_proxy():
    assert public_origin({"Host": "127.0.0.1:8080"}) == "http://127.0.0.1:8080"
    assert public_origin({"Host": "a:1", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.example.org"}) \
        == "https://class.example.org"
    assert public_origin({"Host": "<script>", "X-Forwarded-Proto": "javascript"}) == "http://localhost"


def test_the_qr_code_is_an_svg_of_the_link():
    svg = qr_svg("http://127.0.0.1:8080/explore?follow=abcdef")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "http://127.0.0.1:8080/explore?follow=abcdef" in svg.decode()


def _redis_bus_round_trip() -> None:
    with redis_server() as url:
        loop = IOLoop(make_current=False)
        teacher_side, student_side = rooms.RedisBus(url, loop), rooms.RedisBus(url, loop)
        room, secret = rooms.create_room(teacher_side)
        assert student_side.exists(room) and student_side.check(room, secret)
        assert not student_side.check(room, "forged")
        got: list[str] = []

        def listen(payload: str) -> None:
            got.append(payload)
            loop.stop()

        student_side.subscribe(room, listen)
        deadline = time.monotonic() + 10
        # The subscription is asynchronous: publish until the first message comes through (bounded).
        def publish_until_heard() -> None:
            if got or time.monotonic() > deadline:
                loop.stop()
                return
            teacher_side.publish(room, rooms.encode_state("/", "", {"k": "4"}, 1))
            loop.call_later(0.1, publish_until_heard)

        loop.add_callback(publish_until_heard)
        loop.start()
        assert got and json.loads(got[0])["values"] == {"k": "4"}
        assert json.loads(student_side.latest(room))["seq"] == 1
        # A page that another has taken the room from publishes nothing (one driver number per page).
        first, second = teacher_side.drive(room), student_side.drive(room)
        assert second == first + 1
        assert not teacher_side.publish(room, rooms.encode_state("/", "", {"k": "5"}, 2), first)
        assert student_side.publish(room, rooms.encode_state("/explore", "", {"k": "6"}, 3), second)
        assert json.loads(student_side.latest(room))["values"] == {"k": "6"}
        student_side.unsubscribe(room, listen)
        loop.close()


def test_redis_bus_carries_a_room_across_buses():
    # In a worker thread: after a Playwright test the main thread's asyncio loop counts as running,
    # and a tornado IOLoop cannot start there (tests.helpers.run_coroutine does the same for coroutines).
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_redis_bus_round_trip).result(timeout=120)


def test_the_internals_the_backlog_check_reads_are_there():
    """components.roombus.websocket_backlog reads Bokeh's and tornado's internals; a version that moved them fails."""
    import inspect

    import tornado.iostream
    from bokeh.server.session import ServerSession
    from bokeh.server.views.ws import WSHandler

    assert "self._subscribed_connections" in inspect.getsource(ServerSession.__init__)
    assert "self.write_lock" in inspect.getsource(WSHandler.__init__)
    assert "self._write_buffer" in inspect.getsource(tornado.iostream.BaseIOStream.__init__)
    assert "self._socket" in inspect.getsource(__import__("bokeh.server.connection", fromlist=["x"]).ServerConnection)
