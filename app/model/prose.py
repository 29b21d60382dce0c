"""The lesson's text: one Markdown file per section and language, under ``app/model/prose/<lang>/``.

A teacher corrects a sentence there without reading Python. What a file may hold:

* the section's title on its first line, as ``# Title``;
* ordinary Markdown (CommonMark and tables; raw HTML is not interpreted, it shows as text);
* formulas between ``$ … $`` (inline) or ``$$ … $$`` (display), typeset in the page by
  KaTeX, which the app serves itself;
* live numbers as ``{{name}}``: the section fills them from the state (``S_k``, ``d_model``
  …) and they change as the sliders move. Not inside a formula;
* several passages, each starting with a line ``<!-- part: name -->``; what comes before
  the first such line (after the title) is the passage ``intro``.

Both languages must name the same passages and the same live numbers (tests/unit/test_prose.py).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

PROSE_DIR = Path(__file__).resolve().parent / "prose"
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}")
PART = re.compile(r"^<!--\s*part:\s*([a-z][a-z0-9_]*)\s*-->\s*$", re.MULTILINE)
#: A placeholder travels through Markdown as this token (letters and digits only, so no
#: Markdown rule touches it) and becomes an element afterwards.
_TOKEN = "zqplaceholder{}zq"
_TOKEN_RE = re.compile(r"zqplaceholder(\d+)zq")


@dataclass(frozen=True)
class Passage:
    """One passage as HTML, and the live numbers it shows, in order of first appearance.

    In ``html`` a formula is ``<span class="math inline">TeX</span>`` (``<div class="math block">``
    for display), its TeX escaped; a live number is ``<span class="pe-num" data-key="name"></span>``.
    """

    html: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class SectionProse:
    """A section's title and its passages, in one language."""

    title: str
    parts: dict[str, Passage]

    def keys(self) -> set[str]:
        """Every live number any passage shows."""
        return {key for part in self.parts.values() for key in part.keys}


_FORMULA_AND_PUNCTUATION = re.compile(r'([(\[«“¿¡]*)(<span class="math inline">[^<]*</span>)([.,;:!?)\]»”]*)')


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table").use(
        dollarmath_plugin, allow_space=True, double_inline=True)


_MD = _markdown()


def render(markdown: str) -> Passage:
    """One passage of Markdown as a ``Passage``; ``ValueError`` for a live number inside a formula."""
    keys: list[str] = []

    def token(match: re.Match) -> str:
        name = match.group(1)
        if name not in keys:
            keys.append(name)
        return _TOKEN.format(keys.index(name))

    body = _MD.render(PLACEHOLDER.sub(token, markdown))
    for formula in re.findall(r'<(?:span|div) class="math[^"]*">(.*?)</(?:span|div)>', body, re.DOTALL):
        if _TOKEN_RE.search(formula):
            raise ValueError(f"a live number ({{{{…}}}}) cannot stand inside a formula: {html.unescape(formula)!r}")
    body = _TOKEN_RE.sub(lambda m: f'<span class="pe-num" data-key="{keys[int(m.group(1))]}"></span>', body)
    # "99.99 %" on one line: the sign stays with its number.
    body = body.replace('></span> %', '></span>\u00a0%')
    # A typeset formula is a box the browser may break after, which left "." or "," at the start of a line.
    body = _FORMULA_AND_PUNCTUATION.sub(
        lambda m: f'<span class="pe-glue">{m.group(0)}</span>' if m.group(1) or m.group(3) else m.group(0), body)
    return Passage(html=body.strip(), keys=tuple(keys))


def parse(text: str) -> SectionProse:
    """A whole prose file: title line, then passages."""
    first, _, rest = text.lstrip().partition("\n")
    if not first.startswith("# "):
        raise ValueError("a prose file starts with its title: '# Title'")
    pieces = PART.split(rest)
    parts = {"intro": pieces[0]} if pieces[0].strip() else {}
    parts.update(zip(pieces[1::2], pieces[2::2], strict=True))
    return SectionProse(title=first[2:].strip(), parts={name: render(md) for name, md in parts.items()})


@cache
def section_prose(section: str, lang: str) -> SectionProse:
    """The prose of ``section`` in ``lang`` (read once per process)."""
    path = PROSE_DIR / lang / f"{section}.md"
    return parse(path.read_text(encoding="utf-8"))


def sections_with_prose(lang: str) -> list[str]:
    """The names of every prose file of ``lang``."""
    return sorted(path.stem for path in (PROSE_DIR / lang).glob("*.md"))
