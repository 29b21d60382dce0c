"""Past the lesson, section «gram» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class GramMatrix(LessonSection):
    slug = "gram"
