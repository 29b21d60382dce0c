// Shims of BokehJS internals (pinned in pyproject.toml): two spare the browser style work, one clears what
// BokehJS leaves on a canvas. Each replaces one method of a BokehJS class, once, and only if the method is
// where this version has it.
(function () {
  function replace(moduleName, className, method, flag, wrap) {
    const module = window.Bokeh && Bokeh.require && Bokeh.require(moduleName);
    const proto = module && module[className] && module[className].prototype;
    if (!proto || typeof proto[method] !== "function" || proto[method][flag]) {
      return;
    }
    const replacement = wrap(proto[method]);
    replacement[flag] = true;
    proto[method] = replacement;
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
    let values = this.__peCssValues;
    if (values === undefined) {
      values = this.__peCssValues = new Map();
      queueMicrotask(() => { this.__peCssValues = undefined; });
    }
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
})();
