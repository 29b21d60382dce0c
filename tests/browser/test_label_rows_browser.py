"""A row of labels that names its quantity once ("λ = 6.3", "11.2", "19.9" …; "i = 0", "1", "2" …) is drawn on
one baseline. BokehJS sets a label made only of digits by its cap height and any other by the font's ascent, so
the named first label sat 3–5 px below the numbers beside it (``components.theme.named_once``)."""

from __future__ import annotations

import pytest

from tests.helpers import figure_count, plots_drawn, wait_until

pytestmark = pytest.mark.browser

#: For each label of a text glyph, the rows (CSS px below the label's anchor) of its topmost and lowest dark
#: pixels, read from the figure's canvas layers over the label's share of the row.
_INK_ROWS = r"""(name) => {
  const view = [...Bokeh.index.query((v) => v.model?.name === name)][0];
  if (!view || !view.glyph.sx?.length) return null;
  const canvas = view.parent.canvas_view;
  const ratio = canvas.pixel_ratio ?? window.devicePixelRatio;
  const {sx, sy} = view.glyph;
  const half = Math.min(...[...sx].slice(1).map((x, i) => x - sx[i])) / 2 - 2;
  return [...sx].map((x, i) => {
    let top = null, bottom = null;
    for (const layer of [canvas.primary, canvas.overlays]) {
      const [x0, y0] = [Math.round((x - half) * ratio), Math.round(sy[i] * ratio)];
      const [w, h] = [Math.round(2 * half * ratio), Math.round(60 * ratio)];
      const data = layer.ctx.getImageData(x0, y0, w, h).data;
      for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) {
        const j = 4 * (r * w + c);
        if (data[j + 3] > 128 && data[j] + data[j + 1] + data[j + 2] < 300) {
          top = Math.min(top ?? r, r); bottom = Math.max(bottom ?? r, r);
        }
      }
    }
    return [top / ratio, bottom / ratio];
  });
}"""


@pytest.mark.parametrize(("route", "labels"), [
    ("hands", "clock_lambda_text"),
    ("fingerprint", "fingerprint_dial_labels"),
    ("fingerprint?present=1", "fingerprint_dial_labels"),
])
def test_a_row_named_once_sits_on_one_baseline(page, app_url, route, labels):
    # English: a Spanish decimal comma reaches below the baseline.
    page.goto(f"{app_url}/{route}{'&' if '?' in route else '?'}lang=en")
    wait_until(lambda: plots_drawn(page, figure_count(route.split("?")[0])), timeout=40, message=f"{route} drawn")
    rows: list = []

    def inked() -> bool:
        rows[:] = page.evaluate(_INK_ROWS, labels) or []
        return bool(rows) and all(bottom is not None for _, bottom in rows)

    wait_until(inked, timeout=20, message=f"{labels} drawn")
    assert len(rows) >= 8
    # Digits, λ and i all stand on the baseline: the lowest ink of every label is the same row.
    bottoms = [bottom for _, bottom in rows]
    assert max(bottoms) - min(bottoms) <= 1, bottoms
