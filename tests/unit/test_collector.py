"""The cycle collector's full passes wait for a quiet server (app/collector.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app import collector
from tests.servers import ROOT


@pytest.fixture
def policy(monkeypatch):
    """A fresh policy with Python's collector replaced by a counter; yields the list of passes made."""
    monkeypatch.setattr(collector, "_POLICY", collector._Policy(installed=True))
    count = [0, 0, collector.FULL_AFTER]
    passes: list[int] = []
    monkeypatch.setattr(collector.gc, "get_count", lambda: tuple(count))

    def collect(generation: int = 2) -> int:
        passes.append(generation)
        count[2] = 0
        return 0

    monkeypatch.setattr(collector.gc, "collect", collect)
    yield passes, count


def test_a_due_full_pass_waits_for_a_quiet_moment(policy):
    passes, _ = policy
    collector.note_activity(now=100.0)
    assert not collector.collect_if_due(now=100.0 + collector.QUIET_S / 2)
    assert passes == []
    assert collector.collect_if_due(now=100.0 + collector.QUIET_S)
    assert passes == [2]
    assert not collector.collect_if_due(now=200.0)  # the count starts again after a pass
    assert passes == [2]


def test_a_due_pass_runs_after_its_latest_moment_on_a_server_that_is_never_quiet(policy):
    passes, _ = policy
    step = collector.QUIET_S / 4
    t, ran_at = 0.0, None
    while t <= collector.LATEST_S + 1:
        collector.note_activity(now=t)
        if collector.collect_if_due(now=t):
            ran_at = t
            break
        t += step
    assert ran_at == pytest.approx(collector.LATEST_S)
    assert passes == [2]


def test_nothing_runs_before_python_would_have_considered_a_full_pass(policy):
    passes, count = policy
    count[2] = collector.FULL_AFTER - 1
    assert not collector.collect_if_due(now=1e6)
    assert passes == [] and collector._POLICY.due_since is None


def test_the_policy_is_off_in_a_process_that_did_not_install_it(monkeypatch):
    monkeypatch.setattr(collector, "_POLICY", collector._Policy())
    assert not collector.installed()
    collector.ensure_checking()  # does nothing: no loop gets a check
    assert not collector._LOOPS


#: In a process of its own (the policy changes the whole interpreter's collector): the objects
#: alive at install are frozen, Python makes no full pass of its own however much cyclic garbage
#: piles up, the due signal rises, and one quiet pass collects the garbage.
_CHILD = """
import gc, json, sys
from app import collector
collector.install()
frozen = gc.get_freeze_count()
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "start" and info["generation"] == 2 else None)
hold = []
for _ in range(300_000):
    a = []; a.append(a); hold.append(a)  # cycles that young passes move to the oldest generation
del hold, a  # now garbage that only a full pass can free
due = collector.full_pass_due()
before = sum(1 for o in gc.get_objects() if type(o) is list and len(o) == 1 and o[0] is o)
ran = collector.collect_if_due(now=1e9)
after = sum(1 for o in gc.get_objects() if type(o) is list and len(o) == 1 and o[0] is o)
print(json.dumps({"installed": collector.installed(), "frozen": frozen, "python_full_passes": len(full) - ran,
                  "due": due, "ran": ran, "cycles_before": before, "cycles_after": after,
                  "summary": collector.summary()}))
"""


def test_installed_python_makes_no_full_pass_of_its_own_and_a_quiet_pass_frees_the_garbage():
    out = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["installed"] and result["frozen"] > 10_000
    assert result["python_full_passes"] == 0
    assert result["due"] and result["ran"]
    assert result["cycles_before"] > 1000 and result["cycles_after"] == 0
    assert result["summary"]["full_passes"] == 1 and result["summary"]["threshold"][2] == collector.NEVER
