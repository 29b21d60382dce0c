"""``app.model.datasets.learned_rows``: the process's learned table, sliced, equals the core's at every size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core, datasets


@pytest.fixture(autouse=True)
def fresh_tables(monkeypatch):
    monkeypatch.setattr(datasets, "_LEARNED_DRAWN", {})


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(1, 300), st.integers(1, 150), st.integers(0, 2)), min_size=1, max_size=6))
def test_every_slice_is_the_core_table_whatever_came_before(steps):
    datasets._LEARNED_DRAWN.clear()
    for rows, half, seed in steps:
        got = datasets.learned_rows(rows, 2 * half, seed)
        np.testing.assert_array_equal(got, core.learned_table(rows, 2 * half, seed))
        assert not got.flags.writeable  # shared by every session of the process


def test_a_drag_down_or_a_smaller_table_draws_nothing_new():
    first = datasets.learned_rows(512, 256)
    table = datasets._LEARNED_DRAWN[0]
    for d_model in range(254, 100, -2):
        datasets.learned_rows(300, d_model)
    assert datasets._LEARNED_DRAWN[0] is table
    assert np.shares_memory(datasets.learned_rows(10, 8), first)


def test_a_drag_up_draws_a_few_times_not_at_every_step():
    tables = set()
    for d_model in range(64, 1025, 2):
        datasets.learned_rows(100, d_model)
        tables.add(id(datasets._LEARNED_DRAWN[0]))
    assert len(tables) <= 6  # 64, 128, 256, 512, 1024 columns


@pytest.mark.parametrize(("rows", "d_model", "message"), [
    (0, 8, "rows"), (4, 7, "d_model"), (4, 0, "d_model"), (64, 7, "d_model"), (4, 8.0, "d_model"), (True, 8, "rows"),
])
def test_sizes_the_core_refuses_are_refused_cached_or_not(rows, d_model, message):
    with pytest.raises(ValueError, match=message):
        datasets.learned_rows(rows, d_model)
    datasets.learned_rows(16, 16)  # a table drawn: smaller sizes and larger ones are both refused the same
    with pytest.raises(ValueError, match=message):
        datasets.learned_rows(rows, d_model)
