"""Lesson section 1, «order is meaning»: attention alone reads a bag of words.

One head of self-attention (``core.self_attention``, seeded random weights) on
seeded random word embeddings gives every word the same output whatever the
order of the sentence; adding PE (``x = e + PE_pos``) makes the outputs differ.

What is compared: the *original* sentence (the one last typed or picked) with
the *current* one (``state.sentence``, or the lesson's reordered pair when it
is empty). "Shuffle" permutes the current words and writes them to
``state.sentence``; an example button sets both. When the current sentence is
not a reordering of the original (the learner typed a new one), it becomes the
new original, and the two orders are the same until the next shuffle.

Figures (built once, updated in place):

* ``order_sentences_plot``: the two orders as two columns of words, a line
  from each word's original place to its current one (``order_words``,
  ``order_links``);
* ``order_outputs_plot``: per word, ``‖y(original) − y(current)‖`` without PE
  and with PE, as bars with their numbers (``order_outputs``).

Every word reaches the page as Bokeh text (canvas) or escaped HTML
(``order_readout``).
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.core.property.vectorization import value
from bokeh.models import ColumnDataSource, FixedTicker, Legend, LegendItem, Range1d
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model import core
from app.model.state import Notice, sentence_cut
from app.model.strings import number, text
from components.figure_row import figure_row
from components.legend import detach_legends
from components.lesson.base import LessonSection
from components.notices import notice_line
from components.stylesheets import WIDGET_STYLESHEET
from components.theme import COLORS, LABEL_SIZE, TICK_SIZE, html_pane, style_figure
from components.widgets import LiveHTML

#: The example sentences: keys of the string table, each an original and its reordering.
PRESETS = ("order_lesson", "order_preset_2", "order_preset_3")
ROW_HEIGHT = 46
#: The figures' height beyond their rows: the title, and the outputs' axis, axis label and legend below.
OUTPUTS_OVERHEAD = 200
#: Rows of room the two figures keep however short the sentence.
MIN_ROWS = 3


def plots_height(rows: int) -> int:
    """The two figures' height for ``rows`` rows of words, the headers' row above them and the borders."""
    return round((rows + 1.3) * ROW_HEIGHT) + OUTPUTS_OVERHEAD


class OrderChoice(param.Parameterized):
    """The section's own choice: the sentence the current one is compared with ("" = the lesson's)."""

    original = param.String(default="", doc="The original order, words one space apart; '' means the lesson's.")


def reordering(a: list[str], b: list[str]) -> bool:
    """Whether ``b`` holds the words of ``a`` (case ignored), in any order."""
    return sorted(w.lower() for w in a) == sorted(w.lower() for w in b)


def scientific(value: float) -> str:
    """A tiny difference as the lessons print them (``3.3e-16``), an exact zero as ``0``."""
    return "0" if value == 0 else f"{value:.1e}"


class OrderIsMeaning(LessonSection):
    """The same sentence in two orders: per word, the attention output's change without and with PE."""

    slug = "order"
    controls = ("d_model",)
    plays = False
    live_on = ()

    def __init__(self, state, **params):
        super().__init__(state, **params)
        self.choice = OrderChoice(original=state.sentence)
        self._rng = np.random.default_rng()
        lang = state.lang

        self.words = ColumnDataSource(name="order_words", data={"x": [], "y": [], "word": [], "align": []})
        self.links = ColumnDataSource(name="order_links", data={"x0": [], "y0": [], "x1": [], "y1": [],
                                                                "moved": []})
        self.outputs = ColumnDataSource(name="order_outputs", data={
            "y": [], "word": [], "without_pe": [], "with_pe": [], "original_pos": [], "current_pos": [],
            "without_label": [], "with_label": []})

        # One vertical range and one height for the two figures: BokehJS lines up the frames of plots side by
        # side (the sentences' gets the outputs' axis and legend as empty border), so each word's row lies level
        # with its bars.
        rows = Range1d(-0.5, 4.5, name="order_outputs_y")
        self.sentences_plot = figure(
            name="order_sentences_plot", title=text(lang, "order_sentences_title"),
            x_range=Range1d(-1.25, 1.25, name="order_sentences_x"), y_range=rows,
            height=plots_height(5), sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        fig = self.sentences_plot
        fig.segment(x0="x0", y0="y0", x1="x1", y1="y1", source=self.links, line_color=COLORS["curve"],
                    line_width=2.5, line_alpha=0.8, name="order_links_glyph")
        fig.scatter(x="x0", y="y0", source=self.links, size=12, marker="circle", fill_color=COLORS["pos"],
                    line_color="white", name="order_link_start")
        fig.scatter(x="x1", y="y1", source=self.links, size=12, marker="square", fill_color=COLORS["target"],
                    line_color="white", name="order_link_end")
        fig.text(x="x", y="y", text="word", text_align="align", text_baseline="middle", source=self.words,
                 text_font_size=LABEL_SIZE, text_color=COLORS["ink"], name="order_words_glyph")
        self.headers = ColumnDataSource(name="order_headers", data={
            "x": [-0.35, 0.35], "y": [4.6, 4.6], "label": [text(lang, "order_original"), text(lang, "order_current")],
            "align": ["right", "left"], "color": [COLORS["pos"], COLORS["target"]]})
        fig.text(x="x", y="y", text="label", text_align="align", text_color="color", source=self.headers,
                 text_baseline="bottom", text_font_size=LABEL_SIZE, text_font_style="bold",
                 name="order_headers_glyph")
        fig.axis.visible = False
        fig.grid.visible = False
        style_figure(fig)

        self.outputs_plot = figure(
            name="order_outputs_plot", title=text(lang, "order_outputs_title"),
            x_range=Range1d(0, 1, name="order_outputs_x"), y_range=rows,
            height=plots_height(5), sizing_mode="stretch_width", tools="", toolbar_location=None,
        )
        out = self.outputs_plot
        # Each row: the with-PE bar in its lower half, the without-PE one (about 1e-16 wide: its number is what
        # shows) above it, with room for that number's line of text between them.
        without = out.hbar(y=dodge("y", 0.25, range=out.y_range), right="without_pe", height=0.3,
                           source=self.outputs, fill_color="#999999", line_color=COLORS["ink"], hatch_pattern="/",
                           hatch_color="white", name="order_without_bars")
        with_pe = out.hbar(y=dodge("y", -0.15, range=out.y_range), right="with_pe", height=0.3,
                           source=self.outputs, fill_color=COLORS["pos"], line_color=COLORS["ink"],
                           name="order_with_bars")
        numbers = {column: out.text(x=column, y=dodge("y", shift, range=out.y_range), text=label,
                                    source=self.outputs, x_offset=8, text_baseline="middle",
                                    text_font_size=TICK_SIZE, text_color=COLORS["ink"],
                                    name=f"order_{column}_numbers")
                   for column, label, shift in (("without_pe", "without_label", 0.25),
                                                ("with_pe", "with_label", -0.15))}
        # Presented, in type 1.8 times larger, a row holds one line of numbers only (twelve words in a
        # 720 px window put each 1e-16 over the next row's number): the without-PE numbers are said once, in
        # the legend, as their largest.
        numbers["without_pe"].visible = not state.present
        out.xaxis.axis_label = text(lang, "order_outputs_x")
        out.ygrid.visible = False
        out.yaxis.ticker = FixedTicker(ticks=[], name="order_outputs_ticks")
        out.yaxis.major_label_text_font_size = LABEL_SIZE
        self.without_item = LegendItem(label=text(lang, "order_without_pe"), renderers=[without],
                                       name="order_without_item")
        out.add_layout(Legend(items=[self.without_item,
                                     LegendItem(label=text(lang, "order_with_pe"), renderers=[with_pe])],
                              location="bottom_right", label_text_font_size=TICK_SIZE, glyph_width=34,
                              glyph_height=26, name="order_legend"), "below")
        detach_legends(out)
        style_figure(out)

        self.readout = LiveHTML(name="order_readout", sizing_mode="stretch_width", css=".pe-live{font-size:1.15rem}")
        self.preset_buttons = []
        for key in PRESETS:
            button = pn.widgets.Button(label=text(lang, f"{key}_original"), color="primary", variant="outline",
                                       stylesheets=[WIDGET_STYLESHEET])
            button.on_click(lambda _event, key=key: self.pick(key))
            self.preset_buttons.append(button)
        self.shuffle_button = pn.widgets.Button(label=text(lang, "order_shuffle"), color="primary",
                                                stylesheets=[WIDGET_STYLESHEET])
        self.shuffle_button.on_click(lambda _event: self.shuffle())
        #: The notice of the last sentence typed that was cut to fit (``app.model.state.sentence_cut``).
        self._cut: Notice | None = None
        self._readout_text = ""
        state.param.watch(self._note_cut, "sentence")
        self._update()

    # ------------------------------------------------------------------
    # The two orders.
    # ------------------------------------------------------------------

    def current_words(self) -> list[str]:
        """The current order: the state's sentence, or the lesson's reordered sentence when it is empty."""
        return self.state.words() or text(self.state.lang, "order_lesson_current").split()

    def original_words(self) -> list[str]:
        """The order the current one is compared with."""
        return self.choice.original.split() or text(self.state.lang, "order_lesson_original").split()

    def cell_context(self) -> dict[str, object]:
        return {"original": " ".join(self.original_words()), "current": " ".join(self.current_words())}

    def pick(self, key: str) -> None:
        """An example: its original and its reordering (the lesson's pair is the empty sentence)."""
        lesson = key == "order_lesson"
        self.choice.original = "" if lesson else text(self.state.lang, f"{key}_original")
        sentence = "" if lesson else text(self.state.lang, f"{key}_current")
        if sentence == self.state.sentence:
            self._update()
        else:
            self.state.sentence = sentence

    def shuffle(self) -> None:
        """Permute the current words (another order when there is one) and make it the state's sentence."""
        words = self.current_words()
        order = np.arange(len(words))
        for _ in range(20):
            order = self._rng.permutation(len(words))
            if [words[i] for i in order] != words:
                break
        self.state.sentence = " ".join(words[i] for i in order)

    def _note_cut(self, event: param.parameterized.Event) -> None:
        """A typed sentence that the state cuts to fit is said so under the figures, as a URL's is at the top."""
        cut = sentence_cut(event.new)
        if cut is not None:
            self._cut = cut
            self._show_readout()

    def _show_readout(self) -> None:
        notice = ""
        if self._cut is not None and self._cut.used == self.state.sentence:
            notice = f'<p class="pe-notice" role="status">{notice_line(self.state.lang, self._cut)}</p>'
        self.readout.object = notice + html.escape(self._readout_text)

    # ------------------------------------------------------------------
    # Updates.
    # ------------------------------------------------------------------

    @param.depends("state.sentence", "state.d_model", "state.base", watch=True)
    def _update(self) -> None:
        s = self.state
        current = self.current_words()
        if not reordering(self.original_words(), current):
            self.choice.original = s.sentence
        original = self.original_words()
        match = core.match_occurrences(original, current)
        without, with_pe = core.order_differences(original, current, s.d_model, s.base)
        n = len(original)
        rows = np.arange(n, dtype=np.float64)
        y = (n - 1 - rows).tolist()  # first word on top
        moved = match != np.arange(n)
        # Nothing reordered, nothing moves: the axis keeps a unit scale (a 1e-9 one printed 2.000e-10 ticks).
        top = float(with_pe.max()) if moved.any() else 1.0
        largest = scientific(float(without.max()))
        with pn.io.hold():
            self.words.data = {
                "x": [-0.35] * n + [0.35] * n,
                "y": y + y,
                "word": [f"{w}  {i}" for i, w in enumerate(original)] + [f"{i}  {w}" for i, w in enumerate(current)],
                "align": ["right"] * n + ["left"] * n,
            }
            self.links.data = {"x0": [-0.3] * n, "y0": y, "x1": [0.3] * n,
                               "y1": (n - 1 - match).astype(np.float64).tolist(), "moved": moved.tolist()}
            # At least MIN_ROWS rows of room (empty ones below): a word or two left the figures too short to
            # hold their titles and labels.
            below = max(MIN_ROWS - n, 0)
            # Room above the first row for the two orders' headers.
            self.outputs_plot.y_range.update(start=-0.6 - below, end=n + 0.7)
            self.headers.data["y"] = [n - 0.45, n - 0.45]
            self.sentences_plot.height = self.outputs_plot.height = plots_height(n + below)
            self.outputs.data = {
                "y": y, "word": original, "without_pe": without, "with_pe": with_pe,
                "original_pos": rows.astype(np.int64).tolist(), "current_pos": match.tolist(),
                "without_label": [scientific(v) for v in without],
                "with_label": [number(v, 3) for v in with_pe],
            }
            self.outputs_plot.x_range.update(start=0, end=1.3 * top)
            if s.present:
                # value(): a plain string set later would name a column (LegendItem wraps it only when made).
                self.without_item.label = value(text(s.lang, "order_without_pe_largest", value=largest))
            # Each pair of bars is named by its word (canvas text: no markup is interpreted).
            self.outputs_plot.yaxis.ticker.ticks = y
            self.outputs_plot.yaxis.major_label_overrides = {int(row): word for row, word in zip(y, original,
                                                                                                 strict=True)}
            if moved.any():
                self._readout_text = text(
                    s.lang, "order_readout", original=" ".join(original), current=" ".join(current),
                    without=largest, with_pe=number(float(with_pe.min()), 3))
            else:
                # One word, or one word repeated: no shuffle can reorder it.
                key = "order_readout_same" if len(set(current)) > 1 else "order_readout_fixed"
                self._readout_text = text(s.lang, key, current=" ".join(current))
            self._show_readout()
            # What "Look" describes (the outputs move once the order differs) needs an order that differs;
            # the readout says why there is none.
            self.passage("look").hidden = not moved.any()
            self._values = {"d_model": str(s.d_model), "words": str(n),
                            "max_without": largest,
                            "min_with": number(float(with_pe.min()), 3), "max_with": number(float(with_pe.max()), 3)}
            self.refresh_text()
        self.refresh_code()  # the original order is the section's, not the state's

    def live_values(self) -> dict[str, str]:
        return dict(getattr(self, "_values", {}))

    def layout(self) -> list[pn.viewable.Viewable]:
        s = self.state
        sentence = self.control_panel(("sentence", "d_model"), columns=2)
        presets = pn.Column(html_pane(f'<p class="pe-readout">{html.escape(text(s.lang, "order_presets"))}</p>'),
                            pn.FlexBox(*self.preset_buttons, self.shuffle_button), sizing_mode="stretch_width")
        figures = figure_row(pn.pane.Bokeh(self.sentences_plot, sizing_mode="stretch_width"),
                             pn.pane.Bokeh(self.outputs_plot, sizing_mode="stretch_width"))
        return [self.passage("intro"), sentence, presets, figures, self.readout, self.passage("look"),
                self.passage("try"), self.passage("why")]
