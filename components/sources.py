"""Updating a ColumnDataSource in place with as little as possible on the wire."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from bokeh.models import ColumnDataSource


def send_changes(source: ColumnDataSource, data: Mapping[str, Sequence]) -> list[str]:
    """Give ``source`` the columns of ``data``, sending only those that differ; returns their names.

    For the small sources a key press changes (a marker, an outline, two row
    marks): with the same columns and length, one ``ColumnDataChanged`` event
    carries just the changed columns (a k step moves a marker's position and
    label, not its colour or alignment), and nothing is sent when nothing
    changed. A new length or a new set of columns replaces the whole data,
    since Bokeh needs equal-length columns. Not for large arrays: every
    column is compared.
    """
    current = source.data
    lengths = {len(values) for values in (*current.values(), *data.values())}
    if set(current) != set(data) or len(lengths) > 1:
        source.data = dict(data)
        return list(data)
    changed = {name: values for name, values in data.items() if not _same(current[name], values)}
    if changed:
        current.update(changed)
    return list(changed)


def _same(old: Sequence, new: Sequence) -> bool:
    try:
        return bool(np.array_equal(np.asarray(old), np.asarray(new)))
    except (TypeError, ValueError):  # ragged or mixed columns: compare as lists
        return list(old) == list(new)
