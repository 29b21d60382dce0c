"""Parts of a long page built when the reader comes near them, and asleep while the reader is far."""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
import param

from app.model.section_watchers import SectionWatchers
from app.model.state import ExplorerState
from components.figure_theme import page_styler
from components.plainjs import FIND_BY_ID_JS, PlainJSComponent
from components.widgets import mark_connected

#: How far (px) below or above the viewport a part is built: about a screen ahead, so a reader
#: scrolling at a normal pace finds it built.
BUILD_MARGIN_PX = 900
#: How far (px) below or above the viewport a built part follows the state (counts as near). Smaller
#: than the build margin: every awake part costs each slider step its changes (on ``/`` at the clocks'
#: section, k's key press -> last change took a median 41 ms with 900 px, 27 ms with 300 px), and a
#: part that wakes up catches up in one message before it scrolls into view.
NEAR_MARGIN_PX = 300
#: How much of a section (px) must be inside the viewport for it to count as on screen (``shown``): the
#: sliver of the section above left at the top when a heading is scrolled there is not.
SHOWN_MIN_PX = 40
#: A part's own rule: its rendering is skipped while it is off screen (its last size kept), not in print.
SKIPPED_OFF_SCREEN = (":host {{ content-visibility: auto; contain-intrinsic-size: auto {height}px; }}\n"
                      "@media print {{ :host {{ content-visibility: visible; }} }}")
#: The class of a placeholder (``placeholder``): the page around it is still to change height.
PENDING_CLASS = "pe-pending"


def placeholder(height: int) -> pn.Spacer:
    """Room of ``height`` px held for a part on its way, marked with ``PENDING_CLASS`` for the page's
    scripts (``app.pages.SectionAnchor`` keeps following a jumped-to heading while one is near)."""
    return pn.Spacer(height=height, sizing_mode="stretch_width", css_classes=[PENDING_CLASS])


class SectionWatch(PlainJSComponent):
    """Which sections of a long page are in the viewport, which lie within ``NEAR_MARGIN_PX`` of it, and
    which have come within ``BUILD_MARGIN_PX`` of it (set by the browser).

    A section runs from its heading (the element whose id is its slug) to the
    next section's heading; it is near while some of that stretch is inside the
    viewport widened by the margin. A heading that is not laid out (its part of
    the page hidden) has no stretch. One component watches every section: a
    spot per section would cost the page a model each (~7 ms of server time per
    page and a render each in the browser). The positions are read on scroll
    (once per frame), on resize, and twice a second (sections change height as
    they are built); ``near`` and ``shown`` are sent only when they change.
    """

    slugs = param.List(default=[], item_type=str, doc="The sections' ids, top to bottom.")
    near = param.List(default=[], item_type=str, doc="The sections now near the viewport (set by the browser).")
    shown = param.List(default=[], item_type=str, doc=(
        "The sections now on screen, at least SHOWN_MIN_PX of each (set by the browser)."))
    seen = param.List(default=[], item_type=str, doc=(
        "Every section that has come within the build margin since the page opened (set by the browser). "
        "Panel keeps only the last of several quick changes of a property, so a fast scroll may lose one in "
        "between; this list only grows, and a section in it is built."))

    _esm = FIND_BY_ID_JS + f"""

    export function render({{ model }}) {{
      const headings = new Map();
      const seen = new Set(model.seen);
      const heading = (id) => {{
        let el = headings.get(id);
        if (!el || !el.isConnected) {{ el = find(document, id); if (el) headings.set(id, el); }}
        return el;
      }};
      const update = () => {{
        const tops = model.slugs.map((id) => {{
          const el = heading(id);
          if (!el) return null;
          const box = el.getBoundingClientRect();
          return box.width === 0 && box.height === 0 ? null : box.top;
        }});
        const end = document.scrollingElement.scrollHeight - window.scrollY;
        const within = (margin) => {{
          const out = [];
          tops.forEach((top, i) => {{
            if (top === null) return;
            const next = tops.slice(i + 1).find((t) => t !== null) ?? end;
            if (top < window.innerHeight + margin && next > -margin) out.push(model.slugs[i]);
          }});
          return out;
        }};
        const near = within({NEAR_MARGIN_PX});
        if (near.join() !== model.near.join()) model.near = near;
        const shown = within(-{SHOWN_MIN_PX});
        if (shown.join() !== model.shown.join()) model.shown = shown;
        const fresh = within({BUILD_MARGIN_PX}).filter((id) => !seen.has(id));
        if (fresh.length) {{ fresh.forEach((id) => seen.add(id)); model.seen = [...seen]; }}
      }};
      let queued = false;
      const soon = () => {{
        if (!queued) {{ queued = true; requestAnimationFrame(() => {{ queued = false; update(); }}); }}
      }};
      window.addEventListener("scroll", soon, {{ passive: true }});
      window.addEventListener("resize", soon);
      const timer = setInterval(update, 500);
      model.on_remove?.(() => {{
        clearInterval(timer);
        window.removeEventListener("scroll", soon);
        window.removeEventListener("resize", soon);
      }});
      soon();
      return document.createElement("span");
    }}
    """


class LazyPart(pn.viewable.Viewer):
    """A placeholder of ``height`` px that becomes ``build(state)`` when the reader first comes near it.

    The page (a ``SectionWatch``) says when. The build replaces this part's own
    column's objects only, so nothing else on the page is re-rendered. The part
    draws from the session's state itself; the watchers its build puts on the
    state are held by its ``SectionWatchers`` (``watchers``), which hand them the
    state's changes only while the part is near: a section far from the reader
    costs nothing on a slider step, and catches up in one step when the reader
    comes back. ``build_now()`` builds at once (the top of the page; a page
    without a browser, a test, the benchmark). The built part's figures take the
    page's theme and presentation sizes at once (``page_styler``): Panel sends a
    layout's new children past the document's change callbacks, where the styler
    listens.
    """

    def __init__(self, build: Callable[[ExplorerState], pn.viewable.Viewable], state: ExplorerState, height: int,
                 name: str):
        super().__init__()
        self._build = build
        self._state = state
        self.watchers: SectionWatchers | None = None
        self._styler = page_styler(state)
        # Off screen, the browser skips the part's style, layout and paint (content-visibility), so a frame
        # (a slider's handle moving) costs what is on screen, not the whole long page; a printout has it all.
        self.column = pn.Column(placeholder(height),
                                sizing_mode="stretch_width", name=f"{name}_part",
                                stylesheets=[SKIPPED_OFF_SCREEN.format(height=height)])

    @property
    def built(self) -> bool:
        """Whether the real part is in place."""
        return self.watchers is not None

    def build_now(self) -> None:
        """Put the real part in place (once)."""
        if self.watchers is None:
            self.watchers = SectionWatchers(self._state)
            with self.watchers.recording():
                self.column.objects = [self._build(self._state)]
            if self._styler is not None:
                self._styler.restyle_part(self.column)

    def __panel__(self) -> pn.viewable.Viewable:
        return self.column


def watch_sections(parts: dict[str, LazyPart], name: str = "section_watch") -> SectionWatch:
    """A ``SectionWatch`` over ``parts`` (slug → part, top to bottom): it builds every part the reader has
    come within the build margin of (``seen``) and lets each built part follow the state only while it is
    near (``near``), in the step that changed it only while it is on screen (``shown``; see
    ``app.model.section_watchers.follow_later``)."""
    watch = SectionWatch(slugs=list(parts), width=0, height=0, margin=0, name=name)

    def build(event: param.parameterized.Event) -> None:
        for slug in event.new:
            part = parts.get(slug)  # a name the page does not have (a forged message) builds nothing
            if part is not None and not part.built:
                # The browser spoke, so it holds the document: Panel may send the new part (see fastsync).
                mark_connected()
                part.build_now()
        follow()

    def follow(*_events: param.parameterized.Event) -> None:
        for slug, part in parts.items():
            if part.watchers is not None:
                part.watchers.awake = slug in watch.near
                part.watchers.prompt = slug in watch.shown

    watch.param.watch(build, "seen")
    watch.param.watch(follow, ["near", "shown"])
    return watch
