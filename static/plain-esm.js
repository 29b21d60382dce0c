// Give BokehJS the app's component modules as written, without Panel's in-browser TypeScript
// transform (Sucrase), which ReactiveESM.compile runs once per component instance: ~2 ms each,
// ~90 ms of the main thread while the lesson page's first document is deserialized. A module is
// passed through only when its first line is the mark that components/plainjs.py puts on the app's
// own modules (plain modern JavaScript); every other module is compiled by Panel as before.
(function () {
  const MARK = "// pe:plain-esm";
  let model = null;
  try {
    model = window.Bokeh && Bokeh.Models && Bokeh.Models.get("panel.models.esm.ReactiveESM");
  } catch (error) {
    return;  // Panel's bundle is not on this page
  }
  const proto = model && model.prototype;
  if (!proto || typeof proto.compile !== "function" || proto.compile.pePlainEsm) {
    return;
  }
  const compile = proto.compile;
  function compileUnlessPlain() {
    if (this.bundle == null && typeof this.esm === "string" && this.esm.startsWith(MARK + "\n")) {
      return this.esm;
    }
    return compile.call(this);
  }
  compileUnlessPlain.pePlainEsm = true;
  proto.compile = compileUnlessPlain;
})();
