"""What a websocket client may change in its session's document, checked before Bokeh applies it.

A browser running the page only ever sends small ``PATCH-DOC`` messages: a
slider's new ``value`` (a finite number between its ``start`` and ``end``),
a button group's ``active`` index, a text box's string, events from the
page's components. A hostile client can send anything the protocol can carry:
NaN, ±inf, 1e300, a string or a million-element list for a slider, a model id
or a property that does not exist. Bokeh validates only the type of a
property (a ``Float`` takes NaN and 1e300), Panel none of the ranges, and an
invalid value then fails deep inside a watcher ("Exception in callback").

``check_patch`` looks at every event of a ``PATCH-DOC`` against the document
the session holds, without Panel: it refuses (``Refused``, with a short reason
that never repeats the value) what no page sends, and clamps what a page
could send in a race (a slider value just outside bounds that the server
moved meanwhile, a fraction on an integer slider) to the nearest valid value,
rewriting the event in place. The websocket handler
(``app.fastsync.NoDelayWSHandler``) logs a refusal as one warning line and
answers it with an ERROR message carrying that reason only.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

from bokeh.document import Document
from bokeh.model import DataModel
from bokeh.models import Model
from bokeh.models.widgets import AbstractButton, AbstractGroup, AbstractSlider, InputWidget, Widget

__all__ = ["MAX_EVENTS", "MAX_LIST", "MAX_TEXT", "Clamped", "Refused", "check_patch", "describe", "log"]

log = logging.getLogger("app.guard")

#: Most events one PATCH-DOC may carry (a key press sends 2; a page's first report a few dozen).
MAX_EVENTS = 1_000
#: Longest string a client may set (the sentence box keeps 12 words of 24 characters).
MAX_TEXT = 10_000
#: Most elements of a list a client may set (a selection's indices, a range slider's pair).
MAX_LIST = 10_000
#: The document events BokehJS sends (a property changed, a UI event such as a click or
#: ``document_ready``, a source edited in the page); adding or removing roots, or the title, it never does.
CLIENT_EVENTS = frozenset({"ModelChanged", "MessageSent", "ColumnDataChanged", "ColumnsStreamed", "ColumnsPatched"})
#: Slider properties the browser sets; ``start``, ``end``, ``step`` belong to the server.
SLIDER_VALUES = ("value", "value_throttled")


class Refused(ValueError):
    """A message that no page sends; its text is short and never carries the refused value."""


@dataclass(frozen=True)
class Clamped:
    """A value moved into its valid range: the client that sent it must be told the value used."""

    model: Model
    attr: str
    given: str  # described, not repeated
    used: Any


def describe(value: object) -> str:
    """A short, safe description of ``value`` for a log line or a reply: its type, and a number's value."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, Real):
        return f"{float(value):.6g}" if math.isfinite(float(value)) else str(float(value))
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} elements"
    if isinstance(value, dict):
        return "an object" if value.get("type") != "number" else f"the number {str(value.get('value'))[:8]}"
    return f"a {type(value).__name__}"


def _finite_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value) if abs(value) < 1e308 else math.copysign(math.inf, value)
    return number if math.isfinite(number) else None


def _current(model: Model, attr: str) -> object:
    """The property's value on the server, or None while it is unset (a slider's ``value_throttled`` before
    its first release, a figure's ``inner_width`` before it is drawn: reading those raises)."""
    try:
        return getattr(model, attr)
    except Exception:
        return None


def _label(model: Model, attr: str) -> str:
    return f"{type(model).__name__}.{attr}"


def _check_slider(model: AbstractSlider, attr: str, new: object) -> object:
    """A slider's value: a finite number (a pair of them for range sliders), clamped to start .. end."""
    if isinstance(_current(model, attr), list | tuple):  # a range slider
        if not isinstance(new, list | tuple) or len(new) != 2:
            raise Refused(f"{_label(model, attr)} must be a pair of numbers, not {describe(new)}")
        return [_check_slider_number(model, attr, item) for item in new]
    return _check_slider_number(model, attr, new)


def _check_slider_number(model: AbstractSlider, attr: str, new: object) -> object:
    number = _finite_number(new)
    if number is None:
        raise Refused(f"{_label(model, attr)} must be a finite number, not {describe(new)}")
    start, end, step = (_current(model, name) for name in ("start", "end", "step"))
    integral = all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end, step))
    used: float | int = number
    if integral:
        used = round(number)
    if isinstance(start, Real) and isinstance(end, Real):
        used = max(start, min(used, end))
    return used


def _check_event(doc: Document, event: object, clamped: list[Clamped]) -> None:
    if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
        raise Refused("an event must be an object with a kind")
    if event["kind"] not in CLIENT_EVENTS:
        raise Refused(f"a client does not send {event['kind'][:30]!r} events")
    if event["kind"] != "ModelChanged":
        return  # Bokeh checks the others (and refuses them with a reason of its own)
    ref = event.get("model")
    model_id = ref.get("id") if isinstance(ref, dict) else None
    model = doc.get_model_by_id(model_id) if isinstance(model_id, str) else None
    if model is None:
        raise Refused("a change names a model that is not in this session's document")
    attr = event.get("attr")
    if not isinstance(attr, str) or attr not in model.properties():
        raise Refused(f"{type(model).__name__} has no property {str(attr)[:40]!r}")
    new = event.get("new")
    if isinstance(model, AbstractSlider) and attr in SLIDER_VALUES:
        used = _check_slider(model, attr, new)
        if used != new:
            clamped.append(Clamped(model, attr, describe(new), used))
        event["new"] = used  # also -0.0 or 3.0 as the integer an integer slider holds
        return
    if isinstance(model, AbstractGroup) and attr == "active" and not isinstance(model.active, list):
        if new is not None and (_finite_number(new) != new or not 0 <= new < len(model.labels)):
            raise Refused(f"{_label(model, attr)} must be one of 0 .. {len(model.labels) - 1}, not {describe(new)}")
        return
    current = _current(model, attr)
    if isinstance(new, str) and len(new) > MAX_TEXT:
        raise Refused(f"{_label(model, attr)} takes at most {MAX_TEXT} characters, not {len(new)}")
    if isinstance(new, list) and len(new) > MAX_LIST:
        raise Refused(f"{_label(model, attr)} takes at most {MAX_LIST} elements, not {len(new)}")
    if isinstance(model, InputWidget | AbstractButton) and isinstance(current, str) and not isinstance(new, str):
        raise Refused(f"{_label(model, attr)} must be a string, not {describe(new)}")
    # Numbers only where the app reads them (widgets, its components' data); a figure's range may be NaN.
    numeric = isinstance(current, Real) and not isinstance(current, bool) and isinstance(model, Widget | DataModel)
    if numeric and new is not None and _finite_number(new) is None:
        raise Refused(f"{_label(model, attr)} must be a finite number, not {describe(new)}")


def check_patch(doc: Document, content: object) -> list[Clamped]:
    """Check a ``PATCH-DOC``'s content against ``doc``; raise ``Refused``, or return the values clamped in place.

    Every event is checked before any is applied, so a refused message changes nothing.
    """
    events = content.get("events") if isinstance(content, dict) else None
    if not isinstance(events, list):
        raise Refused("a PATCH-DOC must carry a list of events")
    if len(events) > MAX_EVENTS:
        raise Refused(f"a PATCH-DOC carries at most {MAX_EVENTS} events, not {len(events)}")
    clamped: list[Clamped] = []
    for event in events:
        _check_event(doc, event, clamped)
    return clamped
