"""Figures side by side on a wide page, one under the other on a phone; a fixed figure no wider than its page.

A Panel ``Row`` keeps its children side by side at any width: on a 390 px phone two stretching figures
got 195 px each (/simpler, /order), and a stretching figure beside a fixed one 60 px (/terms). A
``figure_row`` is that row with one rule more: below ``NARROW_PX`` of page its children stack, one under
the other (as ``components.controls.SLIDER_GRID`` does for a grid of sliders).

A figure of fixed size (a square heat map, 620–640 px) held a phone's page that wide: Panel gives a
stretching column the widest fixed width among its children as its least width. In a
``fixed_figure_box`` it is inside a stretching Bokeh row instead, which Panel counts as no width, and the
page's ``TitleFit`` (components/title_fit.py) sets the figure narrower in the browser where it would run
past the page's edge.
"""

from __future__ import annotations

import panel as pn
from bokeh.models import Plot, Row

__all__ = ["NARROW_PX", "NARROW_QUERY", "STACKED_WHEN_NARROW", "figure_row", "fixed_figure_box"]

#: The page width (px) below which a row of figures stacks: a phone held upright, not a 768 px iframe.
NARROW_PX = 600
#: The media query of a page that narrow: the CSS rule below, and a script that must agree with it
#: (``window.matchMedia(NARROW_QUERY)``).
NARROW_QUERY = f"(max-width: {NARROW_PX}px)"

#: The row's rule. Panel lays a row out as a CSS flex row and sizes each stretching child with inline
#: styles, hence ``!important``.
STACKED_WHEN_NARROW = f"""@media {NARROW_QUERY} {{
  :host {{ flex-direction: column !important; flex-wrap: nowrap !important; }}
  :host > * {{ flex: 0 0 auto !important; }}
}}"""


def figure_row(*objects: pn.viewable.Viewable, **params: object) -> pn.Row:
    """A stretching ``pn.Row`` of ``objects`` that stacks them on a phone (see the module)."""
    return pn.Row(*objects, sizing_mode="stretch_width",
                  stylesheets=[STACKED_WHEN_NARROW, *params.pop("stylesheets", [])], **params)


def fixed_figure_box(fig: Plot) -> pn.pane.Bokeh:
    """``fig`` (of fixed size) in a stretching row named ``<fig.name>_box``, which sets no least width for the
    page (see the module) and is no wider than ``fig``: beside a stretching neighbour in a ``figure_row`` the
    neighbour takes the rest of the row, not half of it."""
    return pn.pane.Bokeh(Row(children=[fig], sizing_mode="stretch_width", max_width=fig.width, name=f"{fig.name}_box"),
                         sizing_mode="stretch_width", max_width=fig.width)
