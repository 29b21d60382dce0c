"""Past the lesson, section «terms» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class ScoreAsClocks(LessonSection):
    slug = "terms"
