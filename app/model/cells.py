""""The code for this figure": a short NumPy cell per lesson section and per view, filled from the state.

Each cell is what a student would type to get the numbers a figure shows: NumPy only (no import of this
app), 5–20 lines, ending in ``print`` calls whose labels say what each number is. The code is English; its
first line, a comment, is the section's title in the page's language. ``CELLS`` maps a section's or
view's slug to the function that writes its source; a new section gets its code part by adding one entry.

The seeded stand-ins (embeddings, weights) are drawn exactly as ``app.model.core`` draws them (the same
``numpy.random.default_rng`` seeds), so the printed numbers are the figure's own (tests/unit/test_cells.py
runs every cell in a clean interpreter and compares).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from app.model.prose import section_prose
from app.model.state import ExplorerState
from app.model.strings import text

#: The correct table, built as the first lesson's first cell does: two slices, no loop.
TABLE = """\
positions = np.arange(T)[:, None]
omega = base ** (-np.arange(0, d_model, 2) / d_model)  # one angular speed per pair
PE = np.zeros((T, d_model))
PE[:, 0::2] = np.sin(positions * omega)  # two slices, no loop
PE[:, 1::2] = np.cos(positions * omega)"""

#: A published bug's table (components/lesson/mistakes): every column from its speed and whether it is a sine.
BUGGY_SPEEDS = {
    "dim_index": ("base ** (-2 * j / d_model)", "j % 2 == 0", "the column index j used as the pair index i"),
    "cos_exponent": ("base ** (-j / d_model)", "j % 2 == 0", "the cosine's exponent written with 2i+1"),
    "split_layout": ("np.concatenate([omega, omega])", "j < d_model // 2", "every sine first, then every cosine"),
    "sin_only": ("np.repeat(omega, 2)", "np.ones(d_model, dtype=bool)", "the cosine line a copy of the sine"),
}


def table_lines(mistake: str = "none") -> str:
    """The lines that build ``PE`` (and ``omega``), correct or with one of the published bugs."""
    if mistake == "none":
        return TABLE
    speed, sine, why = BUGGY_SPEEDS[mistake]
    return f"""\
positions = np.arange(T)[:, None]
omega = base ** (-np.arange(0, d_model, 2) / d_model)
j = np.arange(d_model)
speed, sine = {speed}, {sine}  # bug: {why}
PE = np.where(sine, np.sin(positions * speed), np.cos(positions * speed))"""


def _sizes(s: ExplorerState) -> str:
    return f"d_model, T, base = {s.d_model}, {s.T}, {s.base}"


def _cell(title: str, *blocks: str) -> str:
    return "\n".join([f"# {title}", "import numpy as np", "", *blocks]).rstrip() + "\n"


# -- the views ---------------------------------------------------------------------------------------

def _ladder(s: ExplorerState, title: str, **_: object) -> str:
    rows = [f"pair, pos, k = {s.pair}, {s.pos}, {s.k}", table_lines(s.mistake), ""]
    if s.mistake == "none":
        rows += ["wavelengths = 2 * np.pi / omega",
                 'print("row 0:", PE[0, :6])',
                 'print("wavelengths:", wavelengths)',
                 'print("pairs turning within T:", np.sum(wavelengths <= T))',
                 'print("row lengths (min, max):", np.linalg.norm(PE, axis=1).min(), np.linalg.norm(PE, axis=1).max())']
    else:
        rows += ["wavelengths = 2 * np.pi / speed  # one per column",
                 'print("row 0:", PE[0, :6])',
                 'print("column wavelengths:", wavelengths)',
                 'print("columns turning within T:", np.sum(wavelengths <= T))']
    rows += ['print("selected pair\'s columns at pos:", PE[pos, 2 * pair:2 * pair + 2])'
             if s.mistake != "split_layout" else
             'print("selected pair\'s columns at pos:", PE[pos, [pair, d_model // 2 + pair]])']
    return _cell(title, _sizes(s), *rows)


def _clocks(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"""\
pair, pos, k = {s.pair}, {s.pos}, {s.k}
omega = base ** (-np.arange(0, d_model, 2) / d_model)
hands = np.stack([np.sin(pos * omega), np.cos(pos * omega)], axis=1)  # (PE_2i, PE_2i+1) of pos
after = np.stack([np.sin((pos + k) * omega), np.cos((pos + k) * omega)], axis=1)
c, s = np.cos(omega[pair] * k), np.sin(omega[pair] * k)
block = np.array([[c, s], [-s, c]])  # pair's 2x2 block of M_k
print("omega of the pair:", omega[pair])
print("wavelength of the pair:", 2 * np.pi / omega[pair])
print("turn from pos to pos + k, radians:", omega[pair] * k)
print("hand at pos:", hands[pair])
print("hand at pos + k:", after[pair])
print("block of M_k:", block.ravel())
print("block @ hand - hand at pos + k:", block @ hands[pair] - after[pair])
""")


def _distance(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"k = {s.k}", table_lines(s.mistake), """
S = lambda k: np.sum(np.cos(omega * k))  # the score of two positions k apart
starts = np.unique(np.round(np.linspace(0, T - 1, 4)).astype(int))
starts = starts[(starts + k >= 0) & (starts + k < T)]
print("S(0) = d_model/2:", S(0))
print("S(k):", S(k))
print("starts p:", starts)
print("PE_p . PE_p+k:", np.einsum("pj,pj->p", PE[starts], PE[starts + k]))
""")


def _checks(s: ExplorerState, title: str, **_: object) -> str:
    if s.mistake == "none":
        residual = """\
c, s = np.cos(omega * k), np.sin(omega * k)
M = np.zeros((d_model, d_model))  # M_k: one 2x2 rotation per pair
M[0::2, 0::2], M[0::2, 1::2] = np.diag(c), np.diag(s)
M[1::2, 0::2], M[1::2, 1::2] = np.diag(-s), np.diag(c)
p = np.arange(max(0, -k), min(T, T - k))  # both p and p + k in the table
print("max |M_k PE_p - PE_p+k|:", np.abs(PE[p] @ M.T - PE[p + k]).max() if p.size else 0.0)"""
    else:
        first, second = (("np.arange(d_model // 2)", "d_model // 2 + np.arange(d_model // 2)")
                         if s.mistake == "split_layout" else ("j[0::2]", "j[1::2]"))
        residual = f"""\
z = PE[:, {second}] + 1j * PE[:, {first}]  # each pair as cos + i sin
p = np.arange(max(0, -k), min(T, T - k))
fit = np.sum(z[p].conj() * z[p + k], axis=0)  # best angle per pair: one rotation for every p
size = np.abs(fit)
turn = np.divide(fit, size, out=np.ones_like(fit), where=size > 0)  # e^(i theta); 1 where no angle fits
diff = z[p] * turn - z[p + k]
print("max |M_k PE_p - PE_p+k|:", max(np.abs(diff.real).max(), np.abs(diff.imag).max()) if p.size else 0.0)"""
    return _cell(title, _sizes(s), f"k = {s.k}", table_lines(s.mistake), "", """\
lengths = np.linalg.norm(PE, axis=1)
print("sqrt(d_model/2):", np.sqrt(d_model / 2))
print("row lengths (min, max):", lengths.min(), lengths.max())""", residual)


# -- the lesson's sections ---------------------------------------------------------------------------

def _order(s: ExplorerState, title: str, original: str = "", current: str = "", **_: object) -> str:
    words = current.split() or s.words() or text(s.lang, "order_lesson_current").split()
    lesson = text(s.lang, "order_lesson_original").split()
    before = original.split() or (lesson if sorted(map(str.lower, lesson)) == sorted(map(str.lower, words))
                                  else words)
    return _cell(title, "import zlib", "", f"""\
d_model, base = {s.d_model}, {s.base}
original = {json.dumps(before, ensure_ascii=False)}
current = {json.dumps(words, ensure_ascii=False)}
def embed(w):  # one seeded random vector per word, the same wherever it stands
    return np.random.default_rng([zlib.crc32(w.lower().encode()), 0]).uniform(-1, 1, d_model)
rng = np.random.default_rng([0x5EED, 0, d_model])
W_Q, W_K, W_V = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
def attend(x):  # one head of self-attention, no mask, no position
    scores = (x @ W_Q) @ (x @ W_K).T / np.sqrt(d_model)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ (x @ W_V)
t = np.arange(len(original))[:, None]
PE = np.zeros((len(original), d_model))
omega = base ** (-np.arange(0, d_model, 2) / d_model)
PE[:, 0::2], PE[:, 1::2] = np.sin(t * omega), np.cos(t * omega)
m = []  # each word of original: its place in current (a repeated word matched in order)
for w in original:
    m.append(next(j for j, v in enumerate(current) if v.lower() == w.lower() and j not in m))
x, y = np.array([embed(w) for w in original]), np.array([embed(w) for w in current])
print("without PE:", np.linalg.norm(attend(x) - attend(y)[m], axis=1))
print("with PE:", np.linalg.norm(attend(x + PE) - attend(y + PE)[m], axis=1))
""")


def _simpler(s: ExplorerState, title: str, other_length: int = 300, **_: object) -> str:
    return _cell(title, _sizes(s), f"""\
pos, k, L = {s.pos}, {s.k}, {other_length}
e = np.random.default_rng([0x70C, 0]).uniform(-1, 1, d_model)  # one seeded token vector
rest = np.sum(e[1:] ** 2)
print("(a) share of pos in |x|^2:", pos**2 / (pos**2 + rest))
print("(b) pos/T from 1:", (pos + 1) / T)
print("(b) token of L with that value:", (pos + 1) * L / T)
omega = base ** (-np.arange(0, d_model, 2) / d_model)
print("(c) PE: S(k):", np.sum(np.cos(omega * k)))
print("(c) PE: row p and p + 1 alike:", np.sum(np.cos(omega)) / (d_model / 2))
""")


def _fingerprint(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"pos, first, last = {s.pos}, {s.pairs_from}, {s.pairs_to}", """\
omega = base ** (-np.arange(0, d_model, 2) / d_model)[first:last + 1]  # only the pairs first .. last
q = np.arange(T)[:, None]
# |PE_pos - PE_q| over those pairs: each adds (sin a - sin b)^2 + (cos a - cos b)^2 = 4 sin^2((a - b) / 2)
distances = 2 * np.sqrt(np.sum(np.sin(omega * (pos - q) / 2) ** 2, axis=1))
others = np.delete(np.arange(T), pos)
print("distance to pos:", distances)
if others.size:
    q = others[np.argmin(distances[others])]
    print("nearest other position, distance:", q, distances[q])
""")


def _wavelengths(s: ExplorerState, title: str, **_: object) -> str:
    # The first lesson's first cell: the table from two slices, its ladder, every row of the same length.
    return _cell(title, _sizes(s), TABLE, """
wavelengths = 2 * np.pi / omega
print("row 0:", PE[0, :6])
print("wavelengths:", wavelengths)
print("step between pairs:", base ** (2 / d_model))
print("pairs turning within T:", np.sum(wavelengths <= T))
print("row lengths (min, max):", np.linalg.norm(PE, axis=1).min(), np.linalg.norm(PE, axis=1).max())
""")


def _hands(s: ExplorerState, title: str, **kw: object) -> str:
    return _clocks(s, title, **kw)


def _shift(s: ExplorerState, title: str, **_: object) -> str:
    # The first lesson's second cell, first half: one M_k moves every row by k.
    return _cell(title, _sizes(s), f"k, pair = {s.k}, {s.pair}", TABLE, """
c, s = np.cos(omega * k), np.sin(omega * k)
M = np.zeros((d_model, d_model))  # M_k: one 2x2 rotation per pair, no pos anywhere
M[0::2, 0::2], M[0::2, 1::2] = np.diag(c), np.diag(s)
M[1::2, 0::2], M[1::2, 1::2] = np.diag(-s), np.diag(c)
p = np.arange(max(0, -k), min(T, T - k))  # both p and p + k in the table
print("block of the pair:", M[2 * pair:2 * pair + 2, 2 * pair:2 * pair + 2].ravel())
print("max |M_k PE_p - PE_p+k|:", np.abs(PE[p] @ M.T - PE[p + k]).max() if p.size else 0.0)
""")


def _score(s: ExplorerState, title: str, **_: object) -> str:
    # The first lesson's second cell, second half: the same score from every start, then a real head's four terms.
    head = ("""\
W = rng.standard_normal((2, d_model, d_model)) / np.sqrt(d_model)
A = W[0].T @ W[1]  # W_Q^T W_K, random heads""" if s.heads == "random" else """\
Q, R = np.linalg.qr(rng.standard_normal((d_model, d_model)))
Q *= np.where(np.diag(R) < 0, -1.0, 1.0)
size, phi = rng.uniform(0.5, 1.5, d_model // 2), rng.uniform(-np.pi, np.pi, d_model // 2)
B = np.zeros((d_model, d_model))  # a scaled rotation per pair
B[0::2, 0::2], B[0::2, 1::2] = np.diag(size * np.cos(phi)), np.diag(size * np.sin(phi))
B[1::2, 0::2], B[1::2, 1::2] = np.diag(-size * np.sin(phi)), np.diag(size * np.cos(phi))
A = Q.T @ (Q @ B)  # W_Q^T W_K, aligned heads""")
    heads = 0 if s.heads == "random" else 1
    return _cell(title, _sizes(s), f"pos, k = {s.pos}, {s.k}", TABLE, f"""
starts = np.arange(max(0, -k), min(T, T - k))
print("S(0), S(1), S(k):", np.sum(np.cos(omega * 0)), np.sum(np.cos(omega * 1)), np.sum(np.cos(omega * k)))
print("PE_p . PE_p+k, first starts:", np.einsum("pj,pj->p", PE[starts], PE[starts + k])[:4])
e = np.random.default_rng([2017, d_model]).standard_normal((T, d_model)) * np.sqrt(0.5)  # stand-in words
rng = np.random.default_rng([1706, d_model, {heads}])
{head}
print("p.p term, every start:", np.einsum("pj,pj->p", (PE @ A)[starts], PE[starts + k]))
m, n = pos, pos + k
if 0 <= n < T:
    print("ee, ep, pe, pp:", e[m] @ A @ e[n], e[m] @ A @ PE[n], PE[m] @ A @ e[n], PE[m] @ A @ PE[n])
""")


def _sum(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"k, r = {s.k}, {s.reserve}  # r coordinates kept for position", TABLE, """
print("summed: wavelengths:", 2 * np.pi / omega)
print("concatenated: wavelengths:", 2 * np.pi * base ** (np.arange(0, r, 2) / r) if r else np.array([]))
print("summed: S(k):", np.sum(np.cos(omega * k)))
print("concatenated: S_r(k):", np.sum(np.cos(k * base ** (-np.arange(0, r, 2) / r))) if r else 0.0)
e = np.random.default_rng([2017, d_model]).standard_normal((T, d_model)) * np.sqrt(0.5)  # stand-in words
m = np.arange(max(0, -k), min(T, T - k))
print("cross terms e.PE, every start:", np.einsum("pj,pj->p", e[m], PE[m + k]) + np.einsum("pj,pj->p", PE[m], e[m + k]))
""")


def _quiz(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), TABLE, """
print("a position against itself, PE_p . PE_p:", PE[0] @ PE[0], "= d_model/2 =", d_model / 2)
PE_sin_only = np.sin(positions * np.repeat(omega, 2))  # what removing the cosines leaves
print("row 0 without cosines:", np.linalg.norm(PE_sin_only[0]))
""")


def _question(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, f"d_model, base, pos = {s.d_model}, {s.base}, {s.pos}", """\
e = 0.5 * np.random.default_rng(7).standard_normal(d_model)  # the word's own vector (a seeded stand-in)
omega = base ** (-np.arange(0, d_model, 2) / d_model)
PE_pos = np.zeros(d_model)
PE_pos[0::2], PE_pos[1::2] = np.sin(pos * omega), np.cos(pos * omega)
x = e + PE_pos  # what the first layer receives: position added once, before any attention
print("e:", e[:6])
print("PE_pos:", PE_pos[:6])
print("x:", x[:6])
""")


def _terms(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"k = {s.k}", """\
omega = base ** (-np.arange(0, d_model, 2) / d_model)
terms = np.cos(omega * k)  # one clock's cosine per pair
print("cos(omega_i k):", terms)
print("S(k) = their sum:", terms.sum())
""")


def _gram(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"pos, k = {s.pos}, {s.k}", TABLE, """
G = PE @ PE.T  # every pair of positions; constant along each diagonal
offsets = np.arange(-(T - 1), T)
along = [np.ptp(np.diagonal(G, o)) for o in offsets]
print("G[0, :4]:", G[0, :4])
print("largest spread along a diagonal:", max(along))
print("|PE_0 - PE_k|^2 = d_model - 2 S(k):", d_model - 2 * np.sum(np.cos(omega * k)))
""")


def _rope(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), f"pair, m, n = {s.pair}, {s.pos}, {s.pos + s.k}", """\
count = min(T, 64)  # positions drawn
e = np.random.default_rng(0).standard_normal(d_model)  # a seeded word
W = np.random.default_rng([0, d_model, 0]).standard_normal((2, d_model, d_model)) / np.sqrt(d_model)
W_Q, W_K = W
omega = base ** (-np.arange(0, d_model, 2) / d_model)
def rope(x, m):  # R_m x: pair i turned by m omega_i
    c, s = np.cos(m * omega), np.sin(m * omega)
    out = np.empty(d_model)
    out[0::2], out[1::2] = x[0::2] * c - x[1::2] * s, x[0::2] * s + x[1::2] * c
    return out
q, k = W_Q @ e, W_K @ e
rotary = np.array([[rope(q, a) @ rope(k, b) for b in range(count)] for a in range(count)])
t = np.arange(count)[:, None]
PE = np.zeros((count, d_model))
PE[:, 0::2], PE[:, 1::2] = np.sin(t * omega), np.cos(t * omega)
additive = ((e + PE) @ W_Q.T) @ ((e + PE) @ W_K.T).T
spread = lambda S: max(np.ptp(np.diagonal(S, o)) for o in range(-(count - 1), count))
print("rotary: largest spread along a diagonal:", spread(rotary))
print("additive: largest spread along a diagonal:", spread(additive))
qm, kn = rope(q, m), rope(k, n)
print("rotary score (m, n):", qm @ kn)
turn = np.arctan2(kn[2 * pair + 1], kn[2 * pair]) - np.arctan2(qm[2 * pair + 1], qm[2 * pair])
print("pair's angle from q to k, degrees:", np.degrees((turn + np.pi) % (2 * np.pi) - np.pi))
""")


def _mistakes(s: ExplorerState, title: str, **_: object) -> str:
    return _cell(title, _sizes(s), table_lines(s.mistake), """
lengths = np.linalg.norm(PE, axis=1)
print("sqrt(d_model/2):", np.sqrt(d_model / 2))
print("row lengths:", lengths[:8])
print("row lengths (min, max):", lengths.min(), lengths.max())
""")


CellWriter = Callable[..., str]

#: Slug (a lesson section's or a view's) -> the function writing its cell. A new section: one entry here.
def _extrapolation(s: ExplorerState, title: str, **_: object) -> str:
    # Every ladder the section draws, from the formulas of the papers it cites; the pairs marked unseen.
    return _cell(title, _sizes(s), f"T_train, heads = {s.T_train}, 8", """\
omega = base ** (-np.arange(0, d_model, 2) / d_model)  # the ladder as trained
s = max(1.0, T / T_train)  # the scale factor
turns = T_train * omega / (2 * np.pi)  # YaRN's r_i: turns in training
ramp = np.clip((turns - 1) / (32 - 1), 0, 1)  # YaRN's gamma, alpha = 1, beta = 32
i = np.arange(d_model // 2)
ladders = {
    "trained": omega,
    "interpolation": omega / s,  # Chen et al. 2023: positions scaled by T_train / T
    "ntk": omega * s ** (-i / max(1, i.size - 1)),  # base * s^(d/(d-2)) (bloc97 2023)
    "yarn": (1 - ramp) * omega / s + ramp * omega,  # Peng et al. 2023
}
reach = (T_train - 1) * omega  # the largest angle each pair met in training
for name, w in ladders.items():
    unseen = (reach < 2 * np.pi) & ((T - 1) * w > reach)
    print(f"{name}: unseen pairs:", unseen.sum())
    print(f"{name}: S(T - 1):", np.cos((T - 1) * w).sum())
print("YaRN attention factor sqrt(1/t):", 0.1 * np.log(s) + 1)
slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)  # ALiBi, Press et al. 2022
print("ALiBi slopes:", slopes)
print("ALiBi bias at k = T - 1:", -slopes * (T - 1))
""")


CELLS: dict[str, CellWriter] = {
    "order": _order, "simpler": _simpler, "fingerprint": _fingerprint, "wavelengths": _wavelengths,
    "hands": _hands, "shift": _shift, "score": _score, "sum": _sum, "quiz": _quiz, "question": _question,
    "terms": _terms, "gram": _gram, "rope": _rope, "extrapolation": _extrapolation, "mistakes": _mistakes,
    "ladder": _ladder, "clocks": _clocks, "distance": _distance, "checks": _checks,
}

#: The views' title keys in the string tables (a section's title is its prose's first line).
VIEW_TITLES = {"ladder": "ladder_title", "clocks": "clocks_title", "distance": "distance_title",
               "checks": "checks_title"}


def cell_title(slug: str, lang: str) -> str:
    """The title of slug's section or view in ``lang``."""
    if slug in VIEW_TITLES:
        return text(lang, VIEW_TITLES[slug])
    return section_prose(slug, lang).title


def cell_source(slug: str, state: ExplorerState, context: Mapping[str, object] | None = None) -> str:
    """The NumPy cell of ``slug`` for ``state``: its numbers filled in, its title in ``state.lang``.

    ``context`` carries a section's own choices that are not in the state (the order section's original
    sentence, the simpler section's second length ``other_length``).
    """
    return CELLS[slug](state, cell_title(slug, state.lang), **(context or {}))


def notebook(state: ExplorerState, slugs: list[str], contexts: Mapping[str, Mapping[str, object]] | None = None
             ) -> dict[str, object]:
    """An nbformat-4 notebook (plain JSON-ready dict): for each slug with a cell, a title cell and its code."""
    cells: list[dict[str, object]] = [
        {"cell_type": "markdown", "metadata": {},
         "source": f"# {text(state.lang, 'page_title')}\n\n{text(state.lang, 'cell_notebook_intro')}"}]
    for slug in slugs:
        if slug not in CELLS:
            continue
        cells.append({"cell_type": "markdown", "metadata": {}, "source": f"## {cell_title(slug, state.lang)}"})
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                      "source": cell_source(slug, state, (contexts or {}).get(slug))})
    return {"nbformat": 4, "nbformat_minor": 4, "cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}
