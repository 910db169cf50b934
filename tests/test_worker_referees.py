"""A cluster worker with many games at once spreads them over referee processes.

With ``-concurrency`` per worker above ``GAMES_PER_REFEREE``, the worker hands its games to
referee processes of its own (:mod:`guti.referee.execution.worker_referees`), as
``-referees auto`` does on one machine. Checked through the real programs: ``guti
tournament -cluster local:1``; while it runs, the processes running
``guti.referee.execution.referee_child`` in the test's folder are seen (the worker's, the
only ones: guti itself referees nothing with ``-cluster``); every game is stored once and
agrees with the PDN file, the database names the worker (not a referee process) as the
player, and no engine outlives the run.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from guti.referee.execution.referee_choice import GAMES_PER_REFEREE
from tests.conftest import rows, survivors

pytestmark = pytest.mark.cluster

pytest.importorskip("distributed", reason="-cluster needs the cluster extra (distributed)")

from tests.test_cluster import check_tournament, guti, instant  # noqa: E402
from tests.test_referee_pool import command_line, processes_in  # noqa: E402

CHILD = "guti.referee.execution.referee_child"


def _watch_referees(folder: Path, done: threading.Event, seen: set[int]) -> None:
    """Until ``done``: the pids of referee processes working in ``folder``."""
    while not done.is_set():
        for entry in processes_in(folder):
            pid = int(entry.split(":", 1)[0])
            if CHILD in command_line(pid):
                seen.add(pid)
        time.sleep(0.02)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two usable CPUs")
def test_a_worker_with_many_games_at_once_referees_them_in_processes(tmp_path):
    pids = tmp_path / "pids"
    many = GAMES_PER_REFEREE + 1
    seen: set[int] = set()
    done = threading.Event()
    watcher = threading.Thread(target=_watch_referees, args=(tmp_path, done, seen), daemon=True)
    watcher.start()
    try:
        result = guti("tournament", *instant("A", pids, ["--think", "0.01"]),
                      *instant("B", pids, ["--think", "0.01"]), "-each", "tc=20+0.2",
                      "-games", str(2 * many), "-cluster", "local:1", "-concurrency", str(many),
                      "-pdnout", "t.pdn", "-log", "t.log", "-quiet", cwd=tmp_path, timeout=300)
    finally:
        done.set()
        watcher.join(10)
    assert result.returncode == 0, result.stderr
    check_tournament(tmp_path, 2 * many)
    assert len(seen) >= 2, f"referee processes seen: {seen}"
    workers = {w for (w,) in rows(tmp_path / "guti.db", "SELECT worker FROM games")}
    assert len(workers) == 1 and not next(iter(workers)).startswith("referee"), workers
    assert survivors(pids) == []
