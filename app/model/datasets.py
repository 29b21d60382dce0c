"""The numbers behind every figure, as tables: what a CSV download holds (served by ``app.data_routes``).

Each table is computed by ``app.model.core`` from a state at full precision (``%.17g``: every float64 read
back exactly), and its file name says the parameters it was made with (``encoding_d32_T24_base10000.csv``).
Tables are the whole thing, not the sampled picture (the heatmap of a 2048 x 1024 table draws every 4th row;
its CSV has all 2048).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from app.model import core
from app.model.state import D_MODEL_MAX, T_MAX, ExplorerState, parse_query


@dataclass(frozen=True)
class Table:
    """A CSV table: column names and the rows as a 2-D float array (or a list of lists)."""

    header: list[str]
    rows: np.ndarray


def _encoding(s: ExplorerState) -> Table:
    pe = core.encoding(s.T, s.d_model, s.base, mistake=s.mistake)
    return Table(["pos", *(f"PE_{j}" for j in range(s.d_model))], np.column_stack([np.arange(s.T), pe]))


def _wavelengths(s: ExplorerState) -> Table:
    pairs = np.arange(s.d_model // 2)
    return Table(["pair", "frequency", "wavelength"],
                 np.column_stack([pairs, core.frequencies(s.d_model, s.base), core.wavelengths(s.d_model, s.base)]))


def _scores(s: ExplorerState) -> Table:
    k = np.arange(-(s.T - 1), s.T)
    return Table(["k", "score"], np.column_stack([k, core.relative_scores(k, s.d_model, s.base)]))


def _clocks(s: ExplorerState) -> Table:
    pairs = np.arange(s.d_model // 2)
    rows = core.encoding_rows([s.pos, s.pos + s.k], s.d_model, s.base)
    return Table(["pair", "frequency", "pos_sin", "pos_cos", "target_sin", "target_cos"],
                 np.column_stack([pairs, core.frequencies(s.d_model, s.base), rows[0, 0::2], rows[0, 1::2],
                                  rows[1, 0::2], rows[1, 1::2]]))


def _rotation(s: ExplorerState) -> Table:
    m = core.rotation(s.k, s.d_model, s.base)
    return Table(["row", *(f"M_{j}" for j in range(s.d_model))], np.column_stack([np.arange(s.d_model), m]))


def _fingerprint(s: ExplorerState) -> Table:
    q = np.arange(s.T)
    distances = core.fingerprint_distances(s.pos, s.T, s.d_model, s.base, s.pairs_from, s.pairs_to)
    return Table(["q", "distance"], np.column_stack([q, distances]))


def _terms(s: ExplorerState) -> Table:
    k = np.arange(-(s.T - 1), s.T)
    terms = core.score_terms(k, s.d_model, s.base)
    return Table(["k", *(f"pair_{i}" for i in range(s.d_model // 2)), "score"],
                 np.column_stack([k, terms, terms.sum(axis=1)]))


def _gram(s: ExplorerState) -> Table:
    g = core.gram(s.T, s.d_model, s.base)
    return Table(["pos", *(f"q_{j}" for j in range(s.T))], np.column_stack([np.arange(s.T), g]))


def _sum(s: ExplorerState) -> Table:
    k = np.arange(-(s.T - 1), s.T)
    return Table(["k", "sum_score", "concat_score"],
                 np.column_stack([k, core.relative_scores(k, s.d_model, s.base),
                                  core.concatenated_scores(k, s.reserve, s.base)]))


def _norms(s: ExplorerState) -> Table:
    return Table(["pos", "norm"], np.column_stack([np.arange(s.T), core.row_norms(s.T, s.d_model, s.base, s.mistake)]))


def _qk_terms(s: ExplorerState) -> Table:
    target = min(max(s.pos + s.k, 0), s.T - 1)
    values = core.qk_terms(s.pos, target, s.T, s.d_model, heads=s.heads, base=s.base)
    return Table(["m", "n", "ee", "ep", "pe", "pp"], np.array([[s.pos, target, *values]]))


def extrapolation_ladders(T_train: int, T: int, d_model: int, base: float) -> dict[str, np.ndarray]:
    """The frequencies each ladder of the extrapolation section reads a text of ``T`` positions with: the
    trained one (``sinusoidal``, also RoPE's), then the stretched ones, in the order of their papers."""
    return {"sinusoidal": core.frequencies(d_model, base),
            "interpolation": core.interpolated_frequencies(T_train, T, d_model, base),
            "ntk": core.ntk_frequencies(T_train, T, d_model, base),
            "yarn": core.yarn_frequencies(T_train, T, d_model, base)}


#: Per seed, the longest and widest learned table drawn so far in this process (read-only).
_LEARNED_DRAWN: dict[int, np.ndarray] = {}


def learned_rows(rows: int, d_model: int, seed: int = 0) -> np.ndarray:
    """``core.learned_table(rows, d_model, seed)``, read-only, sliced from the largest table drawn so far.

    Entry (p, c) of the table depends on the seed, p and c only, so a larger table holds every smaller one:
    a step that changes d_model, T or the trained rows slices, and a table too small is drawn again at twice
    its rows and columns (up to the sliders' ends), so that a drag upwards draws it a few times, not at every
    step (a 1024-wide table of 1024 rows took ~20 ms to draw).
    """
    # The core's own checks (the same messages), before the cache: a table larger than asked must not let an
    # odd width through.
    rows, d_model = core.learned_table_shape(rows, d_model)
    drawn = _LEARNED_DRAWN.get(seed)
    if drawn is None or drawn.shape[0] < rows or drawn.shape[1] < d_model:
        have_rows, have_columns = (0, 0) if drawn is None else drawn.shape
        drawn = core.learned_table(max(rows, min(2 * have_rows, T_MAX)),
                                   max(d_model, min(2 * have_columns, D_MODEL_MAX)), seed)
        drawn.flags.writeable = False
        _LEARNED_DRAWN[seed] = drawn
    return drawn[:rows, :d_model]


def _extrapolation_ladders(s: ExplorerState) -> dict[str, np.ndarray]:
    return extrapolation_ladders(s.T_train, s.T, s.d_model, s.base)


def _extrapolation_angles(s: ExplorerState) -> Table:
    ladders = _extrapolation_ladders(s)
    angles = [(s.T - 1) * omega for omega in ladders.values()]
    unseen = [core.unseen_pairs(s.T_train, s.T, s.d_model, s.base, frequencies=omega).astype(float)
              for omega in ladders.values()]
    return Table(["pair", "trained_reach", *(f"angle_{name}" for name in ladders),
                  *(f"unseen_{name}" for name in ladders), "yarn_ramp"],
                 np.column_stack([np.arange(s.d_model // 2), core.training_angles(s.T_train, s.d_model, s.base),
                                  *angles, *unseen, core.yarn_ramp(s.T_train, s.d_model, s.base)]))


#: ALiBi's heads in the extrapolation section and its table (Press et al. 2022 use 8 in their smaller models:
#: slopes 1/2 … 1/256).
ALIBI_HEADS = 8


def _extrapolation_scores(s: ExplorerState) -> Table:
    k = np.arange(s.T)
    ladders = _extrapolation_ladders(s)
    scores = [core.scores_from_frequencies(k, omega) for omega in ladders.values()]
    defined = core.learned_defined(k, s.T_train)
    learned = np.full(s.T, np.nan)
    learned[defined] = core.table_dot_scores(learned_rows(s.T_train, s.d_model), 0, k[defined])
    alibi = core.alibi_biases(k, core.alibi_slopes(ALIBI_HEADS))
    return Table(["k", *(f"score_{name}" for name in ladders), "score_learned",
                  *(f"alibi_head_{j}" for j in range(1, ALIBI_HEADS + 1))],
                 np.column_stack([k, *scores, learned, *alibi]))


@dataclass(frozen=True)
class Dataset:
    """One downloadable table: how to make it and which parameters its file name names."""

    make: Callable[[ExplorerState], Table]
    names: tuple[str, ...]


DATASETS: dict[str, Dataset] = {
    "encoding": Dataset(_encoding, ("d_model", "T", "base", "mistake")),
    "wavelengths": Dataset(_wavelengths, ("d_model", "base")),
    "clocks": Dataset(_clocks, ("d_model", "base", "pos", "k")),
    "scores": Dataset(_scores, ("d_model", "T", "base")),
    "rotation": Dataset(_rotation, ("d_model", "base", "k")),
    "fingerprint": Dataset(_fingerprint, ("d_model", "T", "base", "pos", "pairs_from", "pairs_to")),
    "qk_terms": Dataset(_qk_terms, ("d_model", "T", "base", "heads", "pos", "k")),
    "sum": Dataset(_sum, ("d_model", "T", "base", "reserve")),
    "terms": Dataset(_terms, ("d_model", "T", "base")),
    "gram": Dataset(_gram, ("d_model", "T", "base")),
    "norms": Dataset(_norms, ("d_model", "T", "base", "mistake")),
    "extrapolation_angles": Dataset(_extrapolation_angles, ("d_model", "T_train", "T", "base")),
    "extrapolation_scores": Dataset(_extrapolation_scores, ("d_model", "T_train", "T", "base")),
}

#: What each page offers: a view's or section's route -> its datasets ("/" and "/explore": all of theirs).
PAGE_DATASETS: dict[str, tuple[str, ...]] = {
    "ladder": ("encoding", "wavelengths"),
    "clocks": ("clocks",),
    "distance": ("scores",),
    "checks": ("norms",),
    "fingerprint": ("fingerprint",),
    "wavelengths": ("encoding", "wavelengths"),
    "hands": ("clocks",),
    "shift": ("rotation",),
    "score": ("qk_terms", "scores"),
    "sum": ("sum",),
    "terms": ("terms",),
    "gram": ("gram",),
    "extrapolation": ("extrapolation_angles", "extrapolation_scores"),
    "mistakes": ("norms", "encoding"),
    "explore": ("encoding", "wavelengths", "clocks", "scores", "norms"),
    "": ("encoding", "wavelengths", "clocks", "rotation", "fingerprint", "qk_terms", "scores", "sum", "terms",
         "gram", "extrapolation_angles", "extrapolation_scores", "norms"),
}

#: Short names of the parameters in file names.
_SHORT = {"d_model": "d", "pairs_from": "from", "pairs_to": "to"}


def file_name(name: str, state: ExplorerState) -> str:
    """``<name>_<param><value>_….csv`` with the parameters of ``DATASETS[name]`` (``mistake`` only when set)."""
    parts = [name]
    for key in DATASETS[name].names:
        value = getattr(state, key)
        if key == "mistake" and value == "none":
            continue
        parts.append(f"{_SHORT.get(key, key)}{value}")
    return "_".join(parts) + ".csv"


def _number(value: float) -> str:
    if value != value:  # NaN: no value (a learned table past its rows), an empty field
        return ""
    # Integers as integers (pos, k, pair); the rest as the shortest text that reads back exactly.
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


def csv_chunks(table: Table, rows_per_chunk: int = 256) -> Iterator[str]:
    """The table as CSV, in pieces: the header row, then ``rows_per_chunk`` rows at a time, full precision.

    A server streams the pieces, so a big table is never one string in memory (the Gram matrix at
    T = 2048 is ~40 MB of text)."""
    yield ",".join(table.header) + "\n"
    rows = np.asarray(table.rows, dtype=np.float64)
    for start in range(0, len(rows), rows_per_chunk):
        yield "".join(",".join(map(_number, row.tolist())) + "\n" for row in rows[start:start + rows_per_chunk])


def csv_text(table: Table) -> str:
    """The table as CSV: a header row, then one row per row of ``table.rows``, full precision."""
    return "".join(csv_chunks(table))


#: The most numbers (rows x columns) one download may hold: the whole encoding at the largest sizes
#: (2048 x 1025) fits; the Gram matrix at T = 2048 (2048 x 2049, ~80 MB of CSV) does not.
MAX_CELLS = 2_200_000


def cells_of(table: Table) -> int:
    """How many numbers ``table`` holds (its header's columns times its rows)."""
    return len(table.header) * len(table.rows)


def prepared(name: str, args: dict[str, str]) -> tuple[str, Table, list]:
    """``(file name, table, notices)`` for dataset ``name`` with a query's raw values (clamped)."""
    values, notices = parse_query(args)
    state = ExplorerState(**values)
    return file_name(name, state), DATASETS[name].make(state), notices


def table_for(name: str, args: dict[str, str]) -> tuple[str, str, list]:
    """``(file name, CSV text, notices)`` for dataset ``name`` with a query's raw values."""
    file, table, notices = prepared(name, args)
    return file, csv_text(table), notices
