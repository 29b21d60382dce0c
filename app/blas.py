"""One BLAS thread per server process, asked for before NumPy loads (every server entry point calls it first)."""

from __future__ import annotations

import os


def one_blas_thread() -> None:
    """Ask OpenBLAS for one thread, unless the environment already chose.

    The server's own processes and the live checks' worker thread share the cores, and OpenBLAS spreading one
    small product over every core slowed a size change from ~15 to 50-75 ms on 2 busy cores. It reads the
    variable when NumPy loads: call this before anything imports NumPy.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
