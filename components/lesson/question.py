"""Lesson section 10, «an open question»: the position is added to a word once, before any attention.

One small figure sets the question up: for one word, the bars of a stand-in
embedding ``e`` (seeded, ``app.model.core.seeded_word_vector``), of ``PE_pos`` and of
their sum ``x = e + PE_pos`` (``app.model.core.add_position``), one bar per
coordinate. Moving ``pos`` moves the last two rows and never the first. The
passage then asks the second lesson's closing question and points to the
section that takes it up (``rope``): its anchor on ``/``, its own route when
this section stands alone at ``/question``.
"""

from __future__ import annotations

from urllib.parse import urlparse

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.model import core
from app.model.strings import number, text
from components.lesson.base import LessonSection
from components.links import StateLinks
from components.sources import send_changes
from components.theme import COLORS, style_figure

#: The seed of the stand-in word's embedding, so every reader sees the same word.
WORD_SEED = 7
#: All three rows share one vertical scale, so the eye can add them: PE lies within [-1, 1],
#: e (0.5 times a standard normal) within about [-1.7, 1.7] for 1024 coordinates.
Y_LIMIT = 3.0
ROPE_SLUG = "rope"


def stands_alone(slug: str) -> bool:
    """Whether the current session's page is the section's own route (``/<slug>``) rather than ``/``."""
    url = pn.state.app_url
    return bool(url) and urlparse(url).path.rstrip("/").endswith("/" + slug)


def bars(values: np.ndarray) -> dict[str, np.ndarray]:
    """One bar per coordinate: its index and its value."""
    return {"coordinate": np.arange(values.size), "value": np.asarray(values, dtype=float)}


class OpenQuestion(LessonSection):
    """e, PE_pos and x = e + PE_pos for one word, and the question the lessons leave open."""

    slug = "question"
    controls = ("pos",)
    live_on = ("d_model", "pos")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.sources = {
            "embedding": ColumnDataSource(name="question_embedding", data=bars(np.zeros(2))),
            "encoding": ColumnDataSource(name="question_encoding", data=bars(np.zeros(2))),
            "sum": ColumnDataSource(name="question_sum", data=bars(np.zeros(2))),
        }
        self.x_range = Range1d(-0.5, 1.5, name="question_x_range")
        colours = {"embedding": COLORS["bar"], "encoding": COLORS["pos"], "sum": COLORS["selected"]}
        self.figures = {}
        for row, source in self.sources.items():
            fig = figure(name=f"question_{row}_plot", title=text(lang, f"question_{row}_title"), height=170,
                         sizing_mode="stretch_width", x_range=self.x_range, y_range=Range1d(-Y_LIMIT, Y_LIMIT),
                         tools="", toolbar_location=None, min_border_left=70)
            fig.vbar(x="coordinate", top="value", width=0.8, source=source, fill_color=colours[row],
                     line_color=None, name=f"question_{row}_bars")
            fig.xgrid.visible = False
            fig.yaxis.ticker = [-2, -1, 0, 1, 2]
            fig.xaxis.visible = row == "sum"
            self.figures[row] = style_figure(fig, counts="x")
        self.figures["sum"].height = 220
        self.figures["sum"].xaxis.axis_label = text(lang, "question_x_axis")
        link = ([text(lang, "question_rope_link"), f"/{ROPE_SLUG}", ""] if stands_alone(self.slug)
                else [text(lang, "question_rope_link"), "", ROPE_SLUG])
        self.link = StateLinks([link], name="question_rope_link", label=text(lang, "question_rope_link_label"))
        self._update_word()

    @param.depends("state.d_model", watch=True)
    def _update_word(self) -> None:
        s = self.state
        with pn.io.hold():
            self.x_range.update(start=-0.5, end=s.d_model - 0.5)
            self.sources["embedding"].data = bars(self.word())
            self._update_position()

    @param.depends("state.pos", "state.base", watch=True)
    def _update_position(self) -> None:
        s = self.state
        e = self.word()
        with pn.io.hold():
            # The coordinates never change here: only the values travel.
            send_changes(self.sources["encoding"], bars(core.encoding_rows(s.pos, s.d_model, s.base)))
            send_changes(self.sources["sum"], bars(core.add_position(e, s.pos, s.base)))

    def word(self) -> np.ndarray:
        """The stand-in word's embedding e at the current width."""
        return core.seeded_word_vector(self.state.d_model, seed=WORD_SEED)

    def live_values(self) -> dict[str, str]:
        s = self.state
        return {"pos": str(s.pos), "d_model": str(s.d_model), "norm": number(core.expected_row_norm(s.d_model), 2)}

    def layout(self) -> list[pn.viewable.Viewable]:
        figures = pn.Column(*(pn.pane.Bokeh(fig, sizing_mode="stretch_width") for fig in self.figures.values()),
                            sizing_mode="stretch_width", name="question_figures")
        return [self.passage("intro"), self.control_panel(), figures, self.passage("look"),
                self.passage("question"), self.link]
