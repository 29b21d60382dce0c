"""The room box in Chromium, one process (the in-process bus): it covers nothing a reader can use,
is reached by keyboard and opens its QR code large. (Following a teacher's page and section across pages
is not tested yet: see the README's rooms section, "Known limits".)"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.strings import text
from tests.helpers import model_property, plots_drawn, wait_for_source, wait_until

pytestmark = pytest.mark.browser

#: Every interactive element in the viewport (through shadow roots) that overlaps the room box, outside it.
_COVERED = """() => {
  const inRoom = (el) => {
    for (let node = el; node; node = node.getRootNode()?.host) {
      if (node.closest?.(".pe-room")) return true;
    }
    return false;
  };
  let box = null;
  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.matches(".pe-room") && getComputedStyle(el).pointerEvents !== "none"
          && getComputedStyle(el).opacity !== "0") box = el.getBoundingClientRect();
      if (el.matches("a[href], button, input, select, textarea, [role=radio], [role=slider], .noUi-handle, "
                     + "[tabindex]:not([tabindex='-1'])") && !inRoom(el)) all.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  if (!box) return [];  // stepped aside
  const over = (r) => r.width > 0 && r.height > 0 && r.left < box.right && r.right > box.left
    && r.top < box.bottom && r.bottom > box.top;
  return all.filter((el) => over(el.getBoundingClientRect())).map((el) => el.outerHTML.slice(0, 100));
}"""


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
@pytest.mark.parametrize("route", ["/explore", "/"])
def test_the_room_box_covers_nothing_interactive(page, app_url, route, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{app_url}{route}?lang=es")
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="drawn")
    expect(page.get_by_role("button", name=text("es", "room_start"))).to_be_attached()
    for _ in range(80):  # the whole page, a screen at a time (bounded)
        covered = page.evaluate(_COVERED)
        assert covered == [], f"{route} at scroll {page.evaluate('window.scrollY')}: {covered}"
        before = page.evaluate("window.scrollY")
        page.mouse.wheel(0, size[1] // 3)
        wait_until(lambda before=before: page.evaluate("window.scrollY") != before
                   or page.evaluate("window.scrollY + innerHeight >= document.scrollingElement.scrollHeight - 2"),
                   timeout=5)
        if page.evaluate("window.scrollY") == before:
            break
        # The box looks again on the next frame after a scroll: wait for that frame.
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def test_start_a_room_by_keyboard_and_show_its_qr_code_large(page, app_url, console_errors):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/explore?lang=en")
    wait_for_source(page, "distance_marker", timeout=30)
    start = page.get_by_role("button", name=text("en", "room_start"))
    start.focus()
    outline = start.evaluate("(el) => getComputedStyle(el).outlineStyle")
    assert outline == "solid", "no visible focus ring on the start button"
    page.keyboard.press("Enter")
    link = wait_until(lambda: model_property(page, "room_link", "text"), message="no join link")
    room = link.rsplit("=", 1)[1]
    expect(page.get_by_role("link", name=text("en", "room_link_label", room=room))).to_have_attribute("href", link)
    page.get_by_role("button", name=text("en", "room_qr_show")).click()
    dialog = page.get_by_role("dialog", name=text("en", "room_qr_alt", room=room))
    expect(dialog).to_be_visible()
    image = dialog.get_by_role("img", name=text("en", "room_qr_alt", room=room))
    wait_until(lambda: image.evaluate("(img) => img.complete && img.naturalWidth > 100"), message="no QR image")
    assert image.get_attribute("src").startswith(f"/room_qr.svg?room={room}")
    box = image.bounding_box()
    assert box["width"] >= 500 and box["height"] >= 500  # large, for a projector
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert console_errors == []


def test_the_room_box_is_shown_at_the_top_of_explore(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/explore?lang=en")
    wait_until(lambda: plots_drawn(page, 1), timeout=40, message="drawn")
    start = page.get_by_role("button", name=text("en", "room_start"))
    start.click()  # a real click: nothing covers the box, the box covers nothing
    wait_until(lambda: model_property(page, "room_link", "text"), message="no join link")
