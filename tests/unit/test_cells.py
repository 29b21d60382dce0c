"""The code for this figure (``app.model.cells``): every cell runs alone and prints the figure's numbers.

Each cell is run in a clean interpreter (``python -I``: no site-packages path tricks, no app on the path)
and its printed numbers are compared with ``app.model.core`` for the same state; the expected numbers never
come from the cell's text.
"""

from __future__ import annotations

import ast
import json
import math
import re
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.lesson import SECTIONS
from app.model import core
from app.model.cells import CELLS, cell_source, notebook
from app.model.prose import section_prose
from app.model.state import BASES, ExplorerState
from app.model.strings import text

SLUGS = list(CELLS)
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf", re.IGNORECASE)


def printed_numbers(output: str) -> dict[str, np.ndarray]:
    """``label: numbers`` lines (numpy may wrap an array over several lines) as label -> array."""
    found: dict[str, list[float]] = {}
    label = None
    for line in output.splitlines():
        head, colon, rest = line.rpartition(": ")
        if colon and not line.startswith(" ") and not line.startswith("["):
            label = head
            found[label] = []
        else:
            rest = line
        if label is not None:
            found[label] += [float(x) for x in NUMBER.findall(rest.replace("= d_model/2 =", " "))]
    return {key: np.array(values) for key, values in found.items()}


def run_cell(source: str) -> dict[str, np.ndarray]:
    result = subprocess.run([sys.executable, "-I", "-c", source], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return printed_numbers(result.stdout)


def _starts(k: int, T: int) -> np.ndarray:
    return np.arange(max(0, -k), min(T, T - k))


def expected(slug: str, s: ExplorerState) -> dict[str, np.ndarray | float]:
    """What the figure of ``slug`` shows for ``s``, from ``app.model.core``."""
    d, T, base, k, pos, pair = s.d_model, s.T, s.base, s.k, s.pos, s.pair
    lam = core.wavelengths(d, base)
    norms = core.row_norms(T, d, base, s.mistake)
    target = pos + k
    if slug in ("wavelengths", "ladder"):
        pe = core.encoding(T, d, base, mistake=s.mistake if slug == "ladder" else "none")
        out = {"row 0": pe[0, :6]}
        if slug == "wavelengths" or s.mistake == "none":
            out |= {"wavelengths": lam, "pairs turning within T": core.count_within(lam, T),
                    "row lengths (min, max)": [norms.min(), norms.max()]}
        else:
            columns = core.column_wavelengths(d, base, s.mistake)
            out |= {"column wavelengths": columns, "columns turning within T": core.count_within(columns, T)}
        if slug == "wavelengths":
            out["step between pairs"] = core.ladder_step(d, base)
        else:
            first, second = core.mistake_pair_columns(d, s.mistake)
            out["selected pair's columns at pos"] = pe[pos, [first[pair], second[pair]]]
        return out
    if slug in ("clocks", "hands"):
        rows = core.encoding_rows([pos, target], d, base)
        block = core.rotation_block(pair, k, d, base)
        return {"omega of the pair": core.frequencies(d, base)[pair], "wavelength of the pair": lam[pair],
                "turn from pos to pos + k, radians": core.angles(k, d, base)[pair],
                "hand at pos": rows[0, 2 * pair:2 * pair + 2],
                "hand at pos + k": rows[1, 2 * pair:2 * pair + 2], "block of M_k": block.ravel(),
                "block @ hand - hand at pos + k": [0.0, 0.0]}
    if slug == "distance":
        starts = np.unique(np.round(np.linspace(0, T - 1, 4)).astype(int))
        starts = starts[(starts + k >= 0) & (starts + k < T)]
        return {"S(0) = d_model/2": d / 2, "S(k)": core.relative_scores(k, d, base), "starts p": starts,
                "PE_p . PE_p+k": core.dot_scores(starts, starts + k, d, base, mistake=s.mistake)}
    if slug in ("checks", "mistakes"):
        pe = core.encoding(T, d, base, mistake=s.mistake)
        out = {"sqrt(d_model/2)": core.expected_row_norm(d), "row lengths (min, max)": [norms.min(), norms.max()]}
        if slug == "mistakes":
            out["row lengths"] = norms[:8]
        elif s.mistake == "none":
            out["max |M_k PE_p - PE_p+k|"] = core.rotation_residual(k, T, d, base)
        else:
            out["max |M_k PE_p - PE_p+k|"] = core.fitted_rotation_residual_of(pe, k, s.mistake)
        return out
    if slug == "shift":
        return {"block of the pair": core.rotation_block(pair, k, d, base).ravel(),
                "max |M_k PE_p - PE_p+k|": core.rotation_residual(k, T, d, base)}
    if slug == "score":
        starts = _starts(k, T)
        out = {"S(0), S(1), S(k)": core.relative_scores(np.array([0, 1, k]), d, base),
               "PE_p . PE_p+k, first starts": core.dot_scores(starts[:4], starts[:4] + k, d, base),
               "p.p term, every start": core.position_term_by_start(k, T, d, s.heads, base)[1]}
        if 0 <= target < T:
            out["ee, ep, pe, pp"] = core.qk_terms(pos, target, T, d, s.heads, base)
        return out
    if slug == "sum":
        return {"summed: wavelengths": lam, "concatenated: wavelengths": core.concatenated_wavelengths(s.reserve, base),
                "summed: S(k)": core.relative_scores(k, d, base),
                "concatenated: S_r(k)": core.concatenated_scores(k, s.reserve, base),
                "cross terms e.PE, every start": core.cross_terms_by_start(k, T, d, base)[1]}
    if slug == "fingerprint":
        distances = core.fingerprint_distances(pos, T, d, base, s.pairs_from, s.pairs_to)
        out = {"distance to pos": distances}
        nearest = core.nearest_other(distances, pos)
        if nearest is not None:
            out["nearest other position, distance"] = list(nearest)
        return out
    if slug == "terms":
        return {"cos(omega_i k)": core.score_terms(k, d, base), "S(k) = their sum": core.relative_scores(k, d, base)}
    if slug == "gram":
        g = core.gram(T, d, base)
        return {"G[0, :4]": g[0, :4], "|PE_0 - PE_k|^2 = d_model - 2 S(k)": core.encoding_distances(0, k, d, base)}
    if slug == "quiz":
        return {"a position against itself, PE_p . PE_p": [d / 2, d / 2],
                "row 0 without cosines": core.row_norms(1, d, base, "sin_only")[0]}
    if slug == "question":
        e = core.seeded_word_vector(d, seed=7)
        return {"e": e[:6], "PE_pos": core.encoding_rows(pos, d, base)[:6], "x": core.add_position(e, pos, base)[:6]}
    if slug == "simpler":
        return {"(a) share of pos in |x|^2": core.raw_position_share(pos, d),
                "(b) pos/T from 1": core.relative_position(pos + 1, T),
                "(b) token of L with that value": core.same_ratio_token(pos + 1, T, 300),
                "(c) PE: S(k)": core.relative_scores(k, d, base),
                "(c) PE: row p and p + 1 alike": core.relative_scores(1, d, base) / (d / 2)}
    if slug == "rope":
        e, w_q, w_k = core.seeded_head(d, 0)
        q, key = w_q @ e, w_k @ e
        count = min(T, 64)
        spread = [max(float(np.ptp(np.diagonal(m, o))) for o in range(-(count - 1), count))
                  for m in (core.rope_scores(q, key, count, base), core.additive_scores(e, w_q, w_k, count, base))]
        qm, kn = core.rope_rotate(q, pos, base), core.rope_rotate(key, target, base)
        turn = math.atan2(kn[2 * pair + 1], kn[2 * pair]) - math.atan2(qm[2 * pair + 1], qm[2 * pair])
        return {"rotary: largest spread along a diagonal": spread[0],
                "additive: largest spread along a diagonal": spread[1], "rotary score (m, n)": qm @ kn,
                "pair's angle from q to k, degrees": math.degrees(math.remainder(turn, 2 * math.pi))}
    if slug == "extrapolation":
        t_train = s.T_train
        ladders = {"trained": core.frequencies(d, base),
                   "interpolation": core.interpolated_frequencies(t_train, T, d, base),
                   "ntk": core.ntk_frequencies(t_train, T, d, base) if d >= 4 else core.frequencies(d, base),
                   "yarn": core.yarn_frequencies(t_train, T, d, base)}
        out: dict[str, object] = {}
        for name, w in ladders.items():
            out[f"{name}: unseen pairs"] = core.unseen_pairs(t_train, T, d, base, w).sum()
            out[f"{name}: S(T - 1)"] = core.scores_from_frequencies(T - 1, w)
        slopes = core.alibi_slopes(8)
        return {**out, "YaRN attention factor sqrt(1/t)": core.yarn_attention_factor(core.scale_factor(t_train, T)),
                "ALiBi slopes": slopes, "ALiBi bias at k = T - 1": core.alibi_biases(T - 1, slopes)}
    if slug == "order":
        original = text(s.lang, "order_lesson_original").split()
        current = s.words() or text(s.lang, "order_lesson_current").split()
        without, with_pe = core.order_differences(original, current, d, base)
        return {"without PE": without, "with PE": with_pe}
    raise AssertionError(f"no expectation for {slug}")


#: Residuals of order 1e-15 are compared absolutely; the rest relative to their size.
def assert_matches(slug: str, state: ExplorerState, numbers: dict[str, np.ndarray]) -> None:
    for label, value in expected(slug, state).items():
        assert label in numbers, f"{slug}: no line {label!r} in the output ({list(numbers)})"
        want = np.ravel(np.asarray(value, dtype=float))
        got = numbers[label]
        assert got.shape == want.shape, f"{slug} {label}: {got} vs {want}"
        atol = 1e-12 * max(1.0, state.d_model) if "max |M_k" in label or "spread" in label else 1e-7
        if "spread" in label and want.max() > 1e-6:
            atol = 1e-9
        assert np.allclose(got, want, rtol=1e-7, atol=atol), f"{slug} {label}: {got} vs {want}"


STATES = {
    "default": {},
    "lesson_variant": {"d_model": 64, "T": 100, "base": 500, "k": -7, "lang": "en"},
}


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize("name", list(STATES))
def test_cell_prints_the_figures_numbers(slug: str, name: str) -> None:
    state = ExplorerState(**STATES[name])
    assert_matches(slug, state, run_cell(cell_source(slug, state)))


@pytest.mark.parametrize("slug", ["ladder", "distance", "checks", "mistakes"])
@pytest.mark.parametrize("mistake", ["dim_index", "split_layout", "sin_only", "cos_exponent"])
def test_cells_of_the_views_that_draw_a_mistake(slug: str, mistake: str) -> None:
    state = ExplorerState(d_model=16, T=30, k=2, pair=3, pos=4, mistake=mistake)
    assert_matches(slug, state, run_cell(cell_source(slug, state)))


def test_aligned_heads_score_cell() -> None:
    state = ExplorerState(d_model=8, T=12, k=-2, pos=5, heads="aligned")
    assert_matches("score", state, run_cell(cell_source("score", state)))


small_states = st.builds(
    dict,
    d_model=st.integers(1, 12).map(lambda n: 2 * n), T=st.integers(1, 40), base=st.sampled_from(BASES),
    pos=st.integers(0, 39), k=st.integers(-39, 39), pair=st.integers(0, 11),
    pairs_from=st.integers(0, 11), reserve=st.integers(0, 12).map(lambda n: 2 * n),
    heads=st.sampled_from(["random", "aligned"]), lang=st.sampled_from(["es", "en"]),
)


def clamped(values: dict) -> ExplorerState:
    """A state from drawn values, each kept inside the bounds the sizes allow (as the URL parser would)."""
    d, T = values["d_model"], values["T"]
    return ExplorerState(d_model=d, T=T, base=values["base"], heads=values["heads"], lang=values["lang"],
                         pos=min(values["pos"], T - 1), k=max(-(T - 1), min(values["k"], T - 1)),
                         pair=min(values["pair"], d // 2 - 1), pairs_from=min(values["pairs_from"], d // 2 - 1),
                         reserve=min(values["reserve"], d))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=small_states)
def test_every_cell_for_a_random_small_state(values: dict) -> None:
    state = clamped(values)
    # One interpreter for all the cells of this state: each is its own scope (exec with a fresh dict).
    program = "\n".join(f"print('@@ {slug}')\nexec({cell_source(slug, state)!r}, {{}})" for slug in SLUGS)
    result = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    chunks = result.stdout.split("@@ ")[1:]
    for chunk in chunks:
        slug, _, output = chunk.partition("\n")
        assert_matches(slug, state, printed_numbers(output))
    assert len(chunks) == len(SLUGS)


@pytest.mark.parametrize("slug", SLUGS)
def test_cell_imports_numpy_and_the_standard_library_only(slug: str) -> None:
    tree = ast.parse(cell_source(slug, ExplorerState()))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"numpy", "zlib"}, imported
    assert "numpy" in imported


@pytest.mark.parametrize("lang", ["es", "en"])
def test_cell_title_is_in_the_pages_language_and_the_numbers_are_filled(lang: str) -> None:
    state = ExplorerState(d_model=48, T=30, base=2000, k=5, lang=lang)
    source = cell_source("shift", state)
    first = source.splitlines()[0]
    assert first == f"# {section_prose('shift', lang).title}"
    assert "d_model, T, base = 48, 30, 2000" in source and "k, pair = 5, 0" in source
    assert "{" not in source.replace("{}", "")


def test_notebook_is_nbformat_4_with_the_cells_of_the_state() -> None:
    state = ExplorerState(d_model=16, T=10, k=2, lang="en")
    book = json.loads(json.dumps(notebook(state, SLUGS)))
    validate_notebook(book)
    code = [cell["source"] for cell in book["cells"] if cell["cell_type"] == "code"]
    assert code == [cell_source(slug, state) for slug in SLUGS]


def validate_notebook(book: dict) -> None:
    """The structure nbformat 4 requires (without the nbformat package: the schema's required keys)."""
    assert book["nbformat"] == 4 and isinstance(book["nbformat_minor"], int)
    assert isinstance(book["metadata"], dict)
    for cell in book["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        assert isinstance(cell["metadata"], dict) and isinstance(cell["source"], str | list)
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
        else:
            assert set(cell) == {"cell_type", "metadata", "source"}
    try:
        import nbformat
    except ImportError:
        return
    nbformat.validate(nbformat.from_dict(book))


def get_notebook(app_url: str, query: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (names lower-cased) and body of ``/notebook.ipynb?query``."""
    try:
        with urllib.request.urlopen(f"{app_url}/notebook.ipynb?{query}", timeout=60) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_notebook_route_serves_the_lessons_cells_for_the_query(app_url):
    status, headers, body = get_notebook(app_url, "d_model=64&T=100&base=500&k=-7&lang=en")
    assert status == 200
    assert headers["content-disposition"] == 'attachment; filename="lesson_d64_T100_base500_en.ipynb"'
    book = json.loads(body.decode("utf-8"))
    validate_notebook(book)
    state = ExplorerState(d_model=64, T=100, base=500, k=-7, lang="en")
    code = [cell["source"] for cell in book["cells"] if cell["cell_type"] == "code"]
    assert code == [cell_source(slug, state) for slug in SECTIONS if slug in CELLS]
    titles = [cell["source"] for cell in book["cells"] if cell["cell_type"] == "markdown"][1:]
    assert titles == [f"## {section_prose(slug, 'en').title}" for slug in SECTIONS if slug in CELLS]


def test_notebook_route_clamps_bad_input_without_a_traceback(app_url):
    status, headers, body = get_notebook(app_url, "d_model=7&T=abc&k=99999&base=-3&lang=xx&pos=%00")
    assert status == 200
    assert {n[0] for n in json.loads(headers["x-pe-notices"])} >= {"d_model", "T", "k", "base", "lang"}
    book = json.loads(body.decode("utf-8"))
    validate_notebook(book)
    state = ExplorerState(d_model=8, T=24, k=23, base=2)
    code = [cell["source"] for cell in book["cells"] if cell["cell_type"] == "code"]
    assert code == [cell_source(slug, state) for slug in SECTIONS if slug in CELLS]
    assert b"Traceback" not in body


@pytest.mark.parametrize("sentence", ["the dog bites the man", "O'Brien said \"no\" to the the cat"])
def test_order_cell_for_a_typed_sentence(sentence: str) -> None:
    state = ExplorerState(sentence=sentence, d_model=12, lang="en")
    original = list(reversed(state.words()))
    numbers = run_cell(cell_source("order", state, {"original": " ".join(original)}))
    without, with_pe = core.order_differences(original, state.words(), 12, state.base)
    assert np.allclose(numbers["without PE"], without, atol=1e-12)
    assert np.allclose(numbers["with PE"], with_pe, rtol=1e-7, atol=1e-9)
