"""Downloads from the page in Chromium: a CSV link carries the page's state, a PNG button gives the figure."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import press, wait_until

pytestmark = pytest.mark.browser


def test_csv_link_downloads_what_the_page_shows_now(page, app_url, console_errors):
    page.goto(f"{app_url}/distance?lang=en&d_model=16&T=10&k=2")
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=60_000)
    press(page, "d_model (width)", "ArrowRight")  # 16 -> 18, written into the address
    wait_until(lambda: "d_model=18" in page.evaluate("location.search"), message="address follows")
    page.locator("details.pe-export summary").click()
    with page.expect_download() as info:
        page.get_by_role("link", name="S(k)").click()
    download = info.value
    assert download.suggested_filename == "scores_d18_T10_base10000.csv"
    rows = [line.split(",") for line in Path(download.path()).read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["k", "score"]
    table = np.array(rows[1:], dtype=float)
    k = np.arange(-9, 10)
    assert (table[:, 0] == k).all()
    assert np.allclose(table[:, 1], [sum(np.cos(x / 10000 ** (2 * i / 18)) for i in range(9)) for x in k])
    assert console_errors == []


def test_png_button_gives_the_figure(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/distance?lang=en")
    page.wait_for_function("() => window.Bokeh && Bokeh.index && "
                           "Bokeh.index.query_one((v) => v.model.name === 'distance_plot')", timeout=60_000)
    page.locator("details.pe-export summary").click()
    with page.expect_download() as info:
        page.get_by_role("button", name="distance_plot.png").click()
    download = info.value
    assert download.suggested_filename == "distance_plot.png"
    data = Path(download.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    box = page.evaluate("() => { const v = Bokeh.index.query_one((v) => v.model.name === 'distance_plot');"
                        " return [v.bbox.width, v.bbox.height]; }")
    assert (width, height) == (round(box[0]), round(box[1]))  # the figure at the screen's pixel density (1 here)
    assert console_errors == []


def test_png_is_twice_the_size_on_a_hidpi_screen(browser, app_url):
    context = browser.new_context(device_scale_factor=2, viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/distance?lang=en")
        page.wait_for_function("() => window.Bokeh && Bokeh.index && "
                               "Bokeh.index.query_one((v) => v.model.name === 'distance_plot')", timeout=60_000)
        page.locator("details.pe-export summary").click()
        with page.expect_download() as info:
            page.get_by_role("button", name="distance_plot.png").click()
        data = Path(info.value.path()).read_bytes()
        width, height = struct.unpack(">II", data[16:24])
        box = page.evaluate("() => { const v = Bokeh.index.query_one((v) => v.model.name === 'distance_plot');"
                            " return [v.bbox.width, v.bbox.height]; }")
        assert (width, height) == (round(2 * box[0]), round(2 * box[1]))
    finally:
        context.close()
