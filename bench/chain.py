"""The state's chain on ``/`` without a browser: a step's server time with every section built, a few awake.

    python -m bench.chain [--awake 3] [--repeats 280] [--rounds 3]

Builds the lesson's sections on one session state (``components.lazy.LazyPart``, as ``/`` does once the reader
has scrolled through it), wakes ``--awake`` of them (the sixth onwards, as a reader in the middle of the page
has them) and puts the others to sleep. Then, per parameter, sets the state back and forth between two values
``--repeats`` times and takes the median time of one set (the state's own watchers, every awake section's
drawing, the sleeping ones noting they are behind; no document, no serialization: ``bench.sections`` has
those); and the median time of waking one sleeping section after a ``d_model`` step. One line of JSON per
round. Used for docs/performance.md, "Session 21".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

#: Per parameter, the two values a step goes between (each in range at the state's defaults).
STEPS: dict[str, tuple[int, int]] = {"k": (4, 3), "pos": (5, 6), "d_model": (34, 32), "T": (25, 24)}
#: Steps left out of the median: the first ones fill the caches by value.
WARM_UP = 20


def run(awake: int, repeats: int) -> dict[str, Any]:
    from app.lesson import SECTIONS
    from app.model.state import ExplorerState
    from components.lazy import LazyPart

    state = ExplorerState()
    parts = {slug: LazyPart(SECTIONS[slug], state, 900, slug) for slug in SECTIONS}
    for part in parts.values():
        part.build_now()
    slugs = list(parts)
    near = set(slugs[5:5 + awake])
    for slug, part in parts.items():
        part.watchers.awake = slug in near
    out: dict[str, Any] = {"awake": sorted(near), "median_ms": {}}
    for name, values in STEPS.items():
        times = []
        for i in range(repeats + WARM_UP):
            start = time.perf_counter()
            setattr(state, name, values[i % 2])
            times.append((time.perf_counter() - start) * 1000)
        out["median_ms"][name] = round(statistics.median(times[WARM_UP:]), 3)
    asleep = next(part for slug, part in parts.items() if slug not in near)
    wake = []
    for i in range(40):
        state.d_model = STEPS["d_model"][i % 2]
        start = time.perf_counter()
        asleep.watchers.awake = True
        wake.append((time.perf_counter() - start) * 1000)
        asleep.watchers.awake = False
    out["median_ms"]["wake after d_model"] = round(statistics.median(wake), 3)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.chain", description=__doc__.splitlines()[0])
    parser.add_argument("--awake", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=280)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    for _ in range(args.rounds):
        print(json.dumps(run(args.awake, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
