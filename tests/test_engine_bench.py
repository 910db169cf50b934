"""``guti bench`` as a signature of the reference engine's search.

Why: the bench searches fixed positions to a fixed depth with fresh tables, so its node
counts depend on the search code alone; a change that alters them changes the search, one
that does not is a pure speed change. That only holds if two runs agree exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from guti.engine.bench import POSITIONS
from tests.conftest import ROOT


def test_bench_is_a_deterministic_signature() -> None:
    """``guti bench`` through the real command, twice: the same moves, scores and node
    counts (the search has no clock in it), whatever the machine's speed."""
    def bench() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "guti.cli", "bench", "5"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len([x for x in lines if x.startswith("position ")]) == len(POSITIONS)
        return [x for x in lines if x.startswith("position ")] + [lines[-1].split(" nps ")[0]]

    assert bench() == bench()


@pytest.mark.parametrize("depth", ["0", "31", "x", "\u00b2", "9" * 5000])
def test_a_bad_bench_depth_is_one_line(depth: str) -> None:
    done = subprocess.run([sys.executable, "-m", "guti.cli", "bench", depth],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "expected one depth 1..30" in done.stderr
