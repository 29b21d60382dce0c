"""Lesson section 9, «check yourself»: the first lesson's five questions, answered in the page.

Each question is a prose passage (its prompt, with formulas), a group of radio
buttons and a feedback line. The radio group is ``QuizChoice``, a small
component whose data model carries the name ``quiz_<n>`` (its ``choice`` is the
index picked, -1 before any); the feedback is a ``LiveHTML`` named
``quiz_feedback_<n>``. Feedback says "Correct" or "Not quite" in words and with
an icon, never by colour alone, and explains the chosen answer. Question 3's
options are numbers computed from the current ``d_model``; they are rebuilt (and
the answer cleared) when ``d_model`` changes. Answers do not go in the URL.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable

import panel as pn
import param

from app.model import core
from app.model.strings import text
from components.lesson.base import LessonSection
from components.plainjs import RADIO_OPTION_JS, PlainJSComponent
from components.stylesheets import STYLESHEET
from components.widgets import LiveHTML

#: The fixed questions: the keys of their options in display order, and the index of the right one.
#: Question 3 is built from d_model (``self_score_options``).
FIXED: dict[int, tuple[tuple[str, ...], int]] = {
    1: (("float", "neighbours", "scale", "length"), 2),
    2: (("pos", "ladder", "k_only", "T"), 1),
    4: (("distinct", "range", "T", "circle"), 3),
    5: (("width", "separable", "meaning", "distance"), 0),
}
QUESTIONS = (1, 2, 3, 4, 5)

QUIZ_CSS = """
.pe-quiz { border: 2px solid #d0d0d0; border-radius: 6px; padding: 0.3em 1em 0.6em 1em; margin: 0.2em 0;
           font-size: 1.2rem; }
.pe-quiz legend { font-size: 1rem; color: var(--pe-t-muted, #555555); padding: 0 0.3em; }
.pe-quiz label { display: flex; align-items: flex-start; gap: 0.6em; padding: 0.25em 0.2em; cursor: pointer;
                 line-height: 1.4; }
/* At least 24 px: a target a finger can hit (WCAG 2.5.8), whatever its neighbours' spacing; centred on the
   label's first line (its line-height is 1.4em; a little lower, where the letters sit). */
.pe-quiz input { width: max(1.1em, 24px); height: max(1.1em, 24px); flex: none;
                 margin: calc((1.4em - max(1.1em, 24px)) / 2 + 0.12em) 0 0 0; accent-color: #0072B2; }
.pe-quiz input:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
"""

FEEDBACK_CSS = """
.pe-quiz-feedback { font-size: 1.2rem; line-height: 1.45; margin: 0.2em 0 0.8em 0; padding: 0.4em 0.9em;
                    border-left: 6px solid; border-radius: 4px; }
.pe-quiz-feedback.pe-right { border-color: #009E73; background: var(--pe-t-right-bg, #e8f6f1); }
.pe-quiz-feedback.pe-wrong { border-color: #D55E00; background: var(--pe-t-wrong-bg, #fcefe6); }
.pe-quiz-icon { font-weight: 700; margin-right: 0.3em; }
"""


class QuizChoice(PlainJSComponent):
    """Radio buttons in a labelled fieldset: keyboard usable (arrows move within the group)."""

    legend = param.String(default="", doc="The group's visible label.")
    labels = param.List(default=[], item_type=str, doc="The options, as plain text (shown as text, not HTML).")
    choice = param.Integer(default=-1, doc="Index of the option picked; -1 before any.")

    _esm = RADIO_OPTION_JS + """
    export function render({ model }) {
      const set = document.createElement("fieldset");
      set.className = "pe-quiz";
      const group = "pe-quiz-" + Math.random().toString(36).slice(2);
      const draw = () => {
        const legend = document.createElement("legend");
        legend.textContent = model.legend;
        set.replaceChildren(legend);
        model.labels.forEach((label, i) => set.append(radioOption(model, group, i, label).line));
      };
      draw();
      model.on("labels", draw);
      model.on("legend", draw);
      model.on("choice", () => {
        for (const input of set.querySelectorAll("input")) input.checked = Number(input.value) === model.choice;
      });
      return set;
    }
    """

    def __init__(self, **params):
        super().__init__(stylesheets=[STYLESHEET + QUIZ_CSS], sizing_mode="stretch_width", **params)


def format_option(value: float) -> str:
    """A number as an option: whole numbers as such (narrow space for thousands), others to 3 decimals at most."""
    if math.isclose(value, round(value), rel_tol=0, abs_tol=1e-9):
        return f"{round(value):,}".replace(",", "\u202f")
    return f"{value:.3f}".rstrip("0")


def self_score_options(d_model: int) -> tuple[list[tuple[str, float]], int]:
    """Question 3's options for ``d_model``: ``(kind, value)`` in increasing order, and the right one's index.

    The right value is ``PE_pos . PE_pos = S(0) = d_model/2``. The distractors are the first
    three of d_model, the row's length sqrt(d_model/2), one pair's share 1, d_model/4,
    2*d_model and 0 that differ from the right value and from each other (with d_model = 2,
    sqrt(d_model/2) = 1 = d_model/2, so those two give way).
    """
    right = float(core.relative_scores(0, d_model))
    candidates = [("d_model", float(d_model)), ("norm", core.expected_row_norm(d_model)), ("one", 1.0),
                  ("quarter", d_model / 4), ("double", 2.0 * d_model), ("zero", 0.0)]
    chosen: list[tuple[str, float]] = [("right", right)]
    for kind, value in candidates:
        if len(chosen) == 4:
            break
        if all(not math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-9) for _, other in chosen):
            chosen.append((kind, float(value)))
    chosen.sort(key=lambda option: option[1])
    return chosen, [kind for kind, _ in chosen].index("right")


def feedback_html(lang: str, right: bool, explanation: str) -> str:
    """The feedback under a question: an icon and a word (never colour alone), then why."""
    icon, word, kind = ("✔", "quiz_correct", "pe-right") if right else ("✘", "quiz_wrong", "pe-wrong")
    return (f'<p class="pe-quiz-feedback {kind}"><span class="pe-quiz-icon" aria-hidden="true">{icon}</span>'
            f"<strong>{html.escape(text(lang, word))}</strong> {html.escape(explanation)}</p>")


def question_labels(lang: str, n: int, d_model: int) -> list[str]:
    """The options of question ``n`` in ``lang`` (question 3's for ``d_model``): a room's poll shows these."""
    if n == 3:
        options, _ = self_score_options(d_model)
        return [format_option(value) for _, value in options]
    keys, _ = FIXED[n]
    return [text(lang, f"quiz_{n}_{key}") for key in keys]


def question_right(n: int, d_model: int) -> int:
    """Index of question ``n``'s right option (question 3's depends on d_model)."""
    return self_score_options(d_model)[1] if n == 3 else FIXED[n][1]


def question_explanation(lang: str, n: int, d_model: int, choice: int) -> str:
    """Why option ``choice`` of question ``n`` is right or not, in ``lang``."""
    if n == 3:
        options, _ = self_score_options(d_model)
        return text(lang, f"quiz_3_why_{options[choice][0]}", value=format_option(options[choice][1]),
                    right=format_option(float(core.relative_scores(0, d_model))), pairs=d_model // 2,
                    d_model=d_model)
    return text(lang, f"quiz_{n}_{FIXED[n][0][choice]}_why")


#: Makers of more tools under a question (a room's poll: components.poll), given the section and the question's
#: number; registered by the app (app.extras), so that the quiz imports nothing of the features built on it.
QUESTION_TOOLS: list[Callable[[CheckYourself, int], pn.viewable.Viewable | None]] = []


class CheckYourself(LessonSection):
    """Five multiple-choice questions, checked in the page with a short explanation."""

    slug = "quiz"
    live_on = ("d_model",)
    plays = False

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.choices: dict[int, QuizChoice] = {}
        self.feedback: dict[int, LiveHTML] = {}
        for n in QUESTIONS:
            self.choices[n] = QuizChoice(legend=text(lang, "quiz_legend", n=n), labels=self.option_labels(n),
                                         name=f"quiz_{n}")
            self.feedback[n] = LiveHTML("", name=f"quiz_feedback_{n}", css=FEEDBACK_CSS, sizing_mode="stretch_width")
            self.choices[n].param.watch(lambda event, n=n: self._answer(n, event.new), "choice")
        state.param.watch(self._new_width, "d_model")

    def option_labels(self, n: int) -> list[str]:
        """The options of question ``n`` as shown, in the page's language."""
        return question_labels(self.state.lang, n, self.state.d_model)

    def right_answer(self, n: int) -> int:
        """Index of question ``n``'s right option (question 3's depends on d_model)."""
        return question_right(n, self.state.d_model)

    def explanation(self, n: int, choice: int) -> str:
        """Why option ``choice`` of question ``n`` is right or not."""
        return question_explanation(self.state.lang, n, self.state.d_model, choice)

    def _answer(self, n: int, choice: int) -> None:
        if not 0 <= choice < len(self.choices[n].labels):
            self.feedback[n].object = ""
            return
        self.feedback[n].object = feedback_html(self.state.lang, choice == self.right_answer(n),
                                                self.explanation(n, choice))

    def _new_width(self, *_) -> None:
        with pn.io.hold():
            self.choices[3].param.update(labels=self.option_labels(3), choice=-1)

    def live_values(self) -> dict[str, str]:
        return {"d_model": str(self.state.d_model)}

    def on_a_slide(self, parts: list[pn.viewable.Viewable]) -> list[pn.viewable.Viewable]:
        return parts  # the questions are the slide: its short introduction stays above them

    def layout(self) -> list[pn.viewable.Viewable]:
        parts: list[pn.viewable.Viewable] = [self.passage("intro")]
        for n in QUESTIONS:
            tools = [tool for make in QUESTION_TOOLS if (tool := make(self, n)) is not None]
            parts.append(pn.Column(self.passage(f"q{n}"), self.choices[n], self.feedback[n], *tools,
                                   sizing_mode="stretch_width", name=f"quiz_question_{n}"))
        parts.append(self.passage("end"))
        return parts
