// Shims of BokehJS internals (pinned in pyproject.toml): three spare the browser style work, one clears what
// BokehJS leaves on a canvas, one spares a colour bar work that changes nothing it draws. Each replaces one
// method or getter of a BokehJS class, once, and only if it is where this version has it.
(function () {
  function prototypeOf(moduleName, className) {
    const module = window.Bokeh && Bokeh.require && Bokeh.require(moduleName);
    return module && module[className] && module[className].prototype;
  }

  function replace(moduleName, className, method, flag, wrap) {
    const proto = prototypeOf(moduleName, className);
    if (!proto || typeof proto[method] !== "function" || proto[method][flag]) {
      return;
    }
    const replacement = wrap(proto[method]);
    replacement[flag] = true;
    replacement.bokeh = proto[method];  // BokehJS's own, for the tests' positive controls
    proto[method] = replacement;
  }

  function replaceGetter(moduleName, className, name, flag, wrap) {
    const proto = prototypeOf(moduleName, className);
    const descriptor = proto && Object.getOwnPropertyDescriptor(proto, name);
    if (!descriptor || typeof descriptor.get !== "function" || descriptor.get[flag]) {
      return;
    }
    const get = wrap(descriptor.get);
    get[flag] = true;
    get.bokeh = descriptor.get;
    Object.defineProperty(proto, name, { ...descriptor, get });
  }

  // A Map kept in object[slot] until the next microtask: what 2. and 5. remember of one synchronous run.
  function taskCache(object, slot) {
    let values = object[slot];
    if (values === undefined) {
      values = object[slot] = new Map();
      queueMicrotask(() => { object[slot] = undefined; });
    }
    return values;
  }

  // 1. Skip BokehJS's rewrites of a shadow root's <style> with the text it already holds.
  //
  // Every figure repaint (a key press on k, pos or pair) rewrites ~120 inline stylesheets on the
  // lesson page with unchanged text. Each write replaces the <style>'s text node, which invalidates
  // style for its shadow root; BokehJS then reads computed styles while it paints
  // (VisualProperties._get_css_value: a getComputedStyle per visual property of every axis and label),
  // and each read recomputes the invalidated styles. Skipping an identical write changes nothing on
  // screen (the same text gives the same rules) and leaves those reads nothing to recompute.
  // See docs/performance.md ("The browser's share of a step") and bokeh/bokeh#15286.
  replace("core/dom", "InlineStyleSheet", "_update", "peStyleGuard", (write) => function (css) {
    if (this.el.textContent !== css) {
      write.call(this, css);
    }
  });

  // 2. Read each of a visual's CSS custom properties once per microtask, not once per use.
  //
  // BokehJS lets a stylesheet set a canvas visual through a custom property (--bk-<visual>-line-color
  // and the like): every scalar visual property it reads while painting (an axis's line, ticks and
  // labels; titles, grids, spans) first asks getComputedStyle(el).getPropertyValue(...), several
  // times per paint for the same name (`doit`, then the values it sets). A size step on the lesson
  // page made ~1,500 such reads, a k step at the clocks' section ~220. This keeps each answer until the
  // next microtask, as BokehJS's own fix does after the version pinned here (bokeh/bokeh#15205; see
  // #15286): within one synchronous run of code a read gives what the first read gave, and a style
  // changed by code is seen from the next microtask on. This app defines no such property.
  replace("core/visuals/visual", "VisualProperties", "_get_css_value", "peCssReads", (read) => function (name) {
    const values = taskCache(this, "__peCssValues");
    let value = values.get(name);
    if (value === undefined) {
      value = read.call(this, name);
      values.set(name, value);
    }
    return value;
  });

  // 3. Clear a canvas layer whole before each paint.
  //
  // CanvasLayer.prepare translates the context by half a pixel and then clears the layer's box, so the
  // clear starts at 0.5: the first row and the first column of pixels lose only half of what they hold at
  // each paint. What was once drawn there stays as a faint line: on a presented figure resized to the
  // window, a 1-px grey sliver at the left edge and the tops of a title's glyphs from before it was set in
  // two lines (tests/test_style_guard_browser.py). The whole backing store is cleared instead, untransformed.
  replace("core/util/canvas", "CanvasLayer", "clear", "peWholeClear", (clear) => function () {
    const { ctx } = this;
    if (!(ctx instanceof CanvasRenderingContext2D)) {
      clear.call(this);
      return;
    }
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
    ctx.restore();
  });

  // 4. Leave a colour bar as it is when its mapper's metrics change nothing the bar draws.
  //
  // A continuous colour mapper announces new metrics every time it maps data (each update of a heat map or
  // an image that uses it), and every colour bar on that mapper then paints a new palette canvas
  // (a createElement, a getImageData, a putImageData) and asks its whole figure for a new layout. With the
  // mapper's low and high fixed, as on every colour bar of this app, neither the bar's range nor its palette
  // moved: a d_model key at the Gram section spent ~5 ms there of its ~8 ms applying the server's answer
  // (docs/performance.md, "Session 29"). The bar keeps its palette image while its palette and cut-offs are
  // those it last drew, and is laid out again only when its range moved (a mapper whose low and high follow
  // d_model); any other change, and any mapper that scans its data, goes to BokehJS as before.
  replace("models/annotations/color_bar", "ColorBarView", "_metrics_changed", "peSameBar", (changed) => {
    const continuous = Bokeh.require("models/mappers/continuous_color_mapper").ContinuousColorMapper;
    const scanning = Bokeh.require("models/mappers/scanning_color_mapper").ScanningColorMapper;
    const Range1d = Bokeh.require("models/ranges/range1d").Range1d;
    return function _metrics_changed() {
      const mapper = this.color_mapper;
      const range = this._major_range;
      if (mapper instanceof continuous && !(mapper instanceof scanning) && range instanceof Range1d) {
        const { min, max } = this._continuous_metrics(mapper);  // also sets the cut-offs' indices
        const drawn = this.__peDrawn;
        if (drawn !== undefined && drawn.palette === mapper.palette && drawn.low === this._index_low
            && drawn.high === this._index_high) {
          // The palette image is the one drawn; only a moved range needs the bar's new ticks.
          if (range.start !== min || range.end !== max) {
            range.setv({ start: min, end: max });
            this.plot_view.request_layout();
          }
          return;
        }
        this.__peDrawn = { palette: mapper.palette, low: this._index_low, high: this._index_high };
      }
      changed.call(this);
    };
  });

  // 5. Read a plot's font size once per microtask.
  //
  // PlotView.base_font_size calls getComputedStyle(el).fontSize on every read, and each axis reads it for
  // its labels at every paint: ~8 ms of a size step's repaint of the lesson page. Within one synchronous
  // paint nothing changes a plot's font size, so a read gives what the first gave, as in 2.
  replaceGetter("models/plots/plot_canvas", "PlotView", "base_font_size", "peFontSize", (read) => function () {
    const values = taskCache(this, "__peFontSize");
    if (!values.has("size")) {
      values.set("size", read.call(this));
    }
    return values.get("size");
  });
})();
