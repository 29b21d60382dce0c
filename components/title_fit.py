"""Figure titles that fit their figure: on a narrow page a long title is set smaller instead of cut off.

A Bokeh title is drawn on the figure's canvas in one line at a fixed size, and the canvas cuts
what passes its right edge. At 1280 px every title fits; in a 768 px iframe (a course page)
fourteen did not ("Distance from PE_pos to every position q, through the chosen pa…"). ``TitleFit``
is one invisible component per page that, in the browser, sets each title that would be cut at
the largest size that fits, down to ``MIN_SHARE`` of the size the server gave it (below that, in
two lines), and back when the figure grows again. Axis labels the same way (centred on the
frame, in one line: the canvas cut "‖y(original) − y(current)‖ of the same word" at both ends on a
1280 px projector). The change stays in the browser (``setv`` without ``sync``): the server keeps
the text and size it chose (presentation mode sets larger ones), and the browser fits from those.

It fits when the page's size changes (the window is resized, figures arrive: a lesson section
built as the reader comes near it), when a figure's own size does (presentation mode fits the
figures to the window once the page has reported it) and when a title or an axis label changes
(its text, or the server's size); not on a slider step that changes neither.
"""

from __future__ import annotations

import param

from app.state import ExplorerState
from components.plainjs import PlainJSComponent

#: The smallest share of its size a title is set at to fit (below it, the title is cut as before).
MIN_SHARE = 0.6


class TitleFit(PlainJSComponent):
    """Sets each figure title that its figure would cut at the largest size that fits (see the module)."""

    min_share = param.Number(default=MIN_SHARE, bounds=(0.1, 1.0), doc="The smallest share of a title's size.")

    _esm = """
    export function render({ model }) {
      const measure = document.createElement("canvas").getContext("2d");
      const given = new WeakMap();  // Title or axis model -> {size, text} as the server gave them
      let fitting = false;
      let frame = 0;

      const widthOf = (font, size, text) => {
        measure.font = `${font.style} ${size} ${font.family}`;
        return Math.max(...text.split("\\n").map((line) => measure.measureText(line).width));
      };
      // The text in two lines, broken at the space nearest its middle.
      const twoLines = (text) => {
        const middle = text.length / 2;
        let at = -1;
        for (let i = text.indexOf(" "); i >= 0; i = text.indexOf(" ", i + 1)) {
          if (at < 0 || Math.abs(i - middle) < Math.abs(at - middle)) at = i;
        }
        return at < 0 ? text : `${text.slice(0, at)}\\n${text.slice(at + 1)}`;
      };
      const largestFitting = (font, text, value, unit, room) => {
        let fits = value;
        while (fits > value * model.min_share && widthOf(font, `${fits}${unit}`, text) > room) fits -= 0.5;
        return widthOf(font, `${fits}${unit}`, text) <= room ? fits : null;
      };
      // An axis label is centred on the frame, in one line; the canvas cuts it at either end of the figure.
      const SIDES = {below: "h", above: "h", left: "v", right: "v"};
      const LINE_SHARE = 0.8;
      const fitAxes = (view) => {
        const frame = view.frame.bbox, box = view.bbox;
        for (const [side, across] of Object.entries(SIDES)) {
          for (const axis of view.model[side] ?? []) {
            if (typeof axis?.axis_label !== "string" || !axis.axis_label
                || typeof axis.axis_label_text_font_size !== "string") continue;
            const server = given.get(axis) ?? { size: axis.axis_label_text_font_size, text: axis.axis_label };
            given.set(axis, server);
            const parsed = /^([0-9.]+)(pt|px)$/.exec(server.size);
            if (!parsed) continue;
            const [value, unit] = [parseFloat(parsed[1]), parsed[2]];
            const room = across === "h" ? 2 * Math.min(frame.hcenter, box.width - frame.hcenter) - 8
                                        : 2 * Math.min(frame.vcenter, box.height - frame.vcenter) - 8;
            const font = { style: axis.axis_label_text_font_style, family: axis.axis_label_text_font };
            // One line if it fits at LINE_SHARE of its size or more, else two lines as large as they fit.
            let text = server.text;
            let fits = largestFitting(font, text, value, unit, room);
            if ((fits === null || fits < value * LINE_SHARE) && !text.includes("\\n")) {
              const broken = largestFitting(font, twoLines(text), value, unit, room);
              if (broken !== null && broken > (fits ?? 0)) [text, fits] = [twoLines(text), broken];
            }
            const wanted = { axis_label_text_font_size: `${fits ?? value * model.min_share}${unit}`, axis_label: text };
            if (axis.axis_label_text_font_size !== wanted.axis_label_text_font_size || axis.axis_label !== text) {
              fitting = true;
              try { axis.setv(wanted, { sync: false }); } finally { fitting = false; }
            }
          }
        }
      };
      const fitOne = (view) => {
        const title = view.model.title;
        if (!title || typeof title.text !== "string" || !title.text || !view.frame) return;
        const server = given.get(title) ?? { size: title.text_font_size, text: title.text };
        given.set(title, server);
        const parsed = /^([0-9.]+)(pt|px)$/.exec(server.size);
        if (!parsed) return;
        const [value, unit] = [parseFloat(parsed[1]), parsed[2]];
        // The title starts over the frame's left edge and the canvas ends at the figure's right edge.
        const room = view.bbox.width - view.frame.bbox.left - 6;
        const font = { style: title.text_font_style, family: title.text_font };
        let text = server.text;
        let fits = largestFitting(font, text, value, unit, room);
        if (fits === null && !text.includes("\\n")) {
          // Too long for one line even at the smallest size: two lines, as large as they fit.
          text = twoLines(text);
          fits = largestFitting(font, text, value, unit, room) ?? value * model.min_share;
        }
        const wanted = { text_font_size: `${fits ?? value * model.min_share}${unit}`, text };
        if (title.text_font_size !== wanted.text_font_size || title.text !== wanted.text) {
          fitting = true;
          try { title.setv(wanted, { sync: false }); } finally { fitting = false; }
        }
      };
      const soon = () => { if (!frame) frame = requestAnimationFrame(fitAll); };
      const observer = new ResizeObserver(soon);
      const watched = new WeakSet();
      const fitAll = () => {
        frame = 0;
        const plots = window.Bokeh?.index?.query?.((v) => v.model?.toolbar !== undefined && v.canvas_view) ?? [];
        for (const view of plots) {
          // A figure can change size with the page unchanged (presentation mode fits it to the window once
          // the page has reported it): each figure's own box is watched too.
          if (!watched.has(view.el)) { watched.add(view.el); observer.observe(view.el); }
          try { fitOne(view); fitAxes(view); } catch (error) { console.debug("title fit", error); }
        }
      };
      const doc = window.Bokeh?.documents?.[0];
      doc?.on_change?.((event) => {
        if (fitting) return;
        const model = event.model;
        if (model?.type === "Title") {
          // The server set a new text or size (presentation mode): fit from those.
          given.set(model, { size: model.text_font_size, text: model.text });
          soon();
        } else if (event.attr === "axis_label" || event.attr === "axis_label_text_font_size") {
          given.set(model, { size: model.axis_label_text_font_size, text: model.axis_label });
          soon();
        }
      });
      // The page's size changes when the window does and when figures arrive (a section built late).
      observer.observe(document.body);
      document.fonts?.ready?.then(soon);
      soon();
      return document.createElement("span");
    }
    """


def title_fit(state: ExplorerState, kind: str) -> TitleFit:
    """The page's ``TitleFit`` (a ``PAGE_EXTRAS`` maker)."""
    return TitleFit(name="title_fit", width=0, height=0, margin=0)
