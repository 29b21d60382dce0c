"""The internals ledger (docs/performance.md) against the code: every speed switch has its row, the count it states
is its kept rows' sum, and every private name it lists is one the code uses.

The ledger lists the private Panel/Bokeh names the app relies on (issue #43's budget: 12; not met, for the reasons
the ledger gives). This keeps the list honest when a patch is added or removed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.internals import PATCHES

ROOT = Path(__file__).resolve().parents[2]
LEDGER = (ROOT / "docs" / "performance.md").read_text()
SOURCES = "\n".join(path.read_text() for folder in ("app", "components", "static")
                    for path in sorted((ROOT / folder).rglob("*")) if path.suffix in {".py", ".js"})


def _rows() -> list[dict[str, str]]:
    """The ledger's table: one dict per row (patch, where, names, count, costs, decision)."""
    start = LEDGER.index("| patch (switch name) | where | private names | count |")
    rows = []
    for line in LEDGER[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows.append(dict(zip(("patch", "where", "names", "count", "costs", "decision"), cells, strict=True)))
    return rows


ROWS = _rows()
KEPT = [row for row in ROWS if not row["decision"].startswith("**removed**")]


def test_the_stated_count_is_the_sum_of_the_kept_rows():
    stated = int(re.search(r"\*\*Count after this round: (\d+) names in all", LEDGER).group(1))
    assert sum(int(row["count"]) for row in KEPT) == stated
    assert len(ROWS) - len(KEPT) >= 4  # the removed ones stay listed, with what removing them cost


def test_every_speed_switch_has_a_kept_row():
    firsts = [row["patch"] for row in KEPT]
    assert [patch for patch in PATCHES if not any(patch in first for first in firsts)] == []


@pytest.mark.parametrize("row", KEPT, ids=[row["patch"] for row in KEPT])
def test_a_rows_private_names_are_in_the_code(row):
    """Each backquoted private name of a kept row (a part that starts with ``_``, or a name the row says the app
    subclasses or replaces) is written in app/, components/ or static/; a row that lists its names one by one
    counts as many as its count says."""
    names = re.findall(r"`([^`]+)`", row["names"])
    private = [name for name in names if re.fullmatch(r"[\w.]+", name)]
    missing = [name for name in private if name.rsplit(".", 1)[-1] not in SOURCES]
    assert missing == [], row["patch"]
    if int(row["count"]) and not row["names"].startswith(("five ", "the ")):
        assert len(private) == int(row["count"]), (row["patch"], private)


def test_removed_patches_are_gone_from_the_code():
    """A removed row's switch is no longer one of PATCHES (``PE_OFF`` would name nothing)."""
    removed = [row["patch"] for row in ROWS if row["decision"].startswith("**removed**")]
    assert removed and not set(removed) & set(PATCHES)
