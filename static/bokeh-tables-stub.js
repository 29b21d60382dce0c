// Stands in for Bokeh's bokeh-tables bundle (76 KB compressed) on the explorable's pages: no page
// shows a data table, but Panel's bundle requires the module "models/widgets/tables" when it loads
// (for its Tabulator, which the app does not use). An empty module under that name lets it load.
// Served in its place by app/delivery.py; tests/test_delivery.py checks that every page renders.
(function (root) {
  var bokeh = root.Bokeh;
  if (bokeh == null) throw new Error("Bokeh must be loaded before the tables stand-in");
  var ID = 990713;
  var modules = {};
  modules[ID] = function (require, module, exports, init) { init(); };
  bokeh.register_plugin(modules, ID, {
    "models/widgets/tables": ID, "models/widgets/tables/main": ID, "models/widgets/tables/index": ID,
  });
})(this);
