"""The app's fast widgets: param-driven Panel widgets whose browser changes apply at once, as one message.

The one module the views use for their controls and live texts (``components.controls`` builds the sliders
from the state's parameters with these classes). What each class changes in Panel's stock behaviour, and
why, is in its docstring; the private Panel/Bokeh names it relies on are listed in docs/performance.md's
ledger. The server-wide patches (the websocket, the message writer) are ``app.fastsync``'s.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import ClassVar

import panel as pn
import param
from panel.reactive import Syncable

from components.internals import allowed
from components.plainjs import PlainJSComponent
from components.stylesheets import STYLESHEET

__all__ = [
    "DEBOUNCE_MS",
    "FastDiscreteSlider",
    "FastIntSlider",
    "FastPlayer",
    "LiveHTML",
    "OneMessageRadioButtonGroup",
    "OneMessageTextInput",
    "SliderTitle",
    "mark_connected",
    "one_message",
    "push_property",
]

#: Values the browser sent that no watcher may see (not numbers, not finite) are logged here, with the
#: websocket guard's refusals.
_log = logging.getLogger("app.guard")


def _describe(value: object) -> str:
    """A short, safe description of a refused value for a log line: its type, and a number's value."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return f"{float(value):.6g}"
    return f"a {type(value).__name__}"


#: Whether the fast paths below apply (``components.internals``): off with ``PE_STOCK=1`` or when a private
#: name they use has moved; the classes are then Panel's stock widgets with the app's names and fixes.
FAST = allowed(
    "fast widgets",
    (Syncable, "_debounce"), (Syncable, "_server_change"), (Syncable, "_process_events"),
    (Syncable, "_change_event"), (Syncable, "_update_properties"), (Syncable, "_busy__ignore"),
    (Syncable, "_process_property_change"), (pn.state, "_connected"), (pn.state, "_thread_pool"),
    (pn.widgets.DiscreteSlider, "_update_options"), (pn.widgets.DiscreteSlider, "_sync_value"),
    (importlib.import_module("panel.reactive"), "_syncing"),
)

#: The fast widgets' mechanisms, each a switch of its own under "fast widgets" (``PE_OFF`` names them; the
#: ablation in docs/performance.md measures each): a change applied on the next tick instead of 50 ms later; a
#: key's step applied inside Bokeh's handling of its message; a step without Panel's per-event bookkeeping;
#: a discrete slider titled by ``SliderTitle``; a text pushed straight to its browser model.
NO_DEBOUNCE = FAST and allowed("no debounce", (Syncable, "_debounce"), (Syncable, "_server_change"))
STEP_IN_HANDLER = FAST and allowed("step in handler", (Syncable, "_change_event"))
LEAN_STEP = FAST and allowed("lean step", (Syncable, "_update_properties"), (Syncable, "_process_property_change"),
                             (importlib.import_module("panel.reactive"), "_syncing"))
LIVE_TITLES = FAST and allowed("live titles", (pn.widgets.DiscreteSlider, "_update_options"))
DIRECT_PUSH = FAST and allowed("direct push", (Syncable, "_process_events"))

#: Milliseconds a browser change waits before it is applied (Panel's default is 50).
DEBOUNCE_MS = 0 if NO_DEBOUNCE else Syncable._debounce
#: During a drag (changes closer together than this), at most one change is applied per this many ms:
#: the page gets ~25 updates a second, each with the latest value, instead of a queue of every value
#: the pointer passed (measured in bench/drag.py; see docs/performance.md).
DRAG_INTERVAL_MS = 40
#: The properties a key press or a play step sends.
VALUE_PROPERTIES = ("value", "value_throttled")


def _is_panel_sync(callback: object) -> bool:
    """Whether a Bokeh ``on_change`` callback is Panel's browser-to-Python sync (``_server_change``)."""
    return isinstance(callback, partial) and getattr(callback.func, "__name__", "") == "_server_change"


@contextmanager
def one_message() -> Iterator[None]:
    """``pn.io.hold()``: every Bokeh event of the body leaves as one PATCH-DOC message.

    Bokeh defers a changed model's Python ``on_change`` callbacks to the end of
    a hold. For properties that Panel itself set from Python, the only such
    callback is Panel's own ``_server_change``, which Panel means to skip (it
    lists the attribute in ``_changing`` while it sets it); after the hold it
    would run as if the browser had sent the value, rescheduling a stale copy
    of it. Panel's websocket path drops those callbacks already; this drops
    them on every path (no session, or a socket busy writing) and leaves any
    other ``on_change`` callback alone.
    """
    if not FAST:
        with pn.io.hold():
            yield
        return
    doc = pn.state.curdoc
    with pn.io.hold():
        try:
            yield
        finally:
            _drop_panel_echoes(doc.callbacks._held_events if doc is not None else [])


def _drop_panel_echoes(events: Iterable[object]) -> None:
    """Take Panel's ``_server_change`` off these held events (where it is their only callback)."""
    for event in events:
        model, attr = getattr(event, "model", None), getattr(event, "attr", None)
        callbacks = getattr(model, "_callbacks", {}).get(attr, []) if attr else []
        if event.callback_invoker is not None and callbacks and all(map(_is_panel_sync, callbacks)):
            event.callback_invoker = None


def mark_connected() -> None:
    """Tell Panel that the current session's browser holds the document (a change came from it).

    Panel counts a session as connected only from the browser's
    ``document_ready`` (``state._on_load``), sent once every figure has drawn;
    until then it drops, instead of sending, every change made inside
    ``pn.io.hold()``, because a document not yet pulled is serialized whole
    later. But a slider that the browser moved was drawn from a document the
    browser already has: a key pressed while the page is still drawing would
    update the server's views and never the page's. Called for each change from
    the browser; a no-op once Panel has marked the session.
    """
    if not FAST:
        return
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None and not pn.state._connected.get(doc):
        pn.state._connected[doc] = True


class _OneMessage:
    """Panel's own handling of a browser change, inside ``one_message()``.

    For the app's other controls (option buttons, the sentence's text field): every model change
    a choice causes leaves as one PATCH-DOC, as a slider step's do, instead of one message per
    changed model sent as each view updates. (The "_pending_writes should be non-None" failure seen
    once in CI on ``/mistakes`` is fixed where it arose, in ``_locked_server_event``; this class
    only saves messages.) ``_FastSync`` builds on it.
    """

    def _process_events(self, events: dict) -> None:
        mark_connected()
        with one_message():
            self._apply_events(events)

    def _apply_events(self, events: dict) -> None:
        """What happens inside the one message: Panel's own processing."""
        super()._process_events(events)


class _FastSync(_OneMessage):
    """Mixin for a Panel widget: no debounce, no busy bookkeeping, one websocket message per change.

    ``_process_events`` is where a browser change becomes a parameter change
    and so runs every watcher (the state, then every view). Inside
    ``one_message()`` the Bokeh events those watchers cause are sent as one
    ``PATCH-DOC`` message instead of one message (and three or more websocket
    frames) per changed model: about 150 bytes and a few syscalls less per
    model, which for a key press on ``k`` is a third of the bytes.

    ``_busy__ignore``: Panel counts every processed change as "busy" (two
    parameter updates of ``pn.state`` with their watchers, ~1-2 ms here) to
    drive loading indicators; the explorable shows none for a slider step.
    """

    _debounce: ClassVar[int] = DEBOUNCE_MS
    _busy__ignore: ClassVar[list[str]] = list(VALUE_PROPERTIES)
    #: When the last browser change was applied (``time.monotonic()``); see ``_server_change``.
    _applied_at: ClassVar[float] = -math.inf

    def _server_change(self, doc, ref, subpath, attr, old, new) -> None:
        # A drag: a change that comes within DRAG_INTERVAL_MS of the start of the last application waits
        # out the rest of that interval, and every change arriving meanwhile is merged into it (Panel
        # merges while one waits), so the page gets at most one update per interval, always the latest
        # value, and the last one DRAG_INTERVAL_MS after the hand stops at most. A single key press (nothing applied
        # in the last interval) still goes at once (``_debounce`` 0).
        if not NO_DEBOUNCE:
            super()._server_change(doc, ref, subpath, attr, old, new)
            return
        since = (time.monotonic() - self._applied_at) * 1000
        if since >= DRAG_INTERVAL_MS and self._applies_now(doc, ref, subpath, attr):
            self._events = {attr: new}
            try:
                self._change_event(doc)
            except Exception as error:  # as Panel's _change_coroutine: reported, the session goes on
                pn.state._handle_exception(error)
            return
        self._debounce = max(0, round(DRAG_INTERVAL_MS - since)) if since < DRAG_INTERVAL_MS else DEBOUNCE_MS
        super()._server_change(doc, ref, subpath, attr, old, new)

    def _applies_now(self, doc, ref, subpath, attr) -> bool:
        """Whether this browser change can be applied right here, inside Bokeh's handling of its message.

        Bokeh applies a browser's ``PATCH-DOC`` holding the document lock
        (``ServerSession._handle_patch``, which marks ``_current_patch_connection``)
        and answers with an ``OK`` only afterwards. Panel would schedule the
        change for a later turn of the event loop, where it runs while that
        ``OK`` is being written; applied here, the step's message is written
        before the ``OK``, as a plain Bokeh server app's ``on_change`` is
        (measured on ``/explore``: the step's data reaches the browser ~5 ms sooner, p50).
        Only for a key press or a drag's first step on a served session, with
        nothing of this widget waiting and no thread pool.
        """
        if not STEP_IN_HANDLER:
            return False
        context = getattr(doc, "session_context", None)
        session = getattr(context, "session", None)
        return (session is not None and getattr(session, "_current_patch_connection", None) is not None
                and getattr(session, "_pending_writes", None) is not None
                and attr in VALUE_PROPERTIES and not subpath and not self._events
                and attr not in self._changing.get(ref, []) and not pn.state._thread_pool)

    def _process_events(self, events: dict) -> None:
        # The interval runs from the start of one application to the start of the next, so a drag gets
        # one update per DRAG_INTERVAL_MS however long each takes to compute.
        self._applied_at = time.monotonic()
        super()._process_events(events)

    def _apply_events(self, events: dict) -> None:
        if LEAN_STEP and events.keys() <= set(VALUE_PROPERTIES):
            self._process_step(events)
        else:
            super()._apply_events(events)

    def _process_step(self, events: dict) -> None:
        """Panel's ``Syncable._process_events`` for a slider step (``value``, ``value_throttled``).

        The same steps without two costs a step does not need: ``edit_readonly``
        (which flips ``constant`` and ``readonly`` on each of the widget's ~60
        parameters and back, ~0.5 ms; ``value_throttled`` is declared
        non-constant on these classes instead) and ``param.update``'s snapshot
        of every parameter value. ``_in_process__events`` marks the values as
        the browser's own, so Panel does not send them back.
        """
        if pn.config.throttled:  # as Panel's sliders do
            events.pop("value", None)
        doc = pn.state.curdoc
        params = self._in_bounds(self._process_property_change(dict(events)))
        if doc is not None:
            self._in_process__events[doc] = events
        try:
            with importlib.import_module("panel.reactive")._syncing(self, list(params)):
                for name in VALUE_PROPERTIES:  # value first: it is what the views follow
                    if name in params:
                        setattr(self, name, params[name])
        finally:
            if doc is not None:
                self._in_process__events.pop(doc, None)

    def _in_bounds(self, params: dict) -> dict:
        """The values as integers within ``start`` .. ``end``; anything else dropped, with a warning.

        The websocket handler has already refused or clamped what a client sent
        (``app.guard``); this holds for any other way a value arrives (a test, a
        bounds change racing the message), so that no watcher sees a value the
        state would reject with an exception.
        """
        clean = {}
        for name, value in params.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                _log.warning("ignored %s.%s = %s", type(self).__name__, name, _describe(value))
                continue
            clean[name] = max(self.start, min(round(value), self.end))
        return clean

    def _update_properties(self, *events, doc) -> dict:
        # The browser's own value coming back from the parameter: Panel would build
        # every property of the model (theme stylesheets included, ~0.3 ms) only for
        # _update_model to drop it as an echo. A value the state changed (clamped) differs.
        if not LEAN_STEP:
            return super()._update_properties(*events, doc=doc)
        pending = self._in_process__events.get(doc, {})
        if pending and all(e.name in pending and e.new == pending[e.name] for e in events):
            return {}
        if not any(e.name == "stylesheets" for e in events):
            # Panel's Reactive._update_properties asks the design for every parameter of the widget's
            # theme (Design.params: its modifiers, the document's stylesheet cache) only to put the
            # theme's stylesheets before a change of ``stylesheets``. A size step moves the bounds of
            # half a dozen sliders per awake section, each paying that walk for nothing.
            return self._process_param_change({e.name: e.new for e in events})
        return super()._update_properties(*events, doc=doc)


#: The mixins the widgets below take: none in stock mode (``FAST`` false).
_ONE_MESSAGE: tuple[type, ...] = (_OneMessage,) if FAST else ()
_FAST_SYNC: tuple[type, ...] = (_FastSync,) if FAST else ()


class OneMessageRadioButtonGroup(*_ONE_MESSAGE, pn.widgets.RadioButtonGroup):
    """``pn.widgets.RadioButtonGroup`` whose change leaves as one message (``_OneMessage``)."""


class OneMessageTextInput(*_ONE_MESSAGE, pn.widgets.TextInput):
    """``pn.widgets.TextInput`` whose change leaves as one message (``_OneMessage``)."""


class FastIntSlider(*_FAST_SYNC, pn.widgets.IntSlider):
    """An ``IntSlider`` whose moves reach the server on the next tick, not 50 ms later.

    A range of one value (``pos`` when T = 1) is drawn as a disabled slider over
    start .. start + 1: Bokeh refuses a slider whose start equals its end (its
    validation logs error E-1021 and BokehJS cannot draw it).
    """

    value_throttled = param.Integer(default=None, constant=False, doc="""
        The value when the mouse was released (set by the browser; see _process_step).""")

    def _process_param_change(self, params: dict) -> dict:
        props = super()._process_param_change(params)
        if "start" in props or "end" in props or "disabled" in props:
            single = self.start == self.end
            props.update(start=self.start, end=self.end + single, disabled=single or self.disabled)
        return props


class FastPlayer(*_FAST_SYNC, pn.widgets.Player):
    """A ``Player`` whose steps (play, next, keyboard) skip the 50 ms debounce."""

    value_throttled = param.Integer(default=None, constant=False, doc="""
        The value when a step ended (set by the browser; see _process_step).""")


class FastDiscreteSlider(pn.widgets.DiscreteSlider):
    """A ``DiscreteSlider`` (a composite) whose inner ``IntSlider`` is a ``FastIntSlider``, titled by ``LiveHTML``.

    Panel rebuilds the inner slider in ``_update_options`` whenever the options
    change, so the switch (of the instance's class) is made there, every time. ``_sync_value`` is the
    inner slider's watcher that moves this widget's value (and so the views);
    it runs inside ``pn.io.hold()`` for one message per change, as above.

    Panel's title (``_text``) is a ``StaticText``, a Bokeh ``Div``: when its
    text changes, BokehJS re-renders it and lays the whole page out again. The
    browser's link (``_text_link``) changes it in the key's own handler, and the
    server's echo again in the reply; on ``/`` with every section built the key
    handler took ~40 ms. The title here is a ``components.widgets.SliderTitle``,
    whose change only sets an element's ``innerHTML``; the link sets its data
    model's ``text``, and ``_update_value`` sets its ``value`` as before.
    """

    #: The title's markup around Panel's label (``{}``); ``components.widgets.SliderTitle`` shows it.
    TITLE_WRAP = '<span class="pe-slider-title">{}</span>'
    # Panel fills in {labels} with str.format (the link has no braces of its own).
    # Set in the page only (``sync: false``): the server sets the same text in its reply to the step, so the
    # browser's copy sent back was a third message per key that Panel processed after its debounce, for nothing.
    # After a key, with the slider's own redraw (static/slider-keys.js: the answer first, then one frame); at once
    # while the handle is dragged.
    _text_link = ("\n    var labels = {labels}\n    var set = function () {{ target.data.setv({{text: "
                  + json.dumps(TITLE_WRAP.split("{}")[0]) + " + labels[source.value] + "
                  + json.dumps(TITLE_WRAP.split("{}")[1]) + "}}, {{sync: false}}) }}\n"
                  "    if (window.peAfterKeyAnswer) window.peAfterKeyAnswer(set); else set()\n")
    if not LIVE_TITLES:  # the stock title is a Div (``target.text``), not a SliderTitle
        _text_link = pn.widgets.DiscreteSlider._text_link

    def __init__(self, title_name: str = "discrete_slider_title", **params) -> None:
        """``title_name``: the name of the title's data model (unique on its page)."""
        self._title_name = title_name  # read by the first _update_options, inside Panel's __init__
        super().__init__(**params)

    def _update_options(self, *events) -> None:
        if not FAST:  # Panel's StaticText title and stock inner slider
            super()._update_options(*events)
            return
        if LIVE_TITLES and not isinstance(self._text, SliderTitle):  # Panel's StaticText, made just before
            self._text = SliderTitle(self._text.value, name=self._title_name)
            self._composite[0] = self._text
        super()._update_options(*events)
        # Panel builds a stock IntSlider (the module's own name); made a FastIntSlider in place, its step runs
        # inside Bokeh's handling of the key's message, as every other slider's: before, its data left after
        # the OK, a turn of the event loop later (base p50 ~4 ms above d_model's at the same section).
        self._slider.__class__ = FastIntSlider

    def _sync_value(self, event) -> None:
        # The inner slider's value is an index into the options; one outside them (from a client the
        # guard let through, or a stale one) would raise, or wrap around from the end if negative.
        if isinstance(event.new, int) and not 0 <= event.new < len(self.values):
            self._slider.value = max(0, min(event.new, len(self.values) - 1))
            return
        with one_message():
            super()._sync_value(event)


def push_property(component: pn.custom.JSComponent, name: str, value: object) -> None:
    """Set parameter ``name`` of ``component`` and its browser models' property, without Panel's machinery.

    Panel turns a parameter change into a model change through its watchers
    (``_param_change``, property processing, ``freeze_doc``; ~0.5 ms, part of
    it an AttributeError whose message Bokeh builds with difflib). A
    ``JSComponent``'s parameters live on its Bokeh model's ``data`` model, so
    the value is set there directly, and on the parameter with its events
    discarded, so that a model built later (or re-rendered) gets it too. Call
    it where Panel would apply the change: under the document lock.

    While it sets the property, the attribute is listed in the component's
    ``_changing`` for that root, as Panel's own ``_update_model`` does: Panel's
    ``on_change`` callback (``_server_change``) then knows the change as its
    own. Otherwise it takes it for the browser's and processes it after its
    debounce: ``_process_events`` sets the parameter back to the same value
    under ``edit_readonly``, which touches every parameter of the component.
    A slider's step, inside ``one_message()``, never paid this; a preset button
    or a room's teacher did, once per text. Under a hold (a section's updates
    are held so that they leave together) the callbacks run when the hold ends,
    so there the held event is told to skip Panel's callback instead.
    """
    if not DIRECT_PUSH:  # Panel's own path: the parameter's watchers update the models
        setattr(component, name, value)
        return
    with param.parameterized.discard_events(component):
        setattr(component, name, value)
    for ref, (model, _parent) in list(component._models.items()):
        doc = model.document
        if doc is not None and doc.callbacks.hold_value is not None:
            # Held (``pn.io.hold()``): the callbacks run at the end of the hold, when a listing made
            # here would be gone; the held event itself is told to skip Panel's.
            setattr(model.data, name, value)
            _drop_panel_echoes(event for event in doc.callbacks._held_events
                               if getattr(event, "model", None) is model.data and getattr(event, "attr", None) == name)
            continue
        changing = component._changing.setdefault(ref, [])
        changing.append(name)
        try:
            setattr(model.data, name, value)
        finally:
            if name in changing:  # not removed by Panel when the value was already there (no change)
                changing.remove(name)
            if not changing:
                del component._changing[ref]


class LiveHTML(PlainJSComponent):
    """Markup that changes on a slider move: the text of one element, replaced in the browser.

    For text on the hot path (a key press on k, pos or pair). A Panel HTML
    pane costs ~1.4 ms of server time per change and sends its markup
    HTML-escaped, a third longer; a Bokeh ``Div`` is cheap to send but
    re-renders itself and relays the page out in the browser, 10-25 ms per
    change. Here a change is one property of the component's data model, set
    directly (``components.widgets.push_property``), and the browser only assigns
    the element's ``innerHTML``. Markup equal to what the page shows is not
    sent again.

    The markup must already be safe: build it with ``readout`` or
    ``html.escape``. ``css`` is added to the app's stylesheet inside the
    component's shadow root. ``object`` reads and sets the markup. In the
    page, the model named after the component is its data model, whose
    ``text`` is the markup.
    """

    text = param.String(default="", doc="The markup shown (trusted: escaped by whoever built it).")

    _esm = """
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-live";
      box.innerHTML = model.text;
      model.on("text", () => { box.innerHTML = model.text; });
      return box;
    }
    """

    def __init__(self, markup: str = "", *, name: str, css: str = "", **layout: object):
        layout.setdefault("margin", (5, 10))  # Panel's default for panes, so the texts line up
        super().__init__(text=markup, name=name, stylesheets=[STYLESHEET + css], **layout)

    @property
    def object(self) -> str:
        """The markup on the page."""
        return self.text

    @object.setter
    def object(self, markup: str) -> None:
        if markup != self.text:
            push_property(self, "text", markup)


class SliderTitle(LiveHTML):
    """The title a discrete slider shows above its handle ("base: <b>10000</b>"), as ``LiveHTML``.

    ``components.widgets.FastDiscreteSlider`` puts it where Panel's ``DiscreteSlider``
    has a ``StaticText``: a Bokeh ``Div``, which re-renders and lays the whole
    page out again each time its text changes (twice per step: the browser's
    own link, then the server's echo). ``value`` is the title's markup, as on
    a ``StaticText``; the page shows it inside ``WRAP`` (its class tells
    ``components.a11y`` to name the slider after it), set by the browser's
    link as by the server.
    """

    #: The element around the title's markup (``{}``), in Python and in the browser's link.
    WRAP = FastDiscreteSlider.TITLE_WRAP

    def __init__(self, markup: str = "", *, name: str, **layout: object):
        # No margin or stylesheet of its own: Panel's ``DiscreteSlider._update_style`` gives the title the
        # slider's (its rules are in static/widgets.css, ``.pe-slider-title``).
        super().__init__(self.WRAP.format(markup), name=name, **layout)

    @property
    def value(self) -> str:
        """The title's markup (the name ``DiscreteSlider`` uses), without ``WRAP``."""
        head, tail = self.WRAP.split("{}")
        return self.text.removeprefix(head).removesuffix(tail)

    @value.setter
    def value(self, markup: str) -> None:
        self.object = self.WRAP.format(markup)
