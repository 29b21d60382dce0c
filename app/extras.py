"""Page-wide parts that every page gets, whatever it shows (the lesson, a section, /explore, a view).

Each entry takes the session's state and the page's kind (``"lesson"``, ``"section"``,
``"explore"`` or ``"view"``) and returns a component to add at the end of the page, or ``None``.
They are for things that belong to the page rather than to a view: keyboard shortcuts, a notice
when the connection is lost. Add a feature's maker here, one line each. ``TOP_TOOLS`` makers go in
the page's top bar, after play and the page's switches (in presentation mode: the slim bar), in the
page's flow, where they cover nothing: a room's controls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import panel as pn

from app.model.state import ExplorerState
from components.a11y import accessible_names
from components.connection import connection_status
from components.embed import embed_dialog
from components.export import export_links
from components.keyboard import page_keys
from components.lesson.quiz import QUESTION_TOOLS
from components.poll import poll_card, poll_tools, room_box_and_poll
from components.present import page_look
from components.present import page_tools as presentation_tools
from components.title_fit import title_fit

PageExtra = Callable[[ExplorerState, str], pn.viewable.Viewable | None]

#: Tools of the page's top bar, after its play control and switches.
TOP_TOOLS: list[PageExtra] = [
    room_box_and_poll,  # the room box, and the page's class poll following it (components.poll)
]

# The teacher's poll tools under each quiz question (the quiz imports nothing of the rooms built on it).
QUESTION_TOOLS.append(poll_tools)


def top_tools(state: ExplorerState, kind: str) -> list[pn.viewable.Viewable]:
    """The ``TOP_TOOLS`` of a page of ``kind`` (the slim bar of presentation mode holds them too)."""
    return [part for make in TOP_TOOLS if (part := make(state, kind)) is not None]


def top_bar(state: ExplorerState, kind: str, tools: Sequence[pn.viewable.Viewable] = (),
            play: bool = True) -> pn.viewable.Viewable | None:
    """The page's top bar: play (unless ``play`` is false), the presentation and theme switches, ``tools``
    (a page without a header puts its Embed button here) and the ``TOP_TOOLS``. The page's first part, in
    the page's flow."""
    if state.present:
        return None  # the slim bar of the presentation holds them (app.pages.presentable): build them once
    return presentation_tools(state, kind, [*tools, *top_tools(state, kind)], play=play)


PAGE_EXTRAS: list[PageExtra] = [
    poll_card,
    connection_status,
    accessible_names,
    export_links,
    page_look,
    page_keys,
    title_fit,
]


def page_tools(state: ExplorerState, kind: str, controls: tuple[str, ...] = ()) -> list[pn.viewable.Viewable]:
    """The tools in the page's header (the Embed button); ``controls``: what an embed of this page can show."""
    return [part for part in (embed_dialog(state, kind, controls),) if part is not None]


#: Makers whose parts may arrive after the page's first figure is drawn: nothing of theirs is on the
#: first screen, and nothing moves when they come (the theme and the tools row at the top, with the room box,
#: must not wait).
AFTER_FIRST_DRAW: frozenset[PageExtra] = frozenset({connection_status, accessible_names, export_links, page_keys})


def page_extras(state: ExplorerState, kind: str, part: str = "all") -> list[pn.viewable.Viewable]:
    """The page-wide parts for a page of ``kind``, in the order of ``PAGE_EXTRAS``, to add at the end of the page.

    ``part``: ``"all"``, or ``"first"`` (those the first draw needs) or ``"later"`` (``AFTER_FIRST_DRAW``)
    for a page that builds what it can after its first draw. The top bar is not one of them: a page puts
    ``top_bar`` first, so that Tab reaches play and the switches where the eye finds them.
    """
    makers = [make for make in PAGE_EXTRAS
              if part == "all" or (make in AFTER_FIRST_DRAW) == (part == "later")]
    return [extra for make in makers if (extra := make(state, kind)) is not None]
