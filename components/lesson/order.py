"""Lesson section «order» (work in progress: its prose only)."""

from __future__ import annotations

from components.lesson.base import LessonSection


class OrderIsMeaning(LessonSection):
    slug = "order"
