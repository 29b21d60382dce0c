"""The lesson's sections, one Viewer each (see ``components.lesson.base.LessonSection``)."""
