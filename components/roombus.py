"""Rooms: students' pages follow what a teacher's page shows, live, without accounts.

A room has a short id (the join link carries it as ``?follow=ROOM``) and a
secret that only the teacher's browser holds; the server keeps the secret's
SHA-256 only. The teacher's session publishes the teacher's state (page,
section, every URL parameter but the language) on the room's channel; every
follower's session applies the latest one it has seen. Each page that takes
the room (the one that started it, then each later page of the teacher's tab
that proves the secret) gets a new driver number (``Bus.drive``); the bus drops
what an earlier page still publishes, so a teacher's old page, whose session
lives on until it is reaped, never sends the followers back.

Transport (``bus()``):

* ``PE_REDIS_URL`` set: Redis. The room's secret hash and latest state are
  keys with a lifetime (``ROOM_TTL_S``), moves go through pub/sub; each
  process holds one subscriber connection, on a thread of its own, and fans a
  message out to its own followers. Any number of processes and machines.
* one process and no Redis: an in-process bus (nothing to install).
* several processes and no Redis: no bus; the room box says that rooms need
  Redis rather than starting rooms that half the class could not join.

Followers are coalesced: a follower holds at most one pending state, the
newest. A state that arrives while the previous one is still waiting to be
applied replaces it, and a follower whose websocket still has unsent bytes
waits (``BACKLOG_BYTES``) and then takes the newest state only; so a slow
client skips states instead of queueing them, and a teacher dragging at 30 Hz
costs each follower at most one update per turn of the server's loop.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Protocol

from tornado.ioloop import IOLoop

# Room ids have six characters without look-alikes (0/o, 1/l/i), easy to read off a projector.
from app.model.state import ROOM_ALPHABET, ROOM_ID_LENGTH, valid_room_id

__all__ = ["ROOM_ALPHABET", "ROOM_ID_LENGTH", "Bus", "Follower", "LocalBus", "RedisBus", "bus", "create_room",
           "valid_room_id"]

log = logging.getLogger("components.roombus")

#: A room (its secret hash and latest state) lives this long after its last move, in seconds.
ROOM_TTL_S = 12 * 3600
#: Fewest seconds between two publications of a teacher's session (a drag at 30 Hz goes out at ≤ 20 Hz,
#: the last state always).
PUBLISH_INTERVAL_S = 0.05
#: A follower whose websocket has more than this many bytes not yet sent waits before its next update.
BACKLOG_BYTES = 64 * 1024
#: How long such a follower waits before looking again, in seconds.
BACKLOG_RETRY_S = 0.05
#: The keys of a published state (JSON): page path, section id, URL values, and when the teacher changed it.
STATE_KEYS = ("path", "section", "values", "seq", "t")


def new_room_id() -> str:
    """A random room id of ``ROOM_ID_LENGTH`` characters of ``ROOM_ALPHABET``."""
    return "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_ID_LENGTH))


def secret_hash(secret: str) -> str:
    """What the server keeps of a room's secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Bus(Protocol):
    """Where rooms live: created once, driven by their secret's holder, followed by anyone."""

    kind: str

    def create(self, room: str, hashed: str) -> bool: ...
    def check(self, room: str, secret: str) -> bool: ...
    def exists(self, room: str) -> bool: ...
    def drive(self, room: str) -> int: ...
    def publish(self, room: str, payload: str, driver: int = 0) -> bool: ...
    def latest(self, room: str) -> str | None: ...
    def subscribe(self, room: str, callback: Callable[[str], None]) -> None: ...
    def unsubscribe(self, room: str, callback: Callable[[str], None]) -> None: ...


class _Fanout:
    """The followers' callbacks of each room in this process, called in the server's IOLoop thread."""

    def __init__(self) -> None:
        self.callbacks: dict[str, list[Callable[[str], None]]] = {}
        self.lock = threading.Lock()

    def add(self, room: str, callback: Callable[[str], None]) -> bool:
        """Add; True when it is the room's first callback here."""
        with self.lock:
            listeners = self.callbacks.setdefault(room, [])
            listeners.append(callback)
            return len(listeners) == 1

    def remove(self, room: str, callback: Callable[[str], None]) -> bool:
        """Remove; True when the room has no callback left here."""
        with self.lock:
            listeners = self.callbacks.get(room, [])
            if callback in listeners:
                listeners.remove(callback)
            if not listeners:
                self.callbacks.pop(room, None)
                return True
            return False

    def deliver(self, room: str, payload: str) -> None:
        with self.lock:
            listeners = list(self.callbacks.get(room, ()))
        for callback in listeners:
            try:
                callback(payload)
            except Exception as error:  # one broken follower must not stop the others
                log.warning("a follower of room %s failed: %s: %s", room, type(error).__name__, str(error)[:200])


class LocalBus:
    """Rooms of this process only: for one server process, with nothing to install."""

    kind = "local"

    def __init__(self) -> None:
        self.hashes: dict[str, str] = {}
        self.states: dict[str, str] = {}
        self.drivers: dict[str, int] = {}
        self.fanout = _Fanout()

    def create(self, room: str, hashed: str) -> bool:
        if room in self.hashes:
            return False
        self.hashes[room] = hashed
        return True

    def check(self, room: str, secret: str) -> bool:
        stored = self.hashes.get(room)
        return stored is not None and hmac.compare_digest(stored, secret_hash(secret))

    def exists(self, room: str) -> bool:
        return room in self.hashes

    def drive(self, room: str) -> int:
        self.drivers[room] = self.drivers.get(room, 0) + 1
        return self.drivers[room]

    def publish(self, room: str, payload: str, driver: int = 0) -> bool:
        if driver and driver < self.drivers.get(room, 0):
            return False
        self.states[room] = payload
        # Delivered on the next turn of the loop, outside the teacher's document (as Redis's thread does):
        # a follower's document must not be touched from within another session's callback.
        loop = IOLoop.current(instance=False)
        if loop is None:
            self.fanout.deliver(room, payload)
        else:
            loop.add_callback(self.fanout.deliver, room, payload)
        return True

    def latest(self, room: str) -> str | None:
        return self.states.get(room)

    def subscribe(self, room: str, callback: Callable[[str], None]) -> None:
        self.fanout.add(room, callback)

    def unsubscribe(self, room: str, callback: Callable[[str], None]) -> None:
        self.fanout.remove(room, callback)


#: KEYS: the room's driver number, its latest state, the room (its secret hash; the channel's name).
#: ARGV: the state, the publishing page's driver number (0: unchecked), the lifetime in seconds.
_PUBLISH_LUA = """
local driver = tonumber(ARGV[2])
if driver > 0 and driver < tonumber(redis.call('GET', KEYS[1]) or '0') then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', KEYS[3], ARGV[1])
return 1
"""


class RedisBus:
    """Rooms in Redis: any number of processes and machines share them.

    Keys ``pe:room:<id>`` (the secret's hash), ``pe:room:<id>:state`` (the
    latest state) and ``pe:room:<id>:driver`` (the number of the page that
    drives it: each claim takes a new one), all expiring ``ROOM_TTL_S`` after the last move; moves
    are published on channel ``pe:room:<id>``. One subscriber connection per
    process, read by a daemon thread that hands each message to the IOLoop.
    """

    kind = "redis"

    def __init__(self, url: str, loop: IOLoop | None = None) -> None:
        import redis  # only needed with PE_REDIS_URL

        self.redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5,
                                          health_check_interval=30)
        self.redis.ping()
        self._publish = self.redis.register_script(_PUBLISH_LUA)
        self.pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        self.loop = loop or IOLoop.current()
        self.fanout = _Fanout()
        self.started = threading.Event()
        self.thread: threading.Thread | None = None

    @staticmethod
    def _key(room: str) -> str:
        return f"pe:room:{room}"

    def create(self, room: str, hashed: str) -> bool:
        return bool(self.redis.set(self._key(room), hashed, nx=True, ex=ROOM_TTL_S))

    def check(self, room: str, secret: str) -> bool:
        stored = self.redis.get(self._key(room))
        return stored is not None and hmac.compare_digest(stored.decode(), secret_hash(secret))

    def exists(self, room: str) -> bool:
        return bool(self.redis.exists(self._key(room)))

    def drive(self, room: str) -> int:
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.incr(self._key(room) + ":driver")
            pipe.expire(self._key(room) + ":driver", ROOM_TTL_S)
            number, _ = pipe.execute()
        return int(number)

    def publish(self, room: str, payload: str, driver: int = 0) -> bool:
        # One round trip, and atomic: a page that another page has taken the room from publishes nothing.
        key = self._key(room)
        return bool(self._publish(keys=[key + ":driver", key + ":state", key], args=[payload, driver, ROOM_TTL_S]))

    def latest(self, room: str) -> str | None:
        value = self.redis.get(self._key(room) + ":state")
        return value.decode() if value is not None else None

    def subscribe(self, room: str, callback: Callable[[str], None]) -> None:
        if self.fanout.add(room, callback):
            self.pubsub.subscribe(self._key(room))
            self._start()

    def unsubscribe(self, room: str, callback: Callable[[str], None]) -> None:
        if self.fanout.remove(room, callback):
            self.pubsub.unsubscribe(self._key(room))

    def _start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._listen, name="pe-rooms-redis", daemon=True)
            self.thread.start()

    def _listen(self) -> None:
        while True:
            try:
                message = self.pubsub.get_message(timeout=1.0)
            except Exception as error:  # a dropped connection: redis-py reconnects and resubscribes
                log.warning("room subscription: %s: %s", type(error).__name__, str(error)[:200])
                time.sleep(1.0)  # back off before the next try, not a synchronisation delay
                continue
            if message and message.get("type") == "message":
                room = message["channel"].decode().removeprefix("pe:room:")
                self.loop.add_callback(self.fanout.deliver, room, message["data"].decode())


def processes() -> int:
    """How many server processes serve this app: ``PE_PROCESSES`` (behind a proxy) or ``PE_NUM_PROCS``."""
    def number(name: str, default: int) -> int:
        try:
            return int(os.environ.get(name, "").strip() or default)
        except ValueError:
            return default

    behind_proxy = number("PE_PROCESSES", 1)
    forked = number("PE_NUM_PROCS", 1)
    forked = (os.cpu_count() or 1) if forked == 0 else forked
    return max(behind_proxy, forked, 1)


_BUS: Bus | None = None
_BUS_PID: int | None = None
_BUS_LOCK = threading.Lock()


def bus() -> Bus | None:
    """This process's bus: Redis with ``PE_REDIS_URL``, in-process with one process, else ``None``.

    Made on first use in each process (after a fork, so the Redis connection
    and its thread belong to the process that uses them).
    """
    global _BUS, _BUS_PID
    with _BUS_LOCK:
        if os.getpid() != _BUS_PID:
            _BUS, _BUS_PID = None, os.getpid()
            url = os.environ.get("PE_REDIS_URL", "").strip()
            if url:
                try:
                    _BUS = RedisBus(url)
                except Exception as error:
                    log.warning("rooms: Redis at PE_REDIS_URL does not answer (%s); rooms are off",
                                type(error).__name__)
            elif processes() == 1:
                _BUS = LocalBus()
        return _BUS


def reset_bus() -> None:
    """Forget this process's bus (tests switch between transports)."""
    global _BUS, _BUS_PID
    with _BUS_LOCK:
        _BUS, _BUS_PID = None, None


def create_room(the_bus: Bus) -> tuple[str, str]:
    """A new room on ``the_bus``: (its id, its secret). The secret is returned once and kept nowhere."""
    secret = secrets.token_urlsafe(24)
    for _ in range(20):
        room = new_room_id()
        if the_bus.create(room, secret_hash(secret)):
            return room, secret
    raise RuntimeError("no free room id in 20 tries")


def encode_state(path: str, section: str, values: dict[str, str], seq: int) -> str:
    """A teacher's state as the JSON that goes on the bus."""
    return json.dumps({"path": path, "section": section, "values": values, "seq": seq, "t": time.time()},
                      separators=(",", ":"))


def decode_state(payload: str) -> dict | None:
    """A published state, or ``None`` for anything that is not one (it is then ignored)."""
    try:
        data = json.loads(payload)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
        return None
    return {
        "path": data["path"] if isinstance(data.get("path"), str) else "/",
        "section": data["section"] if isinstance(data.get("section"), str) else "",
        "values": {str(k): str(v) for k, v in data["values"].items()},
        "seq": data["seq"] if isinstance(data.get("seq"), int) else 0,
        "t": data["t"] if isinstance(data.get("t"), float | int) else 0.0,
    }


def websocket_backlog(doc: object) -> int:
    """Bytes written to this session's websockets and not yet sent (0 when unknown).

    A connection still in the middle of sending a message (Bokeh's ``write_lock`` held: the next
    message would queue behind it) counts as a full backlog. Reads Bokeh's and tornado's
    internals (ServerSession, WSHandler, IOStream); anything unexpected counts as no backlog.
    """
    try:
        connections = doc.session_context._session._subscribed_connections  # type: ignore[attr-defined]
        sizes = []
        for connection in connections:
            handler = connection._socket
            if handler.write_lock.locked():
                return BACKLOG_BYTES + 1
            sizes.append(len(handler.ws_connection.stream._write_buffer))
        return max(sizes, default=0)
    except Exception:
        return 0


#: Seconds from a teacher's change to the end of its application in a follower's session, the last
#: ``APPLIED_KEPT`` in this process (read by the benchmark through /pe_sessions: where the time goes).
APPLIED_KEPT = 20_000
APPLIED_DELAYS: deque[float] = deque(maxlen=APPLIED_KEPT)


class Follower:
    """One follower session's link to its room: keeps the newest state and applies it, once, when it can.

    ``apply`` is called in the session's document (Bokeh's next tick callback:
    under the session's lock) with the newest decoded state. Weakly held by the
    bus's callback, so a session that goes away stops following.
    """

    def __init__(self, room: str, doc: object, apply: Callable[[dict], None], the_bus: Bus) -> None:
        self.room = room
        self.doc = doc
        self._apply = apply
        self.bus = the_bus
        self.pending: str | None = None
        self.scheduled = False
        self.applied = 0
        self.skipped = 0
        ref = weakref.ref(self)

        def on_message(payload: str, ref=ref) -> None:
            follower = ref()
            if follower is not None:
                follower.offer(payload)

        self._callback = on_message
        the_bus.subscribe(room, on_message)

    def offer(self, payload: str) -> None:
        """A new state from the room: it replaces any state still waiting."""
        if self.pending is not None:
            self.skipped += 1
        self.pending = payload
        if not self.scheduled:
            self.scheduled = True
            self.doc.add_next_tick_callback(self._run)

    def _run(self) -> None:
        if websocket_backlog(self.doc) > BACKLOG_BYTES:
            # Still sending the last update: wait, then take whatever is newest by then.
            loop = IOLoop.current(instance=False)
            if loop is not None:
                loop.call_later(BACKLOG_RETRY_S, self.doc.add_next_tick_callback, self._run)
            else:
                self.doc.add_next_tick_callback(self._run)
            return
        payload, self.pending, self.scheduled = self.pending, None, False
        state = decode_state(payload) if payload is not None else None
        if state is not None:
            self.applied += 1
            self._apply(state)
            if state["t"]:
                APPLIED_DELAYS.append(time.time() - state["t"])

    def close(self) -> None:
        """Stop following (the session ended, or the follower detached)."""
        self.bus.unsubscribe(self.room, self._callback)
