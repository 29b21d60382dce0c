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
  process holds one subscriber connection, read by a task on the server's loop,
  and fans a message out to its own followers. Any number of processes and
  machines. Every call is asynchronous and bounded (a stalled Redis never holds
  the loop); a lost connection is retried with a backoff, and the teacher's
  page, which keeps the room's state, re-creates the room when Redis comes back
  empty (``RedisBus``).
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

import asyncio
import contextlib
import functools
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
from collections.abc import Awaitable, Callable
from typing import Protocol

from tornado.ioloop import IOLoop

# Room ids have six characters without look-alikes (0/o, 1/l/i), easy to read off a projector.
from app.model.state import ROOM_ALPHABET, ROOM_ID_LENGTH, valid_room_id

__all__ = ["ROOM_ALPHABET", "ROOM_ID_LENGTH", "Bus", "Follower", "LocalBus", "RedisBus", "RoomsDown", "bus",
           "create_room", "open_room", "valid_room_id"]

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
#: What a closed room's channel says last, and what its state holds a while: followers then say "closed".
CLOSED = '{"closed":true}'


def new_room_id() -> str:
    """A random room id of ``ROOM_ID_LENGTH`` characters of ``ROOM_ALPHABET``."""
    return "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_ID_LENGTH))


def secret_hash(secret: str) -> str:
    """What the server keeps of a room's secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Bus(Protocol):
    """Where rooms live: created once, driven by their secret's holder, followed by anyone."""

    kind: str

    up: bool | None

    # The calls answer at once (LocalBus) or are coroutines (RedisBus, which may raise RoomsDown).
    def create(self, room: str, hashed: str) -> bool | Awaitable[bool]: ...
    def check(self, room: str, secret: str) -> bool | Awaitable[bool]: ...
    def exists(self, room: str) -> bool | Awaitable[bool]: ...
    def lookup(self, room: str) -> tuple[str, str | None] | Awaitable[tuple[str, str | None]]: ...
    def drive(self, room: str) -> int | Awaitable[int]: ...
    def publish(self, room: str, payload: str, driver: int = 0) -> bool | Awaitable[bool]: ...
    def close(self, room: str, driver: int = 0) -> bool | Awaitable[bool]: ...
    def restore(self, room: str, hashed: str, payload: str, driver: int) -> int | Awaitable[int]: ...
    def latest(self, room: str) -> str | Awaitable[str | None] | None: ...
    def watch(self, callback: Callable[[bool], None]) -> None: ...
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

    def rooms(self) -> list[str]:
        with self.lock:
            return list(self.callbacks)

    def deliver(self, room: str, payload: str) -> None:
        with self.lock:
            listeners = list(self.callbacks.get(room, ()))
        for callback in listeners:
            try:
                callback(payload)
            except Exception as error:  # one broken follower must not stop the others
                log.warning("a follower of room %s failed: %s: %s", room, type(error).__name__, str(error)[:200])


class LocalBus:
    """Rooms of this process only: for one server process, with nothing to install. Its calls answer at once."""

    kind = "local"
    up = True

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

    def lookup(self, room: str) -> tuple[str, str | None]:
        if room in self.hashes:
            return "open", self.states.get(room)
        return ("closed" if self.states.get(room) == CLOSED else "missing"), None

    def close(self, room: str, driver: int = 0) -> bool:
        if driver and driver < self.drivers.get(room, 0):
            return False
        self.hashes.pop(room, None)
        return self.publish(room, CLOSED)

    def restore(self, room: str, hashed: str, payload: str, driver: int) -> int:
        return 0 if self.hashes.get(room) == hashed else -1  # nothing here outlives what keeps it

    def watch(self, callback: Callable[[bool], None]) -> None:
        """Never down: nothing to say."""

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

#: KEYS as above; ARGV: the closing page's driver number, the closed marker, the lifetime in seconds.
#: The secret's hash goes (nobody drives the room again, nobody joins it), the marker stays a while as its state.
_CLOSE_LUA = """
local driver = tonumber(ARGV[1])
if driver > 0 and driver < tonumber(redis.call('GET', KEYS[1]) or '0') then return 0 end
redis.call('DEL', KEYS[3], KEYS[1])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('PUBLISH', KEYS[3], ARGV[2])
return 1
"""

#: KEYS as above; ARGV: the secret's hash, the teacher's latest state, the page's driver number, the lifetime.
#: 1: re-created (Redis had lost it); 0: still there; -1: the id is another room's now.
_RESTORE_LUA = """
local stored = redis.call('GET', KEYS[3])
if stored then
  if stored == ARGV[1] then return 0 end
  return -1
end
redis.call('SET', KEYS[3], ARGV[1], 'EX', ARGV[4])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[4])
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', ARGV[4])
end
return 1
"""

#: Longest wait for one Redis command, in seconds: past it, Redis counts as down (stalled) for this process.
CALL_TIMEOUT_S = 2.0
#: Reconnecting: the first wait after Redis went away, doubled after each failed try up to the last, in seconds.
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 10.0
#: How often the process asks Redis whether it answers (a stall sends no error), while up and while down.
PING_UP_S = 2.0
PING_DOWN_S = 0.5
#: A channel every process listens on, so that its subscriber connection is never idle-unsubscribed.
ALIVE_CHANNEL = "pe:rooms:alive"


class RoomsDown(Exception):
    """Redis does not answer (stopped, restarting, stalled): the caller says so and tries again when it is back."""


class RedisBus:
    """Rooms in Redis: any number of processes and machines share them.

    Keys ``pe:room:<id>`` (the secret's hash), ``pe:room:<id>:state`` (the
    latest state) and ``pe:room:<id>:driver`` (the number of the page that
    drives it: each claim takes a new one), all expiring ``ROOM_TTL_S`` after the last move; moves
    are published on channel ``pe:room:<id>``.

    Every call is a coroutine of the asyncio client (``redis.asyncio``) on the server's own loop, bounded by
    ``CALL_TIMEOUT_S``: a stalled Redis costs the pages in a room a notice, never the loop (the pages in no room
    do not wait at all). One task per process (``_keep_connected``) holds the subscriber connection, fans
    messages out to this process's followers, pings Redis, and reconnects with a backoff (``BACKOFF_FIRST_S``
    doubling to ``BACKOFF_MAX_S``) whenever it is lost, resubscribing every room followed here. Whoever
    watches (``watch``) is told when Redis goes down and when it is back: a teacher's page then re-creates
    its room if Redis came back empty (``restore``), a follower's fetches the latest state.
    """

    kind = "redis"

    def __init__(self, url: str) -> None:
        import redis.asyncio  # only needed with PE_REDIS_URL

        self.url = url
        self.redis = redis.asyncio.Redis.from_url(url, socket_timeout=CALL_TIMEOUT_S,
                                                  socket_connect_timeout=CALL_TIMEOUT_S)
        self.fanout = _Fanout()
        #: Whether Redis answers: None until the first answer or failure.
        self.up: bool | None = None
        self._watchers: list[weakref.WeakMethod | weakref.ref] = []
        self._pubsub = None
        self._task = None
        self._scripts: dict[str, object] = {}
        #: When the connection's task tried to connect (``time.monotonic()``), the last few: the backoff, measured.
        self.tries: deque[float] = deque(maxlen=64)

    @staticmethod
    def _key(room: str) -> str:
        return f"pe:room:{room}"

    # --- being up or down --------------------------------------------------------------------------

    def watch(self, callback: Callable[[bool], None]) -> None:
        """Call ``callback(up)`` (on the loop) whenever Redis goes down or comes back; held weakly."""
        self._watchers.append(weakref.WeakMethod(callback) if hasattr(callback, "__self__")
                              else weakref.ref(callback))
        self._ensure_running()

    def _set_up(self, up: bool) -> None:
        if self.up is up:
            return
        was, self.up = self.up, up
        log.warning("rooms: Redis %s", "answers again" if up and was is False else "answers" if up
                    else "does not answer; reconnecting with backoff")
        if was is None and up:
            return  # the first answer: nothing was said to be down
        alive = []
        for ref in self._watchers:
            callback = ref()
            if callback is None:
                continue
            alive.append(ref)
            try:
                callback(up)
            except Exception as error:  # one broken page must not stop the others
                log.warning("rooms: a page's status callback failed: %s: %s", type(error).__name__, str(error)[:200])
        self._watchers = alive

    def _ensure_running(self) -> None:
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # started by the first call made on the loop
        self._task = loop.create_task(self._keep_connected())

    async def _call(self, awaitable):
        """One Redis command, bounded; a failure marks Redis down and raises ``RoomsDown``."""
        import redis

        self._ensure_running()
        if self.up is False:
            if hasattr(awaitable, "close"):
                awaitable.close()  # never awaited: no "coroutine was never awaited" warning
            raise RoomsDown("Redis is down")
        try:
            return await asyncio.wait_for(awaitable, CALL_TIMEOUT_S)
        except (TimeoutError, redis.RedisError, OSError) as error:
            self._set_up(False)
            raise RoomsDown(f"{type(error).__name__}: {str(error)[:200]}") from error

    async def _script(self, name: str, source: str, keys: list[str], args: list) -> int:
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = self.redis.register_script(source)
        return int(await self._call(script(keys=keys, args=args)))

    def _keys(self, room: str) -> list[str]:
        key = self._key(room)
        return [key + ":driver", key + ":state", key]

    async def _keep_connected(self) -> None:
        delay = BACKOFF_FIRST_S
        while True:
            pubsub = None
            self.tries.append(time.monotonic())
            try:
                await asyncio.wait_for(self.redis.ping(), CALL_TIMEOUT_S)
                pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
                channels = [ALIVE_CHANNEL, *(self._key(room) for room in self.fanout.rooms())]
                await asyncio.wait_for(pubsub.subscribe(*channels), CALL_TIMEOUT_S)
                self._pubsub = pubsub
                self._set_up(True)
                delay = BACKOFF_FIRST_S
                next_ping = time.monotonic() + PING_UP_S
                while True:
                    # Every room followed here is subscribed, whatever became of the SUBSCRIBE its first
                    # follower sent (timed out, or sent while this connection was being made): a lost one
                    # would leave the room's followers with its state as read once, and no move after it.
                    subscribed = {c.decode() if isinstance(c, bytes) else c for c in pubsub.channels}
                    missing = [channel for channel in map(self._key, self.fanout.rooms()) if channel not in subscribed]
                    if missing:
                        await asyncio.wait_for(pubsub.subscribe(*missing), CALL_TIMEOUT_S)
                    message = await asyncio.wait_for(pubsub.get_message(timeout=0.5), CALL_TIMEOUT_S + 1)
                    if message and message.get("type") == "message":
                        channel = message["channel"].decode()
                        if channel != ALIVE_CHANNEL:
                            self.fanout.deliver(channel.removeprefix("pe:room:"), message["data"].decode())
                    if time.monotonic() >= next_ping:
                        try:  # a stalled Redis sends no error: only an unanswered ping tells
                            await asyncio.wait_for(self.redis.ping(), CALL_TIMEOUT_S)
                            self._set_up(True)
                        except Exception:
                            self._set_up(False)
                        next_ping = time.monotonic() + (PING_UP_S if self.up else PING_DOWN_S)
            except asyncio.CancelledError:
                raise
            except GeneratorExit:
                # The coroutine itself is being closed (its task dropped with its loop, as a test's is): nothing
                # may be awaited now, so the close call is not made rather than made and never awaited.
                pubsub = None
                raise
            except Exception as error:
                log.warning("rooms: Redis connection: %s: %s; next try in %.1f s", type(error).__name__,
                            str(error)[:200], delay)
                self._set_up(False)
            finally:
                self._pubsub = None
                if pubsub is not None:
                    with contextlib.suppress(Exception):  # the connection is gone anyway
                        await asyncio.wait_for(pubsub.aclose(), CALL_TIMEOUT_S)
            await asyncio.sleep(delay)  # the backoff between two tries, not a synchronisation delay
            delay = min(delay * 2, BACKOFF_MAX_S)

    async def _change_subscription(self, room: str, subscribe: bool) -> None:
        pubsub = self._pubsub
        if pubsub is None:
            return  # the next connection subscribes to every room followed here
        try:
            call = pubsub.subscribe if subscribe else pubsub.unsubscribe
            await self._call(call(self._key(room)))
        except RoomsDown:
            pass  # the connection's task subscribes every room followed here that is not (``_keep_connected``)

    def _spawn(self, coroutine) -> None:
        self._ensure_running()
        try:
            asyncio.get_running_loop().create_task(coroutine)
        except RuntimeError:
            coroutine.close()  # no loop (a test without a server): the next connection subscribes

    # --- the rooms ---------------------------------------------------------------------------------

    async def create(self, room: str, hashed: str) -> bool:
        return bool(await self._call(self.redis.set(self._key(room), hashed, nx=True, ex=ROOM_TTL_S)))

    async def check(self, room: str, secret: str) -> bool:
        stored = await self._call(self.redis.get(self._key(room)))
        return stored is not None and hmac.compare_digest(stored.decode(), secret_hash(secret))

    async def exists(self, room: str) -> bool:
        return bool(await self._call(self.redis.exists(self._key(room))))

    async def lookup(self, room: str) -> tuple[str, str | None]:
        """("open", its latest state or None), ("closed", None) or ("missing", None), in one round trip."""
        key = self._key(room)
        hashed, latest = await self._call(self.redis.mget(key, key + ":state"))
        latest = latest.decode() if latest is not None else None
        if hashed is not None:
            return "open", latest
        return ("closed" if latest == CLOSED else "missing"), None

    async def drive(self, room: str) -> int:
        key = self._key(room) + ":driver"

        async def incr() -> int:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.expire(key, ROOM_TTL_S)
                number, _ = await pipe.execute()
            return int(number)

        return await self._call(incr())

    async def publish(self, room: str, payload: str, driver: int = 0) -> bool:
        # One round trip, and atomic: a page that another page has taken the room from publishes nothing.
        return bool(await self._script("publish", _PUBLISH_LUA, self._keys(room), [payload, driver, ROOM_TTL_S]))

    async def close(self, room: str, driver: int = 0) -> bool:
        return bool(await self._script("close", _CLOSE_LUA, self._keys(room), [driver, CLOSED, ROOM_TTL_S]))

    async def restore(self, room: str, hashed: str, payload: str, driver: int) -> int:
        return await self._script("restore", _RESTORE_LUA, self._keys(room), [hashed, payload, driver, ROOM_TTL_S])

    async def latest(self, room: str) -> str | None:
        value = await self._call(self.redis.get(self._key(room) + ":state"))
        return value.decode() if value is not None else None

    def subscribe(self, room: str, callback: Callable[[str], None]) -> None:
        if self.fanout.add(room, callback):
            self._spawn(self._change_subscription(room, True))

    def unsubscribe(self, room: str, callback: Callable[[str], None]) -> None:
        if self.fanout.remove(room, callback):
            self._spawn(self._change_subscription(room, False))

    async def aclose(self) -> None:
        """Stop the connection's task and close the connections (tests)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self.redis.aclose()


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

    Made on first use in each process (after a fork, so the Redis connections
    and their task belong to the process that uses them).
    """
    global _BUS, _BUS_PID
    with _BUS_LOCK:
        if os.getpid() != _BUS_PID:
            _BUS, _BUS_PID = None, os.getpid()
            url = os.environ.get("PE_REDIS_URL", "").strip()
            if url:
                # Not asked whether it answers now: its connection's task keeps trying (RedisBus).
                _BUS = RedisBus(url)
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


async def open_room(the_bus: RedisBus) -> tuple[str, str]:
    """``create_room`` on a bus whose calls are coroutines (Redis)."""
    secret = secrets.token_urlsafe(24)
    for _ in range(20):
        room = new_room_id()
        if await the_bus.create(room, secret_hash(secret)):
            return room, secret
    raise RuntimeError("no free room id in 20 tries")


def encode_state(path: str, section: str, values: dict[str, str], seq: int) -> str:
    """A teacher's state as the JSON that goes on the bus."""
    return json.dumps({"path": path, "section": section, "values": values, "seq": seq, "t": time.time()},
                      separators=(",", ":"))


def decode_state(payload: str) -> dict | None:
    """A published state, or ``None`` for anything that is not one (it is then ignored).

    Every follower of a room in this process is handed the same payload: it is read once (the last few kept),
    and the result is shared, so it is never changed by the caller.
    """
    return _decoded(payload) if isinstance(payload, str) else None


@functools.lru_cache(maxsize=16)
def _decoded(payload: str) -> dict | None:
    try:
        data = json.loads(payload)
    except (TypeError, ValueError):
        return None
    if isinstance(data, dict) and data.get("closed") is True:
        return {"closed": True, "path": "", "section": "", "values": {}, "seq": 0, "t": 0.0}
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
