"""Issue 45, item 4: notation that matches the board.

Matrices and vectors between square brackets (bars read as a determinant), subscripts written below the
line in figure titles, as the typeset prose beside them writes them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.model.strings import TABLES, subscript, text
from components.clocks import BLOCK_CSS as CLOCK_BLOCK_CSS
from components.clocks import block_html
from components.lesson.shift import BLOCK_CSS as SHIFT_BLOCK_CSS
from components.lesson.shift import block_markup

PROSE = Path(__file__).resolve().parents[2] / "app" / "model" / "prose"


# -- subscripts ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "written"), [
    (0, "\u2080"), (7, "\u2087"), (-7, "\u208b\u2087"), (1024, "\u2081\u2080\u2082\u2084"),
    ("p+k", "\u209a\u208a\u2096"), ("(m+k)", "\u208d\u2098\u208a\u2096\u208e"), ("pos", "\u209a\u2092\u209b"),
    ("\u22123", "\u208b\u2083"),
])
def test_subscript_writes_digits_signs_and_letters_below_the_line(value, written):
    assert subscript(value) == written


@pytest.mark.parametrize("value", ["q", "W", 1.5, True, None])
def test_subscript_refuses_what_unicode_cannot_write_below_the_line(value):
    with pytest.raises(ValueError):
        subscript(value)


def test_the_sub_spec_of_a_template_writes_k_below_m():
    assert text("en", "block_caption_matrix", k=-12, pair=3) == "M\u208b\u2081\u2082, pair 3"
    assert text("es", "shift_matrix_full", k=5, n=8) == "M\u2085 entera: 8 \u00d7 8"


PLAIN_SUBSCRIPT = re.compile(r"(?<![A-Za-z_])(M|PE|R|S|x|e|row|fila)_[({]?[a-z0-9\u2212-]")


@pytest.mark.parametrize("lang", sorted(TABLES))
def test_no_figure_title_or_label_writes_a_subscript_as_code(lang):
    """"M_−7" or "PE_(p+k)" beside typeset prose read as code. Screen readers' descriptions keep their plain
    words (a subscript character is read out unreliably); PE_q stays (Unicode has no subscript q)."""
    offenders = {key: value for key, value in TABLES[lang].items()
                 if not key.startswith("describe_") and PLAIN_SUBSCRIPT.search(value.replace("PE_q", ""))}
    assert offenders == {}


# -- square brackets -------------------------------------------------------------------------------------

def test_the_prose_writes_every_matrix_between_square_brackets():
    found = {path.relative_to(PROSE).as_posix(): re.findall(r"\\begin\{(\w*matrix)\}", path.read_text("utf-8"))
             for path in sorted(PROSE.glob("*/*.md"))}
    kinds = {kind for kinds in found.values() for kind in kinds}
    assert kinds == {"bmatrix"}, found
    # Nor an array between bars or parentheses (a norm's ‖…‖ stays: it is not a matrix).
    assert not any(re.search(r"\\left\s*(\||\(|\\vert|\\lvert)\s*\\begin\{array", path.read_text("utf-8"))
                   for path in PROSE.glob("*/*.md"))


def rules(css: str) -> list[tuple[str, str]]:
    return [(selector.strip(), body) for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css.replace("{{", "{")
                                                                       .replace("}}", "}"))]


def test_the_clocks_block_draws_square_brackets_not_bars():
    """Every cell whose side is a bracket's upright (a border) carries that side's serif (a short stroke at
    its top in the first row, at its bottom in the second), so no upright stands alone as a bar."""
    html = block_html("en", 1, 4, -3, 32, 10_000)
    assert html.count("<tr>") == 3  # the layout the place selectors describe
    uprights: dict[str, set[str]] = {}
    serifs: dict[str, set[str]] = {}
    for selector, body in rules(CLOCK_BLOCK_CSS):
        for one in top_level(selector):
            cells = expand(one.strip())
            for side in ("left", "right"):
                if f"border-{side}:" in body:
                    for cell in cells:
                        uprights.setdefault(cell, set()).add(side)
            for side, end in re.findall(r"var\(--pe-serif\)\s+(left|right)\s+(top|bottom)", body):
                for cell in cells:
                    serifs.setdefault(cell, set()).add(f"{side} {end}")
    matrix = {(1, 1), (1, 2), (2, 1), (2, 2)}
    vectors = {(1, 4), (1, 6), (2, 3), (2, 4)}
    assert set(uprights) == matrix | vectors
    for (row, column), sides in uprights.items():
        end = "top" if row == 1 else "bottom"
        assert serifs[(row, column)] == {f"{side} {end}" for side in sides}, (row, column)
    assert "border-radius" not in CLOCK_BLOCK_CSS


def top_level(selector: str) -> list[str]:
    """A selector list split at its top-level commas (not those inside ``:is(…)``)."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(selector):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(selector[start:at])
            start = at + 1
    return [*parts, selector[start:]]


def expand(selector: str) -> set[tuple[int, int]]:
    """The (row, column) cells of the block's two number rows that a place selector of BLOCK_CSS picks."""
    picked = set()
    for row in (1, 2):
        for column in range(1, 7):
            if row_matches(selector, row) and column_matches(selector, column):
                picked.add((row, column))
    return picked


def row_matches(selector: str, row: int) -> bool:
    if selector.startswith("tr:first-child"):
        return row == 1
    if selector.startswith("tr:nth-child(2)"):
        return row == 2
    return selector.startswith("tr:not(:last-child)")


def column_matches(selector: str, column: int) -> bool:
    cell = selector.split("td", 1)[1] if "td" in selector else ""
    if cell.startswith(":first-child"):
        return column == 1
    return column in {int(n) for n in re.findall(r":nth-child\((\d+)\)", cell)}


def test_the_shift_block_draws_square_brackets_not_parentheses():
    markup = block_markup("en", 2, 3, 5, 32, 10_000)
    assert markup.count('class="m ') == 3  # the block and its two vectors
    body = dict(rules(SHIFT_BLOCK_CSS))[".sb .m"]
    assert "border-radius" not in body
    assert "border-left" in body and "border-right" in body
    corners = set(re.findall(r"var\(--pe-serif\)\s+(left|right)\s+(top|bottom)", body))
    assert corners == {("left", "top"), ("left", "bottom"), ("right", "top"), ("right", "bottom")}
