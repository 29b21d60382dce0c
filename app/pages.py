"""Which views go on which page, and the per-session set-up they share.

Every page function is called once per browser session (``pn.serve`` does
that), so every session gets its own state, figures and sources.

Routes:
* ``/``: the whole explorable, every view in reading order, with the controls;
* ``/<view>`` for each name in ``VIEWS``: that view alone with its own
  controls, for an iframe in a course page.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import panel as pn

from app.state import LANGUAGES, ExplorerState, Notice, parse_query
from app.strings import text
from components.address import AddressBar, LanguageLink
from components.checks import LiveChecks
from components.clocks import PairClocks
from components.controls import Controls
from components.distance import ScoreCurve
from components.ladder import WavelengthLadder
from components.notices import notice_alert
from components.theme import STYLESHEET, html_pane


@dataclass(frozen=True)
class ViewSpec:
    """A view class, the title key of its section and the controls it needs."""

    view: type[pn.viewable.Viewer]
    title: str
    controls: tuple[str, ...]


VIEWS: dict[str, ViewSpec] = {
    "ladder": ViewSpec(WavelengthLadder, "ladder_title", ("d_model", "T", "base", "pair", "pos", "k")),
    "clocks": ViewSpec(PairClocks, "clocks_title", ("d_model", "T", "base", "pair", "pos", "k")),
    "distance": ViewSpec(ScoreCurve, "distance_title", ("d_model", "T", "base", "k")),
    "checks": ViewSpec(LiveChecks, "checks_title", ("d_model", "T", "base", "pos", "k")),
}

#: The controls stay in view while the page scrolls: a teacher drags and the room watches.
SIDEBAR_CSS = ":host { position: sticky; top: 0; align-self: flex-start; max-height: 100vh; overflow-y: auto; }"

ALL_CONTROLS = ("d_model", "T", "base", "pair", "pos", "k", "lesson_preset", "paper_preset")


def preferred_language(headers: Mapping[str, object]) -> str:
    """The first of ``LANGUAGES`` named in an Accept-Language header; Spanish otherwise."""
    accept = str(headers.get("Accept-Language", "") or "")
    for part in accept.split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return "es"


def session_args() -> dict[str, str]:
    """The query string of the current session, first value of each key, as text."""
    raw = pn.state.session_args or {}
    return {key: values[0].decode("utf-8", "replace") for key, values in raw.items() if values}


def session_state() -> tuple[ExplorerState, list[Notice]]:
    """A fresh state for this session, read from the URL, and what had to be corrected."""
    browser_lang = preferred_language(pn.state.headers or {})
    values, notices = parse_query(session_args(), default_lang=browser_lang)
    values.setdefault("lang", browser_lang)
    return ExplorerState(**values), notices


def language_link(state: ExplorerState) -> LanguageLink:
    """A link to the same view in the other language."""
    other = next(code for code in LANGUAGES if code != state.lang)
    return LanguageLink(label=text(state.lang, "language_switch"), target=other, name="language_link",
                        stylesheets=[STYLESHEET])


def header(state: ExplorerState) -> pn.viewable.Viewable:
    lang = state.lang
    title = html_pane(f'<h1 class="pe-title">{html.escape(text(lang, "page_title"))}</h1>'
                      f'<p class="pe-subtitle">{html.escape(text(lang, "page_subtitle"))}</p>',
                      sizing_mode="stretch_width")
    return pn.Row(title, language_link(state), sizing_mode="stretch_width", css_classes=["pe-header"])


def section(state: ExplorerState, name: str) -> pn.viewable.Viewable:
    """One view under its heading; the heading's id is the view's name (for anchors)."""
    spec = VIEWS[name]
    heading = html_pane(f'<h2 class="pe-section" id="{name}">{html.escape(text(state.lang, spec.title))}</h2>',
                        sizing_mode="stretch_width")
    return pn.Column(heading, spec.view(state), sizing_mode="stretch_width", name=f"section_{name}")


def full_page() -> pn.viewable.Viewable:
    """The whole explorable: controls on the left, every view in reading order."""
    state, notices = session_state()
    controls = pn.Column(
        html_pane(f'<h2 class="pe-section">{html.escape(text(state.lang, "controls"))}</h2>'),
        Controls(state, ALL_CONTROLS),
        width=340, css_classes=["pe-sidebar"], name="controls", stylesheets=[SIDEBAR_CSS],
    )
    views = pn.Column(*(section(state, name) for name in VIEWS), sizing_mode="stretch_width")
    parts = [header(state), notice_alert(state.lang, notices),
             pn.Row(controls, views, sizing_mode="stretch_width"),
             AddressBar(state, title=text(state.lang, "page_title"))]
    return pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                     stylesheets=[STYLESHEET], css_classes=["pe-page"])


def view_page(name: str) -> Callable[[], pn.viewable.Viewable]:
    """A page factory for one view alone, with its controls above it (for iframes)."""

    def page() -> pn.viewable.Viewable:
        state, notices = session_state()
        spec = VIEWS[name]
        parts = [notice_alert(state.lang, notices), Controls(state, spec.controls, columns=3), spec.view(state),
                 AddressBar(state, title=text(state.lang, "page_title"))]
        return pn.Column(*(p for p in parts if p is not None), sizing_mode="stretch_width",
                         stylesheets=[STYLESHEET], css_classes=["pe-page", "pe-embed"])

    page.__name__ = f"{name}_page"
    return page


def routes() -> dict[str, Callable[[], pn.viewable.Viewable]]:
    """Every route of the server: ``/`` and one per view."""
    return {"/": full_page, **{name: view_page(name) for name in VIEWS}}
