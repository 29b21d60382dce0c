"""Section 9, «check yourself»: five questions checked in the page; question 3's options follow d_model."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from playwright.sync_api import expect

from app.model.state import ExplorerState
from app.model.strings import text
from components.lesson.quiz import FIXED, CheckYourself, format_option, self_score_options
from tests.helpers import model_property, wait_until


def self_score(d_model: int) -> float:
    """PE_pos · PE_pos written out: every pair contributes sin² + cos² = 1."""
    return float(sum(math.sin(0.3 * i) ** 2 + math.cos(0.3 * i) ** 2 for i in range(d_model // 2)))


def test_question_3_options_for_the_lesson_size():
    options, right = self_score_options(32)
    assert [format_option(v) for _, v in options] == ["1", "4", "16", "32"]
    assert options[right][1] == self_score(32) == 16


def test_question_3_options_with_a_single_pair():
    # d_model = 2: sqrt(d/2) = 1 = d/2 and 1 = d/2; neither may pose as a second right answer.
    options, right = self_score_options(2)
    labels = [format_option(v) for _, v in options]
    assert labels == ["0.5", "1", "2", "4"] and labels[right] == "1"


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 512))
def test_question_3_has_one_right_answer_among_distinct_numbers(half):
    d_model = 2 * half
    options, right = self_score_options(d_model)
    values = [v for _, v in options]
    labels = [format_option(v) for v in values]
    assert len(values) == 4 and len(set(labels)) == 4
    assert values == sorted(values)
    assert sum(math.isclose(v, self_score(d_model), rel_tol=1e-12) for v in values) == 1
    assert math.isclose(values[right], d_model / 2, rel_tol=1e-12)


def test_every_option_has_an_explanation_in_both_languages():
    for lang in ("es", "en"):
        section = CheckYourself(ExplorerState(lang=lang))
        for n in (1, 2, 3, 4, 5):
            labels = section.choices[n].labels
            assert len(labels) == 4
            whys = {section.explanation(n, i) for i in range(4)}
            assert len(whys) == 4 and all(whys)
        for _, right in FIXED.values():
            assert 0 <= right < 4


def test_feedback_says_correct_or_not_in_words():
    state = ExplorerState(lang="en")
    section = CheckYourself(state)
    section.layout()
    feedback = section.feedback[5]
    assert feedback.object == ""
    section.choices[5].choice = FIXED[5][0].index("separable")  # the tempting wrong answer
    assert text("en", "quiz_wrong") in feedback.object and "✘" in feedback.object
    assert "plausible, not proven" in feedback.object
    section.choices[5].choice = FIXED[5][1]
    assert text("en", "quiz_correct") in feedback.object and "✔" in feedback.object


def test_question_3_follows_d_model_and_forgets_the_answer():
    state = ExplorerState(lang="en", d_model=32)
    section = CheckYourself(state)
    choice = section.choices[3]
    choice.choice = 2
    assert "16" in section.feedback[3].object and text("en", "quiz_correct") in section.feedback[3].object
    state.d_model = 8
    assert section.choices[3] is choice
    assert choice.labels == ["1", "2", "4", "8"] and choice.choice == -1
    assert section.feedback[3].object == ""
    assert section.passage("q3").values["d_model"] == "8"
    choice.choice = 0  # "1": one pair's share
    feedback = section.feedback[3].object
    assert text("en", "quiz_wrong") in feedback and "number of pairs is 4" in feedback


def test_option_text_is_escaped_in_the_feedback():
    section = CheckYourself(ExplorerState(lang="en"))
    section.choices[3].choice = 1  # 4 = sqrt(d_model/2): "the row's length"
    assert "<strong>" in section.feedback[3].object and "row&#x27;s length" in section.feedback[3].object


def feedback_text(page, n: int) -> str:
    return model_property(page, f"quiz_feedback_{n}", "text") or ""


@pytest.mark.browser
def test_quiz_answers_are_checked_in_the_page(page, app_url, console_errors):
    page.goto(f"{app_url}/quiz?lang=en&d_model=32")
    wrong = page.get_by_label(text("en", "quiz_1_float"), exact=True)
    expect(wrong).to_be_visible()
    wrong.click()
    wait_until(lambda: text("en", "quiz_wrong") in feedback_text(page, 1), message="no 'Not quite' for a wrong answer")
    assert model_property(page, "quiz_1", "choice") == 0
    expect(page.get_by_text(text("en", "quiz_1_float_why"))).to_be_visible()
    page.get_by_label(text("en", "quiz_1_scale"), exact=True).click()
    wait_until(lambda: text("en", "quiz_correct") in feedback_text(page, 1), message="no 'Correct' for the right one")

    # Keyboard: focus question 2's first option, then the arrow key moves the choice to the next one.
    first = page.get_by_label(text("en", "quiz_2_pos"), exact=True)
    first.focus()
    page.keyboard.press("Space")
    wait_until(lambda: text("en", "quiz_wrong") in feedback_text(page, 2), message="Space did not choose")
    page.keyboard.press("ArrowDown")
    wait_until(lambda: text("en", "quiz_correct") in feedback_text(page, 2), message="ArrowDown did not choose")
    assert model_property(page, "quiz_2", "choice") == FIXED[2][1]

    # Question 3's options are d_model's numbers: 16 is right at d_model = 32.
    assert list(model_property(page, "quiz_3", "labels")) == ["1", "4", "16", "32"]
    page.get_by_label("32", exact=True).click()
    wait_until(lambda: text("en", "quiz_wrong") in feedback_text(page, 3), message="32 was not marked wrong")
    page.get_by_label("16", exact=True).click()
    wait_until(lambda: text("en", "quiz_correct") in feedback_text(page, 3), message="16 was not marked right")
    assert console_errors == []


@pytest.mark.browser
def test_question_3_options_in_the_page_follow_d_model(page, app_url, console_errors):
    page.goto(f"{app_url}/quiz?lang=es&d_model=2")
    wait_until(lambda: model_property(page, "quiz_3", "labels") is not None, message="no quiz_3 model")
    assert list(model_property(page, "quiz_3", "labels")) == ["0.5", "1", "2", "4"]
    page.get_by_label("1", exact=True).click()
    wait_until(lambda: text("es", "quiz_correct") in feedback_text(page, 3), message="1 is right at d_model = 2")
    assert console_errors == []


@pytest.mark.parametrize("lang", ["es", "en"])
@pytest.mark.parametrize("d_model", [2, 32, 512])
def test_the_right_answer_is_not_given_away_by_its_length(lang, d_model):
    """The right option was the longest in every question with words (the explained one, with its reasons):
    a reader could pick by length. Now it is strictly the longest in at most a third of the questions."""
    section = CheckYourself(ExplorerState(lang=lang, d_model=d_model))
    longest = []
    for n in (1, 2, 3, 4, 5):
        lengths = [len(label) for label in section.choices[n].labels]
        right = section.right_answer(n)
        if lengths[right] > max(length for i, length in enumerate(lengths) if i != right):
            longest.append(n)
    assert len(longest) <= 5 / 3, longest
