"""Which views go on which page, and the per-session set-up they share.

Every page function is called once per browser session (``pn.serve`` does
that), so every session gets its own state, figures and sources.

Routes:
* ``/``: the lesson, every section of ``app.lesson.LESSON`` in reading order,
  each with its own controls; sections below the fold are built when the
  reader comes near them;
* ``/<slug>`` for each lesson section: that section alone, with links to the
  previous and next ones (for an iframe, or a class that takes one step a day);
* ``/explore``: every view in reading order, with all the controls;
* ``/<view>`` for each name in ``VIEWS``: that view alone with its own
  controls, for an iframe in a course page.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import jinja2
import panel as pn
import param

from app.extras import page_extras, page_tools, top_bar, top_tools
from app.lesson import BEYOND
from app.lesson import LESSON as LESSON_ONLY
from app.lesson import SECTIONS as LESSON
from app.model.prose import section_prose
from app.model.section_watchers import follow_later
from app.model.state import (
    LANGUAGES,
    LESSON_PARAMETERS,
    VIEW_PARAMETERS,
    ExplorerState,
    Notice,
    parse_query,
    preferred_language,
    repeated_parameters,
)
from app.model.strings import text
from components.address import PAGE_TITLE_VARIABLE, AddressBar, LanguageLink, script_embedded
from components.checks import LiveChecks
from components.clocks import PairClocks
from components.code_cell import CodeCell
from components.controls import Controls
from components.distance import ScoreCurve
from components.figure_theme import FigureStyler, page_styler
from components.keyboard import PageKeys
from components.ladder import WavelengthLadder
from components.lazy import BUILD_MARGIN_PX, PENDING_CLASS, LazyPart, placeholder, watch_sections
from components.links import StateLinks
from components.mistake_note import MistakeNote
from components.notices import notice_alert
from components.plainjs import FIND_BY_ID_JS, PlainJSComponent
from components.present import Presentation, Slide, choose_slide
from components.stylesheets import STYLESHEET
from components.theme import WRAP, html_pane
from components.ticks import run_next_tick


@dataclass(frozen=True)
class ViewSpec:
    """A view class, the title key of its section, the controls it needs, and the key of a one-line caveat
    shown under it on its own page (``""``: none), where no lesson text around it says what it leaves out."""

    view: type[pn.viewable.Viewer]
    title: str
    controls: tuple[str, ...]
    alone_note: str = ""


VIEWS: dict[str, ViewSpec] = {
    "ladder": ViewSpec(WavelengthLadder, "ladder_title", ("d_model", "T", "base", "pair", "pos", "k")),
    "clocks": ViewSpec(PairClocks, "clocks_title", ("d_model", "T", "base", "pair", "pos", "k")),
    # Alone (an iframe on a course page) the curve would say more than it shows: a trained model's score has
    # content terms too (the lesson's «what a score can see» says so right after it).
    "distance": ViewSpec(ScoreCurve, "distance_title", ("d_model", "T", "base", "k"), alone_note="distance_caveat"),
    "checks": ViewSpec(LiveChecks, "checks_title", ("d_model", "T", "base", "pos", "k")),
}

#: The controls stay in view while the page scrolls: a teacher drags and the room watches.
SIDEBAR_CSS = (":host { position: sticky; top: 0; align-self: flex-start; max-height: 100vh; overflow-y: auto; }"
               # Narrower than the sidebar and a view side by side, the views wrap under it: it scrolls away.
               " @media (max-width: 1000px) { :host { position: static; max-height: none; } }")

ALL_CONTROLS = ("d_model", "T", "base", "pair", "pos", "k", "lesson_preset", "paper_preset")

#: The views of ``/`` built with the page itself: the top of the page. The others are built
#: after the browser has drawn these (``LaterViews``), so the first figure does not wait for them.
FIRST_VIEWS = ("ladder",)

#: Room (px) held for a view still on its way: its height at the lesson size in English (the
#: same at 1280 and 1920 wide; larger tables and Spanish titles add up to ~0.1 of it), so the
#: page below the fold hardly moves when it arrives and ``#name`` anchors land close at once.
PLACEHOLDER_HEIGHT = {"clocks": 1030, "distance": 540, "checks": 168}


def session_query() -> dict[str, list[str]]:
    """The query string of the current session, every value of each key, as text.

    Bytes that are not UTF-8 are mended (U+FFFD) in the request's own arguments, not only in the
    copy returned: Panel decodes some of them strictly while it builds any page (``config.theme``
    reads ``theme``), and ``?theme=%FF`` was a 500.
    """
    raw = pn.state.session_args or {}
    for values in raw.values():
        values[:] = [value.decode("utf-8", "replace").encode("utf-8") for value in values]
    return {key: [value.decode("utf-8") for value in values] for key, values in raw.items() if values}


def session_state() -> tuple[ExplorerState, list[Notice]]:
    """A fresh state for this session, read from the URL, and what had to be corrected."""
    browser_lang = preferred_language(pn.state.headers or {})
    query = session_query()
    values, notices = parse_query({key: found[0] for key, found in query.items()}, default_lang=browser_lang)
    values.setdefault("lang", browser_lang)
    return ExplorerState(**values), [*repeated_parameters(query), *notices]


def language_link(state: ExplorerState, top: int) -> LanguageLink:
    """A link to the same view in the other language, ``top`` px below the top of its row (level with the
    header's other links, or with the top bar's buttons)."""
    other = next(code for code in LANGUAGES if code != state.lang)
    return LanguageLink(label=text(state.lang, "language_switch"), target=other, name="language_link",
                        stylesheets=[STYLESHEET], margin=(top, 0, 0, 0))


def header(state: ExplorerState, link: tuple[str, str] | None = None, kind: str = "lesson",
           controls: tuple[str, ...] = ()) -> pn.viewable.Viewable:
    """The page's title, its tools, its language link and, when given, a link ``(label key, path)`` elsewhere."""
    lang = state.lang
    title = html_pane(f'<h1 class="pe-title">{html.escape(text(lang, "page_title"))}</h1>'
                      f'<p class="pe-subtitle">{html.escape(text(lang, "page_subtitle"))}</p>',
                      sizing_mode="stretch_width", styles={"flex": "1 1 420px", "min-width": "0"})
    parts: list = [title]
    if link is not None:
        parts.append(StateLinks([[text(lang, link[0]), link[1], ""]], name="page_link", width=300, height=40,
                                sizing_mode="fixed", margin=(25, 10)))
    parts += page_tools(state, kind, controls)
    parts.append(language_link(state, top=18))
    # On a narrow page the link and the buttons wrap under the title instead of lying over it.
    # (min-width 0: Bokeh gives the row its children's widths side by side as its least width, wider than a phone.)
    return pn.Row(*parts, sizing_mode="stretch_width", css_classes=["pe-header"], styles={**WRAP, "min-width": "0"})


def heading(state: ExplorerState, name: str) -> pn.viewable.Viewable:
    """A section's heading; its id is the view's name, the target of ``#name`` in the address."""
    return html_pane(f'<h2 class="pe-section" id="{name}">{html.escape(text(state.lang, VIEWS[name].title))}</h2>',
                     sizing_mode="stretch_width")


class SectionAnchor(PlainJSComponent):
    """Scrolls to the section that the address's fragment names (``/?lang=en#clocks``).

    The browser cannot: the section headings live in Panel's shadow roots,
    which a fragment does not reach, and they are drawn by script after the
    browser has looked for it. This finds the heading whose id is the
    fragment and keeps it at the top while the views above it are still
    arriving (``complete`` turns true after the last one), until the page is
    complete and has stopped moving, or the reader scrolls or types first.
    A later change of the fragment (a link to ``#checks``) scrolls again.
    "Stopped moving" means no placeholder (``components.lazy.placeholder``) lies
    within ``BUILD_MARGIN_PX`` of the viewport, and the heading's place and the
    page's height have both held for ``SETTLE_MS``: on ``/`` the sections
    around the one jumped to are built after the jump (``components.lazy``)
    and change the height above it when they arrive, a few hundred ms later or,
    on a busy server, seconds later. Stopping on stillness alone left a reader,
    and a room following a teacher, a section away from the one chosen
    whenever a build took longer than ``SETTLE_MS``.
    """

    #: How long the heading and the page's height must hold still before the following stops (ms).
    SETTLE_MS: ClassVar[int] = 1500

    complete = param.Boolean(default=False, doc="Whether every view of the page has been sent.")

    _esm = FIND_BY_ID_JS + """

    export function render({ model }) {
      let run = 0;
      // Whether a placeholder lies within the build margin of the viewport: a part the page builds as
      // the reader comes near (components/lazy.py) and whose arrival will move what is below it.
      const pendingNear = () => {
        const walk = (root) => {
          for (const el of root.querySelectorAll("*")) {
            if (el.classList.contains("PENDING_CLASS")) {
              const box = el.getBoundingClientRect();
              if (box.height > 0 && box.top < window.innerHeight + BUILD_MARGIN_PX && box.bottom > -BUILD_MARGIN_PX) {
                return true;
              }
            }
            if (el.shadowRoot && walk(el.shadowRoot)) return true;
          }
          return false;
        };
        return walk(document);
      };
      // Every 100 ms: put the heading at the top if it is not; stop once the page is complete, no
      // placeholder is near, and the heading's place and the page's height have held for SETTLE_MS (or
      // the heading is not on the page a second after), or after 30 s.
      const follow = (id, token, started, last, stableSince) => {
        if (token !== run) return;
        const el = find(document, id);
        const now = performance.now();
        let top = null;
        if (el) {
          if (Math.abs(el.getBoundingClientRect().top) > 1) el.scrollIntoView({ block: "start" });
          top = el.getBoundingClientRect().top + window.scrollY;
        }
        const place = `${top} ${document.scrollingElement.scrollHeight}`;
        const since = place === last ? stableSince : now;
        const still = now - since > (top === null ? 1000 : SETTLE_MS);
        if ((model.complete && still && !pendingNear()) || now - started > 30000) return;
        setTimeout(() => follow(id, token, started, place, since), 100);
      };
      const go = () => {
        let id = "";
        try { id = decodeURIComponent(window.location.hash.slice(1)); } catch (e) { return; }
        run += 1;
        const now = performance.now();
        if (id) follow(id, run, now, undefined, now);
      };
      // The reader takes over: stop following.
      for (const type of ["wheel", "touchstart", "mousedown", "keydown"]) {
        window.addEventListener(type, () => { run += 1; }, { passive: true });
      }
      window.addEventListener("hashchange", go);
      go();
      return document.createElement("span");
    }
    """.replace("SETTLE_MS", str(SETTLE_MS)).replace("BUILD_MARGIN_PX", str(BUILD_MARGIN_PX)).replace(
        "PENDING_CLASS", PENDING_CLASS)


class LaterViews:
    """Builds the views below the fold once the browser has drawn the top of the page.

    The first response then carries only the header, the controls and the
    first view (~130 of ~450 Bokeh models): the server builds, validates and
    serializes a third of the models before the browser can start, and the
    browser lays out and paints two figures instead of seven before the first
    one shows. The other views then take the places of placeholders of about
    their height (so nothing above them moves), all in one layout update:
    each update of a layout costs Panel and Bokeh two walks over every model
    of the page, so one update instead of one per view halves the server's
    work (in process, with the message: ~0.47 s against ~0.72 s). That keeps
    a session's server time about what the whole page cost before (~0.7 s),
    which is what counts when a room opens the page at once.

    The trigger is Panel's ``onload``: the browser's ``document_ready``, sent
    once every figure of the first render has drawn. Not earlier, on purpose:
    until then Panel counts the session as not connected and drops (instead
    of sending) every model change made inside ``pn.io.hold()``, which is how
    Panel itself updates a layout; a view attached before it would never reach
    the page. Without a session (tests, the benchmark's in-process pages)
    ``onload`` runs at once, so the page is complete when built.
    """

    def __init__(self, state: ExplorerState, layout: pn.Column, places: dict[int, str], anchor: SectionAnchor):
        self.state = state
        self.layout = layout
        self.places = dict(places)
        self.anchor = anchor
        pn.state.onload(self.build)

    def build(self) -> None:
        """Build every pending view into its place, in one update of the layout."""
        if not self.places:
            return
        objects = list(self.layout.objects)
        for index, name in self.places.items():
            objects[index] = VIEWS[name].view(self.state)
        self.places = {}
        self.layout.objects = objects
        # Panel sends the new children past the document's callbacks, where the styler listens.
        styler = page_styler(self.state)
        if styler is not None:
            styler.restyle_part(self.layout)
        self.anchor.complete = True


class LaterParts:
    """Fills ``column`` with ``build()`` once the browser has drawn the page (Panel's ``onload``, as
    ``LaterViews``), in one update of that column; then tells ``anchor`` that the page is complete. The new
    parts' figures take the page's theme and sizes (``styler``, the session's ``page_styler``)."""

    def __init__(self, column: pn.Column, build: Callable[[], list[pn.viewable.Viewable]], anchor: SectionAnchor,
                 styler: FigureStyler | None = None):
        self.column, self._build, self.anchor, self.styler = column, build, anchor, styler
        pn.state.onload(self.build)

    def build(self) -> None:
        """Put the later parts in place (once)."""
        if self._build is not None:
            build, self._build = self._build, None
            self.column.objects = [part for part in build() if part is not None]
            if self.styler is not None:
                self.styler.restyle_part(self.column)
            self.anchor.complete = True


def explore_page() -> pn.viewable.Viewable:
    """The whole explorable: controls on the left, every view in reading order.

    The views in ``FIRST_VIEWS`` are built with the page; the others arrive
    right after the browser has drawn it (see ``LaterViews``).
    """
    state, notices = session_state()
    shown = [name for name in ALL_CONTROLS if state.shows(name)]  # controls= of an embed
    controls = pn.Column(
        html_pane(f'<h2 class="pe-section">{html.escape(text(state.lang, "controls"))}</h2>'),
        Controls(state, shown),
        # 340 px at most, in CSS: a fixed width would add to the row's minimum and keep the views from
        # wrapping under it on a narrow page (an iframe).
        sizing_mode="stretch_width", max_width=340, styles={"flex": "0 0 340px"},
        css_classes=["pe-sidebar"], name="controls", stylesheets=[SIDEBAR_CSS],
    )
    # Headings and views side by side in one column (not a column per section): one layout
    # holds every later view's place, and filling a place re-renders nothing around it.
    views = pn.Column(sizing_mode="stretch_width", name="views", styles={"flex": "1 1 620px"})
    later: dict[int, str] = {}
    for name in VIEWS:
        views.append(heading(state, name))
        if name in FIRST_VIEWS:
            views.append(VIEWS[name].view(state))
        else:
            later[len(views)] = name
            views.append(placeholder(PLACEHOLDER_HEIGHT[name]))
        if not state.controls:  # an embed that chose its controls shows what it chose
            views.append(CodeCell(state, name))  # collapsed and empty until opened: nothing to wait for
    anchor = SectionAnchor(width=0, height=0, margin=0, name="section_anchor")
    parts = [top_bar(state, "explore"),
             header(state, ("explore_lesson", "/"), kind="explore", controls=(*VIEW_PARAMETERS, "play")),
             notice_alert(state.lang, notices),
             MistakeNote(state),
             pn.Row(controls, views, sizing_mode="stretch_width", styles=WRAP) if shown else views,
             AddressBar(state, title=text(state.lang, "page_title")), anchor, *page_extras(state, "explore")]
    page = pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                     stylesheets=[STYLESHEET], css_classes=["pe-page"])
    LaterViews(state, views, later, anchor)
    return page


#: Sections of ``/`` built with the page itself; the others when the reader comes near them.
FIRST_SECTIONS = 1
#: Room (px) held for a section still on its way, about its height at 1280 px wide.
SECTION_PLACEHOLDER_HEIGHT = 900


def section_title(slug: str, lang: str) -> str:
    """The title of a lesson section, numbered as in the table of contents."""
    return f"{list(LESSON).index(slug) + 1}. {section_prose(slug, lang).title}"


def section_heading(state: ExplorerState, slug: str, level: int = 2) -> pn.viewable.Viewable:
    """A section's heading; its id is the slug, the target of ``#slug`` on ``/``."""
    return html_pane(f'<h{level} class="pe-section" id="{slug}">{html.escape(section_title(slug, state.lang))}'
                     f'</h{level}>', sizing_mode="stretch_width", name=f"{slug}_heading")


def section_pager(state: ExplorerState, slug: str, *, alone: bool) -> StateLinks:
    """Links to the previous and next sections: anchors on ``/``, routes when the section stands alone."""
    slugs = list(LESSON)
    at = slugs.index(slug)
    links = []
    if at > 0:
        links.append([text(state.lang, "lesson_previous", title=section_prose(slugs[at - 1], state.lang).title),
                      f"/{slugs[at - 1]}" if alone else "", "" if alone else slugs[at - 1]])
    if alone:
        links.append([text(state.lang, "lesson_whole"), "/", slug])
    if at + 1 < len(slugs):
        links.append([text(state.lang, "lesson_next", title=section_prose(slugs[at + 1], state.lang).title),
                      f"/{slugs[at + 1]}" if alone else "", "" if alone else slugs[at + 1]])
    return StateLinks(links, kind="pager", label=text(state.lang, "lesson_nav"), name=f"{slug}_pager")


def table_of_contents(state: ExplorerState) -> pn.viewable.Viewable:
    """The sections as numbered lists of anchors, side by side: the lesson, and what lies past it."""
    lang = state.lang
    parts = []
    groups = (("lesson_contents", list(LESSON_ONLY), 1), ("beyond_contents", list(BEYOND), len(LESSON_ONLY) + 1))
    for key, slugs, start in groups:
        links = StateLinks([[section_prose(slug, lang).title, "", slug] for slug in slugs], kind="toc", start=start,
                           label=text(lang, key), name=key, sizing_mode="stretch_width")
        # At most the screen's width: a fixed 540 px column laid a phone's page out 540 px wide (sideways scroll).
        parts.append(pn.Column(html_pane(f'<h2 class="pe-section">{html.escape(text(lang, key))}</h2>'), links,
                               width=540, styles={"max-width": "100%", "min-width": "0"}))
    return pn.FlexBox(*parts, sizing_mode="stretch_width", flex_wrap="wrap", gap="0 2em")


def lesson_page() -> pn.viewable.Viewable:
    """The lesson: every section in reading order, each with its controls next to its figures.

    The first response carries the top of the page only: the header, the contents and the first
    ``FIRST_SECTIONS`` sections. The rest of the page (the other sections' headings, placeholders
    and links, and the page-wide parts that can wait, ``app.extras.AFTER_FIRST_DRAW``) follows in
    one update once the browser has drawn the first figures (``LaterParts``), and each later
    section is built when the reader comes near it (``LazyPart``): the first figure waits for what
    is on the first screen only, and a reader who stops early costs the server only what was read.
    Each section draws from the session's state; its ``SectionWatchers`` hold back the state's changes
    while the section is far from the viewport: a slider step costs what the reader can see.
    """
    state, notices = session_state()
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        # A section's slider answers with that section first; the other sections near the reader follow.
        follow_later(state, partial(run_next_tick, doc))
    lang = state.lang
    anchor = SectionAnchor(width=0, height=0, margin=0, name="section_anchor")
    choices = (*VIEW_PARAMETERS, *LESSON_PARAMETERS, "play")
    parts: dict[str, LazyPart] = {}  # made with their headings: the later ones after the first draw

    def sections(slugs: list[str]) -> list[pn.viewable.Viewable]:
        parts.update({slug: LazyPart(LESSON[slug], state, SECTION_PLACEHOLDER_HEIGHT, slug) for slug in slugs})
        return [piece for slug in slugs
                for piece in (section_heading(state, slug), parts[slug], section_pager(state, slug, alone=False))]

    slugs = list(LESSON)
    first = sections(slugs[:FIRST_SECTIONS])
    # The page's own parts before any section's: a section's build lends its watchers of the state to its
    # SectionWatchers, and the page's (play, the header's sliders) must never sleep with a section.
    top = [top_bar(state, "lesson"), header(state, ("lesson_explore", "/explore"), controls=choices)]
    for slug in slugs[:FIRST_SECTIONS]:
        parts[slug].build_now()
    later = pn.Column(placeholder(SECTION_PLACEHOLDER_HEIGHT * (len(slugs) - FIRST_SECTIONS)),
                      sizing_mode="stretch_width", name="lesson_later")
    body: list = [*top,
                  notice_alert(lang, notices),
                  table_of_contents(state),
                  *first,
                  later,
                  AddressBar(state, title=text(lang, "page_title")), anchor, *page_extras(state, "lesson", "first")]
    LaterParts(later, lambda: [*sections(slugs[FIRST_SECTIONS:]), watch_sections(parts),
                               *page_extras(state, "lesson", "later")], anchor,
               page_styler(state))
    return pn.Column(*(part for part in body if part is not None), sizing_mode="stretch_width",
                     stylesheets=[STYLESHEET], css_classes=["pe-page", "pe-lesson"])


def single_page_tools(state: ExplorerState, kind: str, controls: tuple[str, ...]) -> list[pn.viewable.Viewable]:
    """The top bar's tools of a section's or a view's own page: the Embed button, and the language link a
    reader who opens the page on its own needs (``/`` and ``/explore`` have theirs in the header). Not in an
    embed that chose its controls (``controls=``), nor drawn into another site's page, whose language it is."""
    tools = page_tools(state, kind, controls)
    if not state.controls and not script_embedded():
        tools.append(language_link(state, top=4))
    return tools


def section_page(slug: str) -> Callable[[], pn.viewable.Viewable]:
    """A page factory for one lesson section alone, with links to its neighbours (for iframes)."""

    def page() -> pn.viewable.Viewable:
        state, notices = session_state()
        section = LESSON[slug](state)
        # The play control (components/present.py), which an embed may keep, where play moves something.
        plays = LESSON[slug].plays
        tools = single_page_tools(state, "section", (*LESSON[slug].controls, *(("play",) if plays else ())))
        parts = [top_bar(state, "section", tools, play=plays), notice_alert(state.lang, notices),
                 section_heading(state, slug), section,
                 section_pager(state, slug, alone=True),
                 AddressBar(state, title=route_title(slug, state.lang)),
                 *page_extras(state, "section")]
        for part in parts:
            if isinstance(part, PageKeys):
                part.plays = plays  # no space bar for a play the page does not show
        return pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                         stylesheets=[STYLESHEET], css_classes=["pe-page", "pe-embed"])

    page.__name__ = f"{slug}_page"
    return page


#: The views that draw the state's ``mistake`` (the clocks draw the correct encoding always).
DRAWN_WITH_MISTAKES = frozenset({"ladder", "distance", "checks"})


def view_page(name: str) -> Callable[[], pn.viewable.Viewable]:
    """A page factory for one view alone, with its controls above it (for iframes)."""

    def page() -> pn.viewable.Viewable:
        state, notices = session_state()
        spec = VIEWS[name]
        view = spec.view(state)
        # controls= (an embed's choice): only the sliders it names; the page's play control only with "play".
        shown = [p for p in spec.controls if state.shows(p)]
        tools = single_page_tools(state, "view", (*spec.controls, "play"))
        parts = [top_bar(state, "view", tools), notice_alert(state.lang, notices),
                 MistakeNote(state) if name in DRAWN_WITH_MISTAKES else None,
                 Controls(state, shown, columns=3) if shown else None, view,
                 html_pane(f'<p class="pe-readout">{html.escape(text(state.lang, spec.alone_note))}</p>',
                           name=f"{name}_alone_note", sizing_mode="stretch_width") if spec.alone_note else None,
                 None if state.controls else CodeCell(state, name),
                 None if script_embedded() else AddressBar(state, title=text(state.lang, "page_title")),
                 *page_extras(state, "view")]
        return pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                         stylesheets=[STYLESHEET], css_classes=["pe-page", "pe-embed"])

    page.__name__ = f"{name}_page"
    return page


# -- Presentation mode (components/present.py): ``?present=1`` turns any page into slides ------------

def slides(state: ExplorerState, kind: str) -> list[Slide]:
    """The slides of a page of ``kind``: every lesson section (the lesson and its sections' pages), or every view."""
    lang = state.lang
    if kind in ("lesson", "section"):
        return [Slide(slug, section_title(slug, lang), lambda section=section: section(state), plays=section.plays)
                for slug, section in LESSON.items()]
    return [Slide(name, text(lang, spec.title),
                  lambda spec=spec: pn.Column(Controls(state, spec.controls, columns=3), spec.view(state),
                                              sizing_mode="stretch_width"))
            for name, spec in VIEWS.items()]


PageMaker = Callable[[], pn.viewable.Viewable]


#: Panel's page template with a viewport line: a phone (a student who scanned the room's QR code) lays the
#: page out at its own width instead of a shrunken 980 px desktop page. Bokeh's public ``Document.template``;
#: ``base`` is Panel's template, which Panel passes to every page it renders.
PAGE_TEMPLATE = jinja2.Environment(autoescape=True).from_string(
    "{% extends base %}\n{% block preamble %}{{ super() }}"
    '<meta name="viewport" content="width=device-width, initial-scale=1">{% endblock %}')


def mobile_ready() -> None:
    """Give the session's page the viewport line (``PAGE_TEMPLATE``); an embed has no page of its own."""
    doc = pn.state.curdoc
    if doc is not None and not script_embedded():
        doc.template = PAGE_TEMPLATE


def presentable(page: PageMaker, kind: str, first: str = "") -> PageMaker:
    """``page``, or in presentation mode its slides (starting on ``first``, or the address's ``slide``)."""

    def maybe_present() -> pn.viewable.Viewable | None:
        return served_with_its_title(built())

    def built() -> pn.viewable.Viewable:
        mobile_ready()
        state, notices = session_state()
        if not state.present:
            return page()
        deck = slides(state, kind)
        choose_slide(state, deck, first or deck[0].name, notices)
        presentation = Presentation(state, deck, top_tools(state, kind))
        extras = page_extras(state, kind)
        for part in extras:
            if isinstance(part, PageKeys):
                presentation.attach_keys(part)
        parts = [notice_alert(state.lang, notices), presentation,
                 AddressBar(state, title=text(state.lang, "page_title")), *extras]
        return pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                         stylesheets=[STYLESHEET], css_classes=["pe-page", "pe-present"])

    maybe_present.__name__ = page.__name__
    return maybe_present


def served_with_its_title(root: pn.viewable.Viewable) -> pn.viewable.Viewable | None:
    """``root`` served in its session's document under the page's own title, in its language; or ``root`` itself
    outside a server session (a test building a page), for the caller to serve.

    ``pn.serve`` gives a document returned to it the title of its route, one language for every session. A page
    that serves itself (``servable``, public) and returns None keeps the title it gave: the one its
    ``AddressBar`` was made with (``PAGE_TITLE_VARIABLE``), which the HTML's ``<title>`` then carries before any
    script runs, as link previews read it.
    """
    doc = pn.state.curdoc
    title = doc.template_variables.get(PAGE_TITLE_VARIABLE) if doc is not None and doc.session_context else None
    if not title:
        return root
    root.servable(title=title, location=False)
    return None


def route_title(route: str, lang: str) -> str:
    """The title of a route's page in ``lang`` (its tab and its HTML): a lesson section's own before the app's."""
    page = text(lang, "page_title")
    return f"{section_title(route, lang)} · {page}" if route in LESSON else page


def route_titles(lang: str = "es") -> dict[str, str]:
    """``route_title`` of every route of ``routes()``, for ``pn.serve(title=...)``.

    Panel writes "Panel Application" into a page's HTML otherwise. A session's own title, in its language,
    replaces it (``served_with_its_title``); this is the title of a page built without an ``AddressBar``.
    """
    return {route: route_title(route, lang) for route in routes()}


def routes() -> dict[str, Callable[[], pn.viewable.Viewable]]:
    """Every route of the server: the lesson, one per section, ``/explore`` and one per view."""
    return {"/": presentable(lesson_page, "lesson"),
            **{slug: presentable(section_page(slug), "section", slug) for slug in LESSON},
            "explore": presentable(explore_page, "explore"),
            **{name: presentable(view_page(name), "view", name) for name in VIEWS}}
