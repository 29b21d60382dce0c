"""Past the lesson, section «mistakes» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class CommonMistakes(LessonSection):
    slug = "mistakes"
