"""Figures that fit their page: a long title set smaller instead of cut off, a fixed figure set narrower.

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
figures to the window once the page has reported it), when BokehJS lays a figure out at a new width (one
drawn off screen is laid out at its model's width until the reader reaches it) and when a title or an axis
label changes (its text, or the server's size); not on a slider step that changes none of these. A title too
wide for two lines at ``MIN_SHARE`` of its size takes three. Figures side by side
whose titles the server gave one size show them at one size, the smallest any of them needs, and a titled figure's
axis labels are no larger than its title as shown (down to four fifths of their own size). A figure of
fixed size wider than the page (a heat map on a phone) is set narrower in the browser, its shape kept.
"""

from __future__ import annotations

import param

from app.model.state import ExplorerState
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
      const largestFitting = (font, text, value, unit, room) => {
        let fits = value;
        while (fits > value * model.min_share && widthOf(font, `${fits}${unit}`, text) > room) fits -= 0.5;
        return widthOf(font, `${fits}${unit}`, text) <= room ? fits : null;
      };
      // The text in two lines, broken where it fits largest, but a break after a colon or a comma counts as fitting
      // a twelfth larger ("S(k) = Σ cos(ωᵢ·k):" / "the sum of the rows below", not "… the" / "sum of …") and one
      // inside a formula a fifth smaller ("pos" / "= 0", "x_mᵀ" / "W_Qᵀ W_K x_n" read as two things); among equals
      // the narrower. A word is a formula's when it has a subscript, a transpose or a norm in it.
      const MATH = /[_ᵀ‖]/;
      const twoLines = (font, text, value, unit, room) => {
        let best = null;
        for (let i = text.indexOf(" "); i >= 0; i = text.indexOf(" ", i + 1)) {
          const lines = `${text.slice(0, i)}\\n${text.slice(i + 1)}`;
          const clause = /[:,;]/.test(text[i - 1]) ? 1 / 12 : 0;
          const [before, after] = [text.slice(0, i).split(" ").pop(), text.slice(i + 1).split(" ")[0]];
          const inFormula = /[=+−·×<>≤≥]/.test(text[i - 1] + text[i + 1]) || (MATH.test(before) && MATH.test(after));
          const share = (largestFitting(font, lines, value, unit, room) ?? 0) / value;
          const rank = [share + clause - (inFormula ? 1 / 5 : 0), -widthOf(font, `${value}${unit}`, lines)];
          if (best === null || rank[0] > best.rank[0] || (rank[0] === best.rank[0] && rank[1] > best.rank[1])) {
            best = { lines, rank };
          }
        }
        return best?.lines ?? text;
      };
      // A title starts over the frame's left edge, an axis label is centred on the frame; each is drawn in
      // one line unless its text has two. Each takes two lines rather than shrink below line_share of its size
      // (presented at 1280 px a title set in one line at 0.6 of its size read like the body text beside a
      // neighbour's title in two lines at full size).
      const TITLE = { size: "text_font_size", text: "text", style: "text_font_style", font: "text_font",
                      line_share: 0.75 };
      const AXIS = { size: "axis_label_text_font_size", text: "axis_label", style: "axis_label_text_font_style",
                     font: "axis_label_text_font", line_share: 0.8 };
      // Returns what it chose ({value, unit, fits, text}), set at once unless ``later`` (a title that may share a row).
      const fitText = (target, kind, room, later = false) => {
        const shown = target?.[kind.text];
        if (typeof shown !== "string" || !shown || typeof target[kind.size] !== "string") return;
        const server = given.get(target) ?? { size: target[kind.size], text: target[kind.text] };
        given.set(target, server);
        const parsed = /^([0-9.]+)(pt|px)$/.exec(server.size);
        if (!parsed) return;
        const [value, unit] = [parseFloat(parsed[1]), parsed[2]];
        const font = { style: target[kind.style], family: target[kind.font] };
        let text = server.text;
        let fits = largestFitting(font, text, value, unit, room);
        if ((fits === null || fits < value * kind.line_share) && !text.includes("\\n")) {
          const lines = twoLines(font, text, value, unit, room);
          const broken = largestFitting(font, lines, value, unit, room);
          if (fits === null || (broken !== null && broken > fits)) [text, fits] = [lines, broken];
        }
        // Two lines still wider than the room at min_share of the size (a 390 px phone, "Puntuación de dos
        // posiciones a distancia k," over its second line): the wider line broken again, into three.
        if (fits === null && kind === TITLE && text.split("\\n").length === 2) {
          const lines = text.split("\\n");
          const wider = widthOf(font, server.size, lines[0]) >= widthOf(font, server.size, lines[1]) ? 0 : 1;
          lines[wider] = twoLines(font, lines[wider], value, unit, room);
          const three = lines.join("\\n");
          const broken = largestFitting(font, three, value, unit, room);
          if (broken !== null) [text, fits] = [three, broken];
        }
        const set = { value, unit, fits: fits ?? value * model.min_share, text };
        if (!later) show(target, kind, set);
        return set;
      };
      const show = (target, kind, { fits, unit, text }) => {
        const size = `${fits}${unit}`;
        if (target[kind.size] !== size || target[kind.text] !== text) {
          fitting = true;
          changed = true;
          try { target.setv({ [kind.size]: size, [kind.text]: text }, { sync: false }); } finally { fitting = false; }
        }
      };
      // Figures side by side (their tops level) whose titles the server gave one size show them at one size: the
      // smallest any of them needs, each in the lines it chose (at 1280 px a presented "(c) Learned table…" in two
      // lines at three quarters of its size beside a neighbour's one-line title at full size read as two ranks).
      const LEVEL_PX = 4;  // figures whose tops are this close count as side by side
      const levelRows = (titles) => {
        // A row: the same server size, tops within LEVEL_PX of its first (rounding tops to a grid would part
        // two tops 1 px apart that straddle a grid line).
        const rows = [];
        for (const entry of [...titles].sort((a, b) => (a.top || 0) - (b.top || 0))) {
          const size = `${entry.set.value}${entry.set.unit}`;
          // A figure not laid out (top NaN) is in a row of its own.
          const row = rows.find((r) => r.size === size && Math.abs(entry.top - r.top) <= LEVEL_PX);
          if (row) row.entries.push(entry); else rows.push({ size, top: entry.top, entries: [entry] });
        }
        // Each title set once per pass, at its row's least size (its own, alone in its row); its figure's axis
        // labels no larger than it (presented at 1280 px, "offset k" at 41 px under a title in two lines at 28
        // read as the heading), nor below AXIS.line_share of their own size.
        for (const { entries: row } of rows) {
          const least = Math.min(...row.map((entry) => entry.set.fits));
          for (const entry of row) {
            show(entry.target, TITLE, { ...entry.set, fits: least });
            const titlePx = inPx(least, entry.set.unit);
            for (const [axis, set] of entry.axes) {
              const floorPx = inPx(set.value * AXIS.line_share, set.unit);
              const capPx = Math.max(titlePx, floorPx);
              const fits = inPx(set.fits, set.unit) > capPx ? Math.floor(2 * capPx / inPx(1, set.unit)) / 2 : set.fits;
              show(axis, AXIS, { ...set, fits });
            }
          }
        }
      };
      const inPx = (value, unit) => unit === "pt" ? value * 4 / 3 : value;
      const SIDES = { below: "h", above: "h", left: "v", right: "v" };
      const fitFigure = (view, shownAt, titles) => {
        const frame = view.frame.bbox, box = view.bbox;
        // The canvas ends at the figure's right edge.
        const title = fitText(view.model.title, TITLE, box.width - frame.left - 6, true);
        // A titled figure's axis labels are set with its title (levelRows), each once per pass.
        const axes = [];
        for (const [side, across] of Object.entries(SIDES)) {
          const room = across === "h" ? 2 * Math.min(frame.hcenter, box.width - frame.hcenter) - 8
                                      : 2 * Math.min(frame.vcenter, box.height - frame.vcenter) - 8;
          for (const axis of view.model[side] ?? []) {
            const set = fitText(axis, AXIS, room, Boolean(title));
            if (set) axes.push([axis, set]);
          }
        }
        if (!title) return;
        // A figure not laid out (hidden) has no row: its title is set as it fits alone.
        titles.push({ target: view.model.title, set: title, top: shownAt.width > 0 ? shownAt.top : NaN, axes });
      };
      // A figure of fixed size that runs past the page's right edge (a 620 px heat map on a 390 px phone) is set
      // narrower, its height with it (its shape kept), to end at the page's right margin (taken as its left one,
      // where the figure starts a line). Only a figure past the edge: one that ends inside the page may sit
      // right of a stretching neighbour, which would take whatever it gave up. When the page's width changes,
      // a narrowed figure goes back to the server's size and is measured again.
      const sizes = new WeakMap();  // fixed Plot -> {width, height} as the server gave them
      const narrowedAt = new WeakMap();  // narrowed Plot -> the page's width then
      const MIN_ROOM = 160;  // px: narrower than any page this app is laid out for (a phone is 320 and up)
      const setSize = (plot, width, height) => {
        if (plot.width === width && plot.height === height) return;
        fitting = true;
        changed = true;
        try { plot.setv({ width, height }, { sync: false }); } finally { fitting = false; }
      };
      const fitWidth = (view, box, page) => {
        const plot = view.model;
        if (plot.sizing_mode != null && plot.sizing_mode !== "fixed") return;
        const server = sizes.get(plot) ?? { width: plot.width, height: plot.height };
        sizes.set(plot, server);
        if (!(server.width > 0) || !(server.height > 0)) return;
        if (narrowedAt.has(plot)) {
          if (narrowedAt.get(plot) === page) return;
          narrowedAt.delete(plot);
          setSize(plot, server.width, server.height);
          soon();
          return;
        }
        if (box.width === 0 || box.right <= page + 0.5) return;
        const left = Math.max(box.left, 0);
        const room = page - left - Math.min(left, 16);
        // Not while the page is still being laid out (a box not yet placed gives no room, or a negative one).
        if (!(room >= MIN_ROOM) || room >= server.width) return;
        setSize(plot, Math.round(room), Math.round(server.height * room / server.width));
        narrowedAt.set(plot, page);
      };
      const WIDTH_PASSES = 3;
      let widthPasses = 0;
      let changed = false;  // whether this pass set anything
      const soon = () => {
        widthPasses = 0;
        if (!frame) frame = requestAnimationFrame(fitAll);
      };
      const observer = new ResizeObserver(soon);
      const watched = new WeakSet();
      const fitAll = () => {
        frame = 0;
        changed = false;
        const plots = [...(window.Bokeh?.index?.query?.((v) => v.model?.toolbar !== undefined && v.canvas_view) ?? [])];
        const titles = [];
        // Every box read before anything is set: one layout of the page per pass, not one per figure.
        const page = document.documentElement.clientWidth;
        const boxes = plots.map((view) => view.el.getBoundingClientRect());
        plots.forEach((view, i) => {
          // A figure can change size with the page unchanged (presentation mode fits it to the window once
          // the page has reported it): each figure's own box is watched too.
          if (!watched.has(view.el)) { watched.add(view.el); observer.observe(view.el); }
          try { fitWidth(view, boxes[i], page); } catch (error) { console.debug("width fit", error); }
          if (!view.frame) return;
          try { fitFigure(view, boxes[i], titles); } catch (error) { console.debug("title fit", error); }
        });
        levelRows(titles);
        if (!changed) widthPasses = 0;  // the figures are as they should be: a later layout is fitted again
      };
      const doc = window.Bokeh?.documents?.[0];
      doc?.on_change?.((event) => {
        if (fitting) return;
        const model = event.model;
        // BokehJS laid a figure out at a new width: a figure drawn off screen (content-visibility: auto) is laid out
        // at its model's width until the reader reaches it, its element's box unchanged (no ResizeObserver entry):
        // /explore's distance figure on a phone kept a title fitted to 600 px.
        // A fit changes frames too (an axis label's size moves the frame's edge): at most WIDTH_PASSES passes that
        // changed something come from these in a row, so two fits that undid each other could not go on for good.
        if (model?.toolbar !== undefined && event.attr === "inner_width") {
          if (!frame && widthPasses < WIDTH_PASSES) {
            widthPasses += 1;
            frame = requestAnimationFrame(fitAll);
          }
          return;
        }
        // The server sized a figure again (its rows, presentation mode): fit from that size.
        if (model?.toolbar !== undefined && (event.attr === "width" || event.attr === "height")) {
          const server = sizes.get(model);
          if (server) {
            server[event.attr] = model[event.attr];
            if (narrowedAt.delete(model)) setSize(model, server.width, server.height);  // measured again
            soon();
          }
          return;
        }
        // The server set a new text or size (presentation mode): fit from those.
        const kind = model?.type === "Title" ? TITLE
          : event.attr === AXIS.text || event.attr === AXIS.size ? AXIS : null;
        if (kind) {
          given.set(model, { size: model[kind.size], text: model[kind.text] });
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
