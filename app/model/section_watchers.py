"""The watchers one part of a long page put on the session's state, held back while the part is far.

The lesson (``/``) shows every section of one ``ExplorerState``, and most of
them are off screen. A section watches the state like any view does
(``param.depends``, ``state.param.watch``, the widgets' links to it);
``SectionWatchers`` takes the watchers its build put on the state and stands in
for them: while the section is awake it hands every change on at once, while it
sleeps (far from the reader) it only notes that it is behind, and when it wakes
it hands each of its watchers, once, whatever changed meanwhile — the same
call that one ``state.param.update`` of those values would have made. There is
no copy of the state: every value has one home, clamped in one place (the
state's own constraints), and a section's slider writes to it directly.

A section that is awake but not on screen (``prompt = False``) follows in a
later step when the page asks for it (``follow_later``): a slider's step then
answers with the sections the reader sees, and those just off screen follow in
the next message, before they can be scrolled into view.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import param
from param.parameterized import Event, Watcher

__all__ = ["SectionWatchers", "follow_later"]

#: ``what`` a value watcher watches; the others (bounds, label, constant …) are attributes of the parameter.
VALUE = "value"


def _watchers_on(state: param.Parameterized) -> dict[int, Watcher]:
    """Every watcher on ``state``'s parameters, by identity, in the order ``state`` lists them."""
    found: dict[int, Watcher] = {}
    value_watchers = state.param.watchers
    for name in state.param:
        for watcher in value_watchers.get(name, {}).get(VALUE, []):
            found.setdefault(id(watcher), watcher)
        # A watcher of another attribute (a widget follows its parameter's bounds) sits on the parameter.
        for watchers in state.param[name].watchers.values():
            for watcher in watchers:
                found.setdefault(id(watcher), watcher)
    return found


def _read(state: param.Parameterized, name: str, what: str) -> object:
    return getattr(state, name) if what == VALUE else getattr(state.param[name], what)


def _differ(a: object, b: object) -> bool:
    try:
        return bool(a != b)
    except Exception:  # an array-like value: compared as different, so it is handed on
        return True


@dataclass
class _Group:
    """The captured watchers that watch the same kind of event (``what``, ``onlychanged``, ``queued``): one
    watcher on the state stands in for all of them."""

    what: str
    onlychanged: bool
    queued: bool
    watchers: list[Watcher] = field(default_factory=list)
    #: The parameters its watchers watch, each once (set when the group is complete).
    names: list[str] = field(default_factory=list)

    def hand_on(self, events: tuple[Event, ...] | list[Event]) -> None:
        """Call each watcher once with its share of ``events``, lowest precedence first, as param does."""
        for watcher in self.watchers:
            own = [event for event in events if event.name in watcher.parameter_names]
            if not own:
                continue
            if watcher.mode == "kwargs":
                watcher.fn(**{event.name: event.new for event in own})
            else:
                watcher.fn(*own)


class SectionWatchers:
    """Stands in for the watchers a part of a page puts on ``state`` (``recording()``), so that the part can
    sleep (``awake = False``) and catch up in one step when it wakes.

    While awake and ``prompt``, a change of the state reaches the part's watchers
    in the step that made it, as if they watched the state themselves. While awake
    and not prompt, on a page that asked for it (``follow_later``), it reaches
    them in a later step, together with anything else that changed by then.
    While asleep, nothing reaches them; waking hands each watcher what differs
    from what it last saw (attributes first, bounds before values, so a widget
    takes its new range before its new value).
    """

    def __init__(self, state: param.Parameterized):
        self.state = state
        self._groups: list[_Group] = []
        self._seen: dict[tuple[str, str], object] = {}
        self._awake = True
        self._prompt = True
        self._stale = False

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Take over every watcher put on the state inside the block (a section's build)."""
        before = _watchers_on(self.state)
        yield
        taken = [w for key, w in _watchers_on(self.state).items() if key not in before]
        groups: dict[tuple[str, bool, bool], _Group] = {}
        for watcher in sorted(taken, key=lambda w: w.precedence):  # a stable sort: param's own order
            self.state.param.unwatch(watcher)
            key = (watcher.what, watcher.onlychanged, watcher.queued)
            groups.setdefault(key, _Group(*key)).watchers.append(watcher)
        # Attributes before values (see the class), each kind under one watcher of its own.
        for group in sorted(groups.values(), key=lambda g: g.what == VALUE):
            group.names = list(dict.fromkeys(name for w in group.watchers for name in w.parameter_names))
            self._groups.append(group)
            for name in group.names:
                self._seen[(name, group.what)] = _read(self.state, name, group.what)
            self.state.param.watch(self._stand_in(group), group.names, what=group.what,
                                   onlychanged=group.onlychanged, queued=group.queued)

    @property
    def watcher_count(self) -> int:
        """How many of the state's watchers this stands in for."""
        return sum(len(group.watchers) for group in self._groups)

    @property
    def awake(self) -> bool:
        """Whether the part follows the state (it is near the reader)."""
        return self._awake

    @awake.setter
    def awake(self, value: bool) -> None:
        self._awake = bool(value)
        self.catch_up()

    @property
    def prompt(self) -> bool:
        """Whether the part follows in the very step that changed the state (it is on screen), or may follow
        in a later one (``follow_later``); it catches up now when it becomes prompt."""
        return self._prompt

    @prompt.setter
    def prompt(self, value: bool) -> None:
        self._prompt = bool(value)
        if self._prompt:
            self.catch_up()

    @property
    def stale(self) -> bool:
        """Whether the state changed since the part's watchers last heard of it."""
        return self._stale

    def catch_up(self) -> None:
        """Hand every watcher what changed since it last heard, if the part is awake and behind."""
        if not (self._awake and self._stale):
            return
        self._stale = False
        for group in self._groups:
            events = []
            for name in group.names:
                old, new = self._seen[(name, group.what)], _read(self.state, name, group.what)
                if _differ(old, new):
                    self._seen[(name, group.what)] = new
                    events.append(Event(what=group.what, name=name, obj=self.state, cls=type(self.state),
                                        old=old, new=new, type="changed"))
            if events:
                group.hand_on(events)

    def _stand_in(self, group: _Group) -> Callable[..., None]:
        def stand_in(*events: Event) -> None:
            schedule = _schedule_of(self.state)
            if self._awake and (self._prompt or schedule is None):
                if self._stale:  # behind already: the catch-up reads the state, these events' values with it
                    self.catch_up()
                    return
                # A catch-up earlier in this batch (another group's stand-in) may have handed these values on.
                fresh = [event for event in events if not group.onlychanged
                         or _differ(self._seen.get((event.name, group.what)), event.new)]
                for event in fresh:
                    self._seen[(event.name, group.what)] = event.new
                if fresh:
                    group.hand_on(fresh)
                return
            self._stale = True
            if self._awake and schedule is not None:
                _catch_up_later(self.state, self, schedule)
        return stand_in


def follow_later(state: param.Parameterized, schedule: Callable[[Callable[[], None]], None]) -> None:
    """Let the parts of ``state``'s page that are awake but not ``prompt`` follow a change in a later step.

    ``schedule(fn)`` runs ``fn`` soon, after the current step (a served page: the next tick of its
    document, once the step's own answer is written). Without it (a page without a browser, a test) an
    awake part follows at once.
    """
    state.parts["follow_later"] = schedule


def _schedule_of(state: param.Parameterized) -> Callable[[Callable[[], None]], None] | None:
    parts = getattr(state, "parts", None)
    return parts.get("follow_later") if isinstance(parts, dict) else None


def _catch_up_later(state: param.Parameterized, part: SectionWatchers,
                    schedule: Callable[[Callable[[], None]], None]) -> None:
    """Put ``part`` on the list that the next scheduled step catches up (one step for all the parts)."""
    due: list[SectionWatchers] | None = state.parts.get("catch_up_due")
    if due is None:
        due = state.parts["catch_up_due"] = []
        schedule(lambda: _catch_up_all(state))
    if part not in due:
        due.append(part)


def _catch_up_all(state: param.Parameterized) -> None:
    due: list[SectionWatchers] = state.parts.pop("catch_up_due", [])
    for part in due:
        part.catch_up()
