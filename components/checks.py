"""Live checks: the lesson's two properties, recomputed on the current table.

Three sentences, each in a ``LiveHTML`` (a bare Bokeh ``Div``: cheap to change,
not resent when unchanged):

* ``check_norm``: every row of PE has length √(d_model/2); the largest
  deviation over all rows (``core.row_norms_of``);
* ``check_rotation``: ``max |M_k·PE_p − PE_p+k|`` over every ``p`` with both
  rows in the table (``core.rotation_residual_of``), or why there is no such ``p``;
* ``check_target``: whether ``pos + k`` is a row of the table.

The table is built once per (T, d_model, base) and kept, so a change of k
costs only the rotation of the rows (~10 ms at 2048 × 1024, against ~40 ms for
``core.rotation_residual``, which rebuilds the table), and a k seen before
costs nothing. A card is sent only when its sentence changed; its markup is
short (``<p class="ck">…</p>``), because it travels on every step of k.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param

from app import core
from app.state import ExplorerState
from app.strings import text
from components.theme import COLORS, LiveHTML

#: A check that holds gets a green edge, a remark (nothing to check) an orange one;
#: the sentence itself says which, the colour only helps to find it from afar.
#: Short class names: they live in each Div's own shadow root, and the markup is resent on every k step.
#: Bokeh wraps a Div's text in a ``.bk-clearfix`` with an inline ``display: inline-block`` (hence the
#: ``!important``); as a block, the card spans the page's width as the HTML pane's did.
CHECK_CSS = f"""
.ck {{ font-size: 1.45rem; line-height: 1.4; border-left: 8px solid {COLORS["selected"]}; background: #eef8f4;
       border-radius: 4px; padding: 0.35rem 0.9rem; margin: 0.25rem 0; }}
.ck.rm {{ border-left-color: #E69F00; background: #fff4e0; }}
.bk-clearfix {{ display: block !important; }}
"""


def check_card(lang: str, key: str, *, remark: bool = False, **values: object) -> str:
    """A check's sentence, HTML-escaped, in a coloured card: ``<p class="ck">…</p>`` (``"ck rm"`` for a remark)."""
    kind = "ck rm" if remark else "ck"
    return f'<p class="{kind}">{html.escape(text(lang, key, **values))}</p>'


def _card(name: str) -> LiveHTML:
    return LiveHTML(name=name, css=CHECK_CSS, sizing_mode="stretch_width", margin=(2, 10))


#: Tables up to this many numbers are checked in the update itself; larger ones on the next tick.
SMALL_TABLE = 1 << 18


class LiveChecks(pn.viewable.Viewer):
    """The norm, rotation and target checks as sentences, linked to the state."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        self.norm = _card("check_norm")
        self.rotation = _card("check_rotation")
        self.target = _card("check_target")
        self._table_key: tuple[int, int, float] | None = None
        self._table: np.ndarray | None = None
        #: Residual per offset for the current table; emptied when the table changes.
        self._residuals: dict[int, float] = {}
        self._pending: set[str] = set()  # names of the updates scheduled for the next tick
        self._layout = pn.Column(self.norm, self.rotation, self.target, sizing_mode="stretch_width",
                                 name="checks_view")
        self._update_table()

    def table(self) -> np.ndarray:
        """``core.encoding`` for the current sizes, rebuilt only when T, d_model or base changed."""
        s = self.state
        key = (s.T, s.d_model, s.base)
        if key != self._table_key:
            self._table = core.encoding(s.T, s.d_model, s.base)
            self._table_key = key
            self._residuals = {}
        return self._table

    def residual(self, k: int) -> float:
        """``core.rotation_residual_of`` on the kept table, remembered per offset."""
        pe = self.table()
        if k not in self._residuals:
            self._residuals[k] = core.rotation_residual_of(pe, k, self.state.base)
        return self._residuals[k]

    def _small(self) -> bool:
        """Whether the table is small enough (<= 2**18 numbers, ~1 ms of checks) to check inline."""
        return self.state.T * self.state.d_model <= SMALL_TABLE

    @param.depends("state.d_model", "state.T", "state.base", watch=True)
    def _schedule_table(self) -> None:
        # The whole-table check is the heaviest part of a size change (~70 ms at 2048 x 1024).
        # In a served session it runs on the next tick, so the figures' new data leaves first
        # and the sentences follow in their own message; without a session it runs now.
        # One pending run is enough: it reads the state when it runs. Small tables are
        # checked at once: a scheduled run costs ~1 ms of its own (a second lock, a second message).
        self._run_soon(self._update_table)

    def _run_soon(self, update) -> None:
        """Run ``update`` now for a small table, else once on the next tick (pending runs merge)."""
        if self._small():
            update()
        elif update.__name__ not in self._pending:
            self._pending.add(update.__name__)
            pn.state.execute(update, schedule=True)

    def _update_table(self) -> None:
        self._pending.discard("_update_table")
        s = self.state
        expected = core.expected_row_norm(s.d_model)
        error = float(np.max(np.abs(core.row_norms_of(self.table()) - expected)))
        with pn.io.hold():
            self.norm.object = check_card(s.lang, "check_norm", expected=expected, error=error)
            self._update_offset()

    @param.depends("state.pos", "state.k", watch=True)
    def _schedule_offset(self) -> None:
        # A new k costs a rotation of the whole table (~12 ms at 2048 x 1024): after the
        # figures' data, like the table check above.
        self._run_soon(self._update_offset)

    def _update_offset(self) -> None:
        self._pending.discard("_update_offset")
        s = self.state
        with pn.io.hold():
            if abs(s.k) >= s.T:
                self.rotation.object = check_card(s.lang, "check_rotation_none", remark=True)
            else:
                self.rotation.object = check_card(s.lang, "check_rotation", count=s.T - abs(s.k),
                                                  error=self.residual(s.k))
            inside = 0 <= s.target < s.T
            self.target.object = check_card(s.lang, "check_target_inside" if inside else "check_target_outside",
                                            remark=not inside, target=s.target, last=s.T - 1)

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
