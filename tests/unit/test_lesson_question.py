"""Section 10, «an open question»: e, PE_pos and x = e + PE_pos for one word; the link to the RoPE section."""

from __future__ import annotations

import math
from urllib.parse import urlparse

import numpy as np
import panel as pn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import text
from components.lesson import question
from components.lesson.question import WORD_SEED, OpenQuestion
from tests.helpers import press, source_data, wait_for_source, wait_until


def pe_row(pos: int, d_model: int, base: float = 10_000.0) -> np.ndarray:
    """PE[pos] written out from the paper's formula, one coordinate at a time."""
    row = []
    for i in range(d_model // 2):
        angle = pos / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return np.array(row)


@pytest.mark.parametrize(("args", "message"), [
    ((3,), "d_model must be an even integer >= 2"),
    ((0,), "d_model must be an even integer >= 2"),
    ((8, -1), "seed must be an integer >= 0"),
    ((8, 0, 0.0), "scale must be a finite real number > 0"),
    ((8, 0, float("nan")), "scale must be finite"),
])
def test_seeded_word_vector_validates(args, message):
    with pytest.raises(ValueError, match=message):
        core.seeded_word_vector(*args)


@pytest.mark.parametrize(("embedding", "pos", "message"), [
    ([1.0, 2.0, 3.0], 0, "embedding must be a vector of even length"),
    ([[1.0, 2.0]], 0, "embedding must be a vector of even length"),
    ([1.0, float("inf")], 0, "embedding must be finite"),
    ([1.0, 2.0], float("nan"), "pos must be finite"),
    ([1.0, 2.0], [1, 2], "pos must be a single finite real number"),
])
def test_add_position_validates(embedding, pos, message):
    with pytest.raises(ValueError, match=message):
        core.add_position(embedding, pos)


def test_seeded_word_vector_is_reproducible():
    e = core.seeded_word_vector(32, seed=WORD_SEED)
    assert e.shape == (32,)
    np.testing.assert_array_equal(e, core.seeded_word_vector(32, seed=WORD_SEED))
    np.testing.assert_array_equal(e, 0.5 * np.random.default_rng(WORD_SEED).standard_normal(32))
    assert not np.array_equal(e, core.seeded_word_vector(32, seed=WORD_SEED + 1))


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 64), pos=st.integers(0, 2047), seed=st.integers(0, 1000))
def test_add_position_is_the_embedding_plus_the_row(half, pos, seed):
    d_model = 2 * half
    e = core.seeded_word_vector(d_model, seed)
    x = core.add_position(e, pos)
    np.testing.assert_allclose(x, e + pe_row(pos, d_model), rtol=0, atol=1e-9)
    # What was added has the length of every row: sqrt(d_model / 2).
    assert np.linalg.norm(x - e) == pytest.approx(math.sqrt(d_model / 2), abs=1e-9)


def test_sources_follow_pos_and_d_model_in_place():
    state = ExplorerState(lang="en", d_model=32, T=24)
    section = OpenQuestion(state)
    section.layout()
    sources = dict(section.sources)
    e = sources["embedding"].data["value"].copy()
    np.testing.assert_allclose(sources["encoding"].data["value"], pe_row(0, 32), atol=1e-12)
    state.pos = 5
    assert section.sources == sources and all(section.sources[k] is sources[k] for k in sources)
    np.testing.assert_array_equal(sources["embedding"].data["value"], e)  # the word does not move
    np.testing.assert_allclose(sources["encoding"].data["value"], pe_row(5, 32), atol=1e-12)
    np.testing.assert_allclose(sources["sum"].data["value"], e + pe_row(5, 32), atol=1e-12)
    assert section.passage("intro").values["pos"] == "5"
    state.d_model = 8
    assert sources["embedding"].data["coordinate"].tolist() == list(range(8))
    np.testing.assert_allclose(sources["sum"].data["value"],
                               core.seeded_word_vector(8, WORD_SEED) + pe_row(5, 8), atol=1e-12)
    assert section.x_range.end == 7.5
    assert section.passage("look").values["norm"] == "2.00"


def test_the_link_points_to_the_rope_anchor_on_the_lesson_page():
    section = OpenQuestion(ExplorerState(lang="es"))
    assert section.link.links == [[text("es", "question_rope_link"), "", "rope"]]
    assert section.prose.title == "Una pregunta abierta"


def test_the_link_points_to_the_rope_route_when_the_section_stands_alone(monkeypatch):
    monkeypatch.setattr(type(pn.state), "app_url", property(lambda self: "http://host:5006/question"))
    assert question.stands_alone("question")
    section = OpenQuestion(ExplorerState(lang="en"))
    assert section.link.links == [[text("en", "question_rope_link"), "/rope", ""]]
    monkeypatch.setattr(type(pn.state), "app_url", property(lambda self: "http://host:5006/"))
    assert not question.stands_alone("question")


@pytest.mark.browser
def test_question_page_bars_follow_the_keyboard(page, app_url, console_errors):
    page.goto(f"{app_url}/question?lang=en&d_model=32&T=24&pos=0")
    encoding = wait_for_source(page, "question_encoding", lambda d: len(d["value"]) == 32)
    np.testing.assert_allclose(encoding["value"], core.encoding_rows(0, 32), atol=1e-12)
    e = source_data(page, "question_embedding")["value"]
    np.testing.assert_allclose(e, core.seeded_word_vector(32, WORD_SEED), atol=1e-12)

    press(page, text("en", "pos"), "ArrowRight", times=2)
    wait_for_source(page, "question_encoding", lambda d: np.allclose(d["value"], pe_row(2, 32), atol=1e-9))
    total = wait_for_source(page, "question_sum", lambda d: np.allclose(d["value"], e + pe_row(2, 32), atol=1e-9))
    assert len(total["value"]) == 32
    np.testing.assert_array_equal(source_data(page, "question_embedding")["value"], e)

    link = page.get_by_role("link", name=text("en", "question_rope_link"))
    wait_until(lambda: link.count() == 1, message="no link to the RoPE section")
    href = urlparse(link.get_attribute("href"))
    assert href.path == "/rope" and "lang=en" in href.query
    assert console_errors == []
