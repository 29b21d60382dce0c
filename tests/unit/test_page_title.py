"""A page's HTML carries its own title, in its language, before any script runs (``app.pages.served_with_its_title``).

pn.serve gives every session of a route the route's one title; link previews and the tab before the page's
script read the HTML's ``<title>``.
"""

from __future__ import annotations

import html
import re
import urllib.request

import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app import pages
from app.model.strings import text
from tests.helpers import with_address


def _html_title(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        page = response.read().decode()
    assert page.count("<title>") == 1
    return html.unescape(re.search(r"<title>(.*?)</title>", page).group(1))


@pytest.mark.parametrize(("path", "lang", "section"), [
    ("/", "es", None), ("/?lang=en", "en", None), ("/score?lang=en", "en", "score"), ("/score", "es", "score"),
    ("/explore?lang=en", "en", None), ("/clocks?lang=en", "en", None), ("/ladder?lang=en&present=1", "en", None),
])
def test_the_html_carries_the_pages_own_title(app_url, path, lang, section):
    site = text(lang, "page_title")
    expected = f"{pages.section_title(section, lang)} · {site}" if section else site
    assert _html_title(f"{app_url}{path}") == expected


def test_a_page_built_outside_a_session_is_handed_back_to_be_served():
    """Tests and the benchmark build pages in process: with no session the page is returned, not served."""
    doc = Document()
    with set_curdoc(doc), with_address({"lang": "en"}):
        built = pages.routes()["explore"]()
    assert built is not None
    assert doc.roots == []
