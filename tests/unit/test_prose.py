"""The lesson's prose files: both languages for every section, the same passages and live numbers,
formulas that reach the page only as formulas, and live numbers the sections really fill."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.lesson import SECTIONS
from app.model.prose import PROSE_DIR, parse, render, section_prose, sections_with_prose
from app.model.state import LANGUAGES, ExplorerState
from app.model.strings import TABLES

SLUGS = list(SECTIONS)


def visible(markup: str) -> str:
    """The text a reader sees, formulas left out (KaTeX replaces them in the page)."""
    no_math = re.sub(r'<(span|div) class="math[^"]*">.*?</\1>', " ", markup, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", no_math))


def test_every_section_has_prose_in_every_language_and_nothing_else():
    for lang in LANGUAGES:
        assert sections_with_prose(lang) == sorted(SLUGS), lang


@pytest.mark.parametrize("slug", SLUGS)
def test_languages_have_the_same_passages_and_live_numbers(slug):
    es, en = (section_prose(slug, lang) for lang in ("es", "en"))
    assert list(es.parts) == list(en.parts)
    for part in es.parts:
        assert set(es.parts[part].keys) == set(en.parts[part].keys), (slug, part)
    assert es.title and en.title and es.title != en.title


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("slug", SLUGS)
def test_no_raw_tex_or_placeholder_reaches_the_page(slug, lang):
    for part, passage in section_prose(slug, lang).parts.items():
        text = visible(passage.html)
        assert "$" not in text, (slug, lang, part, text)
        assert "{{" not in text and "}}" not in text, (slug, lang, part)
        assert not re.search(r"\\[a-zA-Z]+", text), f"TeX command outside a formula in {slug}/{lang}/{part}"
        assert "TODO" not in text, f"{slug}/{lang}/{part} is unwritten"
        # Nothing a page loads may come from another host: no image from elsewhere in the prose.
        assert not re.search(r'src="(https?:)?//', passage.html), (slug, lang, part)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("slug", SLUGS)
def test_sections_fill_every_live_number(slug, lang):
    section = SECTIONS[slug](ExplorerState(lang=lang))
    values = section.live_values()
    missing = section_prose(slug, lang).keys() - set(values)
    assert not missing, f"{slug} leaves {sorted(missing)} empty"
    assert all(isinstance(v, str) and v for v in values.values())


def test_a_passage_renders_formulas_and_numbers_as_elements():
    passage = render("Pair $\\omega_i = b^{-2i/d}$ gives {{S_k}} and {{k}}, again {{S_k}}.\n\n$$S(k)=\\sum_i 1$$")
    assert passage.keys == ("S_k", "k")
    assert passage.html.count('<span class="pe-num" data-key="S_k"></span>') == 2
    assert '<span class="math inline">\\omega_i = b^{-2i/d}</span>' in passage.html
    assert '<div class="math block">' in passage.html


def test_raw_html_in_a_prose_file_is_shown_as_text():
    passage = render('<script>alert(1)</script> <img src=x onerror="alert(1)"> **ok**')
    assert "<script" not in passage.html and "<img" not in passage.html
    assert "&lt;script&gt;" in passage.html and "<strong>ok</strong>" in passage.html


def test_a_live_number_inside_a_formula_is_refused():
    with pytest.raises(ValueError, match="inside a formula"):
        render("$S = {{S_k}}$")


def test_parts_and_title():
    prose = parse("# Title\n\nFirst.\n<!-- part: try -->\nSecond {{k}}.\n<!-- part: more -->\nThird.\n")
    assert prose.title == "Title"
    assert list(prose.parts) == ["intro", "try", "more"]
    assert prose.parts["try"].keys == ("k",)
    with pytest.raises(ValueError, match="title"):
        parse("No title here")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_renders_without_live_markup_leaking(text):
    passage = render(text.replace("{{", "{ {"))
    # Whatever a teacher writes, the only elements are Markdown's own (no raw HTML passes).
    tags = set(re.findall(r"<\s*([a-zA-Z0-9]+)", passage.html))
    assert tags <= {"p", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "h1", "h2", "h3", "h4",
                    "h5", "h6", "hr", "br", "a", "img", "span", "div", "table", "thead", "tbody", "tr", "th", "td"}
    assert "<script" not in passage.html.lower()


def test_prose_dir_has_one_folder_per_language():
    assert sorted(p.name for p in PROSE_DIR.iterdir() if p.is_dir()) == sorted(LANGUAGES)



#: A live count right before a plural noun ("of the {{pairs}} pairs") reads "1 pairs" at d_model = 2 or T = 1.
COUNT_BEFORE_PLURAL = re.compile(
    r"\{\{?\s*(\w+)(?::[^}]*)?\s*\}\}?\s+(?:de\s+(?:las|los)\s+)?"
    r"(pairs|terms|positions|rows|columns|words|steps|parejas|términos|posiciones|filas|columnas|palabras|pasos)\b")
#: Numbers that are never 1: wavelengths (2π at least) and a stride (shown only from 2 on).
NEVER_ONE = {"wavelength", "slow_wavelength", "lesson_slow_wavelength", "stride"}
#: Strings with a count before a plural that is shown only when the count is above 1: a singular twin
#: (``_one``), or a note for large tables only (sampled dials, banded terms).
PLURAL_ONLY = {"check_rotation", "animation_speed_value", "fingerprint_dials_sampled", "terms_bands"}


def counts_before_plurals(template: str) -> list[str]:
    """The "{count} nouns" spans of ``template`` whose count may be 1."""
    return [m.group(0) for m in COUNT_BEFORE_PLURAL.finditer(template) if m.group(1) not in NEVER_ONE]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_live_count_stands_before_a_plural_noun(lang):
    prose = {path.stem: counts_before_plurals(path.read_text(encoding="utf-8"))
             for path in sorted((PROSE_DIR / lang).glob("*.md"))}
    table = {key: counts_before_plurals(value) for key, value in TABLES[lang].items() if key not in PLURAL_ONLY}
    assert not {name: hits for name, hits in {**prose, **table}.items() if hits}
    for key in PLURAL_ONLY - {"fingerprint_dials_sampled", "terms_bands"}:
        assert f"{key}_one" in TABLES[lang]


def test_punctuation_after_a_formula_stays_on_its_line():
    """KaTeX's boxes let the browser break between a formula and the full stop after it (". Each step of pos"
    opened a line at 1920 px on /hands)."""
    from app.model.prose import render

    html = render(r"and $\cos 0 = 1$. Each step, $x$, then $y$ alone").html
    assert '<span class="pe-glue"><span class="math inline">\\cos 0 = 1</span>.</span>' in html
    assert '<span class="pe-glue"><span class="math inline">x</span>,</span>' in html
    assert html.count("pe-glue") == 2  # "$y$ alone" has nothing to keep with it
    # An opening bracket stays with the formula after it ("miden 1 (" ended a line on /shift, es).
    assert '<span class="pe-glue">(<span class="math inline">a</span></span>' in render("uno ($a$ dos").html


def test_a_percent_sign_stays_with_its_live_number():
    from app.model.prose import render

    assert '<span class="pe-num" data-key="share"></span>\u00a0%' in render("it is {{share}} %.").html
