"""A cluster worker told to stop a run plays its game in progress to the end, and no other.

Why it matters: a run that stops gracefully (an SPRT decision, one Ctrl-C) waits for the
games running on the workers, and a worker holds more of the run's games than it plays at
once (a task is a batch of games, and more tasks wait for a game slot). The games not yet
begun must come back unplayed, or the stop waits for all of them. The worker's own run
object (:class:`~guti.referee.execution.remote_games.WorkerRun`) and the function the
client calls on every worker (``stop_run``) are used as a worker uses them, with real
engine processes; one engine's start is held on a FIFO, so that a game is in progress when
the stop comes, whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from guti.referee.execution.remote_games import GameOutcome, RunSpec
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import parse_limits
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.game.settings import GameSettings
from tests.conftest import ROOT
from tests.test_engine_starts import until

cluster_worker = pytest.importorskip("guti.referee.execution.cluster_worker",
                                     reason="the cluster extra (distributed)")

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")


def game(game_id: int) -> ScheduledGame:
    return ScheduledGame(game_id=game_id, pair_id=game_id, round=1, white=0, black=1,
                         opening=None)


def test_a_stopped_worker_finishes_the_game_in_progress_and_begins_no_other(tmp_path: Path):
    fifo = tmp_path / "start-b"
    os.mkfifo(fifo)
    good = [sys.executable, FAULTY, "--mode", "good"]
    held = [shutil.which("sh") or "sh", "-c",
            f"read go < {shlex.quote(str(fifo))}; exec {shlex.join(good)}"]
    spec = RunSpec(f"stop-test-{os.getpid()}",
                   [EngineConfig(name="A", argv=good), EngineConfig(name="B", argv=held)],
                   GameSettings(name="egara-guti", limits=parse_limits({"tc": "10+0.1"})),
                   version="", per_worker=1)  # one game at a time on this worker
    run = cluster_worker._run_for(spec)

    async def main() -> list[GameOutcome]:
        try:
            first = asyncio.create_task(run.play(game(0), "w"))
            await until(lambda: run.pools[1].starts == 1, "game 1 begun, B's start held")
            second = asyncio.create_task(run.play(game(1), "w"))  # waits for the slot
            await asyncio.sleep(0)
            cluster_worker.stop_run(spec.run_id)  # as the client calls it on every worker
            await asyncio.to_thread(fifo.write_text, "go\n")  # B may start now
            later = await run.play(game(2), "w")  # a task that came after the stop
            return [await first, await second, later]
        finally:
            await run.close()
            cluster_worker._RUNS.pop(spec.run_id, None)

    first, second, later = asyncio.run(main())
    assert first.record is not None and first.record.result is not None
    assert len(first.record.moves) > 0  # played to its end, not cut short
    assert second.record is None and later.record is None  # unplayed, as the stop asks
    assert run.pools[0].starts == 1 and run.pools[1].starts == 1  # no engine for them
