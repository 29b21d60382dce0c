"""Script and onerror payloads in every query parameter: in Chromium, none of them ever runs.

Each payload sets ``window.__pwned`` (or calls ``alert``) if it runs. The page must draw, show the
notice about the corrected values, and leave the probe untouched.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from app.model import state as app_state
from app.model.strings import text
from tests.helpers import plots_drawn, wait_until

pytestmark = pytest.mark.browser

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "<svg/onload=window.__pwned=1>",
    "javascript:window.__pwned=1//<iframe src=javascript:window.top.__pwned=1>",
]
PROBE = "() => { window.__pwned = 0; window.alert = window.confirm = window.prompt = () => { window.__pwned = 2; }; }"


@pytest.mark.parametrize("route", ["/", "/explore", "/order"])
def test_no_payload_in_any_parameter_runs(page, app_url, route, console_errors):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.add_init_script(f"({PROBE})()")
    for payload in PAYLOADS:
        query = "&".join(f"{name}={quote(payload, safe='')}" for name in app_state.URL_PARAMETERS if name != "lang")
        page.goto(f"{app_url}{route}?lang=en&{query}")
        wait_until(lambda: plots_drawn(page, 1), timeout=30, message=f"{route} never drew with {payload!r}")
        notice = page.get_by_role("alert").filter(has_text=text("en", "notice_title"))
        notice.wait_for(state="visible", timeout=10_000)
        assert page.evaluate("() => window.__pwned") == 0, (route, payload)
        # The payload is shown as text where it is echoed, never as markup.
        assert page.locator("img[src='x'], svg[onload]").count() == 0
    assert dialogs == []
    assert not [e for e in console_errors if "__pwned" in e]
    # The probe itself works: the same markup put into the page by script does run.
    page.evaluate("(html) => document.body.insertAdjacentHTML('beforeend', html)", PAYLOADS[1])
    wait_until(lambda: page.evaluate("() => window.__pwned") == 1, timeout=10, message="the probe is blind")
