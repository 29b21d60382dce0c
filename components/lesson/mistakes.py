"""Past the lesson, section «mistakes»: bugs that published code has shipped, switched on one at a time.

The switch is the state's ``mistake`` (so it is in the address, and the views that draw the table
show it wherever they are on the page: the ladder and heatmap, the live checks, the S(k) samples; the
clocks and the other sections draw the paper's encoding). This section adds the figure that
shows the first thing to break, the length of every row (``mistake_norms``), and places the
ladder, the two whole-table checks and the score curve under the prose that says, for each
mistake, what breaks and what does not. The formulas of the bugs are ``core.mistake_columns``.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.model import core
from app.model.strings import number, text
from components.checks import LiveChecks
from components.distance import ScoreCurve
from components.ladder import WavelengthLadder
from components.legend import detach_legends
from components.lesson.base import LessonSection
from components.theme import COLORS, TICK_SIZE, level_line, style_figure, wrapped_when_narrow


def norms_data(T: int, d_model: int, base: float, mistake: str) -> dict[str, np.ndarray]:
    """The ``mistake_norms`` source: every position and the length of its row under ``mistake``."""
    return {"pos": np.arange(T, dtype=np.int32), "norm": core.row_norms(T, d_model, base, mistake)}


class CommonMistakes(LessonSection):
    """A switch between the correct encoding and four published bugs, and what each one breaks."""

    slug = "mistakes"
    controls = ("mistake",)
    live_on = ()  # the numbers follow the norms, refreshed by _update_norms

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.norms = ColumnDataSource(name="mistake_norms", data={"pos": [], "norm": []})
        self.norms_figure = figure(
            name="mistake_norms_plot", title=text(lang, "mistake_norms_title"),
            x_range=Range1d(-0.5, 1, name="mistake_norms_pos_range"),
            y_range=Range1d(0, 1, name="mistake_norms_norm_range"),
            height=320, sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.norms_figure
        # Dashed reference line and a solid line with markers: told apart by more than colour.
        self.expected_line, self.expected_label = level_line(fig, "mistake_norms_expected",
                                                             "mistake_norms_expected_label", y_offset=6)
        wrapped_when_narrow(fig, self.expected_label, "mistake_norms_expected_label_wrapped")
        fig.line(x="pos", y="norm", source=self.norms, line_color=COLORS["target"], line_width=3,
                 legend_label=text(lang, "mistake_norms_line"), name="mistake_norms_line")
        fig.scatter(x="pos", y="norm", source=self.norms, size=8, marker="circle", fill_color="white",
                    line_color=COLORS["target"], line_width=2, legend_label=text(lang, "mistake_norms_line"),
                    name="mistake_norms_dots")
        fig.legend.location = "bottom_right"
        fig.legend.label_text_font_size = TICK_SIZE  # Bokeh's default, 13px, is the page's smallest text
        detach_legends(fig)
        fig.xaxis.axis_label = text(lang, "mistake_norms_x")
        fig.yaxis.axis_label = text(lang, "mistake_norms_y")
        style_figure(fig, counts="x")

        # The lesson's sections before this one show these views too: their models get this section's prefix.
        self.ladder = self.own_names(WavelengthLadder(state))
        self.checks = self.own_names(LiveChecks(state))
        self.scores = self.own_names(ScoreCurve(state))
        self._update_norms()

    @param.depends("state.d_model", "state.T", "state.base", "state.mistake", watch=True)
    def _update_norms(self) -> None:
        s = self.state
        data = norms_data(s.T, s.d_model, s.base, s.mistake)
        expected = core.expected_row_norm(s.d_model)
        low, high = min(expected, float(data["norm"].min())), max(expected, float(data["norm"].max()))
        # Zoomed on the lengths (a wobble of a few percent must show), never below 0, with room for the label.
        span = max(high - low, 0.1 * expected)
        with pn.io.hold():
            self.norms.data = data
            self.norms_figure.x_range.update(start=-0.5, end=s.T - 0.5)
            self.norms_figure.y_range.update(start=max(0.0, low - 0.3 * span), end=high + 0.5 * span)
            self.expected_line.location = expected
            self.expected_label.update(y=expected, text=text(s.lang, "mistake_norms_expected",
                                                               value=f"{expected:.6g}"))
            self.refresh_text()

    def live_values(self) -> dict[str, str]:
        s = self.state
        norms = self.norms.data["norm"]
        low, high = (float(np.min(norms)), float(np.max(norms))) if len(norms) else (0.0, 0.0)
        return {
            "mistake": text(s.lang, f"mistake_{s.mistake}"),
            "norm_low": number(low, 4),
            "norm_high": number(high, 4),
            "expected": number(core.expected_row_norm(s.d_model), 4),
        }

    def layout(self) -> list[pn.viewable.Viewable]:
        return [
            self.passage("intro"),
            self.control_panel(columns=1),
            self.passage("norms"),
            pn.pane.Bokeh(self.norms_figure, sizing_mode="stretch_width"),
            self.checks.norm,
            self.passage("rotation"),
            self.checks.rotation,
            self.passage("scores"),
            self.scores,
            self.passage("ladder"),
            self.ladder,
            self.passage("verdict"),
        ]
