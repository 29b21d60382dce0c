"""Data downloads: ``/data/<name>.csv?<the page's query>``, the numbers behind a figure as CSV; and
``/notebook.ipynb?<the page's query>``, every lesson section's NumPy cell (``app.model.cells``) as a notebook.

The query is read exactly as a page reads it (``app.model.state.parse_query``: every value clamped, a
notice for each correction, sent back in the ``X-PE-Notices`` header); the tables and their file names are
``app.model.datasets``'. Big tables are written in a worker thread so the server keeps answering.
"""

from __future__ import annotations

import json

from tornado.ioloop import IOLoop
from tornado.web import RequestHandler

from app.lesson import SECTIONS
from app.model.cells import notebook
from app.model.datasets import DATASETS, table_for
from app.model.state import ExplorerState, parse_query, repeated_parameters


class DataHandler(RequestHandler):
    """``GET /data/<name>.csv?…``: a dataset of ``DATASETS`` as a CSV download."""

    async def get(self, name: str) -> None:
        if name not in DATASETS:
            self.set_status(404)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish("No such table. Tables: " + ", ".join(DATASETS) + "\n")
            return
        query = {key: [value.decode("utf-8", "replace") for value in values]
                 for key, values in self.request.query_arguments.items() if values}
        args = {key: values[0] for key, values in query.items()}
        file, text, notices = await IOLoop.current().run_in_executor(None, table_for, name, args)
        notices = [*repeated_parameters(query), *notices]
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="{file}"')
        self.set_header("Cache-Control", "no-cache")
        # The corrections, like a page's notices; JSON with ASCII escapes keeps raw input out of the header.
        self.set_header("X-PE-Notices", json.dumps([[n.parameter, n.given[:40], n.used, n.reason] for n in notices]))
        self.finish(text.encode("utf-8"))


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
