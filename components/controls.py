"""The sliders and buttons, generated from the state's parameters."""

from __future__ import annotations

import html
from collections.abc import Sequence

import panel as pn
import param
from bokeh.models import CustomJSTickFormatter

from app.model.state import ExplorerState
from app.model.strings import text
from components.address import write_to_address
from components.stylesheets import STYLESHEET, WIDGET_STYLESHEET
from components.widgets import FastDiscreteSlider, FastIntSlider, OneMessageRadioButtonGroup, OneMessageTextInput

#: The widget class of each parameter; everything else (bounds, step, value,
#: the two-way link) comes from the parameter itself: through ``from_param``,
#: or for the integer sliders ``linked_slider``'s own two watchers.
#: The Fast* classes are the stock Panel sliders without the 50 ms wait before
#: a browser change is applied (see app/fastsync.py): a key press on a slider
#: reaches the views on the next turn of the server's event loop.
WIDGETS: dict[str, type[pn.widgets.Widget]] = {
    "d_model": FastIntSlider,
    "T": FastIntSlider,
    "base": FastDiscreteSlider,
    "pair": FastIntSlider,
    "pos": FastIntSlider,
    "k": FastIntSlider,
    "pairs_from": FastIntSlider,
    "pairs_to": FastIntSlider,
    "reserve": FastIntSlider,
    "T_train": FastIntSlider,
    "heads": OneMessageRadioButtonGroup,
    "mistake": OneMessageRadioButtonGroup,
    "stretch": OneMessageRadioButtonGroup,
    "sentence": OneMessageTextInput,
    "lesson_preset": pn.widgets.Button,
    "paper_preset": pn.widgets.Button,
}


#: A grid of sliders: each slider at the foot of its cell, so that the tracks of a row stay level when one title
#: takes two lines; one column on a phone, where three titles side by side on 390 px lay over each other.
#: (BokehJS places each child in its cell with grid-row and grid-column: those are undone too.)
SLIDER_GRID = """* { align-self: end; }
@media (max-width: 600px) {
  :host { grid-template-columns: minmax(0, 1fr) !important; grid-template-rows: none !important; }
  * { grid-column: 1 !important; grid-row: auto !important; }
}"""


def signed_format() -> CustomJSTickFormatter:
    """A slider's value as its title prints it: a negative one with U+2212 MINUS SIGN, as the text around it
    (``app.model.strings.minus_sign``), not BokehJS's hyphen ("k: −3", not "k: -3")."""
    return CustomJSTickFormatter(code="return tick < 0 ? '\\u2212' + String(-tick) : String(tick)")


def widget_for(state: ExplorerState, name: str, prefix: str = "") -> pn.widgets.Widget:
    """The widget of parameter ``name``, linked both ways, labelled in the state's language.

    Its own named models are named ``<prefix>_<name>_…`` (``<name>_…`` without a prefix): the base
    slider's title is ``base_title``, or ``wavelengths_base_title`` in the lesson's section of that name.
    """
    kind = WIDGETS[name]
    options = {"name": text(state.lang, name), "sizing_mode": "stretch_width", "stylesheets": [WIDGET_STYLESHEET]}
    if "description" in kind.param:
        # from_param would make the parameter's docstring (English, for programmers) a "?" tooltip:
        # untranslated, and shown on hover only, out of the keyboard's reach.
        options["description"] = None
    if kind is FastDiscreteSlider:
        options["title_name"] = f"{prefix}_{name}_title" if prefix else f"{name}_title"
    elif kind is FastIntSlider and type(state).param[name].bounds[0] < 0:
        options["format"] = signed_format()
    elif kind is pn.widgets.Button:
        options.update(color="primary", variant="outline")
    elif issubclass(kind, pn.widgets.RadioButtonGroup):
        # The options' labels in the page's language; the values stay the URL's words.
        options["options"] = {text(state.lang, f"{name}_{value}"): value for value in state.param[name].objects}
        options["color"] = "primary"
        options["variant"] = "outline"
        # Long labels ("none (correct table)") wrap onto a second line of buttons on a narrow page.
        options["stylesheets"] = [WIDGET_STYLESHEET, ".bk-btn-group { flex-wrap: wrap; row-gap: 4px; }"]
    elif issubclass(kind, pn.widgets.TextInput):
        options["placeholder"] = text(state.lang, f"{name}_placeholder")
    if kind is FastIntSlider:
        return write_to_address(linked_slider(state, name, options), state, name)
    return kind.from_param(state.param[name], **options)


def linked_slider(state: ExplorerState, name: str, options: dict) -> FastIntSlider:
    """An integer slider for parameter ``name``, linked both ways, as ``from_param`` builds it.

    The link is two plain watchers, not ``from_param``'s: Panel's link hands each change to the
    slider with ``param.update``, which first copies all of the slider's ~60 values (0.2 ms of its
    0.4 ms per change and slider, measured), and a room's followers each pay it on every move
    (issue #44). The state clamps (its ``BoundedInteger``s); the slider shows what the state holds,
    its bounds follow the parameter's, and a value equal to the state's changes nothing.
    """
    parameter = state.param[name]
    start, end = parameter.get_soft_bounds()
    value = getattr(state, name)
    # ``label``, as from_param gives it (a widget's ``name`` is deprecated in Panel 1.9 and becomes the same).
    options = {"label": options["name"], **{key: option for key, option in options.items() if key != "name"}}
    widget = FastIntSlider(value=value, value_throttled=value, start=start, end=end,
                           **({"step": parameter.step} if parameter.step else {}), **options)

    def to_widget(event: param.parameterized.Event) -> None:
        if event.what == "bounds":
            low, high = parameter.get_soft_bounds()
            widget.param.update(start=low, end=high)
        else:
            widget.value = event.new

    def to_state(event: param.parameterized.Event) -> None:
        setattr(state, name, event.new)
        if getattr(state, name) != event.new:  # clamped by the state: the slider shows what it holds
            widget.value = getattr(state, name)

    # Registered in from_param's order (bounds, then value); the events come in the state's own order.
    state.param.watch(to_widget, [name], what="bounds")
    state.param.watch(to_widget, [name])
    widget.param.watch(to_state, "value")
    return widget


def labelled(state: ExplorerState, name: str, widget: pn.widgets.Widget) -> pn.viewable.Viewable:
    """``widget`` with a visible label above it when it shows none itself (a row of option buttons).

    ``components.a11y.AccessibleNames`` makes the same label the group's accessible name.
    """
    if not isinstance(widget, pn.widgets.RadioButtonGroup):
        return widget
    label = pn.pane.HTML(f'<p class="pe-group-label">{html.escape(text(state.lang, name))}</p>',
                         stylesheets=[STYLESHEET], margin=(5, 10, 0, 10), sizing_mode="stretch_width")
    return pn.Column(label, widget, sizing_mode="stretch_width", margin=0)


class Controls(pn.viewable.Viewer):
    """Widgets for some of the state's parameters: one column, or a grid of ``columns``."""

    state = param.ClassSelector(class_=ExplorerState)
    parameters = param.List(default=["d_model", "T", "base", "pair", "pos", "k"])
    columns = param.Integer(default=1, bounds=(1, 6), doc="Sliders per row (an embed above its view uses 3).")
    prefix = param.String(default="", doc=(
        "Prefix of the names of the widgets' own named models (a lesson section's slug), so that the sets of "
        "controls of several sections keep them unique on one page."))

    def __init__(self, state: ExplorerState, parameters: Sequence[str] | None = None, **params):
        if parameters is not None:
            params["parameters"] = list(parameters)
        super().__init__(state=state, **params)
        sliders = [labelled(state, p, widget_for(state, p, self.prefix)) for p in self.parameters
                   if WIDGETS[p] is not pn.widgets.Button]
        buttons = [widget_for(state, p, self.prefix) for p in self.parameters if WIDGETS[p] is pn.widgets.Button]
        parts: list = ([pn.GridBox(*sliders, ncols=self.columns, sizing_mode="stretch_width",
                                   stylesheets=[SLIDER_GRID])]
                       if self.columns > 1 else list(sliders))
        if buttons:
            parts.append(pn.Column(*buttons, sizing_mode="stretch_width"))
        self._layout = pn.Column(*parts, sizing_mode="stretch_width", css_classes=["pe-controls"])

    def __panel__(self) -> pn.viewable.Viewable:
        return self._layout
