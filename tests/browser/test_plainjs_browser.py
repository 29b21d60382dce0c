"""static/plain-esm.js: the app's component modules reach BokehJS as written; any other module is
still compiled by Panel (Sucrase's TypeScript transform).

The script replaces ``compile`` of Panel's ``ReactiveESM`` model (a Panel internal, pinned in
pyproject.toml): these tests fail if that method moves, or if the script is not loaded."""

from __future__ import annotations

import pytest

from components.plainjs import PLAIN_MARK
from tests.helpers import wait_until

QUERY = "lang=en&d_model=32&T=24&base=10000&pair=0&pos=0&k=3"

#: Every ReactiveESM model of the page's document: whether its module carries the mark, and whether
#: the module BokehJS imports is the module as sent.
MODELS_JS = """(mark) => {
  const base = Bokeh.Models.get("panel.models.esm.ReactiveESM");
  const out = [];
  for (const model of Bokeh.documents[0].all_models) {
    if (model instanceof base) {
      const marked = model.esm.startsWith(mark + "\\n");
      out.push({name: model.class_name, marked, same: model.compiled === model.esm});
    }
  }
  return out;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("route", ["/", "/explore", "/clocks"])
def test_the_app_modules_are_used_as_written(page, app_url, route, console_errors):
    page.goto(f"{app_url}{route}?{QUERY}")
    wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
               message=f"{route} never finished loading")
    assert page.evaluate(
        "() => Bokeh.Models.get('panel.models.esm.ReactiveESM').prototype.compile.pePlainEsm === true"), route
    models = page.evaluate(MODELS_JS, PLAIN_MARK)
    assert len(models) >= 5, models
    assert all(m["marked"] and m["same"] for m in models), [m for m in models if not (m["marked"] and m["same"])]
    assert console_errors == []


@pytest.mark.browser
def test_a_module_without_the_mark_is_still_compiled_by_panel(page, app_url):
    page.goto(f"{app_url}/clocks?{QUERY}")
    wait_until(lambda: page.evaluate("() => window.Bokeh?.documents?.[0]?.is_idle === true"), timeout=60,
               message="/clocks never finished loading")
    typed = "const width: number = 3;\nexport function render() { return width; }"
    compiled = page.evaluate("""([typed, mark]) => {
      const compile = Bokeh.Models.get("panel.models.esm.ReactiveESM").prototype.compile;
      const fake = (esm) => ({esm, bundle: null, dev: false, sucrase_transforms: ["typescript"]});
      return {plain: compile.call(fake(typed)), marked: compile.call(fake(mark + "\\n" + typed))};
    }""", [typed, PLAIN_MARK])
    # Panel's transform removes the type annotation; a marked module is passed through untouched.
    assert ": number" not in compiled["plain"] and "const width = 3" in compiled["plain"]
    assert compiled["marked"] == PLAIN_MARK + "\n" + typed
