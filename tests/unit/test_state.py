"""app.model.state without a browser: defaults, the bounds that follow the sizes,
clamping seen by watchers, presets, and reading a hostile query string."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.state import (
    BASES,
    CONTROL_NAMES,
    D_MODEL_MAX,
    LANGUAGES,
    PAGE_PARAMETERS,
    PRESETS,
    SPEEDS,
    T_MAX,
    URL_PARAMETERS,
    ExplorerState,
    parse_query,
    repeated_parameters,
    set_together,
)

PROPERTY = settings(max_examples=60, deadline=None)
REASONS = {"not_a_number", "rounded", "out_of_range", "odd", "not_allowed", "off_grid", "below_from", "sentence_cut",
           "controls", "not_a_room", "repeated", "above_T"}
DEFAULTS = {"d_model": 32, "T": 24, "base": 10_000, "pair": 0, "pos": 0, "k": 3, "pairs_from": 0, "pairs_to": 15,
            "heads": "random", "reserve": 4, "sentence": "", "mistake": "none", "T_train": 12,
            "stretch": "interpolation", "lang": "es",
            "controls": "", "follow": "",
            "present": False, "slide": "", "theme": "light", "play": False, "speed": 3, "loop": True, "play_k": False}
DEPENDENT = ("pair", "pos", "k", "pairs_from", "pairs_to", "reserve", "T_train")


def expected_bounds(d_model: int, T: int) -> dict[str, tuple[int, int]]:
    return {"pair": (0, d_model // 2 - 1), "pos": (0, T - 1), "k": (-(T - 1), T - 1),
            "pairs_from": (0, d_model // 2 - 1), "pairs_to": (0, d_model // 2 - 1), "reserve": (0, d_model),
            "T_train": (1, T)}


def assert_consistent(state: ExplorerState) -> None:
    """Bounds follow the sizes and every dependent value is inside them."""
    assert state.d_model % 2 == 0 and 2 <= state.d_model <= D_MODEL_MAX
    assert 1 <= state.T <= T_MAX
    assert state.base in BASES
    for name, (low, high) in expected_bounds(state.d_model, state.T).items():
        assert state.param[name].bounds == (low, high), name
        assert low <= getattr(state, name) <= high, (name, getattr(state, name), (low, high))
    assert state.pairs_from <= state.pairs_to
    assert state.reserve % 2 == 0
    assert len(state.words()) <= 12


def guard(state: ExplorerState) -> list[tuple[str, str, object]]:
    """Watch pair/pos/k (their values and their bounds) and assert, inside the
    watcher, that nothing is ever outside the bounds in force at that moment.
    Returns the log of what the watchers saw, so a test can check they ran."""
    seen: list[tuple[str, str, object]] = []

    # Batched updates deliver several events in one call.
    def on_value(*events) -> None:
        for event in events:
            low, high = state.param[event.name].bounds
            seen.append(("value", event.name, event.new))
            assert low <= event.new <= high, f"{event.name}={event.new} outside bounds {(low, high)} in force"

    def on_bounds(*events) -> None:
        for event in events:
            low, high = event.new
            value = getattr(state, event.name)
            seen.append(("bounds", event.name, event.new))
            assert low <= value <= high, f"bounds of {event.name} became {event.new} while it is {value}"

    def on_size(*events) -> None:
        # Views watch the sizes: by the time they hear of a change, pair/pos/k must already fit.
        seen.extend(("size", e.name, e.new) for e in events)
        for name, (low, high) in expected_bounds(state.d_model, state.T).items():
            assert low <= getattr(state, name) <= high, f"{name}={getattr(state, name)} after resize"

    state.param.watch(on_value, list(DEPENDENT))
    state.param.watch(on_bounds, list(DEPENDENT), what="bounds")
    state.param.watch(on_size, ["d_model", "T"])
    return seen


# --------------------------------------------------------------------------
# Defaults, bounds, clamping.
# --------------------------------------------------------------------------

def test_defaults_are_the_lesson():
    state = ExplorerState()
    assert {name: getattr(state, name) for name in DEFAULTS} == DEFAULTS
    assert state.target == 3
    assert_consistent(state)
    assert PRESETS["lesson"] == {key: DEFAULTS[key] for key in PRESETS["lesson"]}


@pytest.mark.parametrize(("d_model", "T"), [(2, 1), (4, 2), (64, 100), (1024, 2048), (32, 24)])
def test_bounds_follow_the_sizes(d_model, T):
    state = ExplorerState(d_model=d_model, T=T)
    assert_consistent(state)
    state.param.update(d_model=32, T=24)
    assert_consistent(state)


def test_dependent_values_are_set_after_the_sizes():
    state = ExplorerState(d_model=64, T=100, pair=30, pos=99, k=-50)
    assert (state.d_model, state.T, state.pair, state.pos, state.k) == (64, 100, 30, 99, -50)
    assert state.target == 49
    assert_consistent(state)


def test_a_default_that_does_not_fit_is_clamped_at_construction():
    state = ExplorerState(T=2)  # the default k = 3 cannot be
    assert state.k == 1
    assert_consistent(state)


def test_out_of_bounds_dependent_values_are_taken_as_the_nearest_bound():
    # The one clamp: a slider drawn with older bounds, a key press at an end, a teacher's state.
    assert ExplorerState(pair=16).pair == 15
    state = ExplorerState()  # d_model 32, T 24
    for name, value, used in (("pair", 16, 15), ("pos", 24, 23), ("pos", -1, 0), ("k", 24, 23), ("k", -24, -23),
                              ("pairs_to", 99, 15), ("pairs_from", -5, 0), ("T_train", 0, 1), ("reserve", 40, 32)):
        setattr(state, name, value)
        assert getattr(state, name) == used, name
    assert_consistent(state)
    with pytest.raises(ValueError):
        state.reserve = 3  # odd: not a nearest bound's question
    with pytest.raises(ValueError):
        state.pos = 2.5


@pytest.mark.parametrize(("size", "value", "expect"), [
    ("T", 5, {"pos": 4, "k": -4, "pair": 15}),
    ("T", 1, {"pos": 0, "k": 0, "pair": 15}),
    ("d_model", 8, {"pair": 3, "pos": 23, "k": -23}),
    ("d_model", 2, {"pair": 0, "pos": 23, "k": -23}),
])
def test_shrinking_clamps_and_watchers_never_see_out_of_bounds(size, value, expect):
    state = ExplorerState(pair=15, pos=23, k=-23)
    seen = guard(state)
    setattr(state, size, value)
    assert {name: getattr(state, name) for name in expect} == expect
    assert_consistent(state)
    # The watchers did run (they assert inside themselves).
    assert ("size", size, value) in seen
    assert any(kind == "bounds" for kind, _, _ in seen)
    assert any(kind == "value" for kind, _, _ in seen)


def test_growing_keeps_values_and_widens_bounds():
    state = ExplorerState(pair=7, pos=10, k=-5)
    seen = guard(state)
    state.param.update(d_model=256, T=1000)
    assert (state.pair, state.pos, state.k) == (7, 10, -5)
    assert_consistent(state)
    # Only what follows the width moves: a fingerprint over every pair, the reserve's share (1/8).
    assert [entry for entry in seen if entry[0] == "value"] == [("value", "pairs_to", 127), ("value", "reserve", 32)]


def test_fingerprint_range_and_reserve_follow_the_width():
    state = ExplorerState(d_model=512)
    assert (state.pairs_from, state.pairs_to, state.reserve) == (0, 255, 64)  # 64 of 512, the lesson's example
    state.param.update(pairs_from=10, pairs_to=20)
    state.d_model = 32
    assert (state.pairs_from, state.pairs_to, state.reserve) == (10, 15, 4)
    state.d_model = 64
    assert (state.pairs_from, state.pairs_to, state.reserve) == (10, 31, 8)  # 15 was the last pair: still is
    state.pairs_from = 31
    assert state.pairs_to == 31
    state.pairs_to = 3
    assert state.pairs_from == 3


@pytest.mark.parametrize(("given", "used"), [
    ("  el   perro  ", "el perro"),
    (" ".join(["w"] * 20), " ".join(["w"] * 12)),
    ("x" * 100, "x" * 24),
    ("a\x00b\u202ec", "abc"),
])
def test_sentence_is_cleaned_in_the_state_too(given, used):
    state = ExplorerState()
    state.sentence = given
    assert state.sentence == used


def test_bounds_belong_to_the_instance():
    small = ExplorerState(d_model=4, T=3)
    big = ExplorerState(d_model=512, T=512)
    assert_consistent(small)
    assert_consistent(big)
    assert ExplorerState().param.pair.bounds == (0, 15)
    assert ExplorerState.param.pair.bounds == (0, 15)


@pytest.mark.parametrize("d_model", [33, 31, 3, 1023])
def test_odd_d_model_is_refused(d_model):
    with pytest.raises(ValueError):
        ExplorerState(d_model=d_model)
    state = ExplorerState(pair=15)
    with pytest.raises(ValueError):
        state.d_model = d_model
    assert state.d_model == 32 and state.pair == 15
    assert_consistent(state)


# --------------------------------------------------------------------------
# Presets.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_apply_preset_from_anywhere(name):
    state = ExplorerState(d_model=1024, T=2048, pair=500, pos=2000, k=-2047, base=2)
    guard(state)
    state.apply_preset(name)
    assert {key: getattr(state, key) for key in PRESETS[name]} == PRESETS[name]
    assert_consistent(state)


@pytest.mark.parametrize(("action", "name"), [("lesson_preset", "lesson"), ("paper_preset", "paper")])
def test_preset_actions_set_the_sizes_in_one_step(action, name):
    start = "paper" if name == "lesson" else "lesson"
    state = ExplorerState(**PRESETS[start])
    state.param.update(pair=5, pos=state.T - 1, k=-(state.T - 1))
    calls: list[list[tuple[str, int]]] = []
    state.param.watch(lambda *events: calls.append([(e.name, e.new) for e in events]), ["d_model", "T"])
    guard(state)
    getattr(state, action)(state)  # what the button of a param.Action does
    assert calls == [[("d_model", PRESETS[name]["d_model"]), ("T", PRESETS[name]["T"])]]
    assert {key: getattr(state, key) for key in PRESETS[name]} == PRESETS[name]
    assert_consistent(state)


# --------------------------------------------------------------------------
# Random walks through the controls.
# --------------------------------------------------------------------------

operations = st.lists(st.one_of(
    st.tuples(st.just("d_model"), st.integers(1, D_MODEL_MAX // 2).map(lambda half: 2 * half)),
    st.tuples(st.just("T"), st.integers(1, T_MAX)),
    st.tuples(st.just("sizes"), st.tuples(st.integers(1, 64).map(lambda half: 2 * half), st.integers(1, 300))),
    st.tuples(st.just("base"), st.sampled_from(BASES)),
    st.tuples(st.sampled_from(DEPENDENT), st.floats(0, 1)),  # where inside the current range
    st.tuples(st.just("preset"), st.sampled_from(sorted(PRESETS))),
), max_size=12)


@PROPERTY
@given(ops=operations)
def test_any_sequence_of_moves_keeps_the_state_consistent(ops):
    state = ExplorerState()
    guard(state)
    for op, arg in ops:
        move(state, op, arg)
        assert_consistent(state)


def move(state: ExplorerState, op: str, arg: object) -> None:
    """One move of a random walk, as a control of the page would make it."""
    if op == "sizes":
        state.param.update(d_model=arg[0], T=arg[1])
    elif op == "preset":
        state.apply_preset(arg)
    elif op in DEPENDENT:
        low, high = state.param[op].bounds
        value = low + round(arg * (high - low))
        setattr(state, op, value - value % 2 if op == "reserve" else value)
    else:
        setattr(state, op, arg)


def test_set_together_sets_what_differs_and_calls_each_watcher_once():
    state = ExplorerState()
    batches: list[dict[str, tuple[object, object]]] = []
    # onlychanged=False: a value set to what it already was would show up here.
    state.param.watch(lambda *events: batches.append({e.name: (e.old, e.new) for e in events}),
                      ["pos", "k", "heads"], onlychanged=False)
    set_together(state, {"pos": 5, "k": 3, "heads": "aligned"})  # k is 3 already
    assert batches == [{"pos": (0, 5), "heads": ("random", "aligned")}]
    set_together(state, {"pos": 5})
    assert len(batches) == 1


def used_value(values: dict[str, object], name: str) -> object:
    value = values.get(name, DEFAULTS[name])
    return int(value) if isinstance(value, bool) else value  # a flag is written 0 or 1, as in the address


@pytest.mark.parametrize(("args", "name", "used", "reason"), [
    ({"d_model": "abc"}, "d_model", 32, "not_a_number"),
    ({"d_model": ""}, "d_model", 32, "not_a_number"),
    ({"T": "1e999"}, "T", 24, "not_a_number"),
    ({"T": "nan"}, "T", 24, "not_a_number"),
    ({"T": "-5"}, "T", 1, "out_of_range"),
    ({"T": "99999"}, "T", T_MAX, "out_of_range"),
    ({"d_model": "33"}, "d_model", 34, "odd"),
    ({"d_model": "1023"}, "d_model", 1024, "odd"),
    ({"d_model": "-5"}, "d_model", 2, "out_of_range"),
    ({"d_model": "2000"}, "d_model", 1024, "out_of_range"),
    ({"d_model": "32.6"}, "d_model", 34, "rounded"),  # rounds to 33, then made even: one notice
    ({"base": "3000"}, "base", 2000, "off_grid"),
    ({"base": "7e5"}, "base", 500_000, "off_grid"),
    ({"base": "abc"}, "base", 10_000, "not_a_number"),
    ({"base": "inf"}, "base", 10_000, "not_a_number"),
    ({"lang": "<script>"}, "lang", "es", "not_allowed"),
    ({"lang": ""}, "lang", "es", "not_allowed"),
    ({"pair": "abc"}, "pair", 0, "not_a_number"),
    ({"pair": "16"}, "pair", 15, "out_of_range"),
    ({"d_model": "4", "pair": "5"}, "pair", 1, "out_of_range"),
    ({"pos": "-5"}, "pos", 0, "out_of_range"),
    ({"pos": "24"}, "pos", 23, "out_of_range"),
    ({"k": "1e999"}, "k", 3, "not_a_number"),
    ({"k": "-100"}, "k", -23, "out_of_range"),
    ({"T": "2", "k": "abc"}, "k", 1, "not_a_number"),  # the default, clamped to the range
    ({"T": "10", "pos": "3.7"}, "pos", 4, "rounded"),
    ({"base": "-5"}, "base", 2, "out_of_range"),
    ({"mistake": "<b>dim</b>"}, "mistake", "none", "not_allowed"),
    ({"mistake": ""}, "mistake", "none", "not_allowed"),
    ({"T_train": "abc"}, "T_train", 12, "not_a_number"),
    ({"T": "8", "T_train": "abc"}, "T_train", 8, "not_a_number"),  # the default, clamped to T
    ({"T_train": "0"}, "T_train", 1, "out_of_range"),
    ({"T_train": "99999"}, "T_train", 24, "out_of_range"),
    ({"T_train": "100"}, "T_train", 24, "above_T"),  # a valid length, longer than this text
    ({"T": "128", "T_train": "200"}, "T_train", 128, "above_T"),
    ({"T_train": "5.6"}, "T_train", 6, "rounded"),
    ({"stretch": "<i>rope</i>"}, "stretch", "interpolation", "not_allowed"),
    ({"stretch": "ntk-aware"}, "stretch", "interpolation", "not_allowed"),
])
def test_junk_gives_a_valid_value_and_one_notice(args, name, used, reason):
    values, notices = parse_query(args)
    assert used_value(values, name) == used
    assert [(n.parameter, n.given, n.used, n.reason) for n in notices] == [(name, args[name], str(used), reason)]
    state = ExplorerState(**values)
    assert getattr(state, name) == used
    assert_consistent(state)


@pytest.mark.parametrize("args", [
    {},
    {"d_model": "64", "T": "100", "base": "100", "pair": "31", "pos": "99", "k": "-99", "lang": "en"},
    {"d_model": "2", "T": "1", "pair": "0", "pos": "0", "k": "0", "lang": "es"},
    {"d_model": " 1024 ", "T": "2048", "base": "1000000", "k": "2047"},
    {"base": "10000.0", "lang": "EN"},
    {"mistake": "dim_index"}, {"mistake": " Split_Layout "}, {"mistake": "none"},
    {"d_model": "64", "T_train": "32", "T": "128"}, {"T": "40", "T_train": "40"}, {"T_train": "1"},
    {"stretch": "yarn"}, {"stretch": " NTK "}, {"stretch": "interpolation"},
    {"unknown": "<script>", "d_model": "32"},
])
def test_valid_values_give_no_notice(args):
    values, notices = parse_query(args)
    assert notices == []
    assert set(values) == set(args) & set(URL_PARAMETERS)
    ExplorerState(**values)


query_text = st.one_of(
    st.text(),
    st.integers(-10**6, 10**6).map(str),
    st.floats().map(str),
    st.sampled_from(["", " ", "nan", "-inf", "1e999", "-1e999", "0x10", "1_000", "+5", " 7 ", "٣", "EN", "es"]),
)


def value_if_taken_as_given(name: str, given: str) -> object:
    """What the text means when it is already valid (None when it is not directly usable)."""
    if name in ("lang", "heads", "mistake", "stretch", "follow", "theme", "slide"):
        return given.strip().lower()
    if name in ("present", "play", "loop", "play_k"):
        return given.strip().lower() in ("1", "true", "yes", "on")
    if name == "sentence":
        return " ".join(given.split())
    if name == "controls":  # a set of names, written in CONTROL_NAMES order; "none" alone; "" for all
        tokens = {t.strip().lower() for t in given.split(",") if t.strip()}
        if tokens == {"none"}:
            return "none"
        known = [n for n in CONTROL_NAMES if n.lower() in tokens]
        return ",".join(known) if len(known) == len(tokens) else None
    try:
        number = float(given)
    except ValueError:
        return None
    if name == "base":
        return number
    # Any spelling of a whole number ("7", "+7", "7.0", "7e0") is that number.
    return int(number) if math.isfinite(number) and number == int(number) else None


@PROPERTY
@given(args=st.dictionaries(st.sampled_from([*URL_PARAMETERS, "junk"]), query_text))
def test_any_query_gives_a_valid_state(args):
    values, notices = parse_query(args)
    state = ExplorerState(**values)
    assert_consistent(state)
    assert state.lang in LANGUAGES
    assert set(values) <= set(URL_PARAMETERS)
    # At most one notice per parameter, each about a parameter that was given,
    # and each tells the value that is really used.
    named = [n.parameter for n in notices]
    assert len(named) == len(set(named))
    for notice in notices:
        assert notice.reason in REASONS
        assert notice.given == args[notice.parameter]
        assert notice.used == str(used_value(values, notice.parameter))
    # Nothing is changed silently: a parameter without a notice is used as given.
    for name in set(args) & set(URL_PARAMETERS) - set(named):
        assert values[name] == value_if_taken_as_given(name, args[name]), name


@st.composite
def valid_states(draw) -> ExplorerState:
    d_model = 2 * draw(st.integers(1, D_MODEL_MAX // 2))
    T = draw(st.integers(1, T_MAX))
    return ExplorerState(
        d_model=d_model, T=T, base=draw(st.sampled_from(BASES)), lang=draw(st.sampled_from(LANGUAGES)),
        pair=draw(st.integers(0, d_model // 2 - 1)), pos=draw(st.integers(0, T - 1)),
        k=draw(st.integers(-(T - 1), T - 1)), pairs_from=draw(st.integers(0, d_model // 4)),
        pairs_to=draw(st.integers(d_model // 4, d_model // 2 - 1)), heads=draw(st.sampled_from(["random", "aligned"])),
        reserve=2 * draw(st.integers(0, d_model // 2)),
        sentence=draw(st.sampled_from(["", "the dog bites the man", "uno dos"])),
        mistake=draw(st.sampled_from(["none", "dim_index", "cos_exponent", "split_layout", "sin_only"])),
        T_train=draw(st.integers(1, T)), stretch=draw(st.sampled_from(["interpolation", "ntk", "yarn"])),
    )


@PROPERTY
@given(state=valid_states())
def test_query_round_trip(state):
    query = state.query()
    assert list(query) == [name for name in URL_PARAMETERS
                           if (name not in ("sentence", "follow") or getattr(state, name))
                           and (name not in PAGE_PARAMETERS or getattr(state, name) != state.param[name].default)]
    assert all(isinstance(value, str) for value in query.values())
    values, notices = parse_query(query)
    assert notices == []
    assert values == {name: getattr(state, name) for name in query}
    again = ExplorerState(**values)
    assert again.query() == query


def test_parse_query_never_reads_unknown_keys():
    values, notices = parse_query({"lesson_preset": "x", "name": "y", "__class__": "z"})
    assert values == {} and notices == []


def test_huge_and_tiny_numbers_do_not_crash():
    for text in ("9" * 5000, "1e308", "-1e308", "1e-400", "5e-324", str(math.pi)):
        values, _ = parse_query(dict.fromkeys(URL_PARAMETERS[:-1], text))
        assert_consistent(ExplorerState(**values))


# --- controls= (which controls an embedded page shows) ---

@pytest.mark.parametrize(("given", "used"), [
    ("k,pos", "pos,k"), ("POS, k", "pos,k"), ("pos,k,pos", "pos,k"), ("none", "none"), ("NONE", "none"),
    ("play", "play"), ("d_model,T,base,play", "d_model,T,base,play"), ("", ""),
])
def test_controls_are_read_in_any_order_and_case_without_a_notice(given, used):
    values, notices = parse_query({"controls": given})
    assert values["controls"] == used and notices == []


@pytest.mark.parametrize(("given", "used", "shown"), [
    ("k,zz", "k", "k"), ("zz", "", "all"), ("none,k", "k", "k"), ("<script>", "", "all"), ("t", "T", None),
])
def test_unknown_controls_are_dropped_with_a_notice(given, used, shown):
    values, notices = parse_query({"controls": given})
    assert values["controls"] == used
    if shown is None:  # "t" is T in another case: no notice
        assert notices == []
    else:
        assert [(n.parameter, n.given, n.used, n.reason) for n in notices] == [("controls", given, used, "controls")]


def test_controls_say_what_the_page_shows_and_stay_out_of_the_query_when_empty():
    state = ExplorerState(controls="pos,k")
    assert state.shows("k") and state.shows("pos") and not state.shows("T") and not state.shows("play")
    assert state.query()["controls"] == "pos,k"
    everything = ExplorerState()
    assert all(everything.shows(name) for name in ("k", "T", "play")) and "controls" not in everything.query()
    assert not any(ExplorerState(controls="none").shows(name) for name in ("k", "play"))
# --- follow (a teacher's room; components.roombus) -------------------------------------------------------

@pytest.mark.parametrize(("given", "used"), [
    ("k3m9qz", "k3m9qz"), (" K3M9QZ ", "k3m9qz"), ("", ""), ("   ", ""),
])
def test_follow_takes_a_room_id_in_any_case(given, used):
    values, notices = parse_query({"follow": given})
    assert values["follow"] == used and notices == []
    assert ExplorerState(**values).follow == used


@pytest.mark.parametrize("given", [
    "k3m9q", "k3m9qzz", "k3m0qz",  # too short, too long, a zero (not in the alphabet: it reads like o)
    "<script>", "k3m9q\u00e9", "../../etc", "1" * 10_000,
])
def test_follow_that_is_no_room_id_is_dropped_with_a_notice(given):
    values, notices = parse_query({"follow": given})
    assert values["follow"] == ""
    assert [(n.parameter, n.given, n.used, n.reason) for n in notices] == [("follow", given, "", "not_a_room")]


def test_follow_is_in_the_address_only_while_following():
    assert "follow" not in ExplorerState().query()
    state = ExplorerState(follow="k3m9qz", lang="en")
    assert state.query()["follow"] == "k3m9qz"
    values, notices = parse_query(state.query())
    assert notices == [] and values["follow"] == "k3m9qz"
# -- page parameters: presentation mode, theme, animation ---------------------------------------

@pytest.mark.parametrize(("given", "used"), [("1", True), ("true", True), (" ON ", True), ("yes", True),
                                             ("0", False), ("off", False), ("no", False), ("FALSE", False)])
def test_flags_read_the_usual_spellings(given, used):
    for name in ("present", "play", "loop", "play_k"):
        values, notices = parse_query({name: given})
        assert values == {name: used} and notices == []


@pytest.mark.parametrize("given", ["2", "", "maybe", "<b>", "1.0", "x" * 10_000])
def test_a_bad_flag_falls_back_to_its_default_with_a_notice(given):
    values, notices = parse_query({"present": given, "loop": given})
    assert values == {"present": False, "loop": True}
    assert [(n.parameter, n.reason, n.used) for n in notices] == [("present", "not_allowed", "0"),
                                                                 ("loop", "not_allowed", "1")]


def test_theme_is_light_or_dark():
    assert parse_query({"theme": " Dark "}) == ({"theme": "dark"}, [])
    values, notices = parse_query({"theme": "solarized"})
    assert values == {"theme": "light"} and notices[0].reason == "not_allowed"


@pytest.mark.parametrize(("given", "used", "reason"), [("3", 3, None), ("20", 20, None), ("4", 3, "off_grid"),
                                                       ("4.1", 5, "off_grid"), ("1000", 20, "off_grid"),
                                                       ("-5", 1, "off_grid"), ("fast", 3, "not_a_number"),
                                                       ("inf", 3, "not_a_number")])
def test_speed_snaps_to_the_nearest_of_the_speeds(given, used, reason):
    values, notices = parse_query({"speed": given})
    assert values == {"speed": used}
    assert [n.reason for n in notices] == ([reason] if reason else [])
    assert used in SPEEDS


@pytest.mark.parametrize(("given", "used", "noticed"), [("clocks", "clocks", False), ("Ladder", "ladder", False),
                                                        ("", "", False), ("<script>", "", True), ("a" * 41, "", True),
                                                        ("9lives", "", True), ("why not", "", True)])
def test_slide_is_a_short_lowercase_name(given, used, noticed):
    values, notices = parse_query({"slide": given})
    assert values == {"slide": used}
    assert bool(notices) is noticed


def test_page_parameters_reach_the_address_only_when_not_default():
    state = ExplorerState()
    assert not set(state.query()) & set(PAGE_PARAMETERS)
    state.param.update(present=True, slide="clocks", theme="dark", speed=8, loop=False)
    query = state.query()
    assert {key: query[key] for key in PAGE_PARAMETERS if key in query} == {
        "present": "1", "slide": "clocks", "theme": "dark", "speed": "8", "loop": "0"}
    values, notices = parse_query(query)
    assert notices == [] and ExplorerState(**values).query() == query


def test_a_fractional_odd_reserve_gets_one_notice_with_the_value_used():
    values, notices = parse_query({"reserve": "2.75"})
    assert values == {"reserve": 2}
    assert [(n.parameter, n.used, n.reason) for n in notices] == [("reserve", "2", "rounded")]


@pytest.mark.parametrize(("given", "used"), [("\u22123", -3), (" \u22122 ", -2), ("-1", -1), ("\u2212", None)])
def test_a_number_copied_from_the_page_reads_its_minus_sign(given, used):
    """The page prints −3 with U+2212 (app.model.strings.minus_sign); pasted into an address it is −3, not junk."""
    values, notices = parse_query({"T": "24", "pos": "10", "k": given})
    if used is None:
        assert [n.reason for n in notices] == ["not_a_number"]
    else:
        assert values["k"] == used and notices == []


def test_the_speed_menu_says_step_for_one():
    from components.animation import Animation

    assert 1 in SPEEDS
    for lang, one in (("es", "1 paso/s"), ("en", "1 step/s")):
        menu = Animation(ExplorerState(lang=lang)).speed
        assert one in menu.options and "1 pasos/s" not in menu.options and "1 steps/s" not in menu.options


def test_a_parameter_given_twice_with_different_values_gets_a_notice_naming_the_one_read():
    notices = repeated_parameters({"pos": ["3", "9", "3"], "k": ["2", "2"], "T": ["40"], "utm": ["a", "b"]})
    # k twice with one value says nothing new; an unknown key is not ours to mention.
    assert [(n.parameter, n.given, n.used, n.reason) for n in notices] == [("pos", "3, 9, 3", "3", "repeated")]
    assert repeated_parameters({}) == []


@PROPERTY
@given(st.dictionaries(st.sampled_from(URL_PARAMETERS), st.lists(st.text(max_size=5), min_size=1, max_size=4)))
def test_repeated_parameters_notes_exactly_those_with_more_than_one_value(query):
    noted = {n.parameter: n for n in repeated_parameters(query)}
    assert set(noted) == {name for name, values in query.items() if len(set(values)) > 1}
    assert all(n.used == query[name][0] for name, n in noted.items())


# --------------------------------------------------------------------------
# The training length of the extrapolation section: 1 <= T_train <= T.
# --------------------------------------------------------------------------

def test_T_train_follows_T_down_and_stays_when_T_grows():
    state = ExplorerState(T=128, T_train=32)
    seen = guard(state)
    state.T = 20
    assert (state.T_train, state.param.T_train.bounds) == (20, (1, 20))
    assert ("value", "T_train", 20) in seen
    state.T = 300
    assert (state.T_train, state.param.T_train.bounds) == (20, (1, 300))


def test_T_train_past_T_is_taken_as_T_by_the_state():
    state = ExplorerState(T=50)
    state.T_train = 51
    assert state.T_train == 50
    state.T_train = 50
    assert state.T_train == 50


def test_T_train_travels_in_the_address():
    state = ExplorerState(d_model=64, T=128, T_train=32)
    query = state.query()
    assert query["T_train"] == "32"
    values, notices = parse_query(query)
    assert notices == [] and ExplorerState(**values).T_train == 32


def test_T_train_given_before_T_in_the_address_is_checked_against_that_T():
    values, notices = parse_query({"T_train": "100", "T": "200"})
    assert (values["T_train"], notices) == (100, [])
    values, notices = parse_query({"T_train": "300", "T": "200"})
    assert values["T_train"] == 200
    assert [(n.parameter, n.used, n.reason) for n in notices] == [("T_train", "200", "above_T")]


def test_T_train_is_a_control_an_embed_can_name():
    assert "T_train" in CONTROL_NAMES
    values, notices = parse_query({"controls": "t_train,T"})
    assert (values["controls"], notices) == ("T,T_train", [])
