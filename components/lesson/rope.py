"""Past the lesson, section «rope» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class RotaryPosition(LessonSection):
    slug = "rope"
