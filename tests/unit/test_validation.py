"""Every page passes Bokeh's validation (the server skips it per session: app/server.py)."""

from __future__ import annotations

from unittest import mock

import panel as pn
import pytest
from bokeh.core.validation.check import check_integrity
from bokeh.document import Document
from panel.io.state import set_curdoc

from app import pages
from tests.helpers import with_address

ROUTES = list(pages.routes())
#: Presentation mode builds slides of the same sections and views: one page of each kind.
PRESENTED = ["/", "hands", "explore", "ladder"]


@pytest.mark.parametrize(("route", "present"), [(r, "0") for r in ROUTES] + [(r, "1") for r in PRESENTED])
def test_every_page_passes_bokehs_validation(route, present):
    doc = Document()
    query = {"lang": "en", "present": present}
    with set_curdoc(doc), with_address(query), \
            mock.patch.object(pn.state, "onload", lambda callback, threaded=False: callback()):
        page = pages.routes()[route]()
        doc.add_root(page.get_root(doc))
    issues = check_integrity(list(doc.models))
    assert issues.error == [], issues.error
    assert issues.warning == [], issues.warning


def test_the_server_does_not_validate_each_session_unless_asked(monkeypatch):
    from bokeh.settings import settings

    from app import server

    monkeypatch.delenv("BOKEH_VALIDATE_DOC", raising=False)
    with mock.patch.object(server.pn, "serve", return_value=None):
        server.serve(port=0)
    try:
        assert settings.perform_document_validation() is False
    finally:
        settings.perform_document_validation.unset_value()
