"""Presentation mode and the page's theme: for a teacher in front of a projector.

``?present=1`` (or the "Present" switch, or Escape to leave) turns any page into
slides: one lesson section or one view at a time, on the whole screen, in type
about twice the reading size (the page's root font size; the figures' own font
sizes, line widths and sizes through ``components.figure_theme``), under a slim
bar with the current values (d_model, T, pos, k, pair), the slide's name, play,
previous/next and the way out. PageDown/PageUp (a presenter's clicker) move
between slides (``components.keyboard``); ``slide`` follows in the address, so a
reload lands on the same slide.

``theme=dark`` (or the theme switch) gives a dark high-contrast page: Panel's
own dark design for the widgets, the app's colours through the ``--pe-t-*``
variables that every stylesheet reads with its light colour as the fallback,
and the figures restyled in place (``components.figure_theme``). The switches
reload the page with the new address: the widgets' design is chosen when the
page is built, and the address holds the whole state.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import panel as pn
import param

from app.model.state import ExplorerState, Notice
from app.model.strings import minus_sign, text
from components.animation import animation_for
from components.figure_theme import FigureStyler, page_styler
from components.keyboard import PageKeys
from components.plainjs import PlainJSComponent
from components.stylesheets import WIDGET_STYLESHEET
from components.widgets import LiveHTML, mark_connected, one_message

#: Colours of the dark theme, as the variables the stylesheets read (their light values are the fallbacks).
#: Every text colour is at least 4.5:1 on the background (#212529) and on the surfaces.
DARK_VARIABLES = {
    "--pe-t-ink": "#f1f3f5",
    "--pe-t-muted": "#c9cdd1",
    "--pe-t-accent": "#5fd3b0",
    "--pe-t-link": "#8cc8ff",
    "--pe-t-focus": "#66b3ff",
    "--pe-t-rule": "#495057",
    "--pe-t-surface": "#2b3035",
    "--pe-t-notice-bg": "#3a2f16",
    "--pe-t-right-bg": "#143328",
    "--pe-t-wrong-bg": "#3a2414",
    "--pe-t-code-bg": "#343a40",
    "--pe-t-quote-bg": "#1d2b38",
    "--pe-t-pos-text": "#7cc6f2",
    "--pe-t-target-text": "#f5a667",
    "--pe-t-selected-text": "#5ad7a9",
    "--pe-t-error-bg": "#3d1518",
    "--pe-t-error-ink": "#ffd7d7",
}
#: The largest window side (px) a browser's report is believed for (an 8K screen is 7680 px wide).
MAX_WINDOW_PX = 20_000
#: The page's root font size in presentation mode: the app's type is in rem, so this doubles it.
PRESENT_ROOT_PX = 32

_LOOK_CSS = (
    'html[data-pe-theme="dark"] { color-scheme: dark; '
    + " ".join(f"{name}: {value};" for name, value in DARK_VARIABLES.items())
    + ' } html[data-pe-theme="dark"] body { background: #212529; color: #f1f3f5; }'
    # A projector's picture is as wide whatever its pixels: below 1920 px the type keeps its share of the width
    # (21 px at 1280), so the slim bar and the slide keep the layout they have at 1920 × 1080.
    + f' html[data-pe-present="1"] {{ font-size: clamp(20px, {PRESENT_ROOT_PX / 19.2:.4f}vw, {PRESENT_ROOT_PX}px); }}'
    + ' html[data-pe-present="1"] body { margin: 0; }'
)


class PageLook(PlainJSComponent):
    """Marks the document with the theme and presentation mode (``<html data-pe-theme data-pe-present>``).

    The page-level style it adds defines the dark theme's ``--pe-t-*`` variables on
    ``<html>``: custom properties inherit into every shadow root, so each component's
    stylesheet picks them up without being rebuilt.
    """

    theme = param.String(default="light")
    present = param.Boolean(default=False)
    css = param.String(default=_LOOK_CSS)
    window = param.List(default=[], doc="""
        The browser window's width and height in CSS px, reported in presentation mode (the figures are
        sized to fit it: ``FigureStyler.fit``).""")

    _esm = """
    export function render({ model }) {
      let style = document.getElementById("pe-look-style");
      if (!style) {
        style = document.createElement("style");
        style.id = "pe-look-style";
        document.head.appendChild(style);
      }
      style.textContent = model.css;
      document.documentElement.dataset.peTheme = model.theme;
      document.documentElement.dataset.pePresent = model.present ? "1" : "0";
      if (model.present) {
        // Once now, and once a resize has settled (a window dragged wider sends dozens of events).
        const report = () => {
          const size = [window.innerWidth, window.innerHeight];
          if (size[0] !== model.window[0] || size[1] !== model.window[1]) model.window = size;
        };
        let timer = 0;
        window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(report, 250); });
        report();
      }
      return document.createElement("span");
    }
    """

    def __init__(self, styler: FigureStyler | None = None, **params):
        super().__init__(**params)
        self._styler = styler

    @param.depends("window", watch=True)
    def _fit(self) -> None:
        # From the browser: anything but two sizes a screen can have is ignored.
        if self._styler is None or len(self.window) != 2 or not all(
                type(side) is int and 0 < side <= MAX_WINDOW_PX for side in self.window):
            return
        mark_connected()  # the browser that reports holds the document: the sizes must reach it
        with one_message():
            self._styler.fit(*self.window)


SWITCHES_CSS = """
:host { display: block; }
.pe-switches { display: flex; gap: 0.5em; flex-wrap: wrap; align-items: center; }
.pe-switches button { font: inherit; font-size: 1.05rem; padding: 0.35em 0.9em; min-height: 40px; border-radius: 6px;
  white-space: nowrap;
  cursor: pointer; background: transparent; color: var(--pe-t-link, #0B5C8E);
  border: 2px solid var(--pe-t-link, #0B5C8E); }
.pe-switches button:hover { text-decoration: underline; }
.pe-switches button:focus-visible { outline: 3px solid var(--pe-t-focus, #0072B2); outline-offset: 2px; }
"""


class PageSwitches(PlainJSComponent):
    """Two buttons that reload the page with a new address: presentation mode on/off, light/dark theme.

    Entering presentation mode starts on the section whose heading is nearest the top
    of the screen; leaving it lands on the slide's section (``#slug``).
    """

    present = param.Boolean(default=False)
    theme = param.String(default="light")
    present_label = param.String(default="")
    theme_label = param.String(default="")

    _esm = """
    const headings = (root, out) => {
      for (const el of root.querySelectorAll("*")) {
        if (el.id && el.classList?.contains("pe-section")) out.push(el);
        if (el.shadowRoot) headings(el.shadowRoot, out);
      }
      return out;
    };
    const go = (changes, hash) => {
      const url = new URL(window.location.href);
      for (const [key, value] of Object.entries(changes)) {
        if (value === null) url.searchParams.delete(key); else url.searchParams.set(key, value);
      }
      url.hash = hash ?? "";
      window.location.assign(url.href);
    };
    export function render({ model }) {
      const box = document.createElement("div");
      box.className = "pe-switches";
      const present = document.createElement("button");
      present.type = "button";
      present.className = "pe-present-switch";
      present.textContent = model.present_label;
      present.setAttribute("aria-pressed", model.present ? "true" : "false");
      present.addEventListener("click", () => {
        if (model.present) {
          const slide = new URL(window.location.href).searchParams.get("slide");
          go({present: null, slide: null}, slide || "");
          return;
        }
        // The section at the top of the screen: the last heading that starts above a third of it.
        let slide = "";
        for (const el of headings(document, [])) {
          if (el.getBoundingClientRect().top <= window.innerHeight / 3) slide = el.id;
        }
        go(slide ? {present: "1", slide} : {present: "1"});
      });
      const theme = document.createElement("button");
      theme.type = "button";
      theme.className = "pe-theme-switch";
      theme.textContent = model.theme_label;
      theme.setAttribute("aria-pressed", model.theme === "dark" ? "true" : "false");
      theme.addEventListener("click", () => {
        go({theme: model.theme === "dark" ? null : "dark"}, window.location.hash.slice(1));
      });
      box.append(present, theme);
      return box;
    }
    """


def page_switches(state: ExplorerState) -> PageSwitches:
    """The presentation and theme switches, labelled in the state's language."""
    lang = state.lang
    return PageSwitches(present=state.present, theme=state.theme,
                        present_label=text(lang, "present_leave" if state.present else "present_enter"),
                        theme_label=text(lang, "theme_dark"), name="page_switches",
                        stylesheets=[SWITCHES_CSS], margin=(5, 10),
                        # In the slim bar it shares a line with play and previous/next.
                        **({"height": 70} if state.present
                           # Both buttons on one line (the bar wraps its other tools instead).
                           else {"sizing_mode": "stretch_width", "min_width": 330}))


def page_look(state: ExplorerState, kind: str) -> PageLook:
    """The theme and presentation marks of the page, and its figures restyled (a ``PAGE_EXTRAS`` maker)."""
    # Panel's own design for the widgets (it also reads ?theme=dark, but not every spelling that ours accepts).
    pn.config.theme = "dark" if state.theme == "dark" else "default"
    styler = page_styler(state)
    if styler is not None:
        styler.restyle()
    return PageLook(styler, theme=state.theme, present=state.present, name="page_look", width=0, height=0, margin=0)


TOOLS_CSS = """
:host { border-bottom: 2px solid var(--pe-t-rule, #e4e4e4); flex-wrap: wrap; }
/* It wraps, so it is as narrow as its widest tool, not as the sum BokehJS gives it (a phone's page). */
:host { min-width: 0 !important; }
"""


def page_tools(state: ExplorerState, kind: str, tools: Sequence[pn.viewable.Viewable] = (),
               play: bool = True) -> pn.viewable.Viewable | None:
    """The page's play controls (unless ``play`` is false: a page that play would not move), its
    presentation and theme switches and ``tools``, one row at the top.

    The page's first part (``app.extras.top_bar``), so that a teacher finds play where the page
    starts, and Tab reaches it first. In presentation mode the slim bar holds them instead.
    """
    if state.present:
        return None
    # An embed (controls=) keeps the play control only if it names "play", and none of the switches.
    parts = [animation_for(state) if play and state.shows("play") else None,
             None if state.controls else page_switches(state),
             *tools]
    if not any(parts):
        return None
    return pn.Row(*(p for p in parts if p is not None), name="page_tools", sizing_mode="stretch_width",
                  css_classes=["pe-tools"], stylesheets=[TOOLS_CSS], margin=(0, 0, 5, 0))


# -- presentation mode ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Slide:
    """One slide: its name (a section's slug or a view's name), its title and how to build it."""

    name: str
    title: str
    build: Callable[[], pn.viewable.Viewable]
    #: Whether playing moves something on this slide (the order and quiz sections show neither pos nor k).
    plays: bool = True


BAR_CSS = """
.pe-bar { display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; align-items: baseline; font-size: 1rem; line-height: 1.3; }
.pe-bar-title { font-weight: 700; }
.pe-bar-values { font-variant-numeric: tabular-nums; }
.pe-bar-values b { font-weight: 600; }
"""

SLIM_CSS = """
:host { border-bottom: 2px solid var(--pe-t-rule, #e4e4e4); }
"""


def bar_html(state: ExplorerState, title: str, at: int, count: int) -> str:
    """The slim bar's text: the slide's title and place, and the current values."""
    # Symbols, not words (the pair is i, as on its slider in either language); a negative k with a true minus.
    values = " · ".join(f"<b>{'i' if name == 'pair' else name}</b> = {minus_sign(str(getattr(state, name)))}"
                        for name in ("d_model", "T", "pos", "k", "pair"))
    return (f'<div class="pe-bar"><span class="pe-bar-title">{html.escape(title)}</span>'
            f'<span>{html.escape(text(state.lang, "present_place", at=at + 1, count=count))}</span>'
            f'<span class="pe-bar-values">{values}</span></div>')


class Presentation(pn.viewable.Viewer):
    """The slides of a page, one on screen at a time, under the slim bar."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, state: ExplorerState, slides: Sequence[Slide], tools: Sequence[pn.viewable.Viewable] = (),
                 **params):
        super().__init__(state=state, **params)
        self.slides = list(slides)
        self.names = [slide.name for slide in self.slides]
        self.built: dict[str, pn.viewable.Viewable] = {}
        lang = state.lang
        self.title = LiveHTML(name="present_bar", css=BAR_CSS, sizing_mode="stretch_width", min_width=760)
        self.previous = pn.widgets.Button(label=text(lang, "present_previous"), color="primary",
                                          variant="outline", width=240, margin=(5, 5),
                                          stylesheets=[WIDGET_STYLESHEET])
        self.next = pn.widgets.Button(label=text(lang, "present_next"), color="primary",
                                      variant="outline", width=240, margin=(5, 5), stylesheets=[WIDGET_STYLESHEET])
        self.previous.on_click(lambda _event: self.move(-1))
        self.next.on_click(lambda _event: self.move(1))
        self.play = animation_for(state).toggle
        #: The page's keys, whose space and +/- follow the slide (``attach_keys``).
        self.keys: PageKeys | None = None
        self.bar = pn.FlexBox(self.title, self.play, self.previous, self.next, page_switches(state),
                              *tools,
                              sizing_mode="stretch_width", name="present_slim_bar", stylesheets=[SLIM_CSS],
                              css_classes=["pe-slim-bar"], flex_wrap="wrap", align_items="center")
        self.stage = pn.Column(sizing_mode="stretch_width", name="present_stage")
        #: The session's figure styler (made here or by ``page_look``, whichever comes first: the same one).
        self.styler = page_styler(state)
        state.param.watch(self._show, ["slide"])
        # play=1 in the address starts playing once the page has drawn, which may be on a still slide.
        state.param.watch(lambda _event: self._follow_play(), ["play"])
        state.param.watch(self._values, ["d_model", "T", "pos", "k", "pair"])
        self._show()

    def move(self, by: int) -> None:
        """Show the slide ``by`` places on (negative: back), stopping at the first and the last."""
        at = max(0, min(self.names.index(self.state.slide) + by, len(self.names) - 1))
        with one_message():
            self.state.slide = self.names[at]

    def _show(self, *_events: object) -> None:
        name = self.state.slide
        if name not in self.built:
            self.built[name] = self.slides[self.names.index(name)].build()
        self.stage.objects = [self.built[name]]
        if _events and self.styler is not None:
            # A slide shown after the page: its figures presented in place, in the message that shows it
            # (Panel sends a layout's new children past the document's callbacks, where the styler listens).
            # The first slide is styled with the page, when the page reaches the document.
            self.styler.restyle_part(self.stage)
        at = self.names.index(name)
        self.previous.disabled = at == 0
        self.next.disabled = at == len(self.names) - 1
        self._follow_play()
        self._values()

    def attach_keys(self, keys: PageKeys) -> None:
        """Let the page's keys move the slide, and take space and +/- only on a slide that plays."""
        self.keys = keys
        keys.on_slide = self.move
        self._follow_play()

    def _follow_play(self) -> None:
        # A slide where playing moves nothing disables the play button (disabled, not hidden: Previous and Next
        # keep their places, where a teacher clicking through the slides has the pointer), takes no play key,
        # and stops a play that was running (pos would go on moving unseen, and the address with it).
        plays = self.slides[self.names.index(self.state.slide)].plays
        self.play.disabled = not plays
        if self.keys is not None:
            self.keys.plays = plays
        if not plays and self.state.play:
            self.state.play = False

    def _values(self, *_events: object) -> None:
        at = self.names.index(self.state.slide)
        self.title.object = bar_html(self.state, self.slides[at].title, at, len(self.names))

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.bar, self.stage, sizing_mode="stretch_width", name="presentation")


def choose_slide(state: ExplorerState, slides: Sequence[Slide], first: str, notices: list[Notice]) -> None:
    """Put a slide of ``slides`` in ``state.slide``: the address's if it names one, else ``first`` (with a notice)."""
    names = [slide.name for slide in slides]
    if state.slide not in names:
        if state.slide:
            notices.append(Notice("slide", state.slide, first, "not_allowed"))
        state.slide = first if first in names else names[0]
