"""The wavelength ladder: PE as an image, with every pair's wavelength above it.

Two figures share one x axis (the coordinate, 0 .. d_model): the heatmap of
``PE`` (rows = positions, top to bottom) and, above it, a bar per pair whose
height is its wavelength on a log scale, with a line at ``T``. The selected
pair's two columns are outlined and the rows ``pos`` and ``pos + k`` marked.

What is resent on a change:
* d_model, T, base: the image, the ladder bars, axes ranges and the count;
* pair: the outline and the highlighted bar (one row each);
* pos, k: the two row marks;
* mistake (a published bug, ``core.mistake_columns``): the image, and the
  ladder, which then has one bar per column (a bug gives the two columns of
  a pair different wavelengths), with the selected pair's two columns.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    CustomJS,
    CustomJSHover,
    CustomJSTickFormatter,
    FixedTicker,
    HoverTool,
    Label,
    LinearColorMapper,
    Range1d,
    Span,
)
from bokeh.palettes import RdBu11, interp_palette
from bokeh.plotting import figure
from bokeh.transform import dodge

from app.model import core
from app.model.state import ExplorerState
from app.model.strings import text
from components.describe import Description
from components.sources import send_changes
from components.theme import COLORS, LABEL_SIZE, MOVING, NARROW_FRAME_PX, TICK_SIZE, readout, style_figure
from components.widgets import LiveHTML

#: Diverging and colour-blind safe (ColorBrewer RdBu), fixed to [-1, 1].
PALETTE = interp_palette(RdBu11, 256)
#: Pair ticks shown on the ladder's axis at most; more would overlap. On a phone (a frame under
#: ``NARROW_FRAME_PX``) half as many: sixteen ran together there as "9101112131415".
MAX_PAIR_TICKS = 16
MAX_PAIR_TICKS_NARROW = 8
#: Rows of PE sent for the heatmap at most: about a full-HD screen's height.
#: T <= 2048, so the row stride is 1 or 2; a stride below pi positions never
#: aliases even pair 0 (wavelength 2 pi), where a stride fitted to the plot's
#: ~430 pixels (5) would paint false slow bands. See docs/performance.md.
MAX_HEATMAP_ROWS = 1024
#: One colour code per palette entry: the image is sent as uint8 codes, not float32.
HEATMAP_LEVELS = len(PALETTE)


def heatmap_codes(values: np.ndarray) -> np.ndarray:
    """PE values in [-1, 1] as uint8 palette indices, binned exactly as a
    ``LinearColorMapper(low=-1, high=1)`` over ``PALETTE`` bins floats, so the
    picture is the one float32 would give at an eighth of the bytes."""
    scaled = (np.asarray(values, dtype=np.float32) + 1.0) * (HEATMAP_LEVELS / 2)
    np.clip(scaled, 0, HEATMAP_LEVELS - 1, out=scaled)  # value 1.0 belongs to the top bin
    return scaled.astype(np.uint8)


def heatmap_values(codes: np.ndarray) -> np.ndarray:
    """The centre of each code's bin: within 1/256 of the true value (what the hover shows)."""
    return -1.0 + (np.asarray(codes, dtype=np.float64) + 0.5) * (2.0 / HEATMAP_LEVELS)


def heatmap_stride(T: int) -> int:
    """Positions per heatmap row: 1 up to ``MAX_HEATMAP_ROWS`` positions, then 2."""
    return max(1, -(-int(T) // MAX_HEATMAP_ROWS))


def heatmap_data(T: int, d_model: int, base: float, mistake: str = "none") -> dict[str, list]:
    """The image source's columns: every ``stride``-th row of PE, as colour codes.

    Only the rows that are sent are computed, in float32 (angles reduced in
    float64, see ``core.encoding_rows``; ~4x faster at 1024 x 1024): a value
    is within ~3e-7 of float64, so a code differs from the float64 value's bin
    only where that value lies that close to a bin edge, and then by one. Row
    ``r`` of the image is position ``r * stride`` and is drawn over ``stride``
    positions; row 0 is at y = 0, which the flipped y range puts at the top.
    """
    stride = heatmap_stride(T)
    positions = np.arange(0, T, stride, dtype=np.float64)
    codes = heatmap_codes(core.encoding_rows(positions, d_model, base, dtype=np.float32, mistake=mistake))
    return {"image": [codes], "x": [0], "y": [0], "dw": [d_model], "dh": [positions.size * stride],
            "stride": [stride]}


def ladder_data(d_model: int, base: float, mistake: str = "none") -> dict[str, np.ndarray]:
    """Bars of the ladder, one per pair, centred over the pair's two columns.

    Under a ``mistake`` other than "none", one bar per column instead (centred
    over it), ``core.column_wavelengths``: the pair of each column is the one
    ``core.mistake_pair_columns`` gives it.
    """
    if mistake == "none":
        lam = core.wavelengths(d_model, base)
        pairs = np.arange(lam.size)
        return {"pair": pairs, "x": 2.0 * pairs + 1.0, "wavelength": lam}
    first, second = core.mistake_pair_columns(d_model, mistake)
    pair = np.empty(d_model, dtype=np.int64)
    pair[first] = pair[second] = np.arange(d_model // 2)
    return {"pair": pair, "x": np.arange(d_model) + 0.5, "wavelength": core.column_wavelengths(d_model, base, mistake)}


#: Bar widths, in columns: a pair's bar spans most of its two columns, a column's most of its one.
PAIR_BAR_WIDTH, COLUMN_BAR_WIDTH = 1.6, 0.8


def bar_ticks(bars: int, width: int, most: int = MAX_PAIR_TICKS) -> list[float]:
    """Tick positions (column coordinates) at the centres of a readable subset of ``bars`` bars, each
    ``width`` columns wide: pairs (2) or, under a bug, single columns (1); at most ``most``, evenly from the first."""
    step = max(1, int(np.ceil(bars / most)))
    return [width * (i + 0.5) for i in range(0, bars, step)]


def column_layout(mistake: str) -> str:
    """Where a table under ``mistake`` keeps its sines and cosines (``core.mistake_columns``): ``"pairs"``
    (column 2i a sine, 2i+1 a cosine, as in the paper), ``"split"`` (every sine, then every cosine) or
    ``"sines"`` (no cosine at all)."""
    return {"split_layout": "split", "sin_only": "sines"}.get(mistake, "pairs")


def rows_sentence(state: ExplorerState) -> str:
    """Which rows of the table are marked, as a sentence."""
    inside = 0 <= state.target < state.T
    return text(state.lang, "describe_rows_both" if inside else "describe_rows_pos", pos=state.pos,
                target=state.target)


#: The parameters ``describe`` reads.
DESCRIBED_BY = ("d_model", "T", "base", "pair", "pos", "k", "mistake")


@lru_cache(maxsize=64)
def _table_sentence(lang: str, d_model: int, base: float, pair: int, T: int, mistake: str) -> str:
    # Kept: a step of pos or k (the hot path) changes only the rows' sentence.
    if mistake == "none":
        lam = core.wavelengths(d_model, base)
        return text(lang, "describe_ladder", pair=pair, omega=float(core.frequencies(d_model, base)[pair]),
                    wavelength=float(lam[pair]), count=core.count_within(lam, T), pairs=lam.size, T=T, rows="").rstrip()
    lam = core.column_wavelengths(d_model, base, mistake)
    return text(lang, "describe_ladder_mistake", mistake=text(lang, f"mistake_{mistake}"),
                count=core.count_within(lam, T), columns=lam.size, T=T, rows="").rstrip()


def describe(state: ExplorerState) -> str:
    """What the ladder and the heatmap show now, in a sentence (their text alternative)."""
    s = state
    return f"{_table_sentence(s.lang, s.d_model, s.base, s.pair, s.T, s.mistake)} {rows_sentence(s)}"


class WavelengthLadder(pn.viewable.Viewer):
    """Heatmap of PE with the ladder of wavelengths, linked to the state."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, **params):
        super().__init__(state=state, **params)
        lang = state.lang
        self.heatmap = ColumnDataSource(name="heatmap", data=heatmap_data(1, 2, 10.0))
        self.ladder = ColumnDataSource(name="ladder", data=ladder_data(2, 10.0))
        self.ladder_selected = ColumnDataSource(name="ladder_selected", data={"x": [], "wavelength": []})
        self.pair_outline = ColumnDataSource(name="pair_outline", data={"left": [], "right": [], "top": [],
                                                                        "bottom": []})
        self.row_marks = ColumnDataSource(name="row_marks", data={"top": [], "label": [], "color": []})

        x_range = Range1d(0, 2, name="coordinate_range")
        self.ladder_figure = figure(
            name="ladder_plot", title=text(lang, "ladder_plot_title"), x_range=x_range,
            # Set by the server (``_update``): a DataRange1d, the default, sent its end back from the page on
            # a base step's key, before the reply, so the server held the previous step's value.
            y_range=Range1d(1, 48, name="wavelength_range"),
            y_axis_type="log", height=230, sizing_mode="stretch_width",
            tools="", toolbar_location=None,
        )
        self._bars = [
            self.ladder_figure.vbar(x="x", top="wavelength", bottom=1.0, width=PAIR_BAR_WIDTH, source=self.ladder,
                                    color=COLORS["bar"], name="ladder_bars"),
            self.ladder_figure.vbar(x="x", top="wavelength", bottom=1.0, width=PAIR_BAR_WIDTH,
                                    source=self.ladder_selected, fill_color=COLORS["selected"],
                                    # A dark outline: the selected bar differs from the others by more than hue.
                                    line_color=COLORS["ink"], line_width=2, level=MOVING, name="ladder_selected_bar"),
        ]
        self.T_line = Span(dimension="width", location=24, line_color=COLORS["target"], line_width=3,
                           line_dash="dashed", name="T_line")
        self.ladder_figure.add_layout(self.T_line)
        self.T_label = Label(x=0, y=24, text="", x_units="data", y_units="data", text_color=COLORS["target_text"],
                             text_font_size=LABEL_SIZE, text_font_style="bold", x_offset=4, y_offset=4,
                             background_fill_color="white", background_fill_alpha=0.8, name="T_label")
        self.ladder_figure.add_layout(self.T_label)
        self.ladder_figure.add_tools(HoverTool(renderers=self.ladder_figure.renderers[:1], tooltips=[
            (text(lang, "hover_pair"), "@pair"),
            (text(lang, "hover_wavelength"), "@wavelength{0,0.0}"),
        ]))
        self.ladder_figure.xaxis.axis_label = text(lang, "ladder_x")
        self.ladder_figure.yaxis.axis_label = text(lang, "ladder_y")
        # Both tickers are kept here: the browser hands the axis one or the other, which syncs back to this document.
        self.wide_ticker, self.narrow_ticker = FixedTicker(ticks=[1.0]), FixedTicker(ticks=[1.0])
        self.ladder_figure.xaxis.ticker = self.wide_ticker
        # A phone's frame reads every other pair (0, 2, 4 …), not what the axis's NoOverlap keeps of sixteen.
        self.ladder_figure.js_on_change("inner_width", CustomJS(
            args={"axis": self.ladder_figure.xaxis[0], "wide": self.wide_ticker, "narrow": self.narrow_ticker},
            name="ladder_ticks_narrow", code=f"""
const ticker = cb_obj.inner_width > 0 && cb_obj.inner_width < {NARROW_FRAME_PX} ? narrow : wide;
if (axis.ticker !== ticker) axis.ticker = ticker;
"""))
        # Pairs (two columns each, centred on 2i + 1); under a bug, one bar per column (centred on j + 0.5).
        self.ladder_figure.xaxis.formatter = CustomJSTickFormatter(
            args={"columns": False},
            code="return (columns ? tick - 0.5 : (tick - 1) / 2).toFixed(0)")

        self.heatmap_figure = figure(
            name="heatmap_plot", title=text(lang, "heatmap_title"), x_range=x_range,
            y_range=Range1d(24, 0, name="position_range"), height=430, sizing_mode="stretch_width",
            tools="", toolbar_location=None,
        )
        # The colour bar is labelled in values (-1 .. 1); the image carries codes 0 .. 255.
        mapper = LinearColorMapper(palette=PALETTE, low=-1.0, high=1.0)
        code_mapper = LinearColorMapper(palette=PALETTE, low=0, high=HEATMAP_LEVELS, name="heatmap_code_mapper")
        image = self.heatmap_figure.image(image="image", x="x", y="y", dw="dw", dh="dh",
                                          color_mapper=code_mapper, source=self.heatmap, name="heatmap_image")
        self.heatmap_figure.quad(left="left", right="right", top="top", bottom="bottom",
                                 source=self.pair_outline, fill_alpha=0, line_color=COLORS["selected"],
                                 line_width=3, level=MOVING, name="pair_outline_glyph")
        # A mark spans its row: the bottom edge is computed in the browser, one column less per step.
        self.heatmap_figure.hstrip(y0="top", y1=dodge("top", 1.0), source=self.row_marks, fill_alpha=0,
                                   line_color="color", line_width=3, level=MOVING, name="row_marks_glyph")
        # The column's pair and function, as the table's layout has them (column_layout; half = d_model/2).
        column = self._column_hover = CustomJSHover(
            args={"sin": text(lang, "sin"), "cos": text(lang, "cos"), "layout": "pairs", "half": 0}, code="""
            const d = Math.floor(value);
            const split = layout == 'split';
            if (format == 'pair') return String(split ? d % half : Math.floor(d / 2));
            if (format == 'kind') return layout == 'sines' || (split ? d < half : d % 2 == 0) ? sin : cos;
            return String(d);
        """)
        # With a row stride of 2 the pixel under the mouse shows the sampled position, so name that one.
        row = CustomJSHover(args={"source": self.heatmap}, code="""
            const data = source.data;
            const stride = (data instanceof Map ? data.get('stride') : data.stride)[0];
            return String(Math.floor(Math.floor(value) / stride) * stride);
        """)
        value = CustomJSHover(code=f"return (-1 + (value + 0.5) * {2.0 / HEATMAP_LEVELS!r}).toFixed(2);")
        self.heatmap_figure.add_tools(HoverTool(renderers=[image], tooltips=[
            (text(lang, "hover_pos"), "$y{row}"),
            (text(lang, "hover_dim"), "$x{dim}"),
            (text(lang, "hover_pair"), "$x{pair}"),
            (text(lang, "hover_kind"), "$x{kind}"),
            (text(lang, "hover_value"), "@image{value}"),
        ], formatters={"$x": column, "$y": row, "@image": value}))
        # Tick labels as large as the axes' (Bokeh's default is 7 pt, unreadable from the back of a room).
        self.heatmap_figure.add_layout(ColorBar(color_mapper=mapper, title=text(lang, "heatmap_colorbar"),
                                                orientation="horizontal", height=14, location=(0, 0),
                                                major_label_text_font_size=TICK_SIZE, title_text_font_size=TICK_SIZE,
                                                name="heatmap_colorbar"), "below")
        self.heatmap_figure.xaxis.axis_label = text(lang, "heatmap_x")
        self.heatmap_figure.yaxis.axis_label = text(lang, "heatmap_y")
        for fig, counts in ((self.ladder_figure, ""), (self.heatmap_figure, "xy")):
            style_figure(fig, counts)
            fig.min_border_left = 90  # same inner left edge, so the bars sit over their columns

        self.count = LiveHTML(name="ladder_count", sizing_mode="stretch_width")
        self._layout = pn.Column(
            pn.pane.Bokeh(self.ladder_figure, sizing_mode="stretch_width"),
            self.count,
            pn.pane.Bokeh(self.heatmap_figure, sizing_mode="stretch_width"),
            Description(state, text(lang, "ladder_title"), describe, DESCRIBED_BY, name="ladder_description"),
            sizing_mode="stretch_width", name="ladder_view",
        )
        self._update_table()
        self._update_pair()
        self._update_rows()

    @param.depends("state.d_model", "state.T", "state.base", "state.mistake", watch=True)
    def _update_table(self) -> None:
        s = self.state
        self.heatmap.data = heatmap_data(s.T, s.d_model, s.base, s.mistake)
        self.ladder.data = ladder_data(s.d_model, s.base, s.mistake)
        lam = self.ladder.data["wavelength"]
        width = PAIR_BAR_WIDTH if s.mistake == "none" else COLUMN_BAR_WIDTH
        for bars in self._bars:
            if bars.glyph.width != width:
                bars.glyph.width = width
        self.heatmap_figure.x_range.update(start=0, end=s.d_model)
        self.heatmap_figure.y_range.update(start=s.T, end=0)
        self.ladder_figure.y_range.update(start=1.0, end=float(max(lam.max(), s.T)) * 2.0)
        self._label_columns()
        self.T_line.location = s.T
        self.T_label.update(y=s.T, text=text(s.lang, "ladder_T_line", T=s.T))
        self.count.object = readout(s.lang, "ladder_count" if s.mistake == "none" else "ladder_count_columns",
                                    count=core.count_within(lam, s.T), pairs=lam.size, T=s.T)
        self._update_pair()
        self._update_rows()

    def _label_columns(self) -> None:
        """Axes, title and hover that name what the columns hold: pairs, or (under a bug) columns."""
        s, lang = self.state, self.state.lang
        columns = s.mistake != "none"
        layout = column_layout(s.mistake)
        bars, width = (s.d_model, 1) if columns else (s.d_model // 2, 2)
        self.wide_ticker.ticks = bar_ticks(bars, width)
        self.narrow_ticker.ticks = bar_ticks(bars, width, MAX_PAIR_TICKS_NARROW)
        suffix = "_columns" if columns else ""
        heatmap_x = {"pairs": "heatmap_x", "split": "heatmap_x_split", "sines": "heatmap_x_sines"}[layout]
        changes = {
            (self.ladder_figure.xaxis[0].formatter, "args"): {"columns": columns},
            (self.ladder_figure.title, "text"): text(lang, f"ladder_plot_title{suffix}"),
            (self.ladder_figure.xaxis[0], "axis_label"): text(lang, f"ladder_x{suffix}"),
            (self.heatmap_figure.xaxis[0], "axis_label"): text(lang, heatmap_x),
            (self._column_hover, "args"): {**self._column_hover.args, "layout": layout,
                                           "half": s.d_model // 2 if layout == "split" else 0},
        }
        for (model, name), new in changes.items():
            if getattr(model, name) != new:  # most steps change none of them: send nothing
                setattr(model, name, new)

    @param.depends("state.pair", watch=True)
    def _update_pair(self) -> None:
        s = self.state
        if s.mistake == "none":
            left = 2 * s.pair
            send_changes(self.pair_outline, {"left": [left], "right": [left + 2], "top": [0], "bottom": [s.T]})
            send_changes(self.ladder_selected, {"x": [left + 1.0],
                                                "wavelength": [float(self.ladder.data["wavelength"][s.pair])]})
            return
        # Under a bug the pair's two columns have a bar each, and split apart in the split layout.
        first, second = core.mistake_pair_columns(s.d_model, s.mistake)
        columns = [int(first[s.pair]), int(second[s.pair])]
        lam = self.ladder.data["wavelength"]
        if columns[1] == columns[0] + 1:
            outline = {"left": [columns[0]], "right": [columns[0] + 2], "top": [0], "bottom": [s.T]}
        else:
            outline = {"left": columns, "right": [c + 1 for c in columns], "top": [0, 0], "bottom": [s.T, s.T]}
        send_changes(self.pair_outline, outline)
        send_changes(self.ladder_selected, {"x": [c + 0.5 for c in columns],
                                            "wavelength": [float(lam[c]) for c in columns]})

    @param.depends("state.pos", "state.k", watch=True)
    def _update_rows(self) -> None:
        s = self.state
        rows = [(s.pos, "pos", COLORS["pos"])]
        if 0 <= s.target < s.T:
            rows.append((s.target, "pos+k", COLORS["target"]))
        send_changes(self.row_marks, {"top": [r[0] for r in rows], "label": [r[1] for r in rows],
                                      "color": [r[2] for r in rows]})

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
