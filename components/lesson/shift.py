"""Lesson section 6, «a fixed shift is a fixed rotation».

Angle addition for one pair written as a 2×2 matrix times the pair's vector;
the block of the selected pair for the current k, with its numbers
(``core.rotation_block``), applied to ``PE_pos``; the block-diagonal ``M_k``
drawn as an image (all of it up to d_model 64, its top-left 64×64 corner
beyond, ``core.rotation_corner``), which a change of pos leaves untouched; the
rows' common length √(d_model/2); and the live checks of the identity.

What is resent on a change:
* k, d_model, base: the image (at most 64×64 float32), its title, the block's text;
* pair: the outline (one row) and the block's text;
* pos: the block's text (its two vectors) only; the matrix is not touched.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, Range1d
from bokeh.plotting import figure

from app.model import core
from app.model.strings import significant, text
from components.checks import LiveChecks
from components.figure_row import fixed_figure_box
from components.ladder import PALETTE
from components.lesson.base import LessonSection
from components.sources import send_changes
from components.theme import COLORS, MOVING, NOTE_CSS, TICK_SIZE, style_figure
from components.widgets import LiveHTML

#: Rows and columns of M_k drawn at most: its top-left corner beyond (32 pairs).
MATRIX_SIZE = 64

#: The block and its vectors between square brackets, as on the board: the sides' borders are the
#: uprights, short strokes drawn as backgrounds at the four corners the serifs.
BLOCK_CSS = f"""
.sb {{ font-size: 1.3rem; line-height: 1.5; }}
.sb .cap {{ font-weight: 600; margin-bottom: 0.3rem; }}
.sb .eq {{ display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem 0.9rem; }}
.sb figure {{ margin: 0; display: flex; flex-direction: column; align-items: center; }}
.sb figcaption {{ font-size: 1rem; color: var(--pe-t-muted, #444); margin-top: 0.2rem; }}
.sb .m {{ --pe-bracket: var(--pe-ink, {COLORS["ink"]});
          --pe-serif: linear-gradient(var(--pe-bracket), var(--pe-bracket));
          display: inline-grid; gap: 0.1rem 1rem; padding: 0.15rem 0.6rem;
          border-left: 3px solid var(--pe-bracket); border-right: 3px solid var(--pe-bracket);
          background: var(--pe-serif) left top / 0.5em 3px no-repeat,
                      var(--pe-serif) left bottom / 0.5em 3px no-repeat,
                      var(--pe-serif) right top / 0.5em 3px no-repeat,
                      var(--pe-serif) right bottom / 0.5em 3px no-repeat;
          font-variant-numeric: tabular-nums; text-align: right; }}
.sb .m2 {{ grid-template-columns: auto auto; --pe-bracket: {COLORS["selected"]}; }}
.sb .m1 {{ grid-template-columns: auto; }}
.sb .op {{ font-size: 1.6rem; }}
"""



def signed(value: float, decimals: int = 4) -> str:
    """A number with a true minus sign and no negative zero."""
    value = round(float(value), decimals) + 0.0
    return f"{value:.{decimals}f}".replace("-", "−")


def block_markup(lang: str, pair: int, k: int, pos: int, d_model: int, base: float) -> str:
    """The selected pair's block of M_k (from ``core.rotation_block``) applied to PE_pos, as escaped HTML."""
    block = core.rotation_block(pair, k, d_model, base)
    rows = core.encoding_rows(np.array([pos, pos + k], dtype=np.float64), d_model, base)[:, 2 * pair:2 * pair + 2]
    angle = float(core.frequencies(d_model, base)[pair]) * k

    def grid(values, kind: str, caption: str) -> str:
        cells = "".join(f"<span>{signed(v)}</span>" for v in np.ravel(values))
        return f'<figure><div class="m {kind}">{cells}</div><figcaption>{html.escape(caption)}</figcaption></figure>'

    caption = text(lang, "shift_block_caption", pair=pair, k=k, angle=significant(angle, 4))
    parts = [grid(block, "m2", text(lang, "block_caption_matrix", k=k, pair=pair)), '<span class="op">×</span>',
             grid(rows[0], "m1", text(lang, "shift_block_pos", pos=pos)), '<span class="op">=</span>',
             grid(rows[1], "m1", text(lang, "shift_block_target", target=pos + k))]
    note = ""
    if 2 * pair + 2 > MATRIX_SIZE:
        note = f"<p>{html.escape(text(lang, 'shift_block_outside', pair=pair))}</p>"
    equation = "".join(parts)
    return f'<div class="sb"><div class="cap">{html.escape(caption)}</div><div class="eq">{equation}</div>{note}</div>'


def matrix_data(k: int, d_model: int, base: float) -> dict[str, list]:
    """The image source's columns: M_k (or its top-left corner) as float32, row 0 at the top."""
    corner = core.rotation_corner(k, d_model, base, MATRIX_SIZE).astype(np.float32)
    n = corner.shape[0]
    return {"image": [corner], "x": [0], "y": [0], "dw": [n], "dh": [n]}


class ShiftIsRotation(LessonSection):
    """Angle addition as a 2×2 block, the block-diagonal M_k as an image that pos does not move, and the checks."""

    slug = "shift"
    draws_mistakes = True
    controls = ("k", "pair", "pos", "d_model")
    live_on = ("k", "pair", "d_model", "base")

    def __init__(self, state, **params):
        super().__init__(state, **params)
        lang = state.lang
        self.matrix = ColumnDataSource(name="rotation_matrix", data=matrix_data(0, 2, 10.0))
        self.outline = ColumnDataSource(name="shift_pair_outline", data={"left": [], "right": [], "top": [],
                                                                         "bottom": []})
        self.plot = figure(name="shift_matrix_plot", title="", width=620, height=600, sizing_mode="fixed",
                           x_range=Range1d(0, 32), y_range=Range1d(32, 0), tools="", toolbar_location=None)
        mapper = LinearColorMapper(palette=PALETTE, low=-1.0, high=1.0, name="shift_color_mapper")
        image = self.plot.image(image="image", x="x", y="y", dw="dw", dh="dh", color_mapper=mapper,
                                source=self.matrix, name="shift_matrix_image")
        self.plot.quad(left="left", right="right", top="top", bottom="bottom", source=self.outline, fill_alpha=0,
                       line_color=COLORS["selected"], line_width=3, level=MOVING,
                       name="shift_pair_outline_glyph")
        self.plot.add_tools(HoverTool(renderers=[image], tooltips=[
            (text(lang, "shift_hover_row"), "$y{0}"),
            (text(lang, "shift_hover_column"), "$x{0}"),
            (text(lang, "hover_value"), "@image{0.0000}"),
        ]))
        self.plot.add_layout(ColorBar(color_mapper=mapper, title=text(lang, "shift_colorbar"), width=14,
                                      major_label_text_font_size=TICK_SIZE, title_text_font_size=TICK_SIZE,
                                      name="shift_colorbar"), "right")
        self.plot.xaxis.axis_label = text(lang, "shift_matrix_x")
        self.plot.yaxis.axis_label = text(lang, "shift_matrix_y")
        style_figure(self.plot, counts="xy")
        self.plot.title.text_font_size = "15pt"
        self.note = LiveHTML(name="shift_matrix_note", css=NOTE_CSS, sizing_mode="stretch_width")
        self.block = LiveHTML(name="shift_block", css=BLOCK_CSS, sizing_mode="stretch_width")
        self.checks = LiveChecks(state)
        self._update_matrix()
        self._update_pair()
        self._update_block()

    @param.depends("state.k", "state.d_model", "state.base", watch=True)
    def _update_matrix(self) -> None:
        s = self.state
        data = matrix_data(s.k, s.d_model, s.base)
        n = data["dw"][0]
        with pn.io.hold():
            self.matrix.data = data
            self.plot.x_range.update(start=0, end=n)
            self.plot.y_range.update(start=n, end=0)
            key = "shift_matrix_full" if s.d_model <= MATRIX_SIZE else "shift_matrix_corner"
            self.plot.title.text = text(s.lang, key, k=s.k, n=s.d_model)
            note = "shift_note_full" if s.d_model <= MATRIX_SIZE else "shift_note_corner"
            sentence = html.escape(text(s.lang, note, n=s.d_model, pairs=s.d_model // 2))
            self.note.object = f'<p class="nt">{sentence}</p>'

    @param.depends("state.pair", "state.d_model", watch=True)
    def _update_pair(self) -> None:
        s = self.state
        left = 2 * s.pair
        inside = left + 2 <= MATRIX_SIZE
        send_changes(self.outline, {"left": [left] if inside else [], "right": [left + 2] if inside else [],
                                    "top": [left] if inside else [], "bottom": [left + 2] if inside else []})

    # A watcher of its own: a d_model step, which moves the matrix and the pair at once, writes the block once.
    @param.depends("state.pos", "state.k", "state.pair", "state.d_model", "state.base", watch=True)
    def _update_block(self) -> None:
        s = self.state
        self.block.object = block_markup(s.lang, s.pair, s.k, s.pos, s.d_model, s.base)

    def live_values(self) -> dict[str, str]:
        s = self.state
        angle = float(core.frequencies(s.d_model, s.base)[s.pair]) * s.k
        return {
            "k": str(s.k),
            "pair": str(s.pair),
            "angle": significant(angle, 4),
            "d_model": str(s.d_model),
            "pairs": str(s.d_model // 2),
            "norm": f"{core.expected_row_norm(s.d_model):.6g}",
        }

    def layout(self) -> list[pn.viewable.Viewable]:
        return [self.passage("intro"), self.control_panel(), self.block, self.passage("matrix"), self.note,
                fixed_figure_box(self.plot), self.passage("pos"),
                self.passage("norms"), self.checks, self.passage("try")]
