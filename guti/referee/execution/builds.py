"""An engine's ``build`` and ``requires``, seen to the same way on this machine
(:mod:`guti.referee.config.engine_build`) and on a cluster's workers
(:mod:`guti.referee.execution.remote_games`)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

#: Longest a build may take before the engine is skipped.
BUILD_TIMEOUT = 300


def run_build(argv: Sequence[str], cwd: str | None) -> str | None:
    """Run a build command in ``cwd``; None when it worked, else why not (its last line of
    output; bytes that are not UTF-8 are shown replaced, never a crash)."""
    try:
        done = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=BUILD_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return ((done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"])[0]
    return None


def first_missing(programs: Sequence[str]) -> str | None:
    """The first of ``programs`` not found on PATH (None: all are there)."""
    return next((tool for tool in programs if shutil.which(tool) is None), None)
