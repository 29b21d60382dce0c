"""Lesson section «quiz» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class CheckYourself(LessonSection):
    slug = "quiz"
