"""Starting the Panel server: used by ``python -m app`` and by the tests."""

from __future__ import annotations

from collections.abc import Sequence

import panel as pn

from app import fastsync
from app.pages import routes
from components.theme import STATIC_DIR

DEFAULT_PORT = 5006


def serve(port: int = DEFAULT_PORT, address: str | None = None,
          allow_websocket_origin: Sequence[str] | None = None, *, threaded: bool = False,
          show: bool = False, **kwargs):
    """Serve every route of the explorable; returns the server (a thread when ``threaded``)."""
    pn.extension(notifications=False)
    fastsync.install()  # TCP_NODELAY on the websocket; must precede pn.serve
    return pn.serve(
        routes(), port=port, address=address, websocket_origin=list(allow_websocket_origin or []) or None,
        threaded=threaded, show=show, liveness=True,
        static_dirs={"assets": str(STATIC_DIR)}, **kwargs,
    )
