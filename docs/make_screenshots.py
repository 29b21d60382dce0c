"""Screenshots of every page, both languages, at projector and laptop sizes.

    python docs/make_screenshots.py [--out docs/screenshots] [--routes / shift clocks] [--query "d_model=512"]
    python docs/make_screenshots.py --room-code

Serves the app in-process, drives Debian's Chromium, waits until every Bokeh
source of the page exists, and writes ``<route>-<lang>-<W>x<H>.png``. ``--room-code`` writes the room's
QR screen with its code (``room-code-qr-<lang>-1280x800.png``) and the box for a code on ``/``
(``room-code-join-<lang>-1280x800.png``; at 390x844, a phone, after a code that names no room).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from app.lesson import SECTIONS  # noqa: E402
from app.model.strings import text  # noqa: E402
from app.pages import VIEWS  # noqa: E402
from app.server import running  # noqa: E402
from tests.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.helpers import figure_count, plots_drawn, wait_until  # noqa: E402

SIZES = ((1280, 800), (1920, 1080))

# A formula stays hidden until KaTeX has typeset it (components/prose.py), after the figures are drawn.
_UNTYPESET_ON_SCREEN = """(maths) => maths.filter((m) => {
  const box = m.getBoundingClientRect();
  return box.bottom > 0 && box.top < innerHeight && m.querySelector(".katex") === null;
}).length"""


def formulas_shown(page, full_page: bool) -> bool:
    """Whether every formula the screenshot will hold is typeset."""
    maths = page.locator(".pe-prose .math")
    if full_page:
        return maths.evaluate_all('(maths) => maths.every((m) => m.querySelector(".katex") !== null)')
    return maths.evaluate_all(_UNTYPESET_ON_SCREEN) == 0

def room_code_screens(browser, base: str, out: Path) -> None:
    """A teacher's QR screen with the room's code, and the box on ``/`` where a student types it."""
    for lang in ("es", "en"):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/?lang={lang}")
        wait_until(lambda page=page: plots_drawn(page, 1), timeout=30)
        wait_until(lambda page=page: formulas_shown(page, False), timeout=30, message="the formulas typeset")
        page.evaluate("document.fonts.ready.then(() => true)")  # KaTeX's own fonts, on a cold first page
        page.screenshot(path=str(out / f"room-code-join-{lang}-1280x800.png"))
        page.get_by_role("button", name=text(lang, "room_start")).click()
        page.get_by_role("button", name=text(lang, "room_qr_show")).click()
        image = page.get_by_role("dialog").get_by_role("img")
        wait_until(lambda image=image: image.evaluate("(img) => img.complete && img.naturalWidth > 100"), timeout=10)
        page.screenshot(path=str(out / f"room-code-qr-{lang}-1280x800.png"))
        page.close()
        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        page = phone.new_page()
        page.goto(f"{base}/?lang={lang}")
        wait_until(lambda page=page: plots_drawn(page, 1), timeout=30)
        box = page.get_by_label(text(lang, "room_code"))
        box.fill("zzzzzz")
        box.press("Enter")
        page.get_by_role("status").filter(has_text=text(lang, "room_join_missing", room="zzzzzz")).wait_for()
        page.screenshot(path=str(out / f"room-code-join-{lang}-390x844.png"))
        phone.close()
        print(*(out / f"room-code-{kind}-{lang}-{size}.png"
                for kind, size in (("join", "1280x800"), ("qr", "1280x800"), ("join", "390x844"))), sep="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--routes", nargs="*", default=["/", "explore", *SECTIONS, *VIEWS])
    parser.add_argument("--query", default="", help="extra query string, e.g. d_model=512&T=512")
    parser.add_argument("--figures", type=int, default=None,
                        help="figures to wait for (default: the route's; a presented slide shows fewer)")
    parser.add_argument("--full-page", action="store_true", help="capture the whole scrollable page")
    parser.add_argument("--embed-dialog", action="store_true",
                        help="open the Embed dialog first; files are named embed-<route>-<lang>-<W>x<H>.png")
    parser.add_argument("--room-code", action="store_true",
                        help="only the room's QR screen with its code and the box for a code on / (room-code-*.png)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    with running() as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        if args.room_code:
            room_code_screens(browser, base, out)
            browser.close()
            return
        for route in args.routes:
            for lang in ("es", "en"):
                for width, height in SIZES:
                    page = browser.new_page(viewport={"width": width, "height": height})
                    query = f"lang={lang}" + (f"&{args.query}" if args.query else "")
                    page.goto(f"{base}/{route.strip('/')}?{query}")
                    figures = args.figures or figure_count(route)
                    wait_until(lambda page=page, n=figures: plots_drawn(page, n), timeout=30)
                    wait_until(lambda page=page: formulas_shown(page, args.full_page), timeout=30,
                               message="the formulas typeset")
                    name = (route.strip("/") or "lesson") + f"-{lang}-{width}x{height}.png"
                    if args.embed_dialog:
                        page.get_by_role("button", name=text(lang, "embed_button")).click()
                        page.get_by_role("dialog").wait_for()
                        name = "embed-" + name
                    page.screenshot(path=str(out / name), full_page=args.full_page)
                    print(out / name)
                    page.close()
        browser.close()

if __name__ == "__main__":
    main()
