"""The lesson's sections in reading order: each is a route (``/<slug>``) and an anchor on ``/``.

``LESSON`` holds the two lessons' story; ``BEYOND`` what a learner asks right after it, shown after
the lesson's last section on ``/`` and numbered on from it.
"""

from __future__ import annotations

from components.lesson.base import LessonSection
from components.lesson.extrapolation import PastTrainingLength
from components.lesson.fingerprint import Fingerprint
from components.lesson.gram import GramMatrix
from components.lesson.hands import ClocksSection
from components.lesson.mistakes import CommonMistakes
from components.lesson.order import OrderIsMeaning
from components.lesson.question import OpenQuestion
from components.lesson.quiz import CheckYourself
from components.lesson.rope import RotaryPosition
from components.lesson.score import WhatScoresSee
from components.lesson.shift import ShiftIsRotation
from components.lesson.simpler import WhyNotSimpler
from components.lesson.sum import SumOrConcatenate
from components.lesson.terms import ScoreAsClocks
from components.lesson.wavelengths import LadderSection

#: Slug -> section, in the order a learner reads them.
LESSON: dict[str, type[LessonSection]] = {
    section.slug: section
    for section in (OrderIsMeaning, WhyNotSimpler, Fingerprint, LadderSection, ClocksSection, ShiftIsRotation,
                    WhatScoresSee, SumOrConcatenate, CheckYourself, OpenQuestion)
}

#: Past the lessons, in reading order.
BEYOND: dict[str, type[LessonSection]] = {
    section.slug: section for section in (ScoreAsClocks, GramMatrix, RotaryPosition, PastTrainingLength,
                                        CommonMistakes)
}

#: Every section of ``/``, in order.
SECTIONS: dict[str, type[LessonSection]] = {**LESSON, **BEYOND}
