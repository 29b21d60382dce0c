"""The explorable. Three layers, each importing only those below it:

* ``app.model``: the NumPy core, one session's state, the two languages' text (no Panel, no Bokeh);
* ``components``: one Viewer per view or lesson section, built from the model;
* ``app`` itself: the pages and the server.

``from app import core`` is the public NumPy API (``app.model.core``), kept at this address for notebooks.
"""

from app.model import core

__all__ = ["core"]
