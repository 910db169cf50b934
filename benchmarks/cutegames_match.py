"""The benchmarks' match played by cutegames, a C++ host of the UGI protocol (built outside
this repository): two copies of one engine, named ``a`` and ``b`` with seeds 1 and 2, every
game from the start position, in cutegames' ``generic`` mode (it checks no move and asks
the engines whether the game is over). Used where guti is measured beside it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any


def play(binary: str, folder: str, engine: str, games: int, concurrency: int,
         timecontrol: dict[str, Any], **more: Any) -> float:
    """Play the match (``more``: further top-level settings, e.g. ``adjudication`` or
    ``pgn``) with its settings file written into ``folder``; the wall seconds it took.
    Exits naming what cutegames said when it did not finish every game."""
    start = os.path.join(folder, "startpos.txt")
    with open(start, "w") as fh:
        fh.write("startpos\n")
    engines = [{"name": name, "path": engine,
                "options": {"UGI_Variant": "egara-guti", "Seed": seed}}
               for name, seed in (("a", "1"), ("b", "2"))]
    settings = {"game": "generic", "games": games, "concurrency": concurrency,
                "ratinginterval": 10 * games, "tournament": "roundrobin",
                "openings": {"path": start, "repeat": True, "shuffle": False},
                "timecontrol": timecontrol, "engines": engines, **more}
    path = os.path.join(folder, f"cutegames-c{concurrency}.json")
    with open(path, "w") as fh:
        json.dump(settings, fh)
    began = time.perf_counter()
    done = subprocess.run([binary, "--settings", path], capture_output=True, text=True,
                          cwd=folder)
    wall = time.perf_counter() - began
    if done.returncode != 0 or f"Games finished: {games}" not in done.stdout:
        raise SystemExit(f"cutegames did not finish {games} games:\n{done.stdout[-800:]}"
                         f"\n{done.stderr[-800:]}")
    return wall
