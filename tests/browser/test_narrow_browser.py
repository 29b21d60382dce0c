"""No page runs off the right edge: an iframe in a course page (768 px) and a projector's 1280 px in
presentation mode, where every text and figure carries double type."""

from __future__ import annotations

import pytest

from app.lesson import SECTIONS
from app.model.strings import text
from app.pages import VIEWS
from components.figure_theme import present_font_size
from components.theme import LABEL_SIZE, TITLE_SIZE
from tests.helpers import figure_count, plots_drawn, wait_until

pytestmark = pytest.mark.browser

_WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"


def overflow(page, url: str, route: str) -> int:
    """How many pixels the drawn page at ``url`` is wider than the window."""
    page.goto(url)
    wait_until(lambda: plots_drawn(page, figure_count(route)), timeout=40, message=f"{route} drawn")
    wide, window = page.evaluate(_WIDTH)
    return wide - window


@pytest.mark.parametrize("route", [*SECTIONS, *VIEWS, "explore"])
def test_a_page_fits_a_768_px_iframe(page, app_url, route):
    """The rows that used to run off (the play controls, the clock beside its block of M_k, the mistakes'
    buttons) wrap instead."""
    page.set_viewport_size({"width": 768, "height": 900})
    assert overflow(page, f"{app_url}/{route}?lang=es", route) <= 0


@pytest.mark.parametrize("route", ["hands", "clocks", "mistakes", "explore"])
def test_a_presented_page_fits_a_1280_px_projector(page, app_url, route):
    page.set_viewport_size({"width": 1280, "height": 800})
    assert overflow(page, f"{app_url}/{route}?lang=en&present=1", route if route != "explore" else "ladder") <= 0


#: Each drawn figure title: its name, the width of its widest line at its size, the room it has, its size, text.
_TITLES = """() => {
  const measure = document.createElement("canvas").getContext("2d");
  const plots = [...Bokeh.index.query((v) => v.model?.toolbar !== undefined && v.canvas_view && v.frame)];
  return plots.filter((v) => v.model.title?.text).map((v) => {
    const t = v.model.title;
    measure.font = `${t.text_font_style} ${t.text_font_size} ${t.text_font}`;
    const wide = Math.max(...t.text.split("\\n").map((line) => measure.measureText(line).width));
    return [v.model.name, wide, v.bbox.width - v.frame.bbox.left, t.text_font_size, t.text];
  });
}"""


@pytest.mark.parametrize("route", ["fingerprint", "score", "terms", "simpler", "gram", "sum", "rope", "question"])
def test_figure_titles_fit_a_768_px_iframe(page, app_url, route):
    """A canvas cuts a title at its right edge: fourteen were cut at 768 px ("…through the chosen pa")."""
    page.set_viewport_size({"width": 768, "height": 900})
    assert overflow(page, f"{app_url}/{route}?lang=es", route) <= 0
    assert len(page.evaluate(_TITLES)) >= 2
    wait_until(lambda: all(wide <= room for _, wide, room, _, _ in page.evaluate(_TITLES)), timeout=10,
               message=lambda: f"titles cut: {[t for t in page.evaluate(_TITLES) if t[1] > t[2]]}")


@pytest.mark.parametrize(("route", "lang"), [("explore", "es"), ("explore", "en"), ("extrapolation", "es")])
def test_every_title_fits_a_phone(browser, app_url, route, lang):
    """/explore's last figure (distance), drawn off screen (``content-visibility: auto``), is laid out by BokehJS at
    its model's 600 px until the reader reaches it, its element's box unchanged: on a 390 px phone its title
    kept the size that fits 600 px, and the canvas cut "S(k) = Σ cos(ωᵢ·k) = PEₚ · PE₍ₚ₊ₖ₎" at "PE₍ₚ". And
    "Puntuación de dos posiciones a distancia k, / más allá del entrenamiento" was wider than a phone's figure in
    two lines at the smallest share of its size: it takes three. Every title of the page fits, the reader still
    at the top."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{app_url}/{route}?lang={lang}")
        wait_until(lambda: plots_drawn(page, figure_count(f"/{route}")), timeout=60, message=f"/{route} was not drawn")
        wait_until(lambda: all(wide <= room for _, wide, room, _, _ in page.evaluate(_TITLES)), timeout=10,
                   message=lambda: f"titles cut: {[t for t in page.evaluate(_TITLES) if t[1] > t[2]]}")
    finally:
        context.close()


#: Each drawn axis label: its figure's name, its width at its size, and the room the canvas leaves it (it is
#: centred on the frame).
_AXIS_LABELS = """() => {
  const measure = document.createElement("canvas").getContext("2d");
  const plots = [...Bokeh.index.query((v) => v.model?.toolbar !== undefined && v.canvas_view && v.frame)];
  const out = [];
  for (const v of plots) {
    const frame = v.frame.bbox, box = v.bbox;
    for (const side of ["below", "above", "left", "right"]) {
      for (const axis of v.model[side]) {
        if (typeof axis.axis_label !== "string" || !axis.axis_label) continue;
        const font = [axis.axis_label_text_font_style, axis.axis_label_text_font_size, axis.axis_label_text_font];
        measure.font = font.join(" ");
        const across = side === "below" || side === "above";
        const room = across ? 2 * Math.min(frame.hcenter, box.width - frame.hcenter)
                            : 2 * Math.min(frame.vcenter, box.height - frame.vcenter);
        const wide = Math.max(...axis.axis_label.split("\\n").map((line) => measure.measureText(line).width));
        out.push([v.model.name, axis.axis_label, wide, room]);
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize(("route", "lang"), [("gram", "en"), ("terms", "es"), ("shift", "en"), ("order", "es")])
def test_presented_titles_and_axis_labels_fit_figures_sized_to_a_1280_by_720_projector(page, app_url, route, lang):
    """Presentation mode narrows a figure to fit the window once the page has reported it; the title, fitted
    at the first width, was then cut ("G = PE·PEᵀ: G[p, q] = S(q ·"), and an axis label in type 1.8 times
    larger lost both ends ("y(original) − y(actual)‖ de la misma")."""
    page.set_viewport_size({"width": 1280, "height": 720})
    assert overflow(page, f"{app_url}/{route}?lang={lang}&present=1", route) <= 0
    wait_until(lambda: page.evaluate(_TITLES) and all(wide <= room for _, wide, room, _, _ in page.evaluate(_TITLES)),
               timeout=10, message=lambda: f"titles cut: {[t for t in page.evaluate(_TITLES) if t[1] > t[2]]}")
    wait_until(lambda: page.evaluate(_AXIS_LABELS)
               and all(wide <= room for _, _, wide, room in page.evaluate(_AXIS_LABELS)), timeout=10,
               message=f"axis labels cut: {[a for a in page.evaluate(_AXIS_LABELS) if a[2] > a[3]]}")


def title_of(page, name: str) -> tuple[str, str] | None:
    """The drawn title of figure ``name``: its size and text (``None`` until it is drawn)."""
    return next(((size, shown) for plot, _, _, size, shown in page.evaluate(_TITLES) if plot == name), None)


def test_titles_that_fit_keep_their_size_and_line(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/fingerprint?lang=es")
    whole = (TITLE_SIZE, text("es", "fingerprint_plot_title"))
    wait_until(lambda: title_of(page, "fingerprint_plot") == whole, timeout=30, message="drawn whole at 1280 px")
    # Narrowed, it is set smaller; widened again, it is back to its size.
    page.set_viewport_size({"width": 768, "height": 800})
    wait_until(lambda: title_of(page, "fingerprint_plot")[0] != TITLE_SIZE, message="the title kept its size")
    page.set_viewport_size({"width": 1280, "height": 800})
    wait_until(lambda: title_of(page, "fingerprint_plot") == whole, message="the title did not grow back")


def test_a_title_that_would_shrink_far_takes_two_lines_broken_at_its_clause(page, app_url):
    """Presented at 1280 × 720 the terms section's curve title was set in one line at 0.62 of its size, beside
    the ridges' title in two lines at full size: it takes two lines too, broken after its colon."""
    page.set_viewport_size({"width": 1280, "height": 720})
    assert overflow(page, f"{app_url}/terms?lang=en&present=1", "terms") <= 0
    whole = text("en", "terms_score_title")
    head, tail = whole.split(": ", 1)
    wait_until(lambda: title_of(page, "terms_score_plot") is not None
               and title_of(page, "terms_score_plot")[1] == f"{head}:\n{tail}", timeout=10,
               message=f"drawn as {title_of(page, 'terms_score_plot')}")
    # At the size the ridges' title beside it has (the server gives both the same).
    assert title_of(page, "terms_score_plot")[0] == title_of(page, "terms_plot")[0]


@pytest.mark.parametrize("route", ["score", "sum", "fingerprint", "gram", "simpler"])
def test_a_title_in_two_lines_is_not_broken_inside_a_formula(page, app_url, route):
    """In a 768 px iframe, "…de la puntuación x_mᵀ" / "W_Qᵀ W_K x_n, con …" and "… en pos" / "= 0 (continua) …"
    read as two things; the break goes between words of the sentence."""
    page.set_viewport_size({"width": 768, "height": 900})
    assert overflow(page, f"{app_url}/{route}?lang=es", route) <= 0
    wait_until(lambda: all(wide <= room for _, wide, room, _, _ in page.evaluate(_TITLES)), timeout=10,
               message="titles fitted")
    formula = ("_", "ᵀ", "‖")
    for name, _, _, _, shown in page.evaluate(_TITLES):
        if "\n" not in shown:
            continue
        first, second = shown.split("\n")
        before, after = first.split(" ")[-1], second.split(" ")[0]
        assert not {before[-1:], after[:1]} & {"=", "+", "−", "·"}, (name, shown)
        assert not (any(c in before for c in formula) and any(c in after for c in formula)), (name, shown)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_titles_side_by_side_are_set_at_one_size(page, app_url, lang):
    """Presented at 1280 × 800, /simpler's "(c) Tabla aprendida, al empezar (filas aleatorias)…" took two lines
    at three quarters of its size beside "Sinusoidal: PE_p · PE_(p+k)" in one line at full size: two ranks of
    heading for two figures of one rank. Both are at the smaller size; each keeps its own lines."""
    page.set_viewport_size({"width": 1280, "height": 800})
    assert overflow(page, f"{app_url}/simpler?lang={lang}&present=1", "simpler") <= 0

    def pair():
        learned, sinusoid = title_of(page, "simpler_learned_plot"), title_of(page, "simpler_sinusoid_plot")
        return (learned, sinusoid) if learned and sinusoid else None

    wait_until(lambda: pair() and pair()[0][0] == pair()[1][0], timeout=10, message=f"drawn as {pair()}")
    (_, learned_text), (sinusoid_size, sinusoid_text) = pair()
    assert "\n" in learned_text and "\n" not in sinusoid_text
    # The one-line title was set smaller than the server's presented size to match its neighbour (without the
    # rule it stays at that size, which fits).
    assert _px(sinusoid_size) < _px(present_font_size(TITLE_SIZE)), sinusoid_size
    # Under those titles the axis labels ("offset k", "dot product", at the server's presented size) were larger
    # than the titles: they are no larger, or no smaller than four fifths of their own size.
    axes = page.evaluate("""() => ['simpler_learned_plot', 'simpler_sinusoid_plot'].map((name) => {
      const plot = Bokeh.documents[0].get_model_by_name(name);
      return [...plot.below, ...plot.left].map((axis) => axis.axis_label_text_font_size); })""")
    cap = max(_px(sinusoid_size), 0.8 * _px(present_font_size(LABEL_SIZE)))
    assert all(_px(size) <= cap + 0.5 for sizes in axes for size in sizes if size), (axes, sinusoid_size)


def _px(size: str) -> float:
    value = float(size[:-2])
    return value * 4 / 3 if size.endswith("pt") else value
