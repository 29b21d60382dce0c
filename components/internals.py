"""May the app reach into Panel and Bokeh internals here? The one switch, and the one line it logs.

Every speed patch of the app (``components.widgets``, ``app.fastsync``, the page
scripts of ``app.delivery``) asks ``allowed`` before it applies, naming itself and the private names
it needs. It gets ``False``, and the app keeps Panel's and Bokeh's stock behaviour for that patch,
when

* ``PE_STOCK=1`` is set in the environment (every patch off: the app as plain Panel would run it;
  the CI runs a browser subset so, tests/browser/test_stock_browser.py), or
* the patch is named in ``PE_OFF`` (comma separated: one patch off, as ``bench.ablation`` measures
  what each one buys), or
* one of those names is missing, as after an upgrade that moved it. Then one warning line names
  the patch and what is missing.

So an upgrade of Panel or Bokeh can cost speed, never correctness. Fixes of real faults (the
websocket guard, ``safe_patch_curdoc``) are not speed patches: they stay on in stock mode, and
guard their own names. The ledger of every private name, with what removing it costs, is
docs/performance.md's "Internals ledger".
"""

from __future__ import annotations

import logging
import os

__all__ = ["PATCHES", "allowed", "missing", "off", "stock", "turned_off"]

#: Every speed patch's switch name, in the order of docs/performance.md's ledger.
PATCHES: tuple[str, ...] = ("fast widgets", "no debounce", "step in handler", "lean step", "live titles",
                            "direct push", "no delay", "cached defaults", "cached references", "style guard",
                            "slider keys", "plain esm")

_log = logging.getLogger("app.internals")
#: Patches already reported, so that a check made per session logs once per process.
_reported: set[str] = set()


def stock() -> bool:
    """Whether ``PE_STOCK=1``: every speed patch off."""
    return os.environ.get("PE_STOCK", "").strip() == "1"


def turned_off() -> set[str]:
    """The patches ``PE_OFF`` names (comma separated; a name that is no patch is ignored)."""
    return {name.strip() for name in os.environ.get("PE_OFF", "").split(",")} & set(PATCHES)


def _label(owner: object, attr: str) -> str:
    name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", None) or type(owner).__name__
    return f"{name}.{attr}"


def missing(*needs: tuple[object, str]) -> list[str]:
    """The ``owner.attr`` of ``needs`` that do not exist."""
    return [_label(owner, attr) for owner, attr in needs if not hasattr(owner, attr)]


def off() -> list[str]:
    """The patches turned off in this process so far (stock mode or a missing name), in order of name."""
    return sorted(_reported)


def allowed(patch: str, *needs: tuple[object, str]) -> bool:
    """Whether the speed patch ``patch`` may apply: not in stock mode, not in ``PE_OFF``, every ``(owner, attr)``
    present.

    When not, one line is logged per patch and process: ``PE_STOCK=1`` at INFO, a missing name as a
    WARNING naming it (an upgrade moved it; see docs/performance.md's ledger to adapt the patch).
    """
    if stock() or patch in turned_off():
        if patch not in _reported:
            _reported.add(patch)
            _log.info("%s: %s off, stock Panel/Bokeh behaviour", "PE_STOCK=1" if stock() else "PE_OFF", patch)
        return False
    absent = missing(*needs)
    if absent:
        if patch not in _reported:
            _reported.add(patch)
            _log.warning("%s off: %s not found in this Panel/Bokeh; stock behaviour kept", patch, ", ".join(absent))
        return False
    return True
