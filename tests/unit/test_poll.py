"""A class poll in a room, without a browser: the stores (in-process and a real redis-server) and the pages'
parts (components.poll.PagePoll beside a RoomBox): who may open, one answer per page, reveal, close."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from app.model.state import ExplorerState
from app.model.strings import text
from components import pollstore
from components import roombus as rooms
from components.lesson.quiz import FIXED, CheckYourself, question_labels
from components.poll import PagePoll
from components.room import RoomBox
from tests.servers import redis_server


@pytest.fixture
def local(local_bus):
    """The in-memory bus (tests/conftest.py) and the poll store beside it."""
    pollstore.reset_poll_store()
    yield local_bus, pollstore.poll_store()
    pollstore.reset_poll_store()


def exercise(the_bus, store, made: tuple[str, str] | None = None) -> None:
    """What every store does: only the secret opens, one answer per page, counts by option, reveal, close.
    ``made``: a room already made (the Redis bus's calls are coroutines)."""
    room, secret = made or rooms.create_room(the_bus)
    assert store.open(room, "forged", 1, 4, 2, 32) is None
    assert store.current(room) is None
    assert store.open(room, secret, 1, 4, 9, 32) is None  # the right option must be one of the options
    poll = store.open(room, secret, 1, 4, 2, 32)
    assert poll is not None and poll.status == "open" and store.current(room) == poll
    assert store.answer(room, poll.number, "page-a", 0) == pollstore.COUNTED
    assert store.answer(room, poll.number, "page-b", 1) == pollstore.COUNTED
    assert store.counts(room, poll.number) == [1, 1, 0, 0]
    assert store.answer(room, poll.number, "page-a", 0) == pollstore.REPEAT  # not counted twice
    assert store.answer(room, poll.number, "page-a", 3) == pollstore.REPEAT  # nor changed
    assert store.answer(room, poll.number, "page-c", 4) == pollstore.INVALID
    assert store.answer(room, poll.number, "page-c", -1) == pollstore.INVALID
    assert store.answer(room, poll.number + 1, "page-c", 0) == pollstore.NOT_OPEN
    assert store.counts(room, poll.number) == [1, 1, 0, 0]
    assert not store.reveal(room, "forged", poll.number)
    assert store.reveal(room, secret, poll.number)
    assert store.current(room).status == "revealed" and store.current(room).right == 2
    assert store.answer(room, poll.number, "page-c", 2) == pollstore.NOT_OPEN  # answers close at the reveal
    assert not store.close(room, "forged", poll.number)
    assert store.close(room, secret, poll.number)
    assert store.current(room).status == "closed" and not store.current(room).live
    later = store.open(room, secret, 2, 4, 1, 32)
    assert later.number == poll.number + 1
    assert store.answer(room, later.number, "page-a", 1) == pollstore.COUNTED  # a new poll, a new answer
    assert store.counts(room, later.number) == [0, 1, 0, 0]
    # A number to pass (what a teacher's page read before its store lost its count): the next poll is past it.
    passed = store.open(room, secret, 2, 4, 1, 32, after=later.number + 5)
    assert passed.number == later.number + 6 and store.current(room) == passed
    assert store.answer(room, passed.number, "page-a", 1) == pollstore.COUNTED
    assert store.open(room, secret, 2, 4, 1, 32, after=1).number == passed.number + 1  # a lower one changes nothing
    assert store.answer(room, passed.number + 1, "page-a", 1) == pollstore.COUNTED


def test_the_local_store_counts_one_answer_per_page(local):
    the_bus, store = local
    assert store.kind == "local"
    exercise(the_bus, store)


def _redis_round_trip() -> None:
    with redis_server() as url:
        import redis
        from tornado.ioloop import IOLoop

        loop = IOLoop(make_current=False)
        the_bus, store = rooms.RedisBus(url), pollstore.RedisPollStore(url, loop)
        exercise(the_bus, store, loop.run_sync(lambda: rooms.open_room(the_bus)))
        client = redis.Redis.from_url(url)
        room = next(key.decode().split(":")[2] for key in client.scan_iter("pe:room:*:poll"))
        number = int(client.hget(f"pe:room:{room}:poll", "number"))
        for key in (f"pe:room:{room}:poll", f"pe:room:{room}:poll:{number}:counts",
                    f"pe:room:{room}:poll:{number}:pages"):
            ttl = client.ttl(key)
            assert rooms.ROOM_TTL_S - 60 < ttl <= rooms.ROOM_TTL_S, (key, ttl)  # the room's lifetime
        assert client.hgetall(f"pe:room:{room}:poll:{number}:counts") == {b"1": b"1"}
        # Another process hears the poll open and the counts move (a nudge through pub/sub).
        other = pollstore.RedisPollStore(url, loop)
        heard: list[str] = []

        def hear(topic: str):
            def callback(heard_room: str) -> None:
                heard.append(f"{topic}:{heard_room}")
                loop.stop()
            return callback

        on_poll, on_counts = hear("poll"), hear("counts")
        other.subscribe(room, pollstore.POLL, on_poll)
        other.subscribe(room, pollstore.COUNTS, on_counts)
        # A second room: its poll is heard by no one here.
        secret_holder = loop.run_sync(lambda: rooms.open_room(the_bus))
        store.open(secret_holder[0], secret_holder[1], 1, 4, 2, 32)
        deadline = time.monotonic() + 10

        # The subscription is asynchronous: answer from new pages until a nudge comes through (bounded).
        def answer_until_heard(page: list[int] = [0]) -> None:  # noqa: B006 (a counter kept between calls)
            if heard or time.monotonic() > deadline:
                loop.stop()
                return
            page[0] += 1
            store.answer(room, number, f"page-{page[0]}", 0)
            loop.call_later(0.1, answer_until_heard)

        loop.add_callback(answer_until_heard)
        loop.start()
        assert heard and heard[0] == f"counts:{room}"
        other.unsubscribe(room, pollstore.POLL, on_poll)
        other.unsubscribe(room, pollstore.COUNTS, on_counts)
        other.pubsub.close()  # its thread then waits on nothing, instead of calling a stopped server
        loop.close()


def test_the_redis_store_counts_one_answer_per_page_with_the_rooms_lifetime():
    # In a worker thread: after a Playwright test the main thread's asyncio loop counts as running.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_redis_round_trip).result(timeout=120)


def pages(lang_a: str = "es", lang_b: str = "en") -> tuple[PagePoll, PagePoll, PagePoll, RoomBox]:
    """A teacher's page with a room, and two followers' pages, each with its poll following its room box."""
    teacher_box = RoomBox(ExplorerState(lang="en"), "lesson")
    teacher = PagePoll(teacher_box.state)
    teacher.attach(teacher_box)
    teacher_box.start_room()
    followers = []
    for lang in (lang_a, lang_b):
        box = RoomBox(ExplorerState(lang=lang, follow=teacher_box.room), "lesson")
        follower = PagePoll(box.state)
        follower.attach(box)
        followers.append(follower)
    return teacher, followers[0], followers[1], teacher_box


def test_a_teacher_asks_two_followers_answer_and_see_the_answer(local):
    teacher, a, b, _box = pages()
    controls = teacher.tools(CheckYourself(teacher.box.state), 1)
    assert controls.shown and controls.status == ""
    assert not a.card.shown and not b.card.shown
    controls.asks += 1  # "Ask the room"
    assert controls.status == "open" and controls.counts == [0, 0, 0, 0]
    assert a.card.shown and b.card.shown
    assert a.card.labels == question_labels("es", 1, 32) and b.card.labels == question_labels("en", 1, 32)
    assert a.card.announce == text("es", "poll_opened", n=1)
    a.card.choice = 0
    a.card.sends += 1
    b.card.choice = 1
    b.card.sends += 1
    assert a.card.message == text("es", "poll_sent") and a.card.answered and a.card.mine == 0
    assert controls.counts == [1, 1, 0, 0] and controls.total_text == text("en", "poll_total", total=2)
    a.card.choice = 2
    a.card.sends += 1  # a second answer from the same page
    assert a.card.message == text("es", "poll_repeat")
    assert controls.counts == [1, 1, 0, 0]
    controls.reveals += 1
    right = FIXED[1][1]
    for follower, lang in ((a, "es"), (b, "en")):
        assert follower.card.right == right
        assert follower.card.explanation == text(lang, f"quiz_1_{FIXED[1][0][right]}_why")
        assert follower.card.announce == text(lang, "poll_answer_revealed", answer=question_labels(lang, 1, 32)[right])
    assert controls.status == "revealed" and controls.right == right
    controls.closes += 1
    assert not a.card.shown and not b.card.shown and controls.status == ""


def test_a_followers_page_cannot_open_reveal_or_close_a_poll(local):
    teacher, a, _b, box = pages()
    # A forged click on a follower's (hidden) tools, as a websocket client could send it.
    student_controls = a.tools(CheckYourself(a.box.state), 1)
    assert not student_controls.shown
    student_controls.asks += 1
    _the_bus, store = local
    assert store.current(box.room) is None
    assert not a.ask(1, 32)
    teacher_controls = teacher.tools(CheckYourself(teacher.box.state), 1)
    teacher_controls.asks += 1
    student_controls.reveals += 1
    student_controls.closes += 1
    assert store.current(box.room).status == "open"


def test_a_forged_option_is_refused_and_counts_nothing(local):
    teacher, a, _b, box = pages()
    _the_bus, store = local
    assert teacher.ask(2, 32)
    for forged in (7, -3):
        a.card.choice = forged
        a.card.sends += 1
        assert a.card.message == text("es", "poll_pick_first") and not a.card.answered
    assert store.counts(box.room, store.current(box.room).number) == [0, 0, 0, 0]


def test_a_follower_who_joins_an_open_poll_sees_it(local):
    teacher, _a, _b, box = pages()
    assert teacher.ask(3, 64)
    late_box = RoomBox(ExplorerState(lang="en", follow=box.room), "view")
    late = PagePoll(late_box.state)
    late.attach(late_box)
    assert late.card.shown and late.card.labels == question_labels("en", 3, 64)
    assert late.prompt.values == {"d_model": "64"}


class _Down:
    """A store whose every call fails, as a Redis store does while Redis is down or stalled past its timeout."""

    def __init__(self, store) -> None:
        self.store, self.down = store, False

    def __getattr__(self, name):
        call = getattr(self.store, name)
        if not callable(call):
            return call

        def maybe(*args, **kwargs):
            if self.down:
                raise ConnectionError("Redis does not answer")
            return call(*args, **kwargs)
        return maybe


def test_a_store_that_stops_answering_is_said_on_both_sides_and_the_poll_comes_back(local):
    teacher, a, _b, _box = pages()
    controls = teacher.tools(CheckYourself(teacher.box.state), 1)
    controls.asks += 1
    assert a.card.shown
    for page in (teacher, a):
        page.store = _Down(page.store)
        page.store.down = True
    a.card.choice = 0
    a.card.sends += 1  # no exception reaches the page: a notice, and the choice kept for another try
    assert a.card.message == text("es", "poll_unavailable") and not a.card.answered and a.card.choice == 0
    teacher.refresh()  # the teacher's page keeps the poll it last read, and says the store is out of reach
    assert controls.status == "open" and controls.status_text == text("en", "poll_unavailable")
    for page in (teacher, a):
        page.store.down = False
    a.card.sends += 1
    assert a.card.message == text("es", "poll_sent") and a.card.answered
    teacher.refresh()
    assert controls.counts == [1, 0, 0, 0] and controls.status_text == text("en", "poll_open_status", n=1)


@pytest.mark.parametrize("revealed", [False, True])
def test_a_poll_the_store_lost_is_opened_again_by_the_teacher_and_said(local, revealed):
    """Redis restarted empty: the teacher's page re-creates the room (``RoomBox._restored``) and then its poll, as
    it last read it, under a number past the lost one, so that a page that had answered can answer again; the
    teacher is told the earlier answers are gone."""
    teacher, a, _b, box = pages()
    controls = teacher.tools(CheckYourself(box.state), 1)
    controls.asks += 1
    a.card.choice = 0
    a.card.sends += 1
    if revealed:
        controls.reveals += 1
    lost = teacher.store.current(box.room)
    for held in (teacher.store.polls, teacher.store.tallies, teacher.store.answered):
        held.clear()  # what a Redis that restarted empty holds of the poll
    box._restored(1)  # the room re-created by its teacher's page
    again = teacher.store.current(box.room)
    assert again is not None and again.number > lost.number
    assert (again.question, again.options, again.right, again.d_model) == (lost.question, lost.options, lost.right,
                                                                            lost.d_model)
    assert again.status == lost.status
    assert controls.status_text.endswith(text("en", "poll_reopened"))
    assert controls.counts == [0, 0, 0, 0]
    a.refresh()
    assert a.card.shown and a.card.poll == again.number and not a.card.answered
    if not revealed:
        a.card.choice = 2
        a.card.sends += 1
        assert a.card.message == text("es", "poll_sent")
        teacher.refresh()
        assert controls.counts == [0, 0, 1, 0]


def test_a_room_recreated_with_its_poll_still_there_opens_nothing(local):
    teacher, _a, _b, box = pages()
    controls = teacher.tools(CheckYourself(box.state), 1)
    controls.asks += 1
    before = teacher.store.current(box.room)
    box._restored(1)
    assert teacher.store.current(box.room) == before
    assert not controls.status_text.endswith(text("en", "poll_reopened"))


def _held(call) -> tuple[float, object]:
    """How long ``call()`` held its caller (s), and what it returned or raised."""
    started = time.monotonic()
    try:
        result = call()
    except Exception as error:
        result = error
    return time.monotonic() - started, result


def test_a_stalled_redis_holds_a_poll_call_for_a_few_ms_then_is_skipped(monkeypatch):
    """SIGSTOP on redis-server: each call on the poll store holds the server's loop for at most CALL_WAIT_S (then the
    calls of PAUSE_S are refused at once), and the store answers again once Redis does."""
    monkeypatch.setattr(pollstore, "PAUSE_S", 0.5)
    # In a worker thread, as the round trip above: a Playwright test may leave the main thread's loop running.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_a_stall_of_the_poll_store).result(timeout=120)


def _a_stall_of_the_poll_store() -> None:
    import redis
    from tornado.ioloop import IOLoop

    from tests.servers import redis_process

    with redis_process() as server:
        # The room's key as the bus writes it (the secret's hash): the poll store reads nothing else of the room.
        room, secret = "stall1", "a-secret"
        redis.Redis.from_url(server.url).set(f"pe:room:{room}", rooms.secret_hash(secret))
        loop = IOLoop(make_current=False)
        store = pollstore.GuardedStore(pollstore.RedisPollStore(server.url, loop))
        poll = store.open(room, secret, 1, 4, 2, 32)
        assert poll is not None and store.current(room) == poll
        server.pause()
        try:
            for call in (lambda: store.current(room), lambda: store.answer(room, poll.number, "page-a", 0),
                         lambda: store.counts(room, poll.number)):
                held, result = _held(call)
                assert isinstance(result, pollstore.Unreachable), result
                assert held < 0.2, f"a poll call held the loop {held * 1000:.0f} ms"
                time.sleep(pollstore.PAUSE_S)  # past the pause, so that each call meets the stall itself
            held, result = _held(lambda: store.current(room))
            assert isinstance(result, pollstore.Unreachable) and held < 0.2
            held, result = _held(lambda: store.current(room))  # within the pause: refused at once
            assert isinstance(result, pollstore.Unreachable) and held < 0.01
        finally:
            server.resume()
        deadline = time.monotonic() + 10
        while isinstance(result := _held(lambda: store.current(room))[1], Exception):
            assert time.monotonic() < deadline, f"the store never answered again: {result!r}"
            time.sleep(0.1)  # polling interval
        assert result.number == poll.number and result.status == "open"
        store.store.pubsub.close()
        loop.close()


def test_a_redis_down_when_polls_are_first_asked_for_is_tried_again():
    """The store is made without a round trip: Redis down at the first page does not turn a process's polls off."""
    from tornado.ioloop import IOLoop

    from tests.servers import redis_process

    with redis_process(start=False) as server:
        loop = IOLoop(make_current=False)  # not the thread's current loop: later tests deliver without one
        store = pollstore.GuardedStore(pollstore.RedisPollStore(server.url, loop))
        held, result = _held(lambda: store.current("abcdef"))
        assert isinstance(result, Exception) and held < 0.2  # redis-py's ConnectionError, refused at once
        server.start()
        deadline = time.monotonic() + 10
        while isinstance(result := _held(lambda: store.current("abcdef"))[1], Exception):
            assert time.monotonic() < deadline, f"the store never answered: {result!r}"
            time.sleep(0.1)  # polling interval
        assert result is None  # no poll in that room: an answer, not an error
        store.store.pubsub.close()
        loop.close()


def test_a_page_that_could_not_listen_listens_at_its_next_refresh(local):
    teacher, a, _b, _box = pages()
    controls = teacher.tools(CheckYourself(teacher.box.state), 1)
    a._listen(False)
    a.store = _Down(a.store)
    a.store.down = True
    a._listen(True)
    assert not a.listening
    controls.asks += 1  # opened while a could not listen: it hears nothing
    assert not a.card.shown
    a.store.down = False
    a.refresh()  # listens again, and reads the poll
    assert a.listening and a.card.shown
    controls.reveals += 1  # now heard without a refresh by hand
    assert a.card.right == controls.right >= 0


def test_a_call_that_answers_late_lifts_the_pause():
    """A busy machine, not a stalled store: the call past CALL_WAIT_S is reported, and once it answers in its
    thread the next call is made (not refused for PAUSE_S)."""
    class Slow:
        kind = "redis"
        delay = 3 * pollstore.CALL_WAIT_S

        def current(self, room):
            time.sleep(self.delay)  # the store's answer, late (a stand-in for a slow round trip)
            return None

    slow = Slow()
    store = pollstore.GuardedStore(slow)
    held, result = _held(lambda: store.current("abcdef"))
    assert isinstance(result, pollstore.Unreachable) and held < 2 * pollstore.CALL_WAIT_S
    slow.delay = 0
    deadline = time.monotonic() + 5
    while isinstance(result := _held(lambda: store.current("abcdef"))[1], Exception):
        assert time.monotonic() < deadline, "still paused after the late answer"
        time.sleep(0.02)  # polling interval
    assert result is None and time.monotonic() < deadline
    assert store.paused_until == 0.0  # lifted by the late answer, not by the pause running out (3 s)


def test_a_forgotten_guarded_store_lets_its_threads_end(monkeypatch):
    """``reset_poll_store`` (and a new bus) closes the store it forgets: its worker threads end with their calls,
    not with the process."""
    class Store:
        kind = "redis"

        def current(self, room):
            return None

        def close(self, room, secret, number):
            return (room, secret, number)

    before = set(threading.enumerate())
    guarded = pollstore.GuardedStore(Store())
    assert guarded.current("abcdef") is None  # a worker thread now exists
    # A poll closed is a call of the store, forwarded like the others (not the guard's own shutting down).
    assert guarded.close("abcdef", "secret", 1) == ("abcdef", "secret", 1)
    workers = [thread for thread in set(threading.enumerate()) - before if thread.name.startswith("pe-poll-call")]
    assert workers
    monkeypatch.setattr(pollstore, "_STORE", guarded)
    pollstore.reset_poll_store()
    assert pollstore._STORE is None
    deadline = time.monotonic() + 5
    while any(thread.is_alive() for thread in workers):
        assert time.monotonic() < deadline, "the forgotten store's worker threads are still running"
        time.sleep(0.02)  # polling interval
