"""When Python's cycle collector makes its full passes in a server process: when the server is quiet.

Measured in the served app (``gc.callbacks``; one session: a cold load of ``/``, a
scroll through every section, 44 slider presses): 313 young passes (median
0.12 ms), 29 middle ones (median 1.7 ms) and 2 full ones, of 150 and 171 ms. A
full pass walks every object the process holds, and Python starts one when
enough objects have survived the younger passes: that is, while a page is
being built or a step is running. Each one stalls whatever the server was doing
for every session it serves; a key press that meets one takes ~150 ms longer.

So, in a process that serves (``install``, from ``app.server.serve``):

* Once, before it accepts connections, the objects alive then (the modules of
  Bokeh, Panel, NumPy and the app) move to the permanent generation, which no
  pass walks again (``gc.freeze``): every later full pass is shorter. Forked
  workers inherit this.
* Python's own full passes are off (the third value of ``gc.set_threshold``).
  A check every ``CHECK_MS`` runs one when it is due (when Python would have
  considered one: ``FULL_AFTER`` middle passes since the last) and no websocket
  message has arrived for ``QUIET_S``. One that has been due for ``LATEST_S``
  runs anyway, so a server that is never quiet still collects. The young and
  middle passes run as before, and so does any ``gc.collect()`` another library
  calls (Panel runs one after a session ends).
"""

from __future__ import annotations

import gc
import time
import weakref
from dataclasses import dataclass

from tornado.ioloop import IOLoop, PeriodicCallback

#: Milliseconds between two checks for a due full pass.
CHECK_MS = 1000
#: Seconds with no websocket message before the server counts as quiet.
QUIET_S = 1.0
#: Seconds a due full pass waits for a quiet moment at most.
LATEST_S = 30.0
#: Middle passes after which a full pass is due (Python's default third threshold).
FULL_AFTER = 10
#: A third threshold Python's count never reaches: no full pass of its own.
NEVER = 2**31 - 1


@dataclass
class _Policy:
    installed: bool = False
    last_activity: float = float("-inf")
    due_since: float | None = None
    passes: int = 0
    longest_ms: float = 0.0


_POLICY = _Policy()
#: The event loops that run the check (one per serving thread or forked worker).
_LOOPS: weakref.WeakKeyDictionary[IOLoop, PeriodicCallback] = weakref.WeakKeyDictionary()


def install() -> None:
    """Freeze what is alive now, and leave full passes to ``collect_if_due``. Idempotent."""
    if _POLICY.installed:
        return
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER)
    _POLICY.installed = True


def installed() -> bool:
    """Whether this process runs its full passes at quiet moments."""
    return _POLICY.installed and gc.get_threshold()[2] == NEVER


def note_activity(now: float | None = None) -> None:
    """A websocket message has arrived (the server is busy for the next ``QUIET_S``)."""
    _POLICY.last_activity = time.monotonic() if now is None else now


def ensure_checking() -> None:
    """Run ``collect_if_due`` every ``CHECK_MS`` on the current event loop (once per loop)."""
    if not _POLICY.installed:
        return
    loop = IOLoop.current()
    if loop not in _LOOPS:
        callback = PeriodicCallback(collect_if_due, CHECK_MS)
        _LOOPS[loop] = callback
        callback.start()


def full_pass_due() -> bool:
    """Whether Python would have considered a full pass by now (its count of middle passes)."""
    return gc.get_count()[2] >= FULL_AFTER


def collect_if_due(now: float | None = None) -> bool:
    """Make a full pass if one is due and the server is quiet, or has been due for ``LATEST_S``."""
    now = time.monotonic() if now is None else now
    if not full_pass_due():
        _POLICY.due_since = None
        return False
    if _POLICY.due_since is None:
        _POLICY.due_since = now
    quiet = now - _POLICY.last_activity >= QUIET_S
    if not quiet and now - _POLICY.due_since < LATEST_S:
        return False
    started = time.perf_counter()
    gc.collect()
    _POLICY.longest_ms = max(_POLICY.longest_ms, (time.perf_counter() - started) * 1000)
    _POLICY.passes += 1
    _POLICY.due_since = None
    return True


def summary() -> dict[str, object]:
    """For the process's stats: whether the policy is on, its passes, the longest, the frozen objects."""
    return {"installed": installed(), "full_passes": _POLICY.passes, "longest_ms": round(_POLICY.longest_ms, 1),
            "frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold())}
