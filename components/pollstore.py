"""Where a room's class poll lives: the question open to the room, its counts, the pages that answered.

A room has at most one poll at a time. The teacher's page (the one holding the
room's secret) opens a quiz question to the room, reveals its answer and closes
it; every open takes a new poll number, so an answer meant for an earlier poll
is never counted in a later one. A follower's page answers once per poll: the
store keeps the ids of the pages that answered (ids made by the server, never
sent by the browser) and refuses a second answer from the same page. No name is
stored; counts are by option index, so pages in different languages add up.
``open(..., after=n)`` takes a number past ``n`` even in a store that has lost its
count (Redis restarted empty): the teacher's page re-opens the poll it last read
with it, so that no page takes the new poll for the one it already answered.

Two implementations, chosen like the room bus (``poll_store``):

* ``LocalPollStore``: this process's memory, beside ``roombus.LocalBus``.
* ``RedisPollStore``: with ``PE_REDIS_URL``. Keys ``pe:room:<id>:poll`` (a hash: number,
  question, options, right, d_model, status), ``pe:room:<id>:poll:<number>:counts`` (a hash,
  HINCRBY per option) and ``pe:room:<id>:poll:<number>:pages`` (a set of page ids), all with the
  room's lifetime (``roombus.ROOM_TTL_S``). Changes go out on channel ``pe:room:<id>:poll``
  (open, reveal, close: every page of the room listens) and counts on ``pe:room:<id>:poll:counts``
  (the teacher's pages only), so a class of hundreds does not get every answer of every other student.
  ``poll_store`` wraps it in a ``GuardedStore``: its blocking calls run in worker threads and hold the
  server's loop for at most ``CALL_WAIT_S``, so a stalled Redis never holds the other pages' sliders.

A subscriber's callback receives the room's id (a nudge, not the data: it then reads ``current``
and ``counts``), in the server's IOLoop thread.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitedTooLong
from dataclasses import dataclass
from typing import Protocol

from tornado.ioloop import IOLoop

from components import roombus as rooms

log = logging.getLogger("components.pollstore")

#: What a subscriber hears: ``POLL`` (opened, revealed, closed) or ``COUNTS`` (an answer was counted).
POLL, COUNTS = "poll", "counts"
#: The answers ``answer`` gives.
COUNTED, REPEAT, NOT_OPEN, INVALID = "counted", "repeat", "not_open", "invalid"
#: At most this many options to a question (the quiz has four): an open with more is refused.
MAX_OPTIONS = 8
#: The longest a call on a Redis store holds the server's loop (s): the time a page in no room may wait for its
#: slider while Redis stalls. A healthy Redis answers in well under a millisecond; past this the page says the
#: poll cannot be reached, and the call ends in its worker thread (``socket_timeout``).
CALL_WAIT_S = 0.1
#: After a call that failed or did not answer in time, calls are refused at once for this long (s), unless that
#: call answers after all (a busy machine, not a stalled Redis): one wait per pause, not one per page and click.
PAUSE_S = 3.0


@dataclass(frozen=True)
class Poll:
    """A room's poll as the store keeps it. ``right`` reaches a follower's page only once revealed."""

    number: int
    question: int
    options: int
    right: int
    d_model: int
    status: str  # "open", "revealed" or "closed"

    @property
    def live(self) -> bool:
        """Shown on the room's pages (open, or revealed and not yet closed)."""
        return self.status in ("open", "revealed")


def _poll_from(fields: dict[str, str]) -> Poll | None:
    try:
        return Poll(number=int(fields["number"]), question=int(fields["question"]), options=int(fields["options"]),
                    right=int(fields["right"]), d_model=int(fields["d_model"]), status=str(fields["status"]))
    except (KeyError, TypeError, ValueError):
        return None


class PollStore(Protocol):
    """A room's poll: opened, revealed and closed by the secret's holder, answered once per page."""

    kind: str

    def open(self, room: str, secret: str, question: int, options: int, right: int, d_model: int,
             after: int = 0) -> Poll | None: ...
    def reveal(self, room: str, secret: str, number: int) -> bool: ...
    def close(self, room: str, secret: str, number: int) -> bool: ...
    def answer(self, room: str, number: int, page: str, option: int) -> str: ...
    def current(self, room: str) -> Poll | None: ...
    def counts(self, room: str, number: int) -> list[int]: ...
    def subscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None: ...
    def unsubscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None: ...


class _Listeners:
    """Callbacks by (room, topic), called in the server's IOLoop thread; one failing does not stop the others."""

    def __init__(self) -> None:
        self.callbacks: dict[tuple[str, str], list[Callable[[str], None]]] = {}
        self.lock = threading.Lock()

    def add(self, key: tuple[str, str], callback: Callable[[str], None]) -> bool:
        """Add; True when it is the key's first callback."""
        with self.lock:
            listeners = self.callbacks.setdefault(key, [])
            if callback in listeners:  # a page listening again after a failed try: once is enough
                return False
            listeners.append(callback)
            return len(listeners) == 1

    def remove(self, key: tuple[str, str], callback: Callable[[str], None]) -> bool:
        """Remove; True when the key has no callback left."""
        with self.lock:
            listeners = self.callbacks.get(key, [])
            if callback in listeners:
                listeners.remove(callback)
            if not listeners:
                self.callbacks.pop(key, None)
                return True
            return False

    def deliver(self, key: tuple[str, str]) -> None:
        with self.lock:
            listeners = list(self.callbacks.get(key, ()))
        for callback in listeners:
            try:
                callback(key[0])
            except Exception as error:
                log.warning("a poll listener of room %s failed: %s: %s", key[0], type(error).__name__,
                            str(error)[:200])


def _valid_open(question: int, options: int, right: int, d_model: int) -> bool:
    return (isinstance(question, int) and 1 <= question <= 99 and isinstance(options, int)
            and 2 <= options <= MAX_OPTIONS and isinstance(right, int) and 0 <= right < options
            and isinstance(d_model, int) and d_model > 0)


def _valid_option(option: object, options: int) -> bool:
    return isinstance(option, int) and not isinstance(option, bool) and 0 <= option < options


class LocalPollStore:
    """Polls of this process only (beside ``roombus.LocalBus``); ``check`` is the bus's secret check."""

    kind = "local"

    def __init__(self, check: Callable[[str, str], bool]) -> None:
        self.check = check
        self.polls: dict[str, Poll] = {}
        self.tallies: dict[tuple[str, int], list[int]] = {}
        self.answered: dict[tuple[str, int], set[str]] = {}
        self.listeners = _Listeners()

    def _tell(self, room: str, topic: str) -> None:
        # On the next turn of the loop, as Redis's thread does: not inside the sender's document.
        loop = IOLoop.current(instance=False)
        if loop is None:
            self.listeners.deliver((room, topic))
        else:
            loop.add_callback(self.listeners.deliver, (room, topic))

    def open(self, room: str, secret: str, question: int, options: int, right: int, d_model: int,
             after: int = 0) -> Poll | None:
        if not _valid_open(question, options, right, d_model) or not self.check(room, secret):
            return None
        before = self.polls.get(room)
        if before is not None:  # one poll at a time: what the earlier one held is no longer needed
            self.tallies.pop((room, before.number), None)
            self.answered.pop((room, before.number), None)
        poll = Poll(number=max(before.number if before else 0, after) + 1, question=question, options=options,
                    right=right, d_model=d_model, status="open")
        self.polls[room] = poll
        self.tallies[(room, poll.number)] = [0] * options
        self.answered[(room, poll.number)] = set()
        self._tell(room, POLL)
        return poll

    def _set_status(self, room: str, secret: str, number: int, status: str) -> bool:
        poll = self.polls.get(room)
        if poll is None or poll.number != number or not poll.live or not self.check(room, secret):
            return False
        self.polls[room] = dataclasses.replace(poll, status=status)
        self._tell(room, POLL)
        return True

    def reveal(self, room: str, secret: str, number: int) -> bool:
        return self._set_status(room, secret, number, "revealed")

    def close(self, room: str, secret: str, number: int) -> bool:
        return self._set_status(room, secret, number, "closed")

    def answer(self, room: str, number: int, page: str, option: int) -> str:
        poll = self.polls.get(room)
        if poll is None or poll.number != number or poll.status != "open":
            return NOT_OPEN
        if not _valid_option(option, poll.options) or not page:
            return INVALID
        pages = self.answered[(room, number)]
        if page in pages:
            return REPEAT
        pages.add(page)
        self.tallies[(room, number)][option] += 1
        self._tell(room, COUNTS)
        return COUNTED

    def current(self, room: str) -> Poll | None:
        return self.polls.get(room)

    def counts(self, room: str, number: int) -> list[int]:
        return list(self.tallies.get((room, number), []))

    def subscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None:
        self.listeners.add((room, topic), callback)

    def unsubscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None:
        self.listeners.remove((room, topic), callback)


#: KEYS: the poll hash, the channel. ARGV: question, options, right, d_model, lifetime, the number to pass.
_OPEN_LUA = """
local number = redis.call('HINCRBY', KEYS[1], 'number', 1)
if number <= tonumber(ARGV[6]) then
  number = tonumber(ARGV[6]) + 1
  redis.call('HSET', KEYS[1], 'number', number)
end
redis.call('HSET', KEYS[1], 'question', ARGV[1], 'options', ARGV[2], 'right', ARGV[3], 'd_model', ARGV[4],
           'status', 'open')
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', KEYS[2], number)
return number
"""

#: KEYS: the poll hash, the channel. ARGV: the poll's number, the new status, lifetime.
_STATUS_LUA = """
if redis.call('HGET', KEYS[1], 'number') ~= ARGV[1] then return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'open' and status ~= 'revealed' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
"""

#: KEYS: the poll hash, the pages set, the counts hash, the counts channel.
#: ARGV: the poll's number, the page id, the option, lifetime. 1 counted, 0 repeat, -1 not open, -2 invalid.
_ANSWER_LUA = """
local poll = redis.call('HMGET', KEYS[1], 'number', 'status', 'options')
if poll[1] ~= ARGV[1] or poll[2] ~= 'open' then return -1 end
local option = tonumber(ARGV[3])
if option == nil or option < 0 or option >= tonumber(poll[3]) or option ~= math.floor(option) then return -2 end
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[4])
redis.call('PUBLISH', KEYS[4], ARGV[1])
return 1
"""

_ANSWERS = {1: COUNTED, 0: REPEAT, -1: NOT_OPEN, -2: INVALID}


class RedisPollStore:
    """Polls in Redis, beside the room's keys (see the module's docstring); one subscriber thread per process."""

    kind = "redis"

    def __init__(self, url: str, loop: IOLoop | None = None) -> None:
        import redis  # only needed with PE_REDIS_URL

        # Made without a round trip: a Redis down when the first page asks is tried again at the next call (a
        # ping here turned a process's polls off for good). Calls block their thread for at most a second;
        # ``GuardedStore`` runs them off the server's loop.
        self.redis = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1, health_check_interval=30)
        self._open = self.redis.register_script(_OPEN_LUA)
        self._status = self.redis.register_script(_STATUS_LUA)
        self._answer = self.redis.register_script(_ANSWER_LUA)
        self.pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        self.loop = loop or IOLoop.current()
        self.listeners = _Listeners()
        self.thread: threading.Thread | None = None

    @staticmethod
    def key(room: str) -> str:
        """The poll's hash (and the name of its channel)."""
        return f"pe:room:{room}:poll"

    def channel(self, room: str, topic: str) -> str:
        return self.key(room) if topic == POLL else self.key(room) + ":counts"

    def check(self, room: str, secret: str) -> bool:
        # The room's key as roombus.RedisBus keeps it (the secret's SHA-256), read here so that the poll
        # does not depend on how the bus talks to Redis.
        stored = self.redis.get(f"pe:room:{room}")
        return stored is not None and hmac.compare_digest(stored.decode(), rooms.secret_hash(secret))

    def open(self, room: str, secret: str, question: int, options: int, right: int, d_model: int,
             after: int = 0) -> Poll | None:
        if not _valid_open(question, options, right, d_model) or not self.check(room, secret):
            return None
        number = int(self._open(keys=[self.key(room), self.channel(room, POLL)],
                                args=[question, options, right, d_model, rooms.ROOM_TTL_S, max(int(after), 0)]))
        return Poll(number=number, question=question, options=options, right=right, d_model=d_model, status="open")

    def _set_status(self, room: str, secret: str, number: int, status: str) -> bool:
        if not self.check(room, secret):
            return False
        return bool(self._status(keys=[self.key(room), self.channel(room, POLL)],
                                 args=[number, status, rooms.ROOM_TTL_S]))

    def reveal(self, room: str, secret: str, number: int) -> bool:
        return self._set_status(room, secret, number, "revealed")

    def close(self, room: str, secret: str, number: int) -> bool:
        return self._set_status(room, secret, number, "closed")

    def answer(self, room: str, number: int, page: str, option: int) -> str:
        if not isinstance(option, int) or isinstance(option, bool) or not page:
            return INVALID
        base = f"{self.key(room)}:{number}"
        result = int(self._answer(keys=[self.key(room), base + ":pages", base + ":counts", self.channel(room, COUNTS)],
                                  args=[number, page, option, rooms.ROOM_TTL_S]))
        return _ANSWERS.get(result, INVALID)

    def current(self, room: str) -> Poll | None:
        fields = self.redis.hgetall(self.key(room))
        return _poll_from({key.decode(): value.decode() for key, value in fields.items()}) if fields else None

    def counts(self, room: str, number: int) -> list[int]:
        poll = self.current(room)
        if poll is None or poll.number != number:
            return []
        stored = self.redis.hgetall(f"{self.key(room)}:{number}:counts")
        tally = [0] * poll.options
        for key, value in stored.items():
            index = int(key)
            if 0 <= index < poll.options:
                tally[index] = int(value)
        return tally

    def subscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None:
        if self.listeners.add((room, topic), callback):
            try:
                self.pubsub.subscribe(self.channel(room, topic))
            except Exception:
                self.listeners.remove((room, topic), callback)  # not heard: the page listens again later
                raise
            if self.thread is None:
                self.thread = threading.Thread(target=self._listen, name="pe-poll-redis", daemon=True)
                self.thread.start()

    def unsubscribe(self, room: str, topic: str, callback: Callable[[str], None]) -> None:
        if self.listeners.remove((room, topic), callback):
            self.pubsub.unsubscribe(self.channel(room, topic))

    def _listen(self) -> None:
        while True:
            try:
                message = self.pubsub.get_message(timeout=1.0)
            except Exception as error:  # a dropped connection: redis-py reconnects and resubscribes
                log.warning("poll subscription: %s: %s", type(error).__name__, str(error)[:200])
                time.sleep(1.0)  # back off before the next try, not a synchronisation delay
                continue
            if message and message.get("type") == "message":
                name = message["channel"].decode().removeprefix("pe:room:")
                room, _, rest = name.partition(":")
                topic = COUNTS if rest.endswith(":counts") else POLL
                self.loop.add_callback(self.listeners.deliver, (room, topic))


class GuardedStore:
    """A store whose calls run in worker threads, each holding the caller for at most ``CALL_WAIT_S``.

    A call that fails, or does not answer in time, raises ``Unreachable`` (its thread finishes it, or times out,
    alone), and the calls of the next ``PAUSE_S`` are refused at once: the page says the poll cannot be reached
    and goes on. The wrapped store's numbers are unchanged.
    """

    def __init__(self, store: RedisPollStore, workers: int = 4) -> None:
        self.store = store
        self.kind = store.kind
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pe-poll-call")
        self.paused_until = 0.0

    def _call(self, name: str, *args: object, **kwargs: object) -> object:
        if time.monotonic() < self.paused_until:
            raise Unreachable(f"{name}: paused after a call that did not answer")
        future = self.pool.submit(getattr(self.store, name), *args, **kwargs)
        try:
            return future.result(timeout=CALL_WAIT_S)
        except WaitedTooLong:
            self.paused_until = time.monotonic() + PAUSE_S
            future.add_done_callback(self._answered_late)
            raise Unreachable(f"{name}: no answer in {CALL_WAIT_S * 1000:.0f} ms") from None
        except Exception:
            self.paused_until = time.monotonic() + PAUSE_S
            raise

    def _answered_late(self, future) -> None:
        if not future.cancelled() and future.exception() is None:
            self.paused_until = 0.0  # the store answers: the next call is made

    def shut_down(self) -> None:
        """Let the worker threads end once their calls do (a call stalled on Redis ends at its socket timeout).

        Not ``close``: that is a call of the store (a poll closed), which this class forwards."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    def __getattr__(self, name: str) -> Callable[..., object]:
        # Every call of ``PollStore`` goes through the guard, with the wrapped store's own signature.
        if name in _STORE_CALLS:
            return functools.partial(self._call, name)
        raise AttributeError(name)


#: The calls of a ``PollStore`` (its Protocol's methods), which ``GuardedStore`` runs off the loop.
_STORE_CALLS = frozenset(name for name, value in vars(PollStore).items()
                         if callable(value) and not name.startswith("_"))


class Unreachable(ConnectionError):
    """A guarded store's call did not answer in time, or came while calls are paused after one that did not."""


_STORE: PollStore | None = None
_STORE_BUS: object | None = None  # the bus the store was made beside: a new bus (a test, a fork) gets a new store
_STORE_LOCK = threading.Lock()


def poll_store() -> PollStore | None:
    """This process's poll store: in Redis beside a Redis bus, in memory beside a local bus, else ``None``."""
    global _STORE, _STORE_BUS
    the_bus = rooms.bus()
    with _STORE_LOCK:
        if the_bus is not _STORE_BUS:
            _forget_store()
            _STORE_BUS = the_bus
            if the_bus is not None and the_bus.kind == "redis":
                try:
                    _STORE = GuardedStore(RedisPollStore(os.environ.get("PE_REDIS_URL", "").strip()))
                except Exception as error:
                    log.warning("polls: the Redis client refuses PE_REDIS_URL (%s); polls are off",
                                type(error).__name__)
            elif the_bus is not None:
                _STORE = LocalPollStore(the_bus.check)
        return _STORE


def reset_poll_store() -> None:
    """Forget this process's store (tests switch between transports, as ``roombus.reset_bus``)."""
    global _STORE_BUS
    with _STORE_LOCK:
        _forget_store()
        _STORE_BUS = None


def _forget_store() -> None:
    global _STORE
    if isinstance(_STORE, GuardedStore):
        _STORE.shut_down()
    _STORE = None
