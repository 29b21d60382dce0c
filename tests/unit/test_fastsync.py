"""app/fastsync.py leans on Panel/Bokeh internals; these tests fail when an upgrade moves them.

Each test names the internal it guards. If one fails after an upgrade, read
the new Panel/Bokeh source at that place and adapt app/fastsync.py; do not
just delete the assertion, or key presses quietly get 50-90 ms slower.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import inspect
import json
import math
import socket
import threading
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.server import urls as bokeh_urls
from hypothesis import given
from hypothesis import strategies as st
from panel.io import server as panel_server
from panel.io.state import set_curdoc
from panel.io.state import state as panel_state
from panel.reactive import Syncable
from tornado.websocket import WebSocketHandler

from app import fastsync
from app.model import core
from app.model.state import ExplorerState
from components import widgets
from components.controls import WIDGETS, Controls
from components.ladder import MAX_HEATMAP_ROWS, PALETTE, heatmap_codes, heatmap_data, heatmap_values
from tests.helpers import served_like, with_address


class _StubDocument:
    """Just enough of a served ``bokeh.document.Document`` for ``Syncable._server_change``."""

    session_context = True  # truthy: "running on a server"

    def __init__(self) -> None:
        self.timeouts: list[tuple[object, int]] = []

    def add_timeout_callback(self, callback, timeout_milliseconds: int):
        self.timeouts.append((callback, timeout_milliseconds))


def scheduled_delay(widget: pn.widgets.Widget, value: object) -> list[int]:
    """Feed ``widget`` a browser-side change of ``value`` the way Bokeh does; return the waits Panel chose."""
    doc = _StubDocument()
    try:
        widget._server_change(doc, "stub-ref", None, "value", None, value)
        widget._server_change(doc, "stub-ref", None, "value_throttled", None, value)
    finally:
        panel_state._change_callbacks.pop(doc, None)
        widget._events = {}
    return [ms for _, ms in doc.timeouts]


# ---------------------------------------------------------------------------
# The debounce.
# ---------------------------------------------------------------------------

def test_server_change_still_reads_debounce_from_the_instance():
    """Guards ``Syncable._server_change`` -> ``doc.add_timeout_callback(cb, self._debounce)``."""
    assert Syncable._debounce == 50, "Panel's default debounce changed; re-measure and re-read app/fastsync.py"
    source = inspect.getsource(Syncable._server_change)
    assert "self._debounce" in source and "add_timeout_callback" in source
    assert list(inspect.signature(Syncable._server_change).parameters) == [
        "self", "doc", "ref", "subpath", "attr", "old", "new"]


def test_stock_slider_waits_50_ms_and_fast_slider_does_not():
    assert scheduled_delay(pn.widgets.IntSlider(start=0, end=10), 3) == [50]
    # value and value_throttled of one key press are merged into one scheduled change.
    assert scheduled_delay(widgets.FastIntSlider(start=0, end=10), 3) == [0]


def test_fast_player_does_not_wait():
    assert scheduled_delay(pn.widgets.Player(start=0, end=10), 3) == [50]
    assert scheduled_delay(widgets.FastPlayer(start=0, end=10), 3) == [0]


def test_fast_discrete_slider_inner_slider_does_not_wait_even_after_new_options():
    """Guards ``DiscreteSlider._slider`` (rebuilt by ``_update_options``)."""
    slider = widgets.FastDiscreteSlider(options=[2, 10, 100], value=10)
    assert type(slider._slider) is widgets.FastIntSlider
    assert scheduled_delay(slider._slider, 2) == [0]
    slider.options = [5, 50, 500, 5000]
    assert type(slider._slider) is widgets.FastIntSlider
    assert scheduled_delay(slider._slider, 3) == [0]
    slider._slider.value = 3  # the inner slider's index still moves the widget's value
    assert slider.value == 5000
    stock = pn.widgets.DiscreteSlider(options=[2, 10, 100], value=10)
    assert scheduled_delay(stock._slider, 2) == [50]


def test_fast_discrete_slider_is_titled_by_live_html_linked_in_the_browser():
    """Guards ``DiscreteSlider._text`` (its title, ``_composite[0]``, whose ``value`` ``_update_value`` sets) and
    ``_text_link`` (the browser's link from the inner slider, filled in with ``{labels}``)."""
    from components.widgets import SliderTitle

    stock = pn.widgets.DiscreteSlider(options=[2, 10, 100], value=10, label="base")
    assert isinstance(stock._text, pn.widgets.StaticText) and stock._composite[0] is stock._text
    assert "{labels}" in stock._text_link and "labels[source.value]" in stock._text_link

    slider = widgets.FastDiscreteSlider(options=[2, 10, 100], value=10, label="base")
    assert isinstance(slider._text, SliderTitle) and slider._composite[0] is slider._text
    assert slider._text.text == '<span class="pe-slider-title">base: <b>10</b></span>'
    slider.value = 100
    assert slider._text.value == "base: <b>100</b>"
    assert slider._text.text == '<span class="pe-slider-title">base: <b>100</b></span>'
    root = slider.get_root(Document())
    links = [m for m in root.references() if type(m).__name__ == "CustomJS"]
    assert len(links) == 1
    assert "['base: <b>2</b>', 'base: <b>10</b>', 'base: <b>100</b>']" in links[0].code
    # Set in the page without being sent back: the server's reply carries the same text.
    assert ('target.data.setv({text: "<span class=\\"pe-slider-title\\">" + labels[source.value] + "</span>"}, '
            '{sync: false})') in links[0].code
    assert links[0].args["target"].data.name == "discrete_slider_title"  # the link sets the data model's text


def test_change_applies_the_value():
    slider = widgets.FastIntSlider(start=0, end=10, value=1)
    # Without a session Panel applies the change at once, through _process_events (inside pn.io.hold).
    slider._server_change(Document(), "ref", None, "value", 1, 7)
    assert slider.value == 7
    discrete = widgets.FastDiscreteSlider(options=[2, 10, 100], value=10)
    discrete._slider._server_change(Document(), "ref", None, "value", 1, 2)
    assert discrete.value == 100


def test_a_drag_gets_one_update_per_interval_counted_from_the_start_of_the_last(monkeypatch):
    """A change within DRAG_INTERVAL_MS of the start of the last application waits out the rest of it;
    the time the application took does not lengthen the interval."""
    interval = widgets.DRAG_INTERVAL_MS / 1000
    slider = widgets.FastIntSlider(start=0, end=10, value=1)
    clock = [100.0]
    monkeypatch.setattr(widgets.time, "monotonic", lambda: clock[0])
    step = slider._process_step

    def slow_step(events):  # an application that takes 60 % of the interval
        clock[0] += 0.6 * interval
        step(events)

    monkeypatch.setattr(slider, "_process_step", slow_step)
    slider._server_change(Document(), "ref", None, "value", 1, 2)  # no session: applied at once
    assert slider.value == 2
    clock[0] = 100.0 + 0.75 * interval  # a quarter of the interval is left
    assert scheduled_delay(slider, 3) == [round(0.25 * widgets.DRAG_INTERVAL_MS)]
    clock[0] = 100.0 + 1.01 * interval
    assert scheduled_delay(slider, 3) == [0]


def test_controls_use_fast_widgets_bound_to_the_state():
    state = ExplorerState(d_model=64, T=100)
    controls = Controls(state, ["d_model", "T", "base", "pair", "pos", "k"])
    shown = {w.name: w for w in controls._layout if isinstance(w, pn.widgets.Widget)}
    sliders = [w for w in shown.values() if isinstance(w, pn.widgets.IntSlider)]
    assert len(sliders) == 5
    for slider in sliders:
        assert slider._debounce == 0
    discrete = next(w for w in shown.values() if isinstance(w, pn.widgets.DiscreteSlider))
    assert discrete._slider._debounce == 0
    # Still param-driven: moving the widget moves the state and back.
    k = next(w for w in sliders if w.end == 99 and w.start == -99)
    k.value = 42
    assert state.k == 42
    state.k = -5
    assert k.value == -5
    assert {WIDGETS[name] for name in ("pair", "pos", "k")} == {widgets.FastIntSlider}


# ---------------------------------------------------------------------------
# TCP_NODELAY.
# ---------------------------------------------------------------------------

def test_websocket_route_is_panels_handler_in_bokehs_pattern_list():
    """Guards ``bokeh.server.urls.per_app_patterns`` holding ``panel.io.server.WSHandler`` for /ws."""
    assert issubclass(fastsync.NoDelayWSHandler, panel_server.WSHandler)
    assert callable(getattr(WebSocketHandler, "set_nodelay", None))
    routes = [entry for entry in bokeh_urls.per_app_patterns if entry[0] == r"/ws"]
    assert len(routes) == 1
    assert issubclass(routes[0][1], panel_server.WSHandler)
    from bokeh.server import tornado as bokeh_tornado
    # BokehTornado reads this very list object when it builds its routes.
    assert bokeh_tornado.per_app_patterns is bokeh_urls.per_app_patterns


def test_install_is_idempotent_and_swaps_only_the_websocket_route():
    before = [entry for entry in bokeh_urls.per_app_patterns if entry[0] != r"/ws"]
    fastsync.install()
    fastsync.install()
    assert fastsync.installed()
    assert [entry for entry in bokeh_urls.per_app_patterns if entry[0] != r"/ws"] == before


def test_an_exception_in_a_document_callback_leaves_no_current_document_behind():
    """Guards ``bokeh.io.doc.patch_curdoc`` and ``_PATCHED_CURDOCS``: Bokeh's own leaves the document
    of a failed callback as every later ``curdoc()``; after ``install`` the entry goes with the call."""
    from bokeh.document import Document
    from bokeh.document.callbacks import invoke_with_curdoc
    from bokeh.io import curdoc
    from bokeh.io import doc as bokeh_doc

    fastsync.install()
    patched = bokeh_doc._PATCHED_CURDOCS
    before = list(patched)
    doc, seen = Document(), []

    def failing():
        seen.append(curdoc())
        raise RuntimeError("a watcher failed")

    with pytest.raises(RuntimeError, match="a watcher failed"):
        invoke_with_curdoc(doc, failing)
    assert seen == [doc]  # it was the current document inside the call
    assert patched == before
    # Nested: an inner failure caught by an outer body removes only its own entry.
    outer, inner = Document(), Document()

    def catches():
        with contextlib.suppress(RuntimeError):
            invoke_with_curdoc(inner, failing)
        return curdoc()

    assert invoke_with_curdoc(outer, catches) is outer
    assert patched == before


def _serialized_page(route: str, query: dict) -> str:
    """The page's whole document as JSON text (buffers by content: their ids change per serialization)."""
    import json
    import re

    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app import pages

    doc = Document()
    with set_curdoc(doc), with_address(query), \
            mock.patch.object(pn.state, "onload", lambda callback, threaded=False: callback()):
        doc.add_root(pages.routes()[route]().get_root(doc))

    def dump() -> str:
        serialized = doc.to_json()
        content = json.dumps(serialized.content, sort_keys=True, default=repr)
        buffers = [bytes(buffer.data).hex() for buffer in serialized.buffers]
        # Model and buffer ids are given out afresh per serialization.
        return re.sub(r"p\d+|<memory at 0x[0-9a-f]+>", "id", content) + "".join(buffers)

    return dump


@pytest.mark.parametrize(("route", "query"), [
    ("/", {"lang": "en"}), ("/", {"lang": "es", "theme": "dark", "present": "1"}),
    ("explore", {"lang": "en", "theme": "light"}), ("ladder", {"lang": "es", "controls": "none"}),
])
def test_cached_bokeh_defaults_serialize_every_page_as_stock_bokeh_does(route, query):
    """Guards ``Property.themed_default`` and ``HasProps._overridden_defaults``: with the defaults
    cached, every model of a page (as served: all sections built) serializes to the same JSON as
    with Bokeh's own, property by property."""
    fastsync.cache_bokeh_defaults(True)
    try:
        dump = _serialized_page(route, query)
        cached = dump()
        assert len(fastsync._DEFAULTS) > 100  # the cache answered
        fastsync.cache_bokeh_defaults(False)
        assert not fastsync.defaults_cached()
        stock = dump()
    finally:
        fastsync.cache_bokeh_defaults(True)
    assert len(stock) > 10_000
    same = cached == stock  # (not compared in the assert: pytest's diff of two such texts takes minutes)
    assert same, "a default serializes differently with the cache"


def test_a_theme_still_overrides_a_cached_default():
    from bokeh.document import Document
    from bokeh.models import Plot
    from bokeh.themes import Theme

    fastsync.cache_bokeh_defaults(True)
    assert Plot().background_fill_color == "#ffffff"  # now cached for Plot
    doc = Document()
    doc.theme = Theme(json={"attrs": {"Plot": {"background_fill_color": "#123456"}}})
    themed = Plot()
    doc.add_root(themed)
    assert themed.background_fill_color == "#123456"
    assert Plot().background_fill_color == "#ffffff"
    # One property, two classes, two defaults (each class overrides ``label`` of AbstractButton).
    from bokeh.models import Button, Toggle
    assert (Button().label, Toggle().label, Button().label) == ("Button", "Toggle", "Button")
    # A mutable default is never shared between instances.
    first, second = Plot(), Plot()
    first.tags.append(1)
    assert second.tags == []


def test_a_deferred_browser_event_runs_under_the_document_lock():
    """Guards ``Syncable._server_event``, ``state._change_callbacks`` and ``Syncable._event_coroutine``:
    Panel defers a browser event while a property change is waiting, and runs the deferred event
    (which first applies the waiting change) as a bare asyncio task, without Bokeh's document lock;
    after ``install`` it is a next-tick callback of the document, which Bokeh runs holding it."""

    from bokeh.events import ButtonClick

    class Doc:  # what _server_event reads of a session's document
        session_context = object()

        def __init__(self):
            self.scheduled = []

        def add_next_tick_callback(self, callback):
            self.scheduled.append(callback)

    widget = pn.widgets.Button()
    event = ButtonClick(model=None)
    doc = Doc()
    pn.state._change_callbacks[doc] = {"waiting": lambda: None}
    try:
        bare = []
        with mock.patch.object(param.parameterized, "async_executor", side_effect=bare.append):
            fastsync._STOCK_SERVER_EVENT(widget, doc, event)  # Panel's own: a bare task
            assert len(bare) == 1 and doc.scheduled == []
            fastsync.install()
            widget._server_event(doc, event)
        assert len(bare) == 1, "the deferred event must not run as a bare task"
        assert [c.func.__name__ for c in doc.scheduled] == ["_event_coroutine"]
    finally:
        del pn.state._change_callbacks[doc]


def off_the_main_thread(function):
    """Run ``function`` in a worker thread: after a Playwright test, the main
    thread has an event loop marked as running, and asyncio (Bokeh's client
    too) refuses to start another one there."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function).result(timeout=120)


def test_served_websocket_has_tcp_nodelay(app_url):
    """A real connection to the served app: its server-side socket has TCP_NODELAY set."""
    off_the_main_thread(lambda: _check_tcp_nodelay(app_url))


def _check_tcp_nodelay(app_url: str) -> None:
    from bokeh.client import pull_session

    session = pull_session(url=f"{app_url}/ladder")
    try:
        assert session.document.get_model_by_name("heatmap") is not None
        handlers = [obj for obj in gc.get_objects() if isinstance(obj, fastsync.NoDelayWSHandler)]
        open_sockets = [h.ws_connection.stream.socket for h in handlers
                        if h.ws_connection is not None and h.ws_connection.stream.socket is not None]
        assert open_sockets, "no websocket was served by NoDelayWSHandler"
        for sock in open_sockets:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        session.close()


def _named_in_first_patch(app_url: str, path: str, expect: str, watched: set[str], change) -> set[str]:
    """Which of the ``watched`` models (by name) the first PATCH-DOC after ``change(client)`` changes
    (the client counts as open once the document holds ``expect``: see ``BokehClient.open``)."""

    from bench.protocol import BokehClient, objects

    async def first_patch() -> set[str]:
        port = int(app_url.rsplit(":", 1)[1])
        client = BokehClient("127.0.0.1", port, path, {"lang": "en"})
        await client.open(expect=(expect,))
        try:
            ids = {o["attributes"]["name"]: o["id"] for o in objects(client.doc)
                   if o.get("attributes", {}).get("name") in watched}
            assert set(ids) == watched
            await change(client)
            while True:
                message = await client.receive(10)
                if message.msgtype == "PATCH-DOC":
                    return {name for name, model_id in ids.items() if f'"id":"{model_id}"' in message.content}
        finally:
            client.close()

    return off_the_main_thread(lambda: asyncio.run(first_patch()))


def test_one_key_press_is_one_message(app_url):
    """Every model a change of k touches arrives in one PATCH-DOC (the ``pn.io.hold`` in ``_FastSync``)."""
    from app.model.strings import text

    watched = {"row_marks", "distance_marker"}  # the ladder's and the score curve's k sources

    async def press_k(client) -> None:
        await client.set_value(client.slider_id(text("en", "k")), 5)

    assert _named_in_first_patch(app_url, "/explore", "distance_marker", watched, press_k) == watched



def test_work_run_at_the_next_tick_is_one_message(app_url):
    """``components.ticks.run_next_tick`` holds its work's changes and writes them as one message. The live checks'
    verdict on a large table (computed on a worker thread, shown at the next tick) changes both check cards
    after a new d_model and T:
    with Bokeh's own hold each change went as a PATCH-DOC of its own (and the lesson page's catch-up of the
    sections off screen after a d_model key, 14 of them)."""

    from app.model.strings import text
    from bench.protocol import BokehClient, objects

    cards = {"check_norm", "check_rotation"}

    async def messages_until_both_cards_change() -> list[set[str]]:
        port = int(app_url.rsplit(":", 1)[1])
        client = BokehClient("127.0.0.1", port, "/explore", {"lang": "en", "d_model": 512, "T": 2048})
        await client.open(expect=("check_norm",))
        try:
            ids = {o["attributes"]["name"]: o["id"] for o in objects(client.doc)
                   if o.get("attributes", {}).get("name") in cards}
            assert set(ids) == cards
            # d_model and T in one message: the norm card follows d_model, the rotation card counts T − |k|.
            await client.send("PATCH-DOC", {"events": [
                {"kind": "ModelChanged", "model": {"id": client.slider_id(text("en", name))}, "attr": attr,
                 "new": value} for name, value in (("d_model", 510), ("T", 2000))
                for attr in ("value", "value_throttled")]})
            seen: list[set[str]] = []
            while not set().union(*seen) >= cards:
                message = await client.receive(30)
                if message.msgtype == "PATCH-DOC":
                    seen.append({name for name, model_id in ids.items() if f'"id":"{model_id}"' in message.content})
            return seen
        finally:
            client.close()

    seen = off_the_main_thread(lambda: asyncio.run(messages_until_both_cards_change()))
    assert cards in seen, seen


@pytest.mark.parametrize(("slider", "value", "witness"), [("k", 5, "distance_marker"), ("base", 12, "ladder")])
def test_a_key_press_is_answered_with_its_data_before_bokehs_ok(app_url, slider, value, witness):
    """The step runs inside Bokeh's handling of the key's PATCH-DOC (``_FastSync._applies_now``), so its
    data leaves before Bokeh's OK to that message, as a plain Bokeh ``on_change`` app's does. Panel's own
    path runs it on a later turn of the loop, while the OK is written: the OK would come first. The base
    slider's inner slider (built by Panel's ``DiscreteSlider``) is made a ``FastIntSlider`` for this."""

    from app.model.strings import text
    from bench.protocol import BokehClient, objects

    async def first_answers() -> list[str]:
        port = int(app_url.rsplit(":", 1)[1])
        client = BokehClient("127.0.0.1", port, "/explore", {"lang": "en"})
        await client.open(expect=(witness,))
        try:
            marker = next(o["id"] for o in objects(client.doc) if o.get("attributes", {}).get("name") == witness)
            if slider == "base":  # the one slider without a title of its own (Panel's DiscreteSlider's inside)
                (model,) = [o["id"] for o in objects(client.doc) if o.get("name", "").endswith("Slider")
                            and o.get("attributes", {}).get("show_value") is False]
            else:
                model = client.slider_id(text("en", slider))
            await client.set_value(model, value)
            seen = []
            while "OK" not in seen:
                message = await client.receive(10)
                seen.append("data" if message.msgtype == "PATCH-DOC" and marker in message.content else message.msgtype)
            return seen
        finally:
            client.close()

    answers = off_the_main_thread(lambda: asyncio.run(first_answers()))
    assert answers[0] == "data", answers


class _PatchingSession:
    """What ``_applies_now`` reads of Bokeh's ServerSession while it applies a browser's PATCH-DOC."""

    def __init__(self, connection: object | None, pending: list | None) -> None:
        self._current_patch_connection, self._pending_writes = connection, pending


@pytest.mark.parametrize(("connection", "pending", "attr", "expected"), [
    (object(), [], "value", True),           # inside _handle_patch, document lock held
    (object(), [], "value_throttled", True),
    (None, [], "value", False),              # a document callback, not a browser's message
    (object(), None, "value", False),        # lock not held
    (object(), [], "start", False),          # not a step
])
def test_a_step_is_applied_inside_bokehs_handling_only_when_bokeh_is_applying_a_browser_message(
        connection, pending, attr, expected):
    """Guards ``ServerSession._current_patch_connection`` and ``_pending_writes`` (set by ``_handle_patch``
    and its ``_needs_document_lock``)."""
    from bokeh.server.session import ServerSession

    handle_patch = inspect.getsource(ServerSession._handle_patch)
    assert "self._current_patch_connection = connection" in handle_patch
    assert "self._pending_writes = []" in inspect.getsource(inspect.getmodule(ServerSession))
    slider = widgets.FastIntSlider(start=0, end=10, value=1)
    doc = SimpleNamespace(session_context=SimpleNamespace(session=_PatchingSession(connection, pending)))
    assert slider._applies_now(doc, "ref", None, attr) is expected
    slider._events = {"value": 3}  # a change already waiting: merged into it instead
    assert slider._applies_now(doc, "ref", None, attr) is False


def test_a_choice_of_option_buttons_is_one_message(app_url):
    """A choice of mistake on /mistakes: the ladder's, the norms' and the score curve's sources all
    arrive in one PATCH-DOC (``OneMessageRadioButtonGroup``), as a slider step's do."""
    from bench.protocol import objects

    watched = {"mistake_norms", "mistakes_heatmap", "mistakes_distance_samples"}

    async def choose_a_mistake(client) -> None:
        groups = [o["id"] for o in objects(client.doc) if o.get("name", "").endswith("RadioButtonGroup")]
        assert len(groups) == 1, "the page has one row of option buttons: the mistakes"
        await client.send("PATCH-DOC", {"events": [
            {"kind": "ModelChanged", "model": {"id": groups[0]}, "attr": "active", "new": 1}]})

    assert _named_in_first_patch(app_url, "/mistakes", "mistake_norms", watched, choose_a_mistake) == watched


# ---------------------------------------------------------------------------
# The heatmap payload (components/ladder.py: heatmap_data), sized for a screen.
# ---------------------------------------------------------------------------

def _bokeh_bin(values: np.ndarray, low: float, high: float, colors: int) -> np.ndarray:
    """The palette index BokehJS's LinearColorMapper gives a value: floor of the normalised value
    times the palette length, the top end in the last colour (restated here, not imported)."""
    scaled = np.floor((values - low) / (high - low) * colors)
    return np.clip(scaled, 0, colors - 1).astype(int)


@pytest.mark.parametrize("T", [1, 24, 1023, 1024, 1025, 2047, 2048])
def test_heatmap_rows_are_exact_rows_of_pe_with_a_stride_below_pi(T):
    data = heatmap_data(T, 64, 10_000)
    image, stride = data["image"][0], data["stride"][0]
    assert image.dtype == np.uint8 and image.shape[1] == 64
    assert image.shape[0] <= MAX_HEATMAP_ROWS
    # Sampling every `stride`-th position cannot alias pair 0 (2 pi positions per turn) below pi.
    assert stride < math.pi
    assert image.shape[0] == len(range(0, T, stride))
    assert data["dh"][0] == image.shape[0] * stride >= T
    positions = np.arange(0, T, stride)
    expected = _bokeh_bin(core.encoding(T, 64, 10_000)[positions], -1.0, 1.0, len(PALETTE))
    assert np.array_equal(image, expected)


def test_heatmap_at_the_largest_size_is_an_eighth_of_float32():
    image = heatmap_data(2048, 1024, 10_000)["image"][0]
    assert image.nbytes == 1024 * 1024  # 8 MB as float32 over all 2048 rows
    # The first row is (0, 1, 0, 1, ...): sin 0 in the middle bin, cos 0 = 1 in the top one.
    assert list(image[0, :4]) == [128, 255, 128, 255]


@given(st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=1, max_size=50))
def test_heatmap_codes_bin_like_the_colour_mapper_and_decode_within_a_bin(values):
    values = np.asarray(values, dtype=np.float64)
    codes = heatmap_codes(values)
    # float32 rounding can move a value sitting exactly on a bin edge by one bin, no more.
    assert np.max(np.abs(codes.astype(int) - _bokeh_bin(values, -1.0, 1.0, 256))) <= 1
    assert np.all(np.abs(heatmap_values(codes) - values) <= 1.0 / 256 + 1e-6)


@pytest.mark.parametrize("wrapper", ["one_message", "plain_hold"])
def test_one_message_drops_panels_replayed_echo_and_keeps_the_change(wrapper):
    """Guards Bokeh's held ``callback_invoker`` and Panel's ``_server_change`` partials (``one_message``)."""
    doc = Document()
    driver = widgets.FastIntSlider(start=0, end=10, value=1)
    follower = pn.widgets.IntSlider(start=0, end=10, value=1)
    driver.param.watch(lambda event: setattr(follower, "end", 10 + event.new), "value")
    if wrapper == "plain_hold":
        # Panel's plain hold, as the control: the echo of `end` comes back as if from the browser.
        driver._process_events = lambda events: _plain_hold(pn.widgets.IntSlider._process_events, driver, events)
    replayed: list[dict] = []
    with set_curdoc(doc):
        root = pn.Column(driver, follower).get_root(doc)
        doc.add_root(root)
        served_like(doc)
        follower._process_events = replayed.append
        driver._models[root.ref["id"]][0].set_from_json("value", 4)
    follower_model = follower._models[root.ref["id"]][0]
    assert driver.value == 4 and follower.end == 14 and follower_model.end == 14
    assert replayed == ([] if wrapper == "one_message" else [{"end": 14}])


def _plain_hold(method, widget, events) -> None:
    with pn.io.hold():
        method(widget, events)


@pytest.mark.parametrize("clamp_to", [None, 3])
def test_a_step_is_not_echoed_back_but_a_clamped_value_is(clamp_to, monkeypatch):
    """Guards ``_process_step`` / ``_update_properties``: Panel's ``_in_process__events`` marks the
    browser's own values, ``panel.reactive._syncing`` exists, ``value_throttled`` is writable."""
    assert isinstance(pn.widgets.IntSlider()._in_process__events, dict)
    built: list[set[str]] = []
    stock = widgets.FastIntSlider._process_param_change

    def counting(self, params):
        built.append(set(params))
        return stock(self, params)

    monkeypatch.setattr(widgets.FastIntSlider, "_process_param_change", counting)
    doc = Document()
    slider = widgets.FastIntSlider(start=0, end=10, value=1)
    if clamp_to is not None:  # a watcher that corrects the value, as the state's bounds do
        slider.param.watch(lambda event: setattr(slider, "value", min(event.new, clamp_to)), "value")
    with set_curdoc(doc):
        root = slider.get_root(doc)
        doc.add_root(root)
        built.clear()  # the model's first properties
        served_like(doc)
        model = slider._models[root.ref["id"]][0]
        model.set_from_json("value", 4)
        model.set_from_json("value_throttled", 4)
    if clamp_to is None:
        assert slider.value == 4 and slider.value_throttled == 4 and model.value == 4
        assert built == []  # the browser's own value is not built into a message again
    else:
        assert slider.value == 3 and model.value == 3  # the correction reaches the browser
        assert {"value"} in built


class _Session:
    """Just enough of a served session for Panel to treat ``doc`` as one (``doc.session_context``)."""

    id = "stub-session"
    session = object()
    request = SimpleNamespace(arguments={}, headers={}, cookies={})


@pytest.mark.parametrize("connected_by", ["a key press", "nothing"])
def test_a_change_from_the_browser_reaches_it_before_document_ready(connected_by):
    """Guards ``state._connected``: Panel drops held changes of a session it does not count as connected."""
    doc = Document()
    context = _Session()
    doc._session_context = lambda: context
    slider = widgets.FastIntSlider(start=0, end=10, value=1)
    follower = pn.widgets.IntSlider(start=0, end=10, value=1)
    slider.param.watch(lambda event: setattr(follower, "end", 10 + event.new), "value")
    with set_curdoc(doc):
        root = pn.Column(slider, follower).get_root(doc)
        doc.add_root(root)
        panel_state._thread_id_[doc] = threading.get_ident()  # the server's thread; no document_ready yet
        sent: list = []
        doc.on_change(sent.append)
        if connected_by == "a key press":
            slider._process_events({"value": 4})
        else:  # the same change made by Python code before the browser has the page
            with widgets.one_message():
                slider.value = 4
    follower_model = follower._models[root.ref["id"]][0]
    reached = [e for e in sent if getattr(e, "model", None) is follower_model and getattr(e, "attr", "") == "end"]
    # The control: before document_ready Panel keeps a Python change from the page (it schedules it).
    assert follower_model.end == (14 if connected_by == "a key press" else 10)
    assert len(reached) == (1 if connected_by == "a key press" else 0)
    assert bool(panel_state._connected.get(doc)) == (connected_by == "a key press")


def test_push_property_sets_the_parameter_and_the_browser_model_only():
    """Guards ``push_property``: a JSComponent's ``_models`` hold (model, parent) and its parameters live
    on ``model.data``; Panel's own watcher (``_param_change``) is not run."""
    from components.widgets import LiveHTML

    view = LiveHTML("<p>a</p>", name="probe")
    doc = Document()
    root = pn.Column(view).get_root(doc)
    doc.add_root(root)
    sent: list = []
    doc.on_change(sent.append)
    calls: list = []
    original = view._param_change
    view._param_change = lambda *events: calls.append(events) or original(*events)
    widgets.push_property(view, "text", "<p>b</p>")
    (model, _parent), = view._models.values()
    assert view.text == "<p>b</p>" and model.data.text == "<p>b</p>" and model.data.name == "probe"
    assert calls == []
    assert [(e.model, e.attr, e.new) for e in sent] == [(model.data, "text", "<p>b</p>")]
    # A model built afterwards (another root) starts from the new value.
    other = pn.Column(view).get_root(Document())
    assert [m.text for m in other.references() if getattr(m, "name", None) == "probe"] == ["<p>b</p>"]


def _probe_text():
    """A ``LiveHTML`` on a document, its data model, and the list of what Panel's ``_process_events`` got."""
    from components.widgets import LiveHTML

    view = LiveHTML("<p>a</p>", name="probe")
    doc = Document()
    doc.add_root(pn.Column(view).get_root(doc))
    processed: list = []
    original = view._process_events
    view._process_events = lambda events: processed.append(events) or original(events)
    (model, _parent), = view._models.values()
    return view, doc, model, processed


def test_push_property_is_not_taken_for_a_change_from_the_browser():
    """Panel's ``on_change`` callback (``_server_change``) processes every change of a linked property
    that is not listed in ``_changing`` as the browser's: ``_process_events`` (in a served session after
    its debounce, here at once). A pushed property is listed while it is set, and only then."""
    view, _doc, model, processed = _probe_text()

    widgets.push_property(view, "text", "<p>b</p>")
    widgets.push_property(view, "text", "<p>b</p>")  # unchanged: Bokeh calls back nobody
    assert processed == [] and view._changing == {}
    assert model.data.text == "<p>b</p>"

    # The control: the same change made without the listing is processed as the browser's.
    model.data.text = "<p>c</p>"
    assert processed == [{"text": "<p>c</p>"}]
    assert "if attr in self._changing.get(ref, [])" in inspect.getsource(pn.reactive.Syncable._server_change)


def test_push_property_under_a_hold_is_not_taken_for_a_change_from_the_browser():
    """Under ``pn.io.hold()`` (a section holds its updates so that they leave together) Bokeh runs the
    ``on_change`` callbacks when the hold ends, when a listing in ``_changing`` would be gone: the held
    event itself skips Panel's callback. The message to the browser still carries the change; another
    callback on the property keeps the event's callbacks."""
    view, doc, model, processed = _probe_text()
    sent: list = []
    doc.on_change(sent.append)
    others: list = []
    doc.hold("combine")  # what pn.io.hold() does in a served session
    widgets.push_property(view, "text", "<p>b</p>")
    widgets.push_property(view, "text", "<p>c</p>")  # combined with the first into one event
    doc.unhold()
    assert processed == [] and view._changing == {}
    assert [(e.model, e.attr, e.new) for e in sent] == [(model.data, "text", "<p>c</p>")]

    model.data.on_change("text", lambda attr, old, new: others.append(new))
    doc.hold("combine")
    widgets.push_property(view, "text", "<p>d</p>")
    doc.unhold()
    # With a callback of its own on the property, the event keeps every callback (Panel's too): only an
    # event whose callbacks are all Panel's is stripped, as in one_message().
    assert others == ["<p>d</p>"] and processed == [{"text": "<p>d</p>"}]
    mine = [cb for cb in model.data._callbacks["text"] if not widgets._is_panel_sync(cb)]
    model.data.remove_on_change("text", *mine)
    processed.clear()

    # The control: a change held without the push is processed as the browser's when the hold ends.
    doc.hold("combine")
    model.data.text = "<p>e</p>"
    assert processed == []
    doc.unhold()
    assert processed == [{"text": "<p>e</p>"}]


# ---------------------------------------------------------------------------
# The message guard (NoDelayWSHandler._handle / _receive, app/guard.py).
# ---------------------------------------------------------------------------

def test_bokeh_ws_handler_still_routes_messages_through_handle_and_receive():
    """Guards ``WSHandler.on_message`` -> ``self._receive(fragment)`` and ``self._handle(message)``,
    and ``ProtocolHandler._handlers`` (msgtype -> handler), which ``NoDelayWSHandler._handle`` replaces."""
    from bokeh.server.protocol_handler import ProtocolHandler
    from bokeh.server.views.ws import WSHandler as BokehWSHandler

    source = inspect.getsource(BokehWSHandler.on_message)
    assert "self._receive(fragment)" in source and "self._handle(message)" in source
    assert "self.handler.handle(message, self.connection)" in inspect.getsource(BokehWSHandler._handle)
    assert "self.receiver.consume(fragment)" in inspect.getsource(BokehWSHandler._receive)
    assert set(ProtocolHandler()._handlers) == {"PULL-DOC-REQ", "PUSH-DOC", "PATCH-DOC", "SERVER-INFO-REQ"}
    assert "_handlers.get(message.msgtype)" in inspect.getsource(ProtocolHandler.handle)
    assert fastsync.NoDelayWSHandler._handle is not BokehWSHandler._handle


def test_an_error_reply_built_inside_except_carries_the_traceback_and_ours_does_not():
    """Guards ``bokeh.protocol.messages.error.create`` reading ``sys.exc_info()``: why the reply is built after
    the ``except`` block."""
    from bokeh.protocol import Protocol

    protocol = Protocol()
    try:
        raise ValueError("inside")
    except ValueError:
        inside = protocol.create("ERROR", "m1", "short")
    outside = protocol.create("ERROR", "m1", "short")
    assert "Traceback" in inside.content["traceback"]
    assert outside.content["traceback"] is None


def test_fast_slider_keeps_a_value_from_any_path_inside_its_bounds():
    slider = widgets.FastIntSlider(start=-23, end=23, value=3)
    assert slider._in_bounds({"value": 1e300, "value_throttled": -24}) == {"value": 23, "value_throttled": -23}
    assert slider._in_bounds({"value": 3.5}) == {"value": 4}
    assert slider._in_bounds({"value": float("nan"), "value_throttled": "x"}) == {}


def test_discrete_slider_clamps_an_index_outside_its_options():
    slider = widgets.FastDiscreteSlider(options=[2, 5, 10], value=5)
    slider._slider.value = 7
    assert slider.value == 10 and slider._slider.value == 2
    slider._slider.value = -1  # would wrap around to the last option
    assert slider.value == 2 and slider._slider.value == 0


def test_bokeh_still_forgets_a_connection_closed_before_it_exists():
    """Guards ``WSHandler.on_close`` acting only ``if self.connection is not None`` and ``_async_open`` creating
    the connection: the case ``NoDelayWSHandler._async_open`` completes."""
    from bokeh.server.views.ws import WSHandler as BokehWSHandler

    assert "if self.connection is not None" in inspect.getsource(BokehWSHandler.on_close)
    assert "self.connection = self.application.new_connection" in inspect.getsource(BokehWSHandler._async_open)


# ---------------------------------------------------------------------------
# A step's message is written once the socket is free, not 10 ms later.
# ---------------------------------------------------------------------------

def test_bokeh_maps_a_messages_references_where_the_cache_expects():
    """Guards the names ``cache_document_references`` replaces and the bookkeeping it reads."""
    from bokeh.document import document as document_module
    from bokeh.document.models import DocumentModelManager

    apply = inspect.getsource(document_module.Document.apply_json_patch)
    assert "Deserializer(list(self.models), setter=setter)" in apply
    from bokeh.protocol.messages.patch_doc import patch_doc

    create = inspect.getsource(patch_doc.create)
    assert "PatchJson(events=serializer.encode(events))" in create  # the events are encoded in their order
    assert "Serializer(references=doc.models.synced_references)" in create
    assert "flush_synced(lambda model: not serializer.has_ref(model))" in create
    manager = inspect.getsource(DocumentModelManager)
    assert "self._models = recomputed" in manager  # a recomputed set of models is a new dict
    assert "if model not in self._new_models" in manager
    fastsync.install()  # not left to whichever test ran before (the order is random)
    assert fastsync.references_cached()


def _patch_content(events) -> tuple[str, list[bytes]]:
    import re

    from bokeh.protocol import Protocol

    message = Protocol().create("PATCH-DOC", events)
    content = json.dumps(message.content, sort_keys=True, default=repr)
    # A buffer gets a new id per message; the models keep theirs.
    content = re.sub(r"Buffer\(id='p\d+', data=<memory at 0x[0-9a-f]+>\)", "Buffer", content)
    return content, [bytes(b.to_bytes()) for b in message.buffers]


def test_patch_messages_with_cached_references_are_stock_bokehs_messages(monkeypatch):
    """Each message is made twice from the same state, cache on and off: the same content, the same
    models left waiting to be synced; a model added later is sent whole once, then by reference."""
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure

    monkeypatch.setattr(fastsync, "INLINE_BUFFER_BYTES", -1)  # arrays as buffers, as stock sends them
    fastsync.cache_document_references(True)
    doc = Document()
    source = ColumnDataSource({"x": np.arange(4.0), "y": np.ones(4)}, name="s")
    plot = figure()
    plot.line("x", "y", source=source)
    layout = column(plot)
    doc.add_root(layout)
    doc.models.flush_synced()
    events: list = []
    doc.on_change(events.append)

    def both(change) -> tuple:
        events.clear()
        change()
        waiting = set(doc.models._new_models)
        cached = _patch_content(list(events)), set(doc.models._new_models)
        doc.models._new_models = set(waiting)
        fastsync.cache_document_references(False)
        try:
            stock = _patch_content(list(events)), set(doc.models._new_models)
        finally:
            fastsync.cache_document_references(True)
        assert cached == stock
        return cached[0][0]

    both(lambda: setattr(source, "data", {"x": np.arange(5.0), "y": np.zeros(5)}))
    assert getattr(doc.models, "_fastsync_refs", None) is not None  # the cache answered
    second = figure(name="second")
    whole = both(lambda: layout.children.append(second))
    assert '"name":"second"' in whole.replace(" ", "")
    again = both(lambda: setattr(second, "width", 333))
    assert '"name":"second"' not in again.replace(" ", "")  # known to the page now: a reference
    assert doc.models._fastsync_refs[0] is doc.models._models


def test_bokeh_reads_an_inline_array_as_base64_of_a_gzip_stream():
    """Guards the form ``inline_bytes`` writes: both of Bokeh's decoders gunzip a base64 string."""
    import bokeh
    from bokeh.core import serialization

    assert "gzip.decompress(base64.b64decode(data))" in inspect.getsource(serialization.Deserializer._decode_bytes)
    bokehjs = (Path(bokeh.__file__).parent / "server/static/js/bokeh.js").read_text()
    start = bokehjs.index("function base64_to_buffer(")
    assert "gunzipSync)(bytes)" in bokehjs[start:start + 200]
    assert "self._buffers.append(buffer)" in inspect.getsource(serialization.Serializer._encode_bytes)
    assert "_deferred" in inspect.getsource(serialization.Serializer.__init__)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=300))
def test_inline_bytes_are_the_arrays_bytes(values):
    import base64
    import gzip

    array = np.array(values, dtype=float)
    assert gzip.decompress(base64.b64decode(fastsync.inline_bytes(array.data))) == array.tobytes()


def test_small_arrays_travel_inside_the_message_and_large_ones_as_buffers():
    """A data change with a small and a large column: one buffer (the large one), and a second
    document that applies the message holds both columns exactly."""
    from bokeh.models import ColumnDataSource
    from bokeh.protocol import Protocol

    fastsync.cache_document_references(True)
    doc = Document()
    source = ColumnDataSource({"small": np.zeros(3), "large": np.zeros(3)}, name="s")
    doc.add_root(source)
    page = Document.from_json(doc.to_json(deferred=False))
    doc.models.flush_synced()
    events: list = []
    doc.on_change(events.append)
    large_rows = fastsync.INLINE_BUFFER_BYTES // 8 + 1  # float64: one row more than the limit
    # The same rows (a source's columns have one length), in float32: half the bytes, under the limit.
    small, large = np.linspace(-1.0, 1.0, large_rows, dtype=np.float32), np.sin(np.arange(large_rows) * 0.37)
    source.data = {"small": small, "large": large}
    message = Protocol().create("PATCH-DOC", list(events))
    assert [b.to_bytes() for b in message.buffers] == [large.tobytes()]
    assert small.tobytes() not in message.content_json.encode()  # not raw: base64 inside the JSON
    message.apply_to_document(page)
    got = page.get_model_by_id(source.id).data
    np.testing.assert_array_equal(got["small"], small)
    np.testing.assert_array_equal(got["large"], large)


def test_a_browser_patch_is_decoded_against_a_copy_of_the_documents_models():
    from bokeh.models import ColumnDataSource, Div
    from bokeh.protocol import Protocol

    page = Document()
    div = Div(text="a")
    page.add_root(div)
    page.add_root(ColumnDataSource({"x": [1]}))
    server = Document.from_json(page.to_json())
    page.models.flush_synced()
    events: list = []
    page.on_change(events.append)
    div.text = "b"
    added = Div(text="new")
    page.add_root(added)
    message = Protocol().create("PATCH-DOC", list(events))
    before = server.models._models
    fastsync.cache_document_references(True)
    message.apply_to_document(server)
    assert server.get_model_by_id(div.id).text == "b"
    assert server.get_model_by_id(added.id).text == "new"
    assert set(server.models._models) == set(page.models._models) and server.models._models is not before
    refs = list(server.models)
    assert fastsync._DocumentDeserializer(refs)._references == {m.id: m for m in refs}
    assert fastsync._DocumentDeserializer(refs)._references is not server.models._models
    one = [server.get_model_by_id(div.id)]
    assert fastsync._DocumentDeserializer(one)._references == {div.id: one[0]}


@pytest.mark.parametrize("names", [("start", "end"), ("value",), ("disabled",), ("name",), ("stylesheets",),
                                   ("start", "stylesheets")])
def test_a_change_without_stylesheets_skips_the_design_and_builds_the_same_properties(names):
    """``_FastSync._update_properties`` answers a change that carries no ``stylesheets`` without asking the
    widget's design for its theme (Panel's ``Reactive._update_properties`` uses the design's parameters
    only for ``stylesheets``); the properties it builds are the stock ones, with the design's or without."""
    source = inspect.getsource(pn.reactive.Reactive._update_properties)
    assert "'stylesheets' in changes and 'stylesheets' in params" in source
    assert source.count("params") == 4, "Panel's Reactive._update_properties uses the design's parameters anew"
    doc = Document()
    slider = widgets.FastIntSlider(start=0, end=10, value=4, label="k", stylesheets=[":host {color: red}"])
    with set_curdoc(doc):
        slider.get_root(doc)
    new = {"start": -3, "end": 12, "value": 5, "disabled": True, "name": "offset", "stylesheets": [":host {}"]}
    events = [param.parameterized.Event(what="value", name=name, obj=slider, cls=type(slider), old=None,
                                        new=new[name], type="changed") for name in names]
    asked = []
    real = type(slider._design).params

    def asking(design, viewable, doc=None):
        asked.append(viewable)
        return real(design, viewable, doc)

    with mock.patch.object(type(slider._design), "params", asking):
        ours = slider._update_properties(*events, doc=doc)
        stock = pn.widgets.IntSlider._update_properties(slider, *events, doc=doc)
    def plain(props):  # a stylesheet model is new on every build: compare its address
        return {key: [getattr(sheet, "url", sheet) for sheet in value] if key == "stylesheets" else value
                for key, value in props.items()}

    assert plain(ours) == plain(stock)
    assert set(ours) >= {e.name for e in events} - {"name"}
    assert len(asked) == (2 if "stylesheets" in names else 1)  # ours asks only for a stylesheets change
