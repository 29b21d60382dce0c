"""app.model.section_watchers without a browser: a lesson section's watchers of the session's state, held
back while the section is far from the reader, caught up in one step when it comes back, and no copy of
the state anywhere (a section's slider writes to the state itself)."""

from __future__ import annotations

import param
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.section_watchers import SectionWatchers, follow_later
from app.model.state import ExplorerState
from components.controls import widget_for
from tests.unit.test_state import DEPENDENT, assert_consistent, move, operations

PROPERTY = settings(max_examples=60, deadline=None)
#: Every value of the state a section may draw from (not the preset actions).
VALUES = tuple(name for name, p in ExplorerState.param.objects("existing").items()
               if name != "name" and not isinstance(p, param.Action))


def values_of(state: ExplorerState) -> dict[str, object]:
    return {name: getattr(state, name) for name in VALUES}


def bounds_of(state: ExplorerState) -> dict[str, object]:
    return {name: state.param[name].bounds for name in DEPENDENT}


class Section:
    """What a section's build does to the state: watchers that keep a drawing (``view``) and a slider's range
    (``bounds``) of it, recorded by the section's ``SectionWatchers``; ``calls`` counts the watchers' calls."""

    def __init__(self, state: ExplorerState):
        self.watchers = SectionWatchers(state)
        self.calls: list[list[tuple[str, object, object]]] = []
        self.view = values_of(state)
        self.bounds = bounds_of(state)
        with self.watchers.recording():
            state.param.watch(self._draw, list(VALUES))
            state.param.watch(self._range, list(DEPENDENT), what="bounds")

    def _draw(self, *events: param.parameterized.Event) -> None:
        self.calls.append([(e.name, e.old, e.new) for e in events])
        self.view.update({e.name: e.new for e in events})

    def _range(self, *events: param.parameterized.Event) -> None:
        self.bounds.update({e.name: e.new for e in events})


def test_a_sleeping_section_hears_nothing_and_catches_up_in_one_call():
    state = ExplorerState()
    section = Section(state)
    section.watchers.awake = False
    state.k, state.pos, state.k = 5, 7, 6
    assert section.calls == [] and section.view["k"] == 3 and section.watchers.stale
    section.watchers.awake = True
    assert section.calls == [[("pos", 0, 7), ("k", 3, 6)]] and section.view == values_of(state)
    section.watchers.awake = True  # nothing new: nothing sent
    assert len(section.calls) == 1 and not section.watchers.stale


def test_recording_takes_only_the_watchers_made_inside_it():
    state = ExplorerState()
    page: list[int] = []
    state.param.watch(lambda event: page.append(event.new), "pos")  # the page's own (the address bar's)
    section = Section(state)
    assert section.watchers.watcher_count == 2
    section.watchers.awake = False
    state.pos = 4
    assert page == [4] and section.calls == []


def test_a_size_step_reaches_every_awake_section_once_per_value_and_no_asleep_one():
    state = ExplorerState(pair=15, pos=20, reserve=4)
    sections = [Section(state) for _ in range(6)]
    for section in sections[3:]:
        section.watchers.awake = False
    state.d_model = 16  # 16 coordinates, 8 pairs; the reserve keeps its eighth
    expected = {("d_model", 32, 16), ("pair", 15, 7), ("pairs_to", 15, 7), ("reserve", 4, 2)}
    for section in sections[:3]:
        assert sorted(e for call in section.calls for e in call) == sorted(expected)
        assert section.view == values_of(state) and section.bounds == bounds_of(state)
    assert [s.calls for s in sections[3:]] == [[], [], []]
    sections[4].watchers.awake = True
    assert len(sections[4].calls) == 1 and sorted(sections[4].calls[0]) == sorted(expected)
    assert sections[4].bounds == bounds_of(state) != sections[3].bounds


def test_a_sleeping_section_s_slider_writes_the_state_and_takes_range_and_value_on_waking():
    state = ExplorerState(pos=20)  # T 24
    watchers = SectionWatchers(state)
    with watchers.recording():
        slider = widget_for(state, "pos")
    watchers.awake = False
    state.T = 8  # pos clamped to 7, its range 0 .. 7
    assert (slider.value, slider.end) == (20, 23)
    slider.value = 5  # a slider keeps the keyboard focus when its section scrolls away: it writes the state
    assert state.pos == 5 and state.T == 8
    slider.value = 20  # beyond the state's bounds: the state takes its nearest bound
    assert state.pos == 7
    watchers.awake = True
    assert (slider.value, slider.start, slider.end) == (7, 0, 7)
    slider.value = 30  # awake: the slider shows what the state took at once
    assert state.pos == slider.value == 7


def test_the_section_s_watchers_keep_param_s_order():
    # param.depends watchers (precedence -1) run before plain ones (0), on a live step and on a catch-up.
    state = ExplorerState()
    order: list[str] = []

    class View(param.Parameterized):
        state = param.ClassSelector(class_=ExplorerState)

        @param.depends("state.pos", watch=True)
        def _table(self) -> None:
            order.append("table")

    watchers = SectionWatchers(state)
    with watchers.recording():
        state.param.watch(lambda _event: order.append("text"), "pos")
        View(state=state)
    state.pos = 3
    assert order == ["table", "text"]
    watchers.awake = False
    state.pos = 4
    watchers.awake = True
    assert order == ["table", "text"] * 2


def test_follow_later_answers_with_the_sections_on_screen_and_the_others_at_the_next_tick():
    # The lesson page: sections 0 and 3 on screen (prompt), 1 just off screen (awake), 2 far (asleep).
    state = ExplorerState()
    ticks: list = []
    follow_later(state, ticks.append)
    sections = [Section(state) for _ in range(4)]
    sections[1].watchers.prompt = False
    sections[2].watchers.prompt, sections[2].watchers.awake = False, False
    before = dict(sections[1].view)
    state.d_model = 16
    state.pos = 3  # a second step before the tick: one catch-up still
    assert sections[0].view == sections[3].view == values_of(state)
    assert sections[1].view == before and len(ticks) == 1
    ticks.pop()()
    assert sections[1].view == values_of(state) and sections[1].bounds == bounds_of(state)
    assert len(sections[1].calls) == 1  # both steps in one call
    assert sections[2].view != values_of(state)
    state.pos = 4
    sections[1].watchers.prompt = True  # scrolled into view before the tick: it catches up at once
    assert sections[1].view == values_of(state)
    ticks.pop()()  # nothing left to do
    assert len(sections[1].calls) == 2
    sections[2].watchers.awake = True
    assert sections[2].view == values_of(state)


@PROPERTY
@given(later=st.booleans(),
       ops=st.lists(st.tuples(st.sampled_from(["state", "sleep 0", "sleep 1", "wake 0", "wake 1", "hide 1", "show 1",
                                               "hide 2", "tick"]),
                              operations.map(lambda moves: moves[:2])), max_size=12))
def test_sections_follow_and_catch_up_losing_no_step(later, ops):
    # Served (later), a step reaches the sections off screen (not prompt) at the next tick. An awake section
    # draws the state's values whenever it is prompt, or after a tick; every section does once woken.
    state = ExplorerState()
    ticks: list = []
    if later:
        follow_later(state, ticks.append)
    sections = [Section(state) for _ in range(3)]
    for where, moves in ops:
        kind, _, index = where.partition(" ")
        if kind in ("sleep", "wake"):
            sections[int(index)].watchers.awake = kind == "wake"
        elif kind in ("hide", "show"):
            sections[int(index)].watchers.prompt = kind == "show"
        elif kind == "tick":
            while ticks:
                ticks.pop(0)()
        for op, arg in moves if kind == "state" else ():
            move(state, op, arg)
        assert_consistent(state)
        assert len(ticks) <= 1
        for section in sections:
            if section.watchers.awake and (section.watchers.prompt or not ticks):
                assert section.view == values_of(state) and section.bounds == bounds_of(state)
    while ticks:
        ticks.pop(0)()
    for section in sections:
        section.watchers.awake = True
        assert section.view == values_of(state) and section.bounds == bounds_of(state)


def test_a_catch_up_inside_a_batch_does_not_hand_the_batch_s_values_on_twice():
    # Behind, and then prompt with nothing to schedule a later step (the page's scheduler gone): the first
    # stand-in of a size step's batch catches the whole section up, bounds and values; the stand-ins after it
    # in the same batch must not hand those values on again.
    state = ExplorerState(pair=15)
    due: list = []
    follow_later(state, due.append)
    section = Section(state)
    section.watchers.prompt = False
    state.k = 5
    assert section.watchers.stale and section.calls == []
    del state.parts["follow_later"]
    state.d_model = 16
    handed = [change for call in section.calls for change in call]
    assert sorted(handed) == sorted(set(handed)), handed
    assert ("pair", 15, 7) in handed and ("k", 3, 5) in handed
    assert section.view == values_of(state) and section.bounds == bounds_of(state)
