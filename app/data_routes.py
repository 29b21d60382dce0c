"""Data downloads: ``/data/<name>.csv?<the page's query>``, the numbers behind a figure as CSV; and
``/notebook.ipynb?<the page's query>``, every lesson section's NumPy cell (``app.model.cells``) as a notebook.

The query is read exactly as a page reads it (``app.model.state.parse_query``: every value clamped, a
notice for each correction, sent back in the ``X-PE-Notices`` header); the tables and their file names are
``app.model.datasets``'. Big tables are written in a worker thread so the server keeps answering, and
streamed in pieces (never one string of the whole file in memory). A table of more than
``datasets.MAX_CELLS`` numbers is refused with a 413 and a sentence in the reader's language, and at most
``MAX_AT_ONCE`` downloads are written at once per process (a 503 with ``Retry-After`` past that), so a
class clicking "download" together cannot take a process's memory or its event loop.
"""

from __future__ import annotations

import json

from tornado.ioloop import IOLoop
from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

from app.lesson import SECTIONS
from app.model.cells import notebook
from app.model.datasets import DATASETS, MAX_CELLS, cells_of, csv_chunks, prepared
from app.model.state import LANGUAGES, ExplorerState, parse_query, preferred_language, repeated_parameters
from app.model.strings import number, text

#: Downloads written at the same time by one process; more wait for a retry (503).
MAX_AT_ONCE = 2
#: Rows written per piece of a streamed CSV.
ROWS_PER_PIECE = 256
_writing = 0


class DataHandler(RequestHandler):
    """``GET /data/<name>.csv?…``: a dataset of ``DATASETS`` as a CSV download."""

    async def get(self, name: str) -> None:
        if name not in DATASETS:
            self.set_status(404)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish("No such table. Tables: " + ", ".join(DATASETS) + "\n")
            return
        global _writing
        args, query = _first_values(self)
        lang = args.get("lang") if args.get("lang") in LANGUAGES else preferred_language(self.request.headers)
        if _writing >= MAX_AT_ONCE:
            self._refuse(503, text(lang, "export_busy"), retry_after=5)
            return
        _writing += 1
        try:
            await self._send(name, args, query, lang)
        finally:
            _writing -= 1

    async def _send(self, name: str, args: dict[str, str], query: dict[str, list[str]], lang: str) -> None:
        loop = IOLoop.current()
        file, table, notices = await loop.run_in_executor(None, prepared, name, args)
        cells = cells_of(table)
        if cells > MAX_CELLS:
            self._refuse(413, text(lang, "export_too_big", cells=number(cells, 0), limit=number(MAX_CELLS, 0)))
            return
        notices = [*repeated_parameters(query), *notices]
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="{file}"')
        self.set_header("Cache-Control", "no-cache")
        # The corrections, like a page's notices; JSON with ASCII escapes keeps raw input out of the header.
        self.set_header("X-PE-Notices", json.dumps([[n.parameter, n.given[:40], n.used, n.reason] for n in notices]))
        pieces = csv_chunks(table, ROWS_PER_PIECE)
        try:
            while (piece := await loop.run_in_executor(None, next, pieces, None)) is not None:
                self.write(piece.encode("utf-8"))
                await self.flush()
        except StreamClosedError:  # the reader went away: stop writing
            return
        self.finish()

    def _refuse(self, status: int, message: str, retry_after: int | None = None) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        if retry_after is not None:
            self.set_header("Retry-After", str(retry_after))
        self.finish(message + "\n")


def _first_values(handler: RequestHandler) -> tuple[dict[str, str], dict[str, list[str]]]:
    query = {key: [value.decode("utf-8", "replace") for value in values]
             for key, values in handler.request.query_arguments.items() if values}
    return {key: values[0] for key, values in query.items()}, query


def notebook_for(args: dict[str, str]) -> tuple[str, str, list]:
    """``(file name, notebook JSON, notices)`` for a query's raw values, read as a page reads them."""
    values, notices = parse_query(args)
    state = ExplorerState(**values)
    book = notebook(state, list(SECTIONS))
    return (f"lesson_d{state.d_model}_T{state.T}_base{state.base}_{state.lang}.ipynb",
            json.dumps(book, ensure_ascii=False, indent=1) + "\n", notices)


class NotebookHandler(RequestHandler):
    """``GET /notebook.ipynb?…``: the whole lesson's cells for the query's state, an nbformat-4 notebook."""

    def get(self) -> None:
        args, query = _first_values(self)
        file, body, notices = notebook_for(args)
        notices = [*repeated_parameters(query), *notices]
        self.set_header("Content-Type", "application/x-ipynb+json; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="{file}"')
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-PE-Notices", json.dumps([[n.parameter, n.given[:40], n.used, n.reason] for n in notices]))
        self.finish(body.encode("utf-8"))


def patterns() -> list[tuple]:
    """Tornado routes for ``pn.serve(extra_patterns=...)``."""
    return [(r"/data/([A-Za-z0-9_]+)\.csv", DataHandler), (r"/notebook\.ipynb", NotebookHandler)]
