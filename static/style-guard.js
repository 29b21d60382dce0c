// Skip BokehJS's rewrites of a shadow root's <style> with the text it already holds.
//
// Every figure repaint (a key press on k, pos or pair) rewrites ~120 inline stylesheets on the
// lesson page with unchanged text. Each write replaces the <style>'s text node, which invalidates
// style for its shadow root; BokehJS then reads computed styles while it paints
// (VisualProperties._get_css_value: a getComputedStyle per visual property of every axis and label),
// and each read recomputes the invalidated styles. Skipping an identical write changes nothing on
// screen (the same text gives the same rules) and leaves those reads nothing to recompute.
// See docs/performance.md ("The browser's share of a step") and bokeh/bokeh#15286.
(function () {
  const dom = window.Bokeh && Bokeh.require && Bokeh.require("core/dom");
  const proto = dom && dom.InlineStyleSheet && dom.InlineStyleSheet.prototype;
  if (!proto || typeof proto._update !== "function" || proto._update.peStyleGuard) {
    return;
  }
  const write = proto._update;
  function update(css) {
    if (this.el.textContent !== css) {
      write.call(this, css);
    }
  }
  update.peStyleGuard = true;
  proto._update = update;
})();
