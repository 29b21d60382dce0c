"""Lesson section «order»: attention without position reads a bag of words; with PE it does not.

Expected values are derived here without the code under test: attention by plain Python loops,
embeddings from the specification (numpy's default_rng seeded with crc32 of the lower-cased word).
"""

from __future__ import annotations

import html
import math
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model import core
from app.model.state import ExplorerState
from components.lesson.order import OrderIsMeaning
from tests.helpers import press, source_data, wait_for_source, wait_until

ES_PAIR = (["el", "perro", "muerde", "al", "hombre"], ["el", "hombre", "muerde", "al", "perro"])
EN_PAIR = (["the", "dog", "bites", "the", "man"], ["the", "man", "bites", "the", "dog"])


def attention_by_hand(x: list[list[float]], wq, wk, wv) -> list[list[float]]:
    """softmax(Q K^T / sqrt(d)) V, one number at a time."""
    d_model, d = len(x[0]), len(wq[0])

    def project(row, w):
        return [math.fsum(row[a] * w[a][b] for a in range(d_model)) for b in range(d)]

    q = [project(r, wq) for r in x]
    k = [project(r, wk) for r in x]
    v = [project(r, wv) for r in x]
    out = []
    for t in range(len(x)):
        scores = [math.fsum(q[t][j] * k[s][j] for j in range(d)) / math.sqrt(d) for s in range(len(x))]
        top = max(scores)
        weights = [math.exp(z - top) for z in scores]
        total = math.fsum(weights)
        out.append([math.fsum(weights[s] / total * v[s][j] for s in range(len(x))) for j in range(d)])
    return out


def embedding_by_spec(word: str, d_model: int) -> np.ndarray:
    return np.random.default_rng([zlib.crc32(word.lower().encode("utf-8")), 0]).uniform(-1, 1, d_model)


def pe_by_hand(pos: int, d_model: int) -> list[float]:
    row = []
    for i in range(d_model // 2):
        angle = pos / 10000 ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return row


# --------------------------------------------------------------------------
# Core.
# --------------------------------------------------------------------------

def test_embeddings_depend_on_the_word_only():
    e = core.word_embeddings(["Perro", "el", "perro"], 8)
    np.testing.assert_array_equal(e[0], e[2])
    np.testing.assert_array_equal(e[0], embedding_by_spec("perro", 8))
    assert np.all(np.abs(e) <= 1) and not np.array_equal(e[0], e[1])


def test_embeddings_are_the_same_in_another_process():
    code = "from app.model import core; print(core.word_embeddings(['perro'], 6).tolist())"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1
    assert np.allclose(eval(outs.pop()), core.word_embeddings(["perro"], 6))


def test_self_attention_matches_the_loops():
    x = core.word_embeddings(ES_PAIR[0], 6) + core.encoding(5, 6)
    wq, wk, wv = core.attention_head(6)
    np.testing.assert_allclose(core.self_attention(x, wq, wk, wv),
                               attention_by_hand(x.tolist(), wq.tolist(), wk.tolist(), wv.tolist()), atol=1e-12)


@pytest.mark.parametrize("pair", [ES_PAIR, EN_PAIR])
def test_lesson_pair_same_outputs_without_pe_different_with(pair):
    original, current = pair
    d = 8
    wq, wk, wv = (w.tolist() for w in core.attention_head(d))
    e = {w: embedding_by_spec(w, d) for w in original}
    match = core.match_occurrences(original, current)
    for with_pe in (False, True):
        xs = [[list(e[w] + (np.array(pe_by_hand(t, d)) if with_pe else 0)) for t, w in enumerate(s)]
              for s in (original, current)]
        y0, y1 = (np.array(attention_by_hand(x, wq, wk, wv)) for x in xs)
        expected = np.linalg.norm(y0 - y1[match], axis=1)
        got = core.order_differences(original, current, d)[int(with_pe)]
        np.testing.assert_allclose(got, expected, atol=1e-12)
        assert (got.max() < 1e-12) != with_pe
    assert core.order_differences(original, current, d)[1].min() > 0.05


def test_repeated_words_match_in_order():
    assert core.match_occurrences(EN_PAIR[0], EN_PAIR[1]).tolist() == [0, 4, 2, 3, 1]
    assert core.match_occurrences(["a", "A", "b"], ["b", "a", "a"]).tolist() == [1, 2, 0]


@pytest.mark.parametrize(("args", "message"), [
    ((["a", "b"], ["a", "c"]), "reordering"),
    (("a b", "b a"), "sequence of words"),
    ((["a", ""], ["", "a"]), "non-empty"),
])
def test_match_validation(args, message):
    with pytest.raises(ValueError, match=message):
        core.match_occurrences(*args)


def test_argument_validation():
    with pytest.raises(ValueError, match="d_model"):
        core.word_embeddings(["a"], 7)
    with pytest.raises(ValueError, match="seed"):
        core.attention_head(4, seed=-1)
    with pytest.raises(ValueError, match="w_q"):
        core.self_attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 4)))


@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.sampled_from(["a", "b", "c", "dog", "man", "the"]), min_size=2, max_size=12),
       d_half=st.integers(1, 48), data=st.data())
def test_permutation_equivariance(words, d_half, data):
    current = data.draw(st.permutations(words))
    without, with_pe = core.order_differences(words, current, 2 * d_half)
    assert without.max() < 1e-12
    if [w for w in current] != list(words):
        assert with_pe.max() > 1e-6
    else:
        assert with_pe.max() < 1e-12


# --------------------------------------------------------------------------
# The section without a browser.
# --------------------------------------------------------------------------

def test_section_data_follows_the_state():
    state = ExplorerState(lang="es")
    view = OrderIsMeaning(state)
    source = view.outputs
    assert source.data["word"] == ES_PAIR[0]
    np.testing.assert_allclose(source.data["with_pe"], core.order_differences(*ES_PAIR, 32)[1])
    assert max(source.data["without_pe"]) < 1e-12

    state.d_model = 34
    assert view.outputs is source
    np.testing.assert_allclose(source.data["with_pe"], core.order_differences(*ES_PAIR, 34)[1])

    view.shuffle()
    assert sorted(state.sentence.split()) == sorted(ES_PAIR[1]) and state.sentence.split() != ES_PAIR[1]
    assert source.data["word"] == ES_PAIR[0]  # the original stays
    assert source.data["current_pos"] == core.match_occurrences(ES_PAIR[0], state.sentence.split()).tolist()


def test_presented_the_without_pe_numbers_are_said_once_as_their_largest():
    """Presented (type 1.8 times larger) a row holds one line of numbers: twelve words in a 720 px window put
    each 1e-16 over the next row's number. The legend says the largest instead, and follows the sizes."""
    def shown(view: OrderIsMeaning) -> tuple[bool, str]:
        numbers = next(r for r in view.outputs_plot.renderers if r.name == "order_without_pe_numbers")
        return numbers.visible, view.without_item.label["value"]

    assert shown(OrderIsMeaning(ExplorerState(lang="en"))) == (True, "without PE: e only")
    state = ExplorerState(lang="en", present=True)
    view = OrderIsMeaning(state)
    for d_model in (32, 34):
        state.d_model = d_model
        visible, label = shown(view)
        largest = float(core.order_differences(*EN_PAIR, d_model)[0].max())
        assert not visible and label == f"without PE: e only (all ≤ {largest:.1e})"
        assert 0 < largest < 1e-12


def test_typed_sentence_is_escaped_and_becomes_the_original():
    state = ExplorerState(lang="en")
    view = OrderIsMeaning(state)
    state.sentence = "<script>x</script> & y"
    assert view.outputs.data["word"] == ["<script>x</script>", "&", "y"]
    assert max(view.outputs.data["with_pe"]) == 0  # same order until shuffled
    assert "<script>" not in view.readout.object and html.escape("<script>x</script>") in view.readout.object
    view.shuffle()
    assert "<script>" not in view.readout.object
    assert max(view.outputs.data["with_pe"]) > 0.01


def test_presets_set_both_orders():
    state = ExplorerState(lang="en")
    view = OrderIsMeaning(state)
    view.pick("order_preset_3")
    assert view.original_words() == ["it", "is", "not", "good", "it", "is", "bad"]
    assert state.sentence == "it is good it is not bad"
    view.pick("order_lesson")
    assert state.sentence == "" and view.outputs.data["word"] == EN_PAIR[0]


def test_a_typed_sentence_cut_to_fit_says_so_until_another_is_chosen():
    """13 words typed keep 12, and the readout says what was cut (escaped), as the URL's notice does."""
    state = ExplorerState(lang="en")
    view = OrderIsMeaning(state)
    state.sentence = "<b>w1</b> " + " ".join(f"w{n}" for n in range(2, 14))
    assert state.sentence.split() == ["<b>w1</b>"] + [f"w{n}" for n in range(2, 13)]
    assert "was cut" in view.readout.object and "“&lt;b&gt;w1&lt;/b&gt; w2" in view.readout.object
    assert "<b>" not in view.readout.object
    view.pick("order_preset_3")
    assert "was cut" not in view.readout.object
    state.sentence = "supercalifragilisticexpialidocious is long"
    assert state.sentence == "supercalifragilisticexpi is long" and "was cut" in view.readout.object
    state.sentence = "a b c"  # typed whole: no notice
    assert "was cut" not in view.readout.object


def test_a_sentence_with_one_order_is_told_so_and_its_axis_keeps_a_unit_scale():
    state = ExplorerState(lang="es")
    view = OrderIsMeaning(state)
    for sentence in ("gato", "a a a"):
        state.sentence = sentence
        view.shuffle()
        assert state.sentence == sentence
        assert "solo tiene un orden" in view.readout.object, view.readout.object
        # Nothing moves: a unit axis, not one of 1.3e-9 (its ticks printed 2.000e-10 …).
        assert (view.outputs_plot.x_range.start, view.outputs_plot.x_range.end) == (0, 1.3)
        # "Look" says the outputs move once the orders differ ("here by 0.000 to 0.000" with none that can).
        assert view.passage("look").hidden
    one = (view.sentences_plot.height, view.outputs_plot.height)
    state.sentence = "gato perro"
    assert "Barajar" in view.readout.object  # two words: a shuffle can reorder them
    view.shuffle()
    assert not view.passage("look").hidden
    state.sentence = "gato perro pez"
    # A word or two keep the room of three (their figures were too short for their titles and labels).
    assert one == (view.sentences_plot.height, view.outputs_plot.height)


# --------------------------------------------------------------------------
# In the browser.
# --------------------------------------------------------------------------


@pytest.mark.browser
def test_a_sentence_set_back_to_the_lessons_leaves_the_address(page, app_url):
    page.goto(f"{app_url}/order?lang=en&sentence=hello+world")
    wait_for_source(page, "order_outputs", lambda d: list(d["word"]) == ["hello", "world"])
    assert "sentence=hello" in page.evaluate("window.location.search")
    page.get_by_role("button", name=" ".join(EN_PAIR[0])).click()
    wait_for_source(page, "order_outputs", lambda d: list(d["word"]) == EN_PAIR[0])
    wait_until(lambda: "sentence" not in page.evaluate("window.location.search"), timeout=10,
               message="the stale sentence left the address")

@pytest.mark.browser
def test_order_page(page, app_url, console_errors):
    page.goto(f"{app_url}/order?lang=en")
    data = wait_for_source(page, "order_outputs", lambda d: len(d["word"]) == 5)
    assert list(data["word"]) == EN_PAIR[0]
    np.testing.assert_allclose(data["with_pe"], core.order_differences(*EN_PAIR, 32)[1], atol=1e-12)
    assert np.max(data["without_pe"]) < 1e-12

    press(page, "d_model", "ArrowRight")
    expected = core.order_differences(*EN_PAIR, 34)[1]
    wait_for_source(page, "order_outputs", lambda d: np.allclose(d["with_pe"], expected, atol=1e-12))

    page.get_by_role("button", name="Shuffle the words").click()
    data = wait_for_source(page, "order_outputs",
                           lambda d: list(d["current_pos"]) != core.match_occurrences(*EN_PAIR).tolist())
    assert np.max(data["without_pe"]) < 1e-12
    wait_until(lambda: source_data(page, "order_words") is not None)
    assert console_errors == []
