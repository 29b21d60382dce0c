"""The one place where the explorable reaches into Panel and Bokeh internals, for latency.

A teacher presses a key on a slider and the room watches the picture move; four
things in stock Panel 1.9 / Bokeh 3.9 put ~60-100 ms between the key and the
new data, none of it computing:

1. **Panel's debounce.** Every browser-to-server property change goes through
   ``Syncable._server_change`` (panel/reactive.py), which parks it for
   ``Reactive._debounce = 50`` ms with ``doc.add_timeout_callback``.
   ``value_throttled`` and ``pn.config.throttled`` do not help: a key press
   sends ``value`` and ``value_throttled`` together. The widget classes below
   set ``_debounce = 0``: the change still goes through Bokeh's session
   callback, so it runs holding the document lock (our views assign
   ``source.data`` directly, which needs the lock) and its writes are
   flushed when it returns, but on the next turn of the event loop instead
   of 50 ms later. (``_priority_changes``, Panel's other way around the
   debounce, runs the change as a bare asyncio task without the lock; a
   watcher that touches a Bokeh model then raises "_pending_writes should be
   non-None", so it is not used.) Changes that arrive while one is waiting
   are still merged into one (``_server_change`` returns early while
   ``_events`` is non-empty), so a fast drag does not queue one update per
   mouse event.

2. **Nagle's algorithm.** Neither Bokeh nor Panel sets ``TCP_NODELAY`` on the
   websocket, and a Bokeh protocol message is written as several small
   frames (header, metadata, content, buffers). With Nagle on, the second
   small write waits for the browser's delayed ACK (~40 ms on Linux).
   ``install()`` swaps Panel's websocket handler for a subclass whose
   ``open`` calls tornado's ``set_nodelay(True)``.

3. **One message per change, no bookkeeping.** Bokeh sends one ``PATCH-DOC``
   message per changed model; a key press on ``k`` changes a dozen. The
   widgets apply a change inside Panel's public ``pn.io.hold()``, which sends
   them as one (``one_message``), and skip Panel's "busy" counting, its
   ``edit_readonly`` and the rebuilding of the browser's own value (``_process_step``).

4. **Panel's 10 ms retry.** The step runs while Bokeh is still writing its
   ``OK`` to the key's message (each frame's write yields to the event loop),
   so the socket's write lock is taken when the step's message is ready, and
   Panel retries such a message only after ``asyncio.sleep(0.01)``. A key
   press's step runs inside Bokeh's handling of its message, so that its data
   leaves before the ``OK`` (``_FastSync._applies_now``), as a plain Bokeh
   app's does, and the retry is not met. (A writer that took the lock itself,
   ``_schedule_write_events_sent_when_free``, was removed in issue #43: with
   ``_applies_now`` it no longer changed a step's latency, docs/performance.md's
   ablation.)

Also: ``push_property`` sets a text without Panel taking it for the browser's
change (outside a slider's step, a preset or a room's teacher, Panel processed
every pushed text again after its debounce), and ``FastDiscreteSlider``'s title
is ``LiveHTML`` instead of a Bokeh ``Div`` that lays the page out again when its
text changes.

And a message's small arrays travel inside its JSON instead of as websocket
frames of their own (``_InlineSmallBuffers``): a size step on ``/`` was ~100
frames, which the page received one task at a time before it could apply any.

Widgets stay param-driven: the classes are ordinary Panel widgets built from the
state's parameters (``from_param``, or ``components.controls.linked_slider``'s two
public watchers); only a class attribute and one wrapped method differ.
Everything here relies on names that are private in Panel and Bokeh:
``Syncable._debounce`` (read by ``Syncable._server_change``),
``Syncable._process_events`` and ``Syncable._busy__ignore``, the
``_in_process__events`` marks, ``Syncable._update_properties`` and
``panel.reactive._syncing`` (in ``_FastSync._process_step``), ``state._connected``
(``mark_connected``), ``JSComponent._models``, its model's ``data`` and ``Syncable._changing``
(``push_property``), Bokeh's
``Document.callbacks._held_events`` and ``Model._callbacks`` (in
``one_message``), ``DiscreteSlider._slider`` (built in
``DiscreteSlider._update_options`` as a stock ``IntSlider``, whose class is then
swapped for ``FastIntSlider``), ``DiscreteSlider._sync_value``, and its title
``DiscreteSlider._text`` (``_composite[0]``) with the browser's link ``_text_link``,
``bokeh.server.urls.per_app_patterns``
and ``panel.io.server.WSHandler``, ``bokeh.io.doc.patch_curdoc`` with its list
``_PATCHED_CURDOCS`` (``safe_patch_curdoc``), and ``Property.themed_default``,
``Property._may_have_unstable_default``, ``HasProps._overridden_defaults`` and
``PropertyDescriptor.has_unstable_default`` (``cache_bokeh_defaults``), and
``Serializer._encode_bytes`` and ``Serializer._deferred`` with the inline form
both of Bokeh's decoders read (``_InlineSmallBuffers``), and
``Syncable._server_event`` with ``state._unblocked``, ``state._change_callbacks`` and
``Syncable._event_coroutine`` (``_locked_server_event``), Bokeh's
``ServerSession._current_patch_connection`` and ``_pending_writes`` with Panel's
``Syncable._change_event`` (``_FastSync._applies_now``). tests/unit/test_fastsync.py asserts each of them
exists and still has the effect relied on, so an upgrade that moves one fails
the tests instead of silently bringing the latency back; in a deployment the
same move turns the patch off (``components.internals.allowed``: one log line,
stock behaviour), so the app stays correct on ``panel<1.11``, only slower.
"""

from __future__ import annotations

import base64
import gzip
import importlib
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from types import MappingProxyType

import panel as pn
from bokeh.core import has_props as bokeh_has_props
from bokeh.core import serialization as bokeh_serialization
from bokeh.core.property import bases as bokeh_property_bases
from bokeh.core.property import descriptors as bokeh_descriptors
from bokeh.document import document as bokeh_document_module
from bokeh.document.events import (
    ModelChangedEvent,
)
from bokeh.io import doc as bokeh_doc
from bokeh.server import urls as bokeh_urls
from panel.io import server as panel_server
from panel.reactive import Syncable as _Syncable

from app import collector, guard
from components.internals import allowed, missing, off

#: The module (``bokeh.protocol.messages`` exports the class under the same name).
bokeh_patch_doc = importlib.import_module("bokeh.protocol.messages.patch_doc")

__all__ = [
    "NoDelayWSHandler",
    "install",
    "installed",
]

#: Refusals logged per websocket connection before only one in ``WARN_EVERY`` is.
WARN_LIMIT = 20
WARN_EVERY = 1_000

def _session_label(handler: panel_server.WSHandler) -> str:
    session = getattr(getattr(handler, "connection", None), "session", None)
    return f"session {str(getattr(session, 'id', '?'))[:8]}"


class NoDelayWSHandler(panel_server.WSHandler):
    """Panel's websocket handler with ``TCP_NODELAY`` on, and a guard against hostile messages.

    Nagle: no delayed-ACK stall per message. The guard (``app.guard``): every
    ``PATCH-DOC`` is checked against the session's document before Bokeh
    applies it; a refused message changes nothing, is logged as ONE warning
    line and answered with an ERROR whose text is a short reason. Bokeh's own
    ``ProtocolHandler.handle`` would log the whole message with a traceback
    (megabytes for a long list) and send that traceback, file paths included,
    to the client: ``ERROR``'s ``create`` copies ``sys.exc_info()``, so the
    reply here is built outside the ``except`` block. A value clamped into
    range is applied, and the sender is told the value used (Bokeh never
    echoes a change to the connection it came from).
    """

    async def prepare(self):
        # Tornado (6.6) skips check_origin when Origin names the same host as the Host header, so a
        # page reached through another name (DNS rebinding: evil.example resolving to this server)
        # would pass; every Origin is held against the allowed list instead.
        await super().prepare()
        origin = self.request.headers.get("Origin")
        if not self._finished and origin is not None and not self.check_origin(origin):
            self.set_status(403)
            self.finish("Cross origin websockets not allowed")

    def open(self, *args, **kwargs):
        # Before the first write (the ACK of the handshake); the stream exists by now. Tornado's public switch.
        if allowed("no delay"):
            self.set_nodelay(True)
        collector.ensure_checking()
        return super().open(*args, **kwargs)

    async def _async_open(self, token):
        # A client that closes its websocket while the session is still being built (Bokeh's on_close
        # runs before the connection exists and so does nothing) would leave the session counting one
        # connection for ever: never reaped, a whole document held per such client. Let it go here.
        try:
            return await super()._async_open(token)
        finally:
            if getattr(self, "_closed_early", False) and self.connection is not None:
                self.connection.session.notify_connection_lost()
                self.application.client_lost(self.connection)

    def on_close(self) -> None:
        self._closed_early = self.connection is None
        super().on_close()

    async def _receive(self, fragment):
        # Bokeh logs an unparsable fragment in full, with a traceback; one line, and the connection closes.
        try:
            return await self.receiver.consume(fragment)
        except Exception as error:
            guard.log.warning("closed the websocket of %s: unreadable message (%s, %d bytes)",
                              _session_label(self), type(error).__name__, len(fragment))
            self.close(10001, "unreadable message")
            return None

    async def _handle(self, message):
        # Bokeh's ProtocolHandler.handle, with the guard first and a short reason instead of a traceback.
        collector.note_activity()  # no full pass of the cycle collector for a moment (app/collector.py)
        reason = detail = None
        try:
            handler = self.handler._handlers.get(message.msgtype)
            if handler is None:
                raise guard.Refused(f"a client does not send {str(message.msgtype)[:20]!r} messages")
            clamped = []
            if message.msgtype == "PATCH-DOC":
                clamped = guard.check_patch(self.connection.session.document, message.content)
            work = await handler(message, self.connection)
        except Exception as error:
            # The guard's reasons are short and never repeat a value; Bokeh's own may, so only their start is logged.
            reason = str(error) if isinstance(error, guard.Refused) else f"{type(error).__name__}: refused"
            detail = reason if isinstance(error, guard.Refused) else f"{type(error).__name__}: {str(error)[:120]}"
        if reason is not None:
            self._warn("refused a %s message from %s: %s", str(message.msgtype)[:20], _session_label(self), detail)
            return self.connection.error(message, reason)
        if clamped:
            self._warn("clamped %s for %s", "; ".join(
                f"{type(c.model).__name__}.{c.attr} from {c.given} to {c.used}" for c in clamped), _session_label(self))
        for change in clamped:
            event = ModelChangedEvent(self.connection.session.document, change.model, change.attr, change.used)
            await self.connection.send_patch_document(event)
        return work

    def _warn(self, text: str, *args: object) -> None:
        # One line per refused or clamped message, the first WARN_LIMIT of a connection; then one in
        # WARN_EVERY, so that a client flooding refusals cannot flood the log.
        self._warnings = getattr(self, "_warnings", 0) + 1
        if self._warnings <= WARN_LIMIT or self._warnings % WARN_EVERY == 0:
            more = f" ({self._warnings} so far)" if self._warnings > WARN_LIMIT else ""
            guard.log.warning(text + more, *args)


@contextmanager
def safe_patch_curdoc(doc) -> Iterator[None]:
    """Bokeh's ``patch_curdoc`` with its entry removed in a ``finally``.

    Bokeh's own pops ``_PATCHED_CURDOCS`` only when the body returns: after any
    exception in a session callback (a watcher that fails, a refused message) the
    session's document stays in that process-wide list for good, and ``curdoc()``
    (Panel's fallback for ``pn.state.curdoc``) returns it wherever nothing else is
    patched: a later session could then be handed another session's document.
    The entry removed is this call's own (the last one for this document), so an
    entry some other code left behind is not popped in its place.
    """
    stack = bokeh_doc._PATCHED_CURDOCS
    ref = weakref.ref(doc)
    stack.append(ref)
    try:
        yield
    finally:
        for index in range(len(stack) - 1, -1, -1):
            if stack[index] is ref:
                del stack[index]
                break


#: Values a cached default may be: nothing that a caller could change in place.
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))
#: (id of the property, model class, property name) -> (the property, its default for that class).
_DEFAULTS: dict[tuple[int, type, str], tuple[object, object]] = {}
#: Model class -> its overridden defaults (read-only).
_OVERRIDDEN: dict[type, object] = {}
_STOCK_THEMED_DEFAULT = bokeh_property_bases.Property.themed_default
_STOCK_OVERRIDDEN = bokeh_has_props.HasProps.__dict__["_overridden_defaults"].__func__
_STOCK_HAS_UNSTABLE = bokeh_descriptors.PropertyDescriptor.has_unstable_default
#: (id of the descriptor, model class) -> (the descriptor, whether its default is copied per instance).
_UNSTABLE: dict[tuple[int, type], tuple[object, bool]] = {}


def _immutable(value: object) -> bool:
    return isinstance(value, _IMMUTABLE) or (isinstance(value, tuple) and all(map(_immutable, value)))


def _cached_overridden_defaults(cls) -> object:
    """``HasProps._overridden_defaults`` (the class's MRO merged), once per class, read-only."""
    found = _OVERRIDDEN.get(cls)
    if found is None:
        found = _OVERRIDDEN[cls] = MappingProxyType(_STOCK_OVERRIDDEN(cls))
    return found


def _cached_has_unstable_default(self, obj) -> bool:
    """``PropertyDescriptor.has_unstable_default``, once per (descriptor, class): it walks the property's
    type parameters recursively at every read of an unset property, and depends only on the two."""
    key = (id(self), type(obj))
    found = _UNSTABLE.get(key)
    if found is None:
        found = _UNSTABLE[key] = (self, _STOCK_HAS_UNSTABLE(self, obj))
    return found[1]


def _cached_themed_default(self, cls, name, theme_overrides, *, no_eval=False):
    """``Property.themed_default``, remembered per (property, class) when no theme overrides it.

    Bokeh computes a default afresh at every read of a property that was never
    set: it merges the class's MRO, copies the raw default and validates it
    (``prepare_value``). A session's first document reads every default of its
    ~200 models at least three times (Panel's and Bokeh's walks over references,
    then the serialization): with ``_cached_has_unstable_default`` the caches take
    about a quarter off the time to build and serialize the lesson's first
    response (0.55 -> 0.40 s in process). Only
    immutable values are kept (a list or a dict default is Bokeh's "unstable"
    kind, which it copies per instance anyway),
    and a theme that overrides the property is never answered from the cache.
    """
    if no_eval or (theme_overrides is not None and name in theme_overrides):
        return _STOCK_THEMED_DEFAULT(self, cls, name, theme_overrides, no_eval=no_eval)
    key = (id(self), cls, name)
    found = _DEFAULTS.get(key)
    if found is not None:
        return found[1]
    value = _STOCK_THEMED_DEFAULT(self, cls, name, theme_overrides)
    if not self._may_have_unstable_default() and _immutable(value):
        _DEFAULTS[key] = (self, value)  # the property kept alive with it: its id is not reused
    return value


def cache_bokeh_defaults(enabled: bool = True) -> None:
    """Answer Bokeh's default property values from ``_cached_themed_default`` and
    ``_cached_has_unstable_default`` (or, disabled, as stock)."""
    has_props, prop = bokeh_has_props.HasProps, bokeh_property_bases.Property
    descriptor = bokeh_descriptors.PropertyDescriptor
    if enabled:
        prop.themed_default = _cached_themed_default
        has_props._overridden_defaults = classmethod(_cached_overridden_defaults)
        descriptor.has_unstable_default = _cached_has_unstable_default
    else:
        prop.themed_default = _STOCK_THEMED_DEFAULT
        has_props._overridden_defaults = classmethod(_STOCK_OVERRIDDEN)
        descriptor.has_unstable_default = _STOCK_HAS_UNSTABLE
        _DEFAULTS.clear()
        _OVERRIDDEN.clear()
        _UNSTABLE.clear()


def defaults_cached() -> bool:
    """Whether ``cache_bokeh_defaults`` is in effect."""
    return bokeh_property_bases.Property.themed_default is _cached_themed_default


_STOCK_SERVER_EVENT = _Syncable._server_event


def _locked_server_event(self, doc, event) -> None:
    """``Syncable._server_event`` with the deferred case scheduled under the document lock.

    Panel defers a browser event (a button's click, a component's message) when a
    property change of the session is still waiting (``state._change_callbacks``)
    or the session is not "unblocked"; it then runs ``_event_coroutine``, which
    first applies the waiting changes, through ``state.execute(schedule=True)``.
    For a coroutine that is a bare asyncio task, without Bokeh's document lock:
    every view that then assigns ``source.data`` outside a hold fails with
    "_pending_writes should be non-None" (seen in CI: a choice of mistake on
    ``/mistakes`` whose 50 ms wait was cut short by another component's message).
    ``doc.add_next_tick_callback`` runs the same coroutine holding the lock.
    """
    if doc.session_context and (not pn.state._unblocked(doc) or doc in pn.state._change_callbacks):
        doc.add_next_tick_callback(partial(self._event_coroutine, doc, event))
    else:
        _STOCK_SERVER_EVENT(self, doc, event)


class _DocumentDeserializer(bokeh_serialization.Deserializer):
    """Bokeh's ``Deserializer`` for ``Document.apply_json_patch``, its id -> model map copied, not rebuilt.

    ``apply_json_patch`` passes ``list(self.models)``, and Bokeh builds
    ``{model.id: model}`` from it in Python: for every message from the browser,
    a loop over every model of the page (~1.3 ms per key press on ``/`` in the
    served process, 10% of the server's share). The document already holds that
    map (``DocumentModelManager._models``); a C-level copy of it is ~30x
    cheaper. Copied, because decoding adds the models a message brings. Any
    other list of references is mapped as Bokeh does.
    """

    def __init__(self, references=None, *, setter=None) -> None:
        models = _models_of(references)
        super().__init__(None if models is not None else references, setter=setter)
        if models is not None:
            self._references = dict(models)


def _models_of(references) -> dict | None:
    """The document's own id -> model map when ``references`` is ``list(doc.models)``, else None."""
    if not isinstance(references, list) or not references:
        return None
    document = getattr(references[0], "document", None)
    models = getattr(getattr(document, "models", None), "_models", None)
    return models if isinstance(models, dict) and len(models) == len(references) else None


#: Arrays of at most this many bytes travel inside a message's JSON (base64), not as buffers of their own.
INLINE_BUFFER_BYTES = 32 * 1024


def inline_bytes(data: bytes | memoryview) -> str:
    """``data`` in the form BokehJS reads from a message's JSON: base64 of a gzip stream, stored uncompressed.

    Bokeh's own inline form compresses (``BOKEH_COMPRESSION_LEVEL``, 2 by default); the
    arrays here are floats that do not compress (a 32 KB column: 43.7 KB of base64 at
    level 0, 41.8 at level 2), and level 2 costs ten times the time (0.64 vs 0.06 ms).
    """
    raw = memoryview(data).tobytes()  # gzip counts a memoryview's length in items, not bytes
    return base64.b64encode(gzip.compress(raw, compresslevel=0, mtime=1)).decode("ascii")


class _InlineSmallBuffers(bokeh_serialization.Serializer):
    """Bokeh's ``Serializer`` with small arrays written into the message's JSON as base64.

    Bokeh sends every NumPy array of a message as a buffer of its own, and each
    buffer is two websocket frames (its header, then its bytes). A size step on
    ``/`` changes ~50 columns, so its message was ~100 frames after the first
    three: the server writes each with a system call, and the browser receives
    each as a task of its own, so the page got the message's last frame ~12 ms
    after its first, before it could apply any of it. Base64 inside the JSON is
    the protocol's other form of the same bytes (BokehJS decodes either); it is a
    third larger, and decoding it costs the page ~8 µs per KB (BokehJS's
    ``base64_to_buffer`` in Chromium: 0.26 ms for 32 KB), about what a buffer's
    two frames cost at that size, so larger arrays (the heatmap at large sizes)
    still go as buffers.
    """

    def _encode_bytes(self, obj: bytes | memoryview) -> bokeh_serialization.BytesRep:
        if self._deferred and memoryview(obj).nbytes <= INLINE_BUFFER_BYTES:
            return bokeh_serialization.BytesRep(type="bytes", data=inline_bytes(obj))
        return super()._encode_bytes(obj)


class _CachedRefsSerializer(_InlineSmallBuffers):
    """Bokeh's ``Serializer`` for ``patch_doc.create``, the references of a document's synced models kept.

    Every ``PATCH-DOC`` the server sends starts by mapping each synced model
    of the page to its reference (``{id(model): model.ref}``, a Python loop with a
    property call per model: ~1 ms of a key press on ``/explore``). That map
    changes only when the document's set of models does; Bokeh replaces
    ``DocumentModelManager._models`` with a new dict whenever it recomputes that
    set. So it is built once per such dict (and size), with no model waiting to
    be synced, kept on the manager, and copied for each message (the serializer
    adds the new models it meets). Small arrays go inline (``_InlineSmallBuffers``).
    """

    def __init__(self, *, references=frozenset(), deferred: bool = True, check_circular: bool = False) -> None:
        refs = _synced_refs(references)
        super().__init__(references=references if refs is None else (), deferred=deferred,
                         check_circular=check_circular)
        if refs is not None:
            self._references = dict(refs)


def _synced_refs(references) -> dict | None:
    """``{id(model): model.ref}`` for ``references``, from the document's cache, when it is all its models."""
    first = next(iter(references), None) if isinstance(references, set) else None
    manager = getattr(getattr(first, "document", None), "models", None)
    models = getattr(manager, "_models", None)
    if not isinstance(models, dict) or manager._new_models or len(models) != len(references):
        return None
    cached = getattr(manager, "_fastsync_refs", None)
    if cached is None or cached[0] is not models or cached[1] != len(models):
        cached = (models, len(models), {id(model): model.ref for model in models.values()})
        manager._fastsync_refs = cached  # the dict kept with it, so its identity is never another's
    return cached[2]


def cache_document_references(enabled: bool = True) -> None:
    """Map a message's references from the document's own model map (``_DocumentDeserializer``,
    ``_CachedRefsSerializer``), or, disabled, as stock."""
    bokeh_document_module.Deserializer = _DocumentDeserializer if enabled else bokeh_serialization.Deserializer
    bokeh_patch_doc.Serializer = _CachedRefsSerializer if enabled else bokeh_serialization.Serializer


def references_cached() -> bool:
    """Whether ``cache_document_references`` is in effect."""
    return (bokeh_document_module.Deserializer is _DocumentDeserializer
            and bokeh_patch_doc.Serializer is _CachedRefsSerializer)


#: The modules that hold Bokeh's ``patch_curdoc`` under that name (imported at their import time).
_PATCH_CURDOC_HOLDERS = ("bokeh.io.doc", "bokeh.application.handlers.code", "panel.io.handlers")


def installed() -> bool:
    """Whether ``install`` is in effect: the fixes (the guarded websocket route of every Panel/Bokeh app, the
    safe curdoc, the locked server events) and every speed patch that ``allowed`` lets apply."""
    handlers = [entry[1] for entry in bokeh_urls.per_app_patterns if entry[0] == r"/ws"]
    safe = all(importlib.import_module(name).patch_curdoc is safe_patch_curdoc for name in _PATCH_CURDOC_HOLDERS)
    in_effect = {
        "cached defaults": defaults_cached(),
        "cached references": references_cached(),
    }
    return (bool(handlers) and all(handler is NoDelayWSHandler for handler in handlers) and safe
            and _Syncable._server_event is _locked_server_event
            and all(done for patch, done in in_effect.items() if patch not in off()))


def install() -> None:
    """Use ``NoDelayWSHandler`` for the ``/ws`` route of servers started from now on.

    ``BokehTornado`` reads ``bokeh.server.urls.per_app_patterns`` when it is
    built (Panel has already replaced Bokeh's handler there with its own), so
    this must run before ``pn.serve``. Also puts ``safe_patch_curdoc`` in the
    place of Bokeh's ``patch_curdoc``, and runs Panel's deferred browser events
    under the document lock (``_locked_server_event``). Those are fixes (the
    websocket guard, session isolation, no "_pending_writes" failure) and stay on
    in every mode. The speed patches (``_SPEED_PATCHES``) apply only when
    ``components.internals.allowed`` says so (not with ``PE_STOCK=1`` or ``PE_OFF``,
    not when a name they touch has moved): Bokeh's default property values cached
    (``cache_bokeh_defaults``) and a message's references from the document's own
    map (``cache_document_references``). Idempotent.
    """
    for patch, needs, apply in _SPEED_PATCHES:
        if allowed(patch, *needs):
            apply()
    # A fix, not a speed patch (Panel's deferred events without the document lock fail): on in every mode.
    if (absent := missing(*_LOCKED_EVENT_NEEDS)):
        guard.log.warning("locked server events off: %s not found; Panel's own kept", ", ".join(absent))
    else:
        _Syncable._server_event = _locked_server_event
    # A fix, not a speed patch: on in stock mode too, wherever what it touches is there.
    holders = [importlib.import_module(name) for name in _PATCH_CURDOC_HOLDERS]
    absent = missing((bokeh_doc, "_PATCHED_CURDOCS"), *((module, "patch_curdoc") for module in holders))
    if absent:
        guard.log.warning("safe_patch_curdoc off: %s not found; Bokeh's own patch_curdoc kept", ", ".join(absent))
    else:
        for module in holders:
            module.patch_curdoc = safe_patch_curdoc
    replace_app_route(r"/ws", panel_server.WSHandler, NoDelayWSHandler)


def _set(owner: object, attr: str, value: object) -> Callable[[], None]:
    return lambda: setattr(owner, attr, value)


#: The speed patches of ``install``: switch name (``components.internals.PATCHES``), the names each touches
#: (any missing turns that one off, ``allowed``), and how it applies.
_SPEED_PATCHES: tuple[tuple[str, tuple[tuple[object, str], ...], Callable[[], None]], ...] = (
    ("cached defaults", ((bokeh_property_bases.Property, "themed_default"),
                         (bokeh_property_bases.Property, "_may_have_unstable_default"),
                         (bokeh_has_props.HasProps, "_overridden_defaults"),
                         (bokeh_descriptors.PropertyDescriptor, "has_unstable_default")), cache_bokeh_defaults),
    ("cached references", ((bokeh_serialization.Serializer, "_encode_bytes"), (bokeh_document_module, "Deserializer"),
                           (bokeh_patch_doc, "Serializer")), cache_document_references),
)
#: What the fix ``_locked_server_event`` touches.
_LOCKED_EVENT_NEEDS: tuple[tuple[object, str], ...] = (
    (_Syncable, "_server_event"), (_Syncable, "_event_coroutine"), (pn.state, "_unblocked"),
    (pn.state, "_change_callbacks"))


def replace_app_route(pattern: str, stock: type, handler: type) -> None:
    """Serve the per-app route ``pattern`` of servers started from now on with ``handler``, in place of
    a subclass of ``stock`` (Panel's); raises ``RuntimeError`` when the route is missing or not Panel's."""
    patterns = bokeh_urls.per_app_patterns
    for index, entry in enumerate(patterns):
        if entry[0] == pattern:
            if not issubclass(entry[1], stock):
                raise RuntimeError(f"unexpected handler {entry[1]!r} for {pattern}; check {handler.__module__} "
                                   "against Panel")
            patterns[index] = (entry[0], handler, *entry[2:])
            return
    raise RuntimeError(f"no {pattern} route in bokeh.server.urls.per_app_patterns; check {handler.__module__} "
                       "against Bokeh")
