"""Another commit's source tree, for a before/after benchmark measured in one run.

On a shared machine, figures measured at different times do not compare; a benchmark's
``--baseline COMMIT`` measures COMMIT alongside this checkout instead, alternating the
two. :func:`extract` writes COMMIT's files into a folder (``git archive``: nothing is
registered with git, nothing is left behind), where the benchmark runs with that tree's
``guti`` first on ``PYTHONPATH``. Imports nothing of guti.
"""

from __future__ import annotations

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def extract(rev: str, into: str) -> None:
    """Write the tree of commit ``rev`` into the directory ``into``."""
    os.makedirs(into, exist_ok=True)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)


def uptime() -> str:
    """The load line of ``uptime``: how busy the machine was around a measurement."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
