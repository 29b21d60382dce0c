"""Lesson section «hands» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class ClocksSection(LessonSection):
    slug = "hands"
