"""Parts of a long page built when the reader comes near them."""

from __future__ import annotations

from collections.abc import Callable

import panel as pn
import param
from panel.custom import JSComponent

from app.fastsync import mark_connected

#: How far (px) below or above the viewport a part starts being built: about a screen ahead,
#: so a reader scrolling at a normal pace finds it drawn.
NEAR_MARGIN_PX = 900


class Nearby(JSComponent):
    """Turns ``near`` true, once, when its spot on the page comes within ``NEAR_MARGIN_PX`` of the viewport."""

    near = param.Boolean(default=False, doc="Whether the reader has come near (set by the browser).")

    _esm = f"""
    export function render({{ model }}) {{
      const spot = document.createElement("div");
      spot.style.height = "1px";
      const seen = new IntersectionObserver((entries) => {{
        if (entries.some((entry) => entry.isIntersecting)) {{ model.near = true; seen.disconnect(); }}
      }}, {{ rootMargin: "{NEAR_MARGIN_PX}px 0px" }});
      seen.observe(spot);
      return spot;
    }}
    """


class LazyPart(pn.viewable.Viewer):
    """A placeholder of ``height`` px that becomes ``build()`` when the reader comes near it.

    The build replaces the objects of this part's own column only, so nothing
    else on the page is re-rendered. ``build_now()`` builds at once (a page
    without a browser, a test, the benchmark).
    """

    def __init__(self, build: Callable[[], pn.viewable.Viewable], height: int, name: str):
        super().__init__()
        self._build = build
        self.built = False
        self.nearby = Nearby(width=0, height=1, margin=0, name=f"{name}_nearby")
        self.column = pn.Column(pn.Spacer(height=height, sizing_mode="stretch_width"), self.nearby,
                                sizing_mode="stretch_width", name=f"{name}_part")
        self.nearby.param.watch(self._on_near, "near")

    def _on_near(self, event: param.parameterized.Event) -> None:
        if event.new:
            # The browser spoke, so it holds the document: Panel may send the new part (see fastsync).
            mark_connected()
            self.build_now()

    def build_now(self) -> None:
        """Put the real part in place (once)."""
        if not self.built:
            self.built = True
            self.column.objects = [self._build()]

    def __panel__(self) -> pn.viewable.Viewable:
        return self.column
