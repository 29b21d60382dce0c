"""Lesson section «sum» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class SumOrConcatenate(LessonSection):
    slug = "sum"
