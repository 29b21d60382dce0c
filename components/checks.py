"""Live checks: the lesson's two properties, recomputed on the current table.

Three sentences, each in a ``LiveHTML`` (cheap to change on the server and in
the browser, not resent when unchanged):

* ``check_norm``: every row of PE has length √(d_model/2); the largest
  deviation over all rows (``core.row_norms_of``);
* ``check_rotation``: ``max |M_k·PE_p − PE_p+k|`` over every ``p`` with both
  rows in the table (``core.rotation_residual_of``), or why there is no such ``p``;
* ``check_target``: whether ``pos + k`` is a row of the table.

Under a published bug (the state's ``mistake``, ``core.mistake_columns``) the
first two are measured on that bug's table: the range of the row lengths, and
the error of the best single block rotation fitted to every ``p``
(``core.fitted_rotation_residual_of``), since the bug has no M_k of its own.

The table is built once per (T, d_model, base) and kept, so a change of k
costs only the rotation of the rows (~10 ms at 2048 × 1024, against ~40 ms for
``core.rotation_residual``, which rebuilds the table), and a k seen before
costs nothing. For a large table (more than ``SMALL_TABLE`` numbers) that work
(~60 ms for a new table at 2048 × 1024, ~12 ms for a new k) does not run in the
slider's update: ``run_later`` hands it to a worker thread and writes the
sentences when it is done, in a message of their own. A card is sent only when
its sentence changed; its markup is short (``<p class="ck">…</p>``), because
it travels on every step of k.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import NamedTuple, TypeVar

import numpy as np
import panel as pn
import param
from bokeh.document import Document

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import positions, text
from components.describe import Description
from components.theme import COLORS
from components.ticks import run_next_tick
from components.widgets import LiveHTML

#: A check that holds gets a green edge, a remark (nothing to check) an orange one;
#: the sentence itself says which, the colour only helps to find it from afar.
#: Short class names: they live in each card's own shadow root, and the markup is resent on every k step.
CHECK_CSS = f"""
.ck {{ font-size: 1.45rem; line-height: 1.4; border-left: 8px solid {COLORS["selected"]};
       background: var(--pe-t-right-bg, #eef8f4);
       border-radius: 4px; padding: 0.35rem 0.9rem; margin: 0.25rem 0; }}
.ck.rm {{ border-left-color: #E69F00; background: var(--pe-t-notice-bg, #fff4e0); }}
"""


def check_card(lang: str, key: str, *, remark: bool = False, **values: object) -> str:
    """A check's sentence, HTML-escaped, in a coloured card: ``<p class="ck">…</p>`` (``"ck rm"`` for a remark)."""
    kind = "ck rm" if remark else "ck"
    return f'<p class="{kind}">{html.escape(text(lang, key, **values))}</p>'


def _card(name: str) -> LiveHTML:
    return LiveHTML(name=name, css=CHECK_CSS, sizing_mode="stretch_width", margin=(2, 10))


#: An error above this is a property that does not hold (rounding stays below ~1e-11 at the largest size).
BROKEN = 1e-9

#: Tables up to this many numbers are checked in the update itself (~1 ms at most); larger ones,
#: in a served session, on the checks' worker thread (``run_later``).
SMALL_TABLE = 1 << 18

#: The worker thread of every session's large checks. They are NumPy, which releases the GIL, so the
#: event loop goes on serving (sending the figures' new data, other sessions) while one runs. One
#: thread, on a 2-core machine: the other core stays with the event loop; several sessions queue.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-checks")

_log = logging.getLogger(__name__)

Result = TypeVar("Result")


def run_later(work: Callable[[], Result], apply: Callable[[Result], None]) -> None:
    """Run ``work()`` off the event loop, then ``apply(result)`` in the session's document.

    In a served session (``pn.state.curdoc`` has a session context) ``work``
    runs on the checks' worker thread and ``apply`` as a next-tick callback of
    the document that was current when ``run_later`` was called: on the event
    loop, holding the document lock, its model changes held and sent as one
    message. Without a session (unit tests, a notebook, the in-process
    benchmark) ``apply(work())`` runs now, in this thread.

    ``work`` must not touch Bokeh or Panel models (it runs without the lock)
    and should not raise: if it does, the error is logged and ``apply`` is not
    called. ``apply`` must expect the state to have moved on meanwhile. If the
    session has closed by the time ``work`` is done, the result is dropped.

    Patch this module-level name to tell the deferred work apart (the
    benchmark does: its in-process session has no event loop).
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        apply(work())
        return
    _WORKER.submit(work).add_done_callback(partial(_deliver, doc, apply))


def _deliver(doc: Document, apply: Callable[[Result], None], future: Future) -> None:
    # On the worker thread (run_next_tick may be called from there).
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        _log.error("a live check failed", exc_info=error)
        return
    run_next_tick(doc, partial(apply, future.result()))


def describe(state: ExplorerState) -> str:
    """What the checks test now, in a sentence (the cards' summary for a screen reader)."""
    s = state
    return text(s.lang, "describe_checks", norm=core.expected_row_norm(s.d_model), k=s.k,
                count=max(0, s.T - abs(s.k)))


class Verdict(NamedTuple):
    """What the whole-table checks found, and for which inputs (a late result is checked against the state)."""

    T: int
    d_model: int
    base: float
    k: int
    #: Largest |row norm - sqrt(d_model/2)| over every row.
    norm_error: float
    #: ``core.rotation_residual_of`` for k (``core.fitted_rotation_residual_of`` under a mistake);
    #: None when |k| >= T (no two rows are k apart).
    residual: float | None
    mistake: str = "none"
    #: The shortest and the longest row.
    norm_low: float = 0.0
    norm_high: float = 0.0

    @property
    def table(self) -> tuple[int, int, float, str]:
        """The (T, d_model, base, mistake) of the table checked."""
        return self.T, self.d_model, self.base, self.mistake


class _Table(NamedTuple):
    key: tuple[int, int, float, str]
    pe: np.ndarray
    norm_error: float
    residuals: dict[int, float]  # per offset k, filled as offsets are checked
    norm_low: float
    norm_high: float


class LiveChecks(pn.viewable.Viewer):
    """The norm, rotation and target checks as sentences, linked to the state.

    The target sentence (pos, k, T) is cheap and always written in the update
    itself. The norm and rotation sentences need the whole table: for a small
    table, or a table and offset checked before, they are written in the
    update too; otherwise ``run_later`` computes them (in a served session on
    the worker thread, so the figures' data leaves first and the sentences
    follow in a message of their own). One such run per view at a time: changes
    that arrive meanwhile are checked by one run after it, and a result whose
    (T, d_model, base) or k no longer match the state is not shown (a norm for
    the right table is).
    """

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        self.norm = _card("check_norm")
        self.rotation = _card("check_rotation")
        self.target = _card("check_target")
        #: The last table checked (replaced whole, never changed in place but for its residuals,
        #: so the worker thread and the event loop can share it without a lock).
        self._kept: _Table | None = None
        self._running = False  # a run_later of this view has not come back yet
        self._again = False  # and the state changed since it started
        self._layout = pn.Column(self.norm, self.rotation, self.target,
                                 Description(state, text(state.lang, "checks_title"), describe, ("d_model", "T", "k"),
                                             name="checks_description"),
                                 sizing_mode="stretch_width",
                                 name="checks_view")
        # Page build: once, inline (a large table adds its ~60 ms to the first page, not to a slider step).
        self._show(self.check(*self._inputs()))
        self._show_target()

    def _inputs(self) -> tuple[int, int, float, int, str]:
        s = self.state
        return s.T, s.d_model, s.base, s.k, s.mistake

    def _table_for(self, T: int, d_model: int, base: float, mistake: str = "none") -> _Table:
        table = self._kept  # read once: the other thread may replace it
        if table is None or table.key != (T, d_model, base, mistake):
            pe = core.encoding(T, d_model, base) if mistake == "none" else core.encoding(T, d_model, base, mistake)
            norms = core.row_norms_of(pe)
            error = float(np.max(np.abs(norms - core.expected_row_norm(d_model))))
            table = self._kept = _Table((T, d_model, base, mistake), pe, error, {}, float(norms.min()),
                                        float(norms.max()))
        return table

    def check(self, T: int, d_model: int, base: float, k: int, mistake: str = "none") -> Verdict:
        """The whole-table checks for these inputs, from the kept table and residuals where possible.

        Touches no model and not the state, so it may run on the worker thread.
        """
        table = self._table_for(T, d_model, base, mistake)
        residual = None
        if abs(k) < T:
            residual = table.residuals.get(k)
            if residual is None:
                residual = table.residuals[k] = (core.rotation_residual_of(table.pe, k, base) if mistake == "none"
                                                 else core.fitted_rotation_residual_of(table.pe, k, mistake))
        return Verdict(T, d_model, base, k, table.norm_error, residual, mistake, table.norm_low, table.norm_high)

    def _known(self, T: int, d_model: int, base: float, k: int, mistake: str = "none") -> Verdict | None:
        """The verdict if nothing needs computing (this table and this k were checked), else None."""
        table = self._kept
        if table is None or table.key != (T, d_model, base, mistake) or (abs(k) < T and k not in table.residuals):
            return None
        return Verdict(T, d_model, base, k, table.norm_error, table.residuals.get(k), mistake, table.norm_low,
                       table.norm_high)

    def _work(self, inputs: tuple[int, int, float, int, str]) -> Verdict | None:
        try:
            return self.check(*inputs)
        except Exception:  # a failed check must not leave the view waiting forever
            _log.exception("live checks failed for T, d_model, base, k, mistake = %s", inputs)
            return None

    @param.depends("state.d_model", "state.T", "state.base", "state.k", "state.mistake", watch=True)
    def _refresh(self) -> None:
        inputs = self._inputs()
        T, d_model = inputs[0], inputs[1]
        verdict = self._known(*inputs)
        if verdict is None and T * d_model <= SMALL_TABLE:
            verdict = self.check(*inputs)
        if verdict is not None:
            self._show(verdict)
        elif self._running:
            self._again = True
        else:
            self._running = True
            run_later(partial(self._work, inputs), self._finish)

    def _finish(self, verdict: Verdict | None) -> None:
        self._running = False
        again, self._again = self._again, False
        shown = verdict is not None and self._show(verdict)
        if again or (verdict is not None and not shown):
            self._refresh()

    def _show(self, verdict: Verdict) -> bool:
        """Write the norm and rotation sentences if the verdict is for the current state; True if it was."""
        s = self.state
        if verdict.table != (s.T, s.d_model, s.base, s.mistake):
            return False
        if s.mistake == "none":
            self.norm.object = check_card(s.lang, "check_norm", expected=core.expected_row_norm(s.d_model),
                                          error=verdict.norm_error)
        else:
            # A broken property gets the remark's edge (the sentence says it in words).
            same = f"{verdict.norm_low:.4f}" == f"{verdict.norm_high:.4f}"  # as the sentence prints them
            self.norm.object = check_card(s.lang, "check_norm_mistake_same" if same else "check_norm_mistake",
                                          expected=core.expected_row_norm(s.d_model),
                                          low=verdict.norm_low, high=verdict.norm_high, error=verdict.norm_error,
                                          remark=verdict.norm_error > BROKEN)
        if verdict.k != s.k:
            return False
        if verdict.residual is None:
            self.rotation.object = check_card(s.lang, "check_rotation_none", remark=True)
        elif s.mistake != "none":
            first = max(0, -s.k)
            self.rotation.object = check_card(s.lang, "check_rotation_mistake", first=first,
                                              last=first + s.T - abs(s.k) - 1, error=verdict.residual,
                                              remark=verdict.residual > BROKEN)
        else:
            count = s.T - abs(s.k)  # positions p with p and p + k both rows of the table
            if count > 1:
                self.rotation.object = check_card(s.lang, "check_rotation", count=count, error=verdict.residual)
            else:  # |k| = T − 1: the one p with p + k inside the table
                self.rotation.object = check_card(s.lang, "check_rotation_one", p=max(0, -s.k), error=verdict.residual)
        return True

    @param.depends("state.pos", "state.k", "state.T", watch=True)
    def _show_target(self) -> None:
        s = self.state
        inside = 0 <= s.target < s.T
        self.target.object = check_card(s.lang, "check_target_inside" if inside else "check_target_outside",
                                        remark=not inside, target=s.target, positions=positions(s.T - 1))

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
