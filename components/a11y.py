"""Accessible names for what Panel and Bokeh draw without one: slider handles, player buttons, figures.

Bokeh's sliders are noUiSlider handles (``role=slider``) whose title sits next to
them as plain text, not as their label; Panel's Player draws icon-only buttons;
a Bokeh figure is a stack of canvases. None of them gets an accessible name, and
none of them can be given one from Python. ``AccessibleNames`` is one invisible
component per page that names them in the browser, in the page's language:

* a slider handle gets ``aria-label`` = its slider's title without the value
  (``aria-valuetext`` says the value; a DiscreteSlider's title is the text
  Panel puts just before it), and an ``aria-valuetext`` that says the value as the
  title shows it: BokehJS creates its noUiSlider without a format, whose default
  writes every value with two decimals ("64.00", "-3.00"), so an integer slider's
  value is rewritten as the integer ("64", "−3") and the discrete slider's (base)
  as its title's value ("10000"), not its index. noUiSlider rewrites the attribute
  on every update, so each handle keeps an observer of that one attribute;
* a player button gets ``aria-label`` and ``title`` from its kind (play, pause …);
* a figure's canvas gets ``role=img`` and ``aria-label`` = the figure's title, or its
  axis labels when it has none; its event layer leaves the Tab order (no figure here
  has a keyboard tool, so it was a stop that did nothing);
* a button group (the ``heads`` and ``mistake`` switches) gets ``role=group`` and
  ``aria-label`` = the visible label that ``components.controls`` puts before it.

Everything lives in shadow roots, which a document-wide MutationObserver does not
see, so each shadow root gets its own observer (added children only: the names it
sets do not wake it again) and the names are set for the roots that changed, in the
observer's callback (and the figures once per frame). Only added nodes that are or
hold a shadow root or something named here count: a slider step rewrites its title
and a few text blocks, and visiting those roots and every figure for it cost each key
press several ms of main thread (docs/performance.md, "Close to the floor"). A
figure's title lives on its canvas, so a change of a ``Title`` model in the page's
Bokeh document renames the figures too.
"""

from __future__ import annotations

import param

from app.model.state import ExplorerState
from app.model.strings import text
from components.plainjs import PlainJSComponent

#: Panel's Player buttons, by CSS class; their names are ``player_<class>`` in the string tables.
PLAYER_BUTTONS = ("slower", "first", "previous", "reverse", "pause", "play", "next", "last", "faster")


class AccessibleNames(PlainJSComponent):
    """Names the page's slider handles, player buttons, figures and button groups (see the module)."""

    player_labels = param.Dict(default={}, doc="Accessible name of each player button, by its CSS class.")
    figure_word = param.String(default="Figure", doc="The name of a figure with neither title nor axis labels.")

    _esm = """
    const textOf = (el) => (el?.textContent ?? "").replace(/\\s+/g, " ").trim();

    function sliderTitle(root) {
      const title = root.querySelector(".bk-slider-title");
      if (!title || !textOf(title)) {
        // A DiscreteSlider (base) shows "label: value" in a text element just before its untitled slider.
        const before = root.host?.previousElementSibling?.shadowRoot;
        const shown = [...(before?.children ?? [])].filter((el) => !["STYLE", "LINK"].includes(el.tagName))
          .map(textOf).join(" ").trim();
        const colon = shown.lastIndexOf(":");
        return colon > 0 ? shown.slice(0, colon).trim() : shown;
      }
      const value = textOf(title.querySelector(".bk-slider-value"));
      let label = textOf(title);
      if (value && label.endsWith(value)) label = label.slice(0, -value.length);
      return label.replace(/[:\\s]+$/, "");
    }

    // The value a handle's aria-valuetext should say, by handle: the discrete slider's title, or the integer.
    const valueTexts = new WeakMap();
    const integerText = (handle) => {
      const value = Number((handle.getAttribute("aria-valuetext") ?? "").replace("\u2212", "-"));
      if (!Number.isFinite(value) || Math.abs(value - Math.round(value)) > 1e-9) return null;
      const whole = Math.round(value);
      return whole < 0 ? "\u2212" + String(-whole) : String(whole);
    };
    function announce(handle, valueText, mine = false) {
      if (mine || !valueTexts.has(handle)) valueTexts.set(handle, valueText);
      const fix = () => {
        const shown = valueTexts.get(handle)(handle);
        if (shown && handle.getAttribute("aria-valuetext") !== shown) handle.setAttribute("aria-valuetext", shown);
      };
      if (!handle.__peValueText) {
        handle.__peValueText = true;
        new MutationObserver(fix).observe(handle, { attributes: true, attributeFilter: ["aria-valuetext"] });
      }
      fix();
    }

    function setName(el, name, extra = {}) {
      if (!name || el.getAttribute("aria-label") === name) return;
      el.setAttribute("aria-label", name);
      for (const [key, value] of Object.entries(extra)) el.setAttribute(key, value);
    }

    function plotName(view, fallback) {
      const model = view.model;
      const title = model.title?.text ?? (typeof model.title === "string" ? model.title : "");
      if (title) return title;
      const axes = [...(model.below ?? []), ...(model.left ?? [])]
        .map((axis) => axis?.axis_label).filter((label) => typeof label === "string" && label);
      return axes.length ? axes.join(" · ") : fallback;
    }

    export function render({ model }) {
      const seen = new WeakSet();
      let frame = 0;

      const name = (root) => {
        for (const handle of root.querySelectorAll(".noUi-handle")) {
          setName(handle, sliderTitle(root));
          announce(handle, integerText);
        }
        // A discrete slider's title (components.theme.SliderTitle) is drawn after its slider, and redrawn on
        // every step: each time, the slider just after it is named from it, and says the title's value.
        const discrete = root.querySelector(".pe-slider-title");
        if (discrete) {
          const slider = root.host?.nextElementSibling?.shadowRoot;
          const title = slider && sliderTitle(slider);
          const shown = () => {
            const words = textOf(discrete.isConnected ? discrete : root.querySelector(".pe-slider-title"));
            return words.slice(words.lastIndexOf(":") + 1).trim() || null;
          };
          for (const handle of slider?.querySelectorAll(".noUi-handle") ?? []) {
            setName(handle, title);
            announce(handle, shown, true);
          }
        }
        for (const button of root.querySelectorAll("button")) {
          const kind = [...button.classList].find((c) => c in model.player_labels);
          if (kind && !textOf(button)) setName(button, model.player_labels[kind], { title: model.player_labels[kind] });
        }
        for (const group of root.querySelectorAll(".bk-btn-group")) {
          const before = root.host?.previousElementSibling;
          const label = before?.shadowRoot?.querySelector(".pe-group-label");
          if (label) setName(group, textOf(label), { role: "group" });
        }
      };
      const nameFigures = () => {
        const plots = window.Bokeh?.index?.query?.((v) => v.model?.toolbar !== undefined && v.canvas_view) ?? [];
        for (const view of plots) {
          const canvas = view.canvas_view.el;
          if (canvas.getAttribute("role") !== "img") canvas.setAttribute("role", "img");
          setName(canvas, plotName(view, model.figure_word));
          // Bokeh makes each figure's event layer focusable for key tools; the figures have none, so the
          // layer would be a Tab stop that does nothing and shows no focus.
          for (const layer of canvas.shadowRoot?.querySelectorAll(".bk-events[tabindex]") ?? []) {
            if (layer.tabIndex !== -1) layer.tabIndex = -1;
          }
        }
      };
      const visit = (root) => {
        for (const el of root.querySelectorAll("*")) if (el.shadowRoot) watch(el.shadowRoot);
        name(root);
      };
      const flush = () => {
        frame = 0;
        nameFigures();
      };
      // Names are set in the observer's callback itself (a microtask right after the change), so no one
      // ever meets a fresh, unnamed handle; figures, whose views Bokeh finishes later, once per frame.
      const now = (root) => {
        visit(root);
        if (!frame) frame = requestAnimationFrame(flush);
      };
      // A slider step rewrites its title (text and a value span), a text block's markup, a
      // description: nothing there needs a name, and visiting every changed root and every figure
      // for it cost a key press several ms of main thread. Only added nodes that are, or hold, a
      // shadow root or something named here wake the page.
      const named = ".noUi-handle, button, .bk-btn-group, canvas, .pe-group-label, .pe-slider-title";
      const wakes = (node) => node.nodeType === 1 && (node.shadowRoot != null || node.matches(named)
        || node.querySelector(named) != null || [...node.querySelectorAll("*")].some((el) => el.shadowRoot));
      const changed = (records) => records.some((r) => [...r.addedNodes].some(wakes));
      function watch(root) {
        if (seen.has(root)) return;
        seen.add(root);
        const options = { childList: true, subtree: true };
        new MutationObserver((records) => { if (changed(records)) now(root); }).observe(root, options);
        now(root);
      }
      // A figure's title is drawn on its canvas: its change mutates no DOM, so it is watched in the document.
      const doc = window.Bokeh?.documents?.[0];
      doc?.on_change?.((event) => {
        if (event.model?.type === "Title" && !frame) frame = requestAnimationFrame(flush);
      });
      watch(document);
      return document.createElement("span");
    }
    """


def accessible_names(state: ExplorerState, kind: str) -> AccessibleNames:
    """The page's ``AccessibleNames``, in the state's language (a ``PAGE_EXTRAS`` maker)."""
    lang = state.lang
    return AccessibleNames(player_labels={button: text(lang, f"player_{button}") for button in PLAYER_BUTTONS},
                           figure_word=text(lang, "a11y_figure"), name="accessible_names",
                           width=0, height=0, margin=0)

