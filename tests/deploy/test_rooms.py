"""components.roombus and the room box without a browser: ids, secrets, coalescing, the buses, who may drive."""

from __future__ import annotations

import asyncio
import json
import re
import time
import xml.etree.ElementTree as ET

import param
import pytest
from bokeh.document import Document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.model.state import ExplorerState
from app.model.strings import text
from app.room_routes import qr_svg
from components import roombus as rooms
from components.room import RoomBox, public_origin
from tests.helpers import run_coroutine, until
from tests.servers import redis_process, redis_server


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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.fixed_dictionaries({"d_model": st.integers(1, 64).map(lambda h: 2 * h), "T": st.integers(1, 64)}),
       moves=st.lists(st.fixed_dictionaries({
           "d_model": st.integers(1, 64).map(lambda h: 2 * h), "T": st.integers(1, 64), "pos": st.integers(0, 63),
           "k": st.integers(-63, 63), "pairs_from": st.integers(0, 31), "pairs_to": st.integers(0, 31),
           "base": st.sampled_from([100.0, 10_000.0, 500_000.0])}), min_size=1, max_size=4))
def test_a_follower_ends_on_the_teachers_values_whatever_the_sizes_clamp(local_bus, first, moves):
    """A follower sets only what differs from the teacher's values, sizes first: after any moves (sizes that
    clamp pos, k and the pairs on either side), it holds exactly the teacher's values."""
    teacher = RoomBox(ExplorerState(lang="en", **first), "view")
    teacher.start_room()
    student = RoomBox(ExplorerState(lang="en", follow=teacher.room), "view")
    for move in moves:
        with param.parameterized.batch_call_watchers(teacher.state):
            teacher.state.param.update({key: move[key] for key in ("d_model", "T", "base")})
        for key in ("pos", "k", "pairs_from", "pairs_to"):  # each clamped by the teacher's state to its bounds
            setattr(teacher.state, key, max(teacher.state.param[key].bounds[0],
                                            min(move[key], teacher.state.param[key].bounds[1])))
        teacher.publish()
        student.apply(json.loads(local_bus.latest(teacher.room)))
        for key in ("d_model", "T", "base", "pos", "k", "pairs_from", "pairs_to", "pair"):
            assert getattr(student.state, key) == getattr(teacher.state, key), key


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


class SessionDoc(Document):
    """A Bokeh document whose next-tick callbacks run on the loop, as a session's would (no server here)."""

    def add_next_tick_callback(self, callback) -> None:
        asyncio.get_running_loop().call_soon(callback)


async def _redis_bus_round_trip(url: str) -> None:
    teacher_side, student_side = rooms.RedisBus(url), rooms.RedisBus(url)
    room, secret = await rooms.open_room(teacher_side)
    assert await student_side.exists(room) and await student_side.check(room, secret)
    assert not await student_side.check(room, "forged")
    got: list[str] = []
    student_side.subscribe(room, got.append)

    def heard() -> bool:  # the subscription is asynchronous: publish until the first message comes through
        if not got:
            asyncio.get_running_loop().create_task(
                teacher_side.publish(room, rooms.encode_state("/", "", {"k": "4"}, 1)))
        return bool(got)

    await until(heard, every=0.1, message="no message through Redis")
    assert json.loads(got[0])["values"] == {"k": "4"}
    assert json.loads(await student_side.latest(room))["seq"] == 1
    # A page that another has taken the room from publishes nothing (one driver number per page).
    first, second = await teacher_side.drive(room), await student_side.drive(room)
    assert second == first + 1
    assert not await teacher_side.publish(room, rooms.encode_state("/", "", {"k": "5"}, 2), first)
    assert await student_side.publish(room, rooms.encode_state("/explore", "", {"k": "6"}, 3), second)
    assert json.loads(await student_side.latest(room))["values"] == {"k": "6"}
    # Closing: followers hear "closed", a late joiner finds it closed, nobody drives it again.
    assert await student_side.close(room, second)
    await until(lambda: rooms.CLOSED in got, message="the closing was not heard")
    assert await teacher_side.lookup(room) == ("closed", None)
    assert not await teacher_side.check(room, secret)
    student_side.unsubscribe(room, got.append)
    await teacher_side.aclose()
    await student_side.aclose()


def test_redis_bus_carries_a_room_across_buses():
    # In a worker thread: after a Playwright test the main thread's asyncio loop counts as running.
    with redis_server() as url:
        run_coroutine(_redis_bus_round_trip(url), timeout=120)


async def _subscription_lost(url: str) -> None:
    teacher_side, student_side = rooms.RedisBus(url), rooms.RedisBus(url)
    room, _secret = await rooms.open_room(teacher_side)
    await student_side.exists(room)
    await until(lambda: student_side._pubsub is not None, message="the student's connection is not made")

    # The SUBSCRIBE a new follower sends is lost: it timed out on a loaded machine, or it came while the
    # connection was being made, after the list of rooms to subscribe was taken. CI lost a room so, for good,
    # twice: the follower got the room's state once (read, not heard) and never a move after it.
    async def lost(_room: str, _subscribe: bool) -> None:
        return None

    student_side._change_subscription = lost
    got: list[str] = []
    student_side.subscribe(room, got.append)

    def heard() -> bool:
        if not got:
            asyncio.get_running_loop().create_task(
                teacher_side.publish(room, rooms.encode_state("/", "", {"k": "4"}, 1)))
        return bool(got)

    await until(heard, every=0.1, message="a room whose subscription was lost is never heard")
    await teacher_side.aclose()
    await student_side.aclose()


def test_a_room_whose_subscription_was_lost_is_subscribed_again():
    with redis_server() as url:
        run_coroutine(_subscription_lost(url), timeout=120)


async def _rooms_outlive_a_restart(server) -> None:
    # Two processes: the teacher's (and one follower's), and a late joiner's.
    here, there = rooms.RedisBus(server.url), rooms.RedisBus(server.url)
    teacher = RoomBox(ExplorerState(lang="en", k=3), "view", room_bus=here)
    teacher.start_room()
    await until(lambda: teacher.mode == "teacher", message="no room")
    room = teacher.room
    student = RoomBox(ExplorerState(lang="es"), "view", room_bus=here)
    student.doc = SessionDoc()
    student.state.follow = room
    student._join(room)
    await until(lambda: student.mode == "following", message="the student does not follow")
    await until(lambda: here.up, message="the connection's task is not up")
    teacher.state.k = 5
    await until(lambda: student.state.k == 5, message="the move did not reach the follower")

    # Redis restarts, empty: both pages are told, the process reconnects with a growing wait between tries.
    server.stop()
    await until(lambda: here.up is False, message="Redis's end was not noticed")
    await until(lambda: teacher.panel.message == text("en", "room_down_teacher", room=room))
    await until(lambda: student.panel.message == text("es", "room_down_follower", room=room))
    tries_before = len(here.tries)
    await until(lambda: len(here.tries) >= tries_before + 3, timeout=20, message="no retries")
    gaps = [b - a for a, b in zip(list(here.tries)[-3:], list(here.tries)[-2:], strict=False)]
    # The wait grew past its first step (a loaded machine can stretch any one gap, so no ratio of two gaps),
    # and stays bounded.
    assert max(gaps) >= 2 * rooms.BACKOFF_FIRST_S * 0.9, gaps
    assert all(gap <= rooms.BACKOFF_MAX_S + rooms.CALL_TIMEOUT_S + 1 for gap in gaps), gaps
    teacher.state.k = 6  # moved while Redis is away: it reaches the students once Redis is back
    server.start()
    await until(lambda: here.up, timeout=rooms.BACKOFF_MAX_S + 10, message="no reconnection")
    await until(lambda: teacher.panel.message == text("en", "room_back_teacher", room=room))
    await until(lambda: student.state.k == 6, message="the follower did not catch up after the restart")
    assert student.mode == "following" and student.panel.message.startswith(text("es", "room_back_follower",
                                                                                   room=room)[:10])
    # The room was re-created by its teacher's page: a late joiner in another process joins it.
    late = RoomBox(ExplorerState(lang="en", follow=room), "view", room_bus=there)
    await until(lambda: late.mode == "following", message=f"the late joiner is {late.mode}")
    assert late.state.k == 6
    teacher.state.k = 7
    await until(lambda: student.state.k == 7, message="live moves stopped after the restart")
    # Closed: the follower says so; a late joiner is told it is closed.
    teacher.end.clicks += 1
    await until(lambda: student.mode == "closed", message="the follower was not told the room is closed")
    assert student.panel.message == text("es", "room_closed", room=room)
    again = RoomBox(ExplorerState(lang="en", follow=room), "view", room_bus=there)
    await until(lambda: again.mode == "closed", message=f"a late joiner of a closed room is {again.mode}")
    student.close()
    await here.aclose()
    await there.aclose()


def test_rooms_outlive_a_redis_restart():
    """Redis (no persistence) restarts: the teacher's page re-creates its room, followers catch up, late
    joiners join; the process reconnects with a backoff; both sides are told while it is down."""
    with redis_process() as server:
        run_coroutine(_rooms_outlive_a_restart(server), timeout=180)


async def _redis_down_at_first_touch(server) -> None:
    bus = rooms.RedisBus(server.url)
    teacher = RoomBox(ExplorerState(lang="en"), "view", room_bus=bus)
    teacher.start_room()
    await until(lambda: teacher.panel.message == text("en", "room_down_start"), message="not told")
    assert teacher.mode == "idle" and teacher.start.shown
    student = RoomBox(ExplorerState(lang="es", follow="abcdef"), "view", room_bus=bus)
    await until(lambda: student.mode == "waiting", message=f"the student is {student.mode}")
    assert student.panel.message == text("es", "room_down_join", room="abcdef")
    server.start()
    await until(lambda: bus.up, timeout=rooms.BACKOFF_MAX_S + 10, message="rooms stayed off")
    await until(lambda: student.mode == "missing", message="the waiting student did not look again")
    teacher.start.clicks += 1
    await until(lambda: teacher.mode == "teacher", message="no room once Redis is up")
    await bus.aclose()


def test_redis_down_at_first_touch_is_retried():
    with redis_process(start=False) as server:
        run_coroutine(_redis_down_at_first_touch(server), timeout=120)


async def _a_stall_blocks_nobody(server) -> None:
    bus = rooms.RedisBus(server.url)
    teacher = RoomBox(ExplorerState(lang="en"), "view", room_bus=bus)
    teacher.start_room()
    await until(lambda: teacher.mode == "teacher" and bus.up, message="no room")
    alone = ExplorerState(lang="en")  # a page in no room, in the same process
    RoomBox(alone, "view", room_bus=bus)
    loop = asyncio.get_running_loop()
    lags: list[float] = []

    async def probe() -> None:
        """A slider step of the page in no room: from its arrival on the loop to its state changed."""
        arrived = time.monotonic()
        done = loop.create_future()

        def step() -> None:
            alone.k = (alone.k + 1) % 10
            done.set_result(None)

        loop.call_soon(step)
        await done
        lags.append(time.monotonic() - arrived)

    server.pause()
    try:
        stalled_at = time.monotonic()
        # The teacher keeps dragging while Redis answers nothing; probes run meanwhile.
        while time.monotonic() - stalled_at < 2 * rooms.CALL_TIMEOUT_S + 1 or bus.up is not False:
            assert time.monotonic() - stalled_at < 30, "the stall was never noticed"
            teacher.state.k = (teacher.state.k + 1) % 10
            teacher.publish()
            await probe()
            await asyncio.sleep(0.02)  # pacing: a drag at ~50 Hz
        assert teacher.panel.message == text("en", "room_down_teacher", room=teacher.room)
    finally:
        server.resume()
    assert max(lags) < 0.1, f"the loop waited {max(lags) * 1000:.0f} ms for a page in no room"
    await until(lambda: bus.up, timeout=rooms.BACKOFF_MAX_S + 10, message="not back after the stall")
    await until(lambda: teacher.panel.message == text("en", "room_back_teacher", room=teacher.room))
    assert json.loads(await bus.latest(teacher.room))["values"]["k"] == str(teacher.state.k)
    await bus.aclose()


def test_a_stalled_redis_blocks_no_page():
    """SIGSTOP on redis-server: a page in no room still answers at once (every call is a bounded coroutine)."""
    with redis_process() as server:
        run_coroutine(_a_stall_blocks_nobody(server), timeout=120)


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


async def _join_by_code_across_processes(server) -> None:
    here, there = rooms.RedisBus(server.url), rooms.RedisBus(server.url)
    teacher = RoomBox(ExplorerState(lang="en"), "lesson", room_bus=here)
    teacher.start_room()
    await until(lambda: teacher.mode == "teacher", message="no room")
    teacher.panel.location = "/#shift"
    for _ in range(200):  # published through Redis (at most PUBLISH_INTERVAL_S after the last publication)
        latest = await here.latest(teacher.room)
        if latest and json.loads(latest)["section"] == "shift":
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the teacher's section was not published")
    student = RoomBox(ExplorerState(lang="es"), "lesson", room_bus=there)  # another process: the lookup is Redis's
    student.join.param.update(typed=teacher.room.upper())
    student.join.asks += 1
    await until(lambda: student.join.go, message="the code did not open the room")
    assert student.join.go == f"/?follow={teacher.room}&lang=es#shift"
    student.join.param.update(typed="zzzzzz")
    student.join.asks += 1
    await until(lambda: student.join.message == text("es", "room_join_missing", room="zzzzzz"))
    assert student.join.go == ""
    server.stop()
    await until(lambda: there.up is False, message="Redis's end was not noticed")
    student.join.param.update(typed=teacher.room)
    student.join.asks += 1
    await until(lambda: student.join.message == text("es", "room_down_start"), timeout=rooms.CALL_TIMEOUT_S + 5,
                message="Redis away was not said")
    assert student.join.go == ""
    await here.aclose()
    await there.aclose()


def test_a_code_typed_in_another_process_opens_the_room_through_redis():
    with redis_process() as server:
        run_coroutine(_join_by_code_across_processes(server), timeout=120)
