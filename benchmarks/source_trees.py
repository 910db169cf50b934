"""Another commit's source tree, for a before/after benchmark measured in one run.

On a shared machine, figures measured at different times do not compare; a benchmark's
``--baseline COMMIT`` measures COMMIT alongside this checkout instead, alternating the
two. :func:`extract` writes COMMIT's files into a folder (``git archive``: nothing is
registered with git, nothing is left behind); :func:`json_in` runs a benchmark there, with
that tree's ``guti`` first on ``PYTHONPATH``. Imports nothing of guti.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def extract(rev: str, into: str) -> None:
    """Write the tree of commit ``rev`` into the directory ``into``."""
    os.makedirs(into, exist_ok=True)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)


def uptime() -> str:
    """The load line of ``uptime``: how busy the machine was around a measurement."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


#: The modules of this folder that benchmarks import (not benchmarks themselves).
SHARED = ("source_trees.py", "cutegames_match.py", "engine_common.py")


def json_in(tree: str, script: str, args: list[str]) -> dict[str, Any]:
    """The JSON line ``script --json`` prints last, run in a fresh process that imports
    guti from ``tree`` (for another tree, this checkout's ``script`` is copied in, so that
    both trees are measured the same way). SystemExit with the end of its errors when it
    fails. The helper modules the benchmarks share (:data:`SHARED`) are copied along."""
    name = os.path.basename(script)
    there = os.path.join(tree, "benchmarks", name)
    if os.path.abspath(tree) != ROOT:
        os.makedirs(os.path.dirname(there), exist_ok=True)
        here = os.path.dirname(os.path.abspath(__file__))
        for mine in (os.path.abspath(script), *(os.path.join(here, m) for m in SHARED)):
            shutil.copy(mine, os.path.dirname(there))
    out = subprocess.run([sys.executable, there, *args, "--json"], cwd=tree, capture_output=True,
                         text=True, check=False, env=dict(os.environ, PYTHONPATH=tree))
    if out.returncode != 0:
        raise SystemExit(f"{name} in {tree} failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))
