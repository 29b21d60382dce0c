// A key on a slider: its value goes to the server at once, and the slider's handle and title are drawn with
// the server's answer, in one frame.
//
// BokehJS's slider (noUiSlider inside) moves its handle and rewrites its title in the keydown handler. That
// makes the browser render a frame before the server's answer can be applied: ~9 ms on this machine (style,
// layout, paint, and a new resource for every canvas on screen at the commit), on the path of every key
// (docs/performance.md, "Session 28"). Here a key on a plain integer Slider sets the model's value and
// value_throttled in the keydown (BokehJS sends the two in one message) and holds the view's two redraws
// (_update_slider, _update_title) until the session has applied the next patch from the server (the step's
// data comes before Bokeh's OK, app/fastsync.py), or 100 ms, whichever is first. (A patch still on its way
// from an earlier key redraws it a little early: as without this script.) The keys and their steps are
// noUiSlider's: arrows one step, PageUp/PageDown five, Home/End the ends. A slider that is not a horizontal,
// left-to-right, integer Slider is left to noUiSlider. Replaces methods of BokehJS classes (pinned in
// pyproject.toml) once, and only if they are where this version has them.
(function () {
  const sliders = window.Bokeh && Bokeh.require && Bokeh.require("models/widgets/sliders/abstract_slider");
  const sessions = window.Bokeh && Bokeh.require && Bokeh.require("client/session");
  const View = sliders && sliders.AbstractSliderView;
  const Session = sessions && sessions.ClientSession;
  if (!View || !Session || View.prototype.peKeysFirst || typeof View.prototype._update_slider !== "function"
      || typeof View.prototype._update_title !== "function" || typeof Session.prototype.handle !== "function") {
    return;
  }
  View.prototype.peKeysFirst = true;
  const PAGE_STEPS = 5;  // noUiSlider's keyboardPageMultiplier, which BokehJS leaves at its default
  const held = new Set();
  const after = [];
  let timer = null;

  const release = () => {
    clearTimeout(timer);
    timer = null;
    for (const view of held) {  // each was held after a key that changed its value
      view.__peHeld = false;
      view._update_slider();
      view._update_title();
    }
    held.clear();
    for (const redraw of after.splice(0)) redraw();
  };
  // For a redraw of the page's own that follows a slider's value (a discrete slider's title,
  // app/fastsync.py): held with the slider's while a key waits for its answer, run at once otherwise.
  window.peAfterKeyAnswer = (redraw) => {
    if (held.size) after.push(redraw);
    else redraw();
  };

  for (const method of ["_update_slider", "_update_title"]) {
    const draw = View.prototype[method];
    View.prototype[method] = function (...args) {
      return this.__peHeld ? undefined : draw.apply(this, args);
    };
  }
  const handle = Session.prototype.handle;
  Session.prototype.handle = function (message) {
    try {
      return handle.call(this, message);
    } finally {
      // An OK answers some earlier message, not with data: the slider waits for a patch.
      if (held.size && message.msgtype() === "PATCH-DOC") release();
    }
  };

  const owners = new WeakMap();
  const ownerOf = (handleEl) => {
    let view = owners.get(handleEl);
    if (view === undefined || (view !== null && !view.slider_el?.contains(handleEl))) {
      view = [...Bokeh.index.query((v) => v instanceof View && v.slider_el?.contains(handleEl))][0] ?? null;
      owners.set(handleEl, view);
    }
    return view;
  };
  const whole = (x) => Number.isInteger(x);

  window.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const handleEl = event.composedPath().find((el) => el.classList?.contains("noUi-handle"));
    const view = handleEl && ownerOf(handleEl);
    const model = view?.model;
    if (!model || model.type !== "Slider" || model.disabled || model.orientation !== "horizontal"
        || model.direction !== "ltr" || ![model.start, model.end, model.step, model.value].every(whole)) return;
    const { start, end, step, value } = model;
    let to;
    switch (event.key) {
      case "ArrowRight": case "ArrowUp": to = value + step; break;
      case "ArrowLeft": case "ArrowDown": to = value - step; break;
      case "PageUp": to = value + PAGE_STEPS * step; break;
      case "PageDown": to = value - PAGE_STEPS * step; break;
      case "Home": to = start; break;
      case "End": to = end; break;
      default: return;
    }
    event.preventDefault();
    // noUiSlider's listener on the handle reads event.key: hidden from it, shown again to the listeners above
    // the handle (the page's keys, which see the default prevented, and anyone else's).
    Object.defineProperty(event, "key", { value: "Unidentified", configurable: true });
    handleEl.parentElement.addEventListener("keydown", () => { delete event.key; }, { once: true });
    to = Math.min(end, Math.max(start, to));
    if (to === value) return;
    view.__peHeld = true;
    held.add(view);
    model.setv({ value: to, value_throttled: to });
    if (timer === null) timer = setTimeout(release, 100);
  }, true);
})();
