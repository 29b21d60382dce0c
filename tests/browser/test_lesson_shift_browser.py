"""Section «shift» in Chromium: M_k in the page is the core's, k changes it, pos does not even resend it."""

from __future__ import annotations

import numpy as np
import pytest

from app.model import core
from tests.helpers import model_property, press, wait_for_source, wait_until

pytestmark = pytest.mark.browser

TITLE = """(name) => {
  for (const doc of Bokeh.documents) { const m = doc.get_model_by_name(name); if (m) return m.title.text; }
  return null;
}"""


def is_m_k(k: int, d_model: int = 32):
    def check(data: dict) -> bool:
        image = np.asarray(data["image"][0], dtype=float)
        expected = core.rotation(k, d_model)[:64, :64]
        return image.shape == expected.shape and np.allclose(image, expected, atol=1e-6)  # float32 on the wire
    return check


def test_shift_matrix_follows_k_and_ignores_pos(page, app_url, console_errors):
    page.goto(f"{app_url}/shift?lang=en&d_model=32&T=24&k=3&pos=0")
    data = wait_for_source(page, "rotation_matrix", is_m_k(3))
    assert data["dw"].tolist() == [32] and data["dh"].tolist() == [32]

    page.evaluate("""() => {
      for (const doc of Bokeh.documents) {
        const m = doc.get_model_by_name("rotation_matrix");
        if (m) { window.__matrixSends = 0; m.properties.data.change.connect(() => window.__matrixSends++); }
      }
    }""")
    press(page, "position pos", "ArrowRight", times=2)
    wait_until(lambda: "PE at pos = 2" in (model_property(page, "shift_block", "text") or ""),
               message="the block never showed pos = 2")
    assert page.evaluate("window.__matrixSends") == 0  # pos appears nowhere in M_k

    press(page, "offset k", "ArrowRight")
    wait_for_source(page, "rotation_matrix", is_m_k(4))
    assert page.evaluate("window.__matrixSends") >= 1  # the counter does see a change
    wait_until(lambda: "M\u2084" in (model_property(page, "shift_block", "text") or ""), message="block not for k = 4")
    assert console_errors == []


def test_wide_encoding_sends_only_the_corner(page, app_url, console_errors):
    page.goto(f"{app_url}/shift?lang=en&d_model=512&T=24&k=3")
    data = wait_for_source(page, "rotation_matrix", is_m_k(3, 512))
    assert data["dw"].tolist() == [64]
    title = wait_until(lambda: page.evaluate(TITLE, "shift_matrix_plot"), message="no title")
    assert "64 × 64 corner of 512 × 512" in title
    assert console_errors == []
