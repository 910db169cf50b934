"""A benchmark script run on another commit, for a before/after table in one run.

Why: on a shared, noisy machine figures measured at different times do not compare; each
benchmark's ``--baseline COMMIT`` measures COMMIT in the same run instead. The script
itself (this checkout's version, so both sides are measured the same way) runs in a
temporary git worktree of COMMIT. Imports nothing of guti: a benchmark may still have to
choose which guti it imports (``referee_cpu.py --compiled``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_at(commit: str, script: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``script`` (a path) run with ``args`` in a worktree of ``commit``, output captured."""
    with tempfile.TemporaryDirectory() as tree:
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", tree, commit],
                       check=True)
        try:
            there = os.path.join(tree, "benchmarks", os.path.basename(script))
            shutil.copy(os.path.abspath(script), there)
            return subprocess.run([sys.executable, there, *args], cwd=tree,
                                  capture_output=True, text=True, check=False)
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree],
                           check=False)


def json_at(commit: str, script: str, args: list[str]) -> dict[str, Any]:
    """The JSON line ``script --json`` prints last, run at ``commit`` (SystemExit with the
    end of its errors when it fails)."""
    out = run_at(commit, script, [*args, "--json"])
    if out.returncode != 0:
        raise SystemExit(f"{os.path.basename(script)} at {commit} failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))
