"""Work a served session runs on its event loop after the current step, its changes sent as one message."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from bokeh.document import Document
from panel.io.state import set_curdoc

from components.widgets import one_message

_log = logging.getLogger(__name__)


def run_next_tick(doc: Document, work: Callable[[], None]) -> None:
    """Run ``work()`` in ``doc``'s next tick: on the event loop, holding the document lock, with
    ``doc`` as the current document, every model change it makes held and sent in one PATCH-DOC.

    Safe to call from another thread (``add_next_tick_callback`` is the one Document method Bokeh
    allows there). A session that has gone meanwhile drops the work: no one is waiting for it.
    """
    try:
        doc.add_next_tick_callback(partial(_run_held, doc, work))
    except Exception:
        _log.debug("work for a session that has gone, dropped", exc_info=True)


def _run_held(doc: Document, work: Callable[[], None]) -> None:
    # ``one_message`` is Panel's hold, which writes what it held as one message. Bokeh's own
    # (``doc.hold``/``doc.unhold``) sends a PATCH-DOC per change: the off-screen sections' catch-up after a
    # d_model key went out as 14 messages, each applied by the browser on its own.
    with set_curdoc(doc), one_message():  # the current document: so that work scheduling more finds this session
        work()
