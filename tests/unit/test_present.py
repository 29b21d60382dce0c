"""Presentation mode, themes, the page keyboard and the play control, without a browser."""

from __future__ import annotations

import re
import threading

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Legend, Plot
from bokeh.models.glyph import Glyph

from app.model.state import SPEEDS, ExplorerState
from app.model.strings import text
from components import widgets
from components.animation import Animation
from components.clocks import PairClocks
from components.figure_theme import DARK_BACKGROUND, FigureStyler, dark_color, present_font_size, style_figures
from components.keyboard import SHORTCUTS, PageKeys
from components.present import DARK_VARIABLES, Slide, bar_html, choose_slide
from components.theme import COLORS


def luminance(color: str) -> float:
    """WCAG 2 relative luminance of ``#rrggbb`` (written out from the definition)."""
    channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# -- the play control ---------------------------------------------------------------------------

def test_a_step_moves_pos_and_loops_at_the_end():
    state = ExplorerState(T=4, pos=2, k=1)
    animation = Animation(state)
    animation.step()
    assert state.pos == 3
    animation.step()
    assert state.pos == 0 and not state.play


def test_without_loop_the_animation_stops_at_the_end():
    state = ExplorerState(T=4, pos=3, loop=False)
    animation = Animation(state)
    state.play = True
    try:
        assert state.pos == 0, "play at the end starts again from the start"
        state.pos = 3
        animation.step()
        assert not state.play and state.pos == 3
    finally:
        state.play = False


def test_play_k_runs_k_instead_of_pos():
    state = ExplorerState(T=4, pos=1, k=2, play_k=True)
    animation = Animation(state)
    animation.step()
    assert (state.pos, state.k) == (1, 3)
    animation.step()
    assert (state.pos, state.k) == (1, -3), "k loops to -(T-1)"


def test_play_from_the_address_waits_for_the_browser_and_respects_reduced_motion():
    state = ExplorerState(play=True)
    animation = Animation(state)
    assert not state.play, "nothing runs before the browser has spoken"
    animation.browser_ready(reduced_motion=True)
    assert not state.play
    other = ExplorerState(play=True)
    started = Animation(other)
    started.browser_ready(reduced_motion=False)
    try:
        assert other.play and started.toggle.name.endswith("Pause") is False  # Spanish by default
        assert started.toggle.value is True
    finally:
        other.play = False
    assert started.toggle.value is False


def test_speed_walks_the_list_and_stops_at_its_ends():
    state = ExplorerState(speed=SPEEDS[0])
    animation = Animation(state)
    animation.faster(-1)
    assert state.speed == SPEEDS[0]
    for expected in SPEEDS[1:]:
        animation.faster(1)
        assert state.speed == expected
    animation.faster(1)
    assert state.speed == SPEEDS[-1]
    assert animation.period == round(1000 / SPEEDS[-1])


# -- the page keyboard --------------------------------------------------------------------------

def test_keys_move_the_state_within_its_bounds():
    state = ExplorerState(T=4, d_model=8, pos=0, k=3, pair=3)
    keys = PageKeys(state)
    keys._handle_msg({"move": "pos", "by": -1})
    keys._handle_msg({"move": "k", "by": 1})
    keys._handle_msg({"move": "pair", "by": 1})
    assert (state.pos, state.k, state.pair) == (0, 3, 3), "clamped at the bounds"
    keys._handle_msg({"move": "pos", "by": 1})
    keys._handle_msg({"move": "k", "by": -1})
    keys._handle_msg({"move": "pair", "by": -1})
    assert (state.pos, state.k, state.pair) == (1, 2, 2)


@pytest.mark.parametrize("junk", ["pos", 3, None, [], {"move": "pos", "by": 5}, {"move": "T", "by": 1},
                                  {"move": "__class__", "by": 1}, {"speed": 3}, {"slide": 2}, {"play": "yes"},
                                  {"move": "pos", "by": True}, {"ready": "yes"}])
def test_keys_ignore_anything_else(junk):
    state = ExplorerState()
    before = state.query()
    PageKeys(state)._handle_msg(junk)
    assert state.query() == before


def test_space_and_speed_keys_reach_the_animation():
    state = ExplorerState()
    keys = PageKeys(state)
    keys._handle_msg({"speed": 1})
    assert state.speed == SPEEDS[SPEEDS.index(3) + 1]
    keys._handle_msg({"play": "toggle"})
    try:
        assert state.play
    finally:
        keys._handle_msg({"play": "toggle"})
    assert not state.play


def test_a_page_without_play_takes_no_play_or_speed_from_a_client():
    """The page's keys say so in the browser; a client that sends them anyway changes nothing either."""
    state = ExplorerState()
    keys = PageKeys(state)
    keys.plays = False
    keys._handle_msg({"play": "toggle"})
    keys._handle_msg({"speed": 1})
    assert not state.play and state.speed == 3
    listed = [keys_ for keys_, _ in keys.help_rows]
    assert text("en", "keys_play") not in listed and text("en", "keys_speed") not in listed
    assert len(listed) == len(SHORTCUTS) - 2
    keys.plays = True
    assert len(keys.help_rows) == len(SHORTCUTS)


def test_page_down_moves_the_slide_only_through_the_presentation():
    state = ExplorerState()
    keys = PageKeys(state)
    moved = []
    keys._handle_msg({"slide": 1})  # no presentation: nothing to move
    keys.on_slide = moved.append
    keys._handle_msg({"slide": 1})
    keys._handle_msg({"slide": -1})
    assert moved == [1, -1]


# -- presentation -------------------------------------------------------------------------------

def test_an_unknown_slide_falls_back_with_a_notice():
    deck = [Slide("a", "A", pn.Column), Slide("b", "B", pn.Column)]
    state = ExplorerState(slide="zzz")
    notices = []
    choose_slide(state, deck, "b", notices)
    assert state.slide == "b"
    assert [(n.parameter, n.given, n.used, n.reason) for n in notices] == [("slide", "zzz", "b", "not_allowed")]
    state.slide = "a"
    choose_slide(state, deck, "b", notices)
    assert state.slide == "a" and len(notices) == 1


def test_a_slide_where_nothing_plays_shows_no_play_and_takes_no_play_key():
    """Presented, the bar's play button and the space bar worked on the order and quiz slides, where playing
    moves pos unseen: the button is disabled there (in its place), the keys ignored, a running play stopped."""
    from components.present import Presentation

    state = ExplorerState(slide="moving")
    deck = [Slide("moving", "A", pn.Column), Slide("still", "B", pn.Column, plays=False)]
    presentation = Presentation(state, deck)
    keys = PageKeys(state)
    presentation.attach_keys(keys)
    assert not presentation.play.disabled and keys.plays
    state.play = True
    presentation.move(1)
    assert state.slide == "still" and presentation.play.disabled and not keys.plays and not state.play
    keys._handle_msg({"play": "toggle"})
    assert not state.play
    state.play = True  # the address's play=1, once the page has drawn
    assert not state.play
    keys._handle_msg({"slide": -1})
    assert state.slide == "moving" and not presentation.play.disabled and keys.plays


def test_the_lessons_slides_play_where_their_sections_do():
    from app.lesson import SECTIONS
    from app.pages import LESSON, slides

    deck = slides(ExplorerState(), "lesson")
    assert [slide.name for slide in deck] == list(SECTIONS)
    # pos and k move nothing in the extrapolation section (its controls are the sizes and T_train).
    assert {slide.name for slide in deck if not slide.plays} == {"order", "quiz", "extrapolation"}
    assert all(slide.plays == LESSON[slide.name].plays for slide in deck)


def test_the_slim_bar_shows_the_values_and_escapes_the_title():
    state = ExplorerState(d_model=64, T=100, pos=7, k=-3, pair=5, lang="en")
    markup = bar_html(state, "<b>x</b>", 1, 4)
    shown = re.sub(r"<[^>]+>", "", markup)
    for part in ("d_model = 64", "T = 100", "pos = 7", "k = −3", "i = 5", "2 of 4"):
        assert part in shown
    assert "&lt;b&gt;x&lt;/b&gt;" in markup
    # No English word on a Spanish page ("pair" was one).
    spanish = re.sub(r"<[^>]+>", "", bar_html(ExplorerState(pair=5, lang="es"), "t", 1, 4))
    assert "pair" not in spanish and "i = 5" in spanish


# -- figures: dark theme and presentation sizes -------------------------------------------------

@pytest.mark.parametrize("ink", ["#222222", "#444444", "#000000", "#333333", COLORS["ink"], COLORS["pos_text"],
                                 COLORS["target_text"], COLORS["selected_text"], COLORS["curve"]])
def test_dark_text_colours_reach_4_5_to_1_on_the_dark_ground(ink):
    assert contrast(dark_color(ink), DARK_BACKGROUND) >= 4.5


def test_paper_becomes_the_dark_ground():
    assert dark_color("#ffffff") == dark_color("white") == DARK_BACKGROUND
    assert dark_color("not a colour") == "not a colour"


@pytest.mark.parametrize(("size", "px"), [("17pt", 41), ("13pt", 31), ("10px", 30), ("1em", 30), ("30px", 54)])
def test_presentation_font_sizes(size, px):
    assert present_font_size(size) == f"{px}px"


def test_dark_variables_keep_text_readable():
    ground = ("#212529", DARK_VARIABLES["--pe-t-surface"])
    texts = ("--pe-t-ink", "--pe-t-muted", "--pe-t-accent", "--pe-t-link", "--pe-t-pos-text", "--pe-t-target-text",
             "--pe-t-selected-text")
    for name in texts:
        for back in ground:
            assert contrast(DARK_VARIABLES[name], back) >= 4.5, (name, back)
    for back in ("--pe-t-notice-bg", "--pe-t-right-bg", "--pe-t-wrong-bg", "--pe-t-code-bg", "--pe-t-quote-bg"):
        assert contrast(DARK_VARIABLES["--pe-t-ink"], DARK_VARIABLES[back]) >= 4.5, back


def styled_clocks(dark: bool, present: bool) -> tuple[PairClocks, Document]:
    view = PairClocks(ExplorerState(lang="en"))
    doc = Document()
    styler = FigureStyler(doc, dark=dark, present=present)
    doc.add_root(pn.panel(view).get_root(doc))
    assert styler.restyle() == 0, "the document's own hook restyled everything when the root arrived"
    return view, doc


def test_presentation_sets_large_type_and_thick_lines_on_the_figures_themselves():
    view, doc = styled_clocks(dark=False, present=True)
    sizes, widths = [], []
    for model in doc.models:
        for name, value in model.properties_with_values(include_defaults=True).items():
            if name.endswith("_font_size") and isinstance(value, str | dict):
                text_size = value["value"] if isinstance(value, dict) else value
                sizes.append(float(re.match(r"([0-9.]+)px", text_size).group(1)))
        if isinstance(model, Glyph) and isinstance(getattr(model, "line_width", None), int | float) \
                and model.line_width > 0:
            widths.append(model.line_width)
    assert sizes and min(sizes) >= 30
    assert widths and min(widths) >= 3
    # The large clock stretches up to 470 px (it wraps above its block on a narrow page): that bound grows.
    assert view.pair_figure.max_width == round(470 * 1.5)


def presented(**size) -> tuple[Plot, FigureStyler]:
    from bokeh.plotting import figure
    doc = Document()
    styler = FigureStyler(doc, dark=False, present=True)
    plot = figure(**size)
    doc.add_root(plot)
    return plot, styler


def test_a_slide_shown_later_is_presented_by_the_presentation_itself():
    """Issue 45: a slide reached by Next or PageDown kept its reading size. Panel sends a layout's new children
    to a connected browser past the document's change callbacks, where the styler listens; here the page is
    not on the document at all, so the styler hears nothing of the slide either. The presentation presents each
    slide it shows, once (a slide shown again is not made larger again), and in the window's size."""
    from bokeh.plotting import figure
    from panel.io.state import set_curdoc

    from components.present import Presentation
    from components.theme import style_figure

    later = style_figure(figure(height=400, name="later"))
    doc = Document()
    state = ExplorerState(slide="first", present=True)
    with set_curdoc(doc):
        styler = style_figures(doc, dark=False, present=True)
        styler.fit(1920, 1080)
        presentation = Presentation(state, [Slide("first", "A", pn.Column),
                                            Slide("later", "B", lambda: pn.Column(pn.pane.Bokeh(later)))])
        assert later.xaxis[0].axis_label_text_font_size == "15pt"  # built, not shown yet
        presentation.move(1)
        assert later.xaxis[0].axis_label_text_font_size == "36px"
        assert later.title.text_font_size == "41px" and later.height == 600
        presentation.move(-1)
        presentation.move(1)
    assert later.xaxis[0].axis_label_text_font_size == "36px" and later.height == 600


def test_a_presented_figure_fits_the_window_and_keeps_its_shape():
    """A 620 × 600 figure (the full M_k) grows to 930 × 900, which a 1280 × 720 projector cannot show: there it
    is as tall as the window less 40 px, 680, and as wide as that keeps its shape, 620 · 680/600 ≈ 703."""
    plot, styler = presented(width=620, height=600, sizing_mode="fixed")
    assert (plot.width, plot.height) == (930, 900)
    styler.fit(1280, 720)
    assert (plot.width, plot.height) == (703, 680)
    styler.fit(1920, 1080)  # 900 + 40 fits in 1080: the full growth again
    assert (plot.width, plot.height) == (930, 900)
    styler.fit(900, 500)  # smaller than the reading size: it stays at reading size, never below
    assert (plot.width, plot.height) == (620, 600)
    styler.fit(800, 5000)  # a tall narrow window: the width decides, 760/620
    assert (plot.width, plot.height) == (760, round(600 * 760 / 620))


def test_a_fit_made_in_one_message_is_not_taken_for_a_view_sizing_its_figure():
    """The page's window report is applied in one message (a hold): the document's callbacks, the styler's own,
    see its changes only after the hold. It took its own 680 for a reading size, and a 1080-pixel window then
    gave 1020 px instead of 900."""
    from panel.io.state import set_curdoc

    plot, styler = presented(width=620, height=600, sizing_mode="fixed")
    # As a served session whose browser holds the document (Panel's hold drops the changes otherwise).
    pn.state._connected[plot.document] = True
    pn.state._thread_id_[plot.document] = threading.get_ident()
    with set_curdoc(plot.document):
        with widgets.one_message():
            styler.fit(1280, 720)
        assert (plot.width, plot.height) == (703, 680)
        with widgets.one_message():
            styler.fit(1920, 1080)
        assert (plot.width, plot.height) == (930, 900)
        with widgets.one_message():  # a view's own size, in a step, is still its reading size
            plot.height = 500
        assert (plot.width, plot.height) == (930, 750)
    pn.state._connected.pop(plot.document, None)
    pn.state._thread_id_.pop(plot.document, None)


def test_a_stretching_figure_keeps_its_width_and_fits_its_height():
    plot, styler = presented(height=540, sizing_mode="stretch_width", max_width=700)
    assert (plot.height, plot.max_width) == (810, 1050)
    styler.fit(1280, 720)  # 680/540 of its reading size
    assert (plot.height, plot.max_width) == (680, round(700 * 680 / 540))
    assert plot.sizing_mode == "stretch_width"


def test_a_size_a_view_sets_later_is_presented_too():
    """A figure that grows with its rows (the order section's) was set back to reading size in presentation."""
    plot, styler = presented(width=400, height=300, sizing_mode="fixed")
    plot.height = 200
    assert (plot.width, plot.height) == (600, 300)
    styler.fit(1280, 640)  # room 600 × 1240: 600/200 and 1240/400 are both over 1.5, the growth stands
    assert (plot.width, plot.height) == (600, 300)
    plot.height = 500  # 600/500 = 1.2
    assert (plot.width, plot.height) == (480, 600)


def test_a_presented_axis_asks_for_fewer_ticks_for_its_larger_labels():
    """Labels 1.8 times larger ran into each other ("−20−15−10") on a figure fitted to a 1280 px window."""
    from bokeh.models import BasicTicker
    from bokeh.plotting import figure
    doc = Document()
    FigureStyler(doc, dark=False, present=True)
    plot = figure(width=600, height=400)
    plot.xaxis.ticker = BasicTicker(desired_num_ticks=9)
    doc.add_root(plot)
    assert plot.xaxis.ticker.desired_num_ticks == 5  # 9 / 1.8
    assert plot.yaxis.ticker.desired_num_ticks == 3  # Bokeh's 6 / 1.8, and never fewer than 3


def test_presented_markers_grow_with_their_figures():
    """Marker sizes are screen px: dots of 8 px were specks on a projector while their figure grew 1.5 times."""
    from bokeh.plotting import figure
    doc = Document()
    FigureStyler(doc, dark=False, present=True)
    plot = figure(width=600, height=400)
    dots = plot.scatter(x=[0, 1], y=[0, 1], size=8).glyph
    ring = plot.scatter(x=[0], y=[0], size={"value": 20}).glyph
    doc.add_root(plot)
    assert dots.size == 12 and ring.size.value == 30


def test_a_light_reading_page_leaves_sizes_alone():
    from bokeh.plotting import figure
    doc = Document()
    styler = FigureStyler(doc, dark=False, present=False)
    plot = figure(width=620, height=600)
    doc.add_root(plot)
    styler.fit(1280, 720)
    plot.height = 200
    assert (plot.width, plot.height) == (620, 200)


def test_a_presented_list_under_a_figure_takes_two_columns_unless_it_is_two_fixed_entries():
    """In type 1.8 times larger the learned table's four starts, listed under its figure, took half the figure's
    height; the order figure's two entries side by side were wider than the figure."""
    from bokeh.models import LegendItem
    from bokeh.plotting import figure

    def presented_legend(*labels) -> Legend:
        doc = Document()
        FigureStyler(doc, dark=False, present=True)
        plot = figure(width=600, height=400)
        dots = plot.scatter(x=[0], y=[0])
        legend = Legend(items=[LegendItem(label=label, renderers=[dots]) for label in labels])
        plot.add_layout(legend, "below")
        doc.add_root(plot)
        return legend

    assert presented_legend({"field": "start"}).ncols == 2  # one entry per start in the data
    assert presented_legend("S(k)", {"field": "start"}).ncols == 2
    assert presented_legend("a", "b", "c").ncols == 2
    assert presented_legend("without PE", "with PE").ncols == "auto"


def test_presented_legends_grow_their_gaps_with_their_labels():
    """At presentation size, the default 3 px between entries ran each label into the next swatch."""
    _, doc = styled_clocks(dark=False, present=True)
    legends = [m for m in doc.models if isinstance(m, Legend)]
    assert legends
    for legend in legends:
        assert legend.spacing >= 18 and legend.glyph_width == 30 and legend.label_standoff >= 7
    _, plain = styled_clocks(dark=False, present=False)
    assert all(m.spacing == 3 for m in plain.models if isinstance(m, Legend))


def test_dark_theme_restyles_the_figures_in_place_and_leaves_the_numbers_alone():
    light, _ = styled_clocks(dark=False, present=False)
    view, doc = styled_clocks(dark=True, present=False)
    for plot in [m for m in doc.models if isinstance(m, Plot)]:
        assert plot.background_fill_color in (DARK_BACKGROUND, None)
        assert plot.border_fill_color == DARK_BACKGROUND
        for axis in (*plot.below, *plot.left):
            assert contrast(axis.major_label_text_color, DARK_BACKGROUND) >= 4.5
    # Same figures, same sources, same numbers: only colours changed.
    numbers = {key: list(value) for key, value in view.pair_hands.data.items() if "color" not in key}
    assert numbers == {key: list(value) for key, value in light.pair_hands.data.items() if "color" not in key}
    assert all(isinstance(m, ColumnDataSource) for m in doc.models if m.name == "pair_clock")


def test_dark_theme_lifts_colours_sent_as_data_also_when_a_view_sends_them_again():
    view, _ = styled_clocks(dark=True, present=False)
    labels = view.faces.data["label_color"]
    assert all(contrast(colour, DARK_BACKGROUND) >= 4.5 for colour in labels)
    view.state.pair = 3  # the row's faces are sent again, in the light theme's colours
    assert all(contrast(colour, DARK_BACKGROUND) >= 4.5 for colour in view.faces.data["label_color"])
    assert dark_color(COLORS["selected"]) in view.faces.data["label_color"]


@pytest.mark.parametrize("slug", [slug for slug in __import__("app.lesson", fromlist=["LESSON"]).LESSON
                                  if slug != "quiz"])
def test_a_slide_opens_on_its_controls_and_figures_and_the_page_on_its_text(slug):
    """At 1920×1080 a slide opened on the section's introduction, its first figure 1000–2300 px down; the
    teacher's clicker (PageDown) turns slides, so it never reached one. The text follows on the slide."""
    from app.lesson import LESSON
    from components.lesson.base import LessonSection

    def first_parts(present: bool) -> tuple[LessonSection, list]:
        section = LESSON[slug](ExplorerState(lang="en", present=present))
        parts = [p for p in section.__panel__().objects if type(p).__name__ != "MistakeNote"]
        return section, parts

    on_page, page = first_parts(False)
    assert on_page.is_text(page[0]), "the page's section starts with its text"
    on_slide, slide = first_parts(True)
    assert not on_slide.is_text(slide[0]), "a slide starts with something to drag or watch"
    # Nothing lost, only moved.
    assert sorted(p.name for p in slide if on_slide.is_text(p)) == sorted(p.name for p in page if on_page.is_text(p))
    assert len(slide) == len(page)


def test_the_quiz_slide_keeps_its_introduction_above_the_questions():
    from components.lesson.quiz import CheckYourself

    section = CheckYourself(ExplorerState(lang="en", present=True))
    assert section.__panel__().objects[0] is section.passage("intro")
