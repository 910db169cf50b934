"""A game's first move waits for the engine starts under way in its loop.

Why it matters: starting an engine is a burst of work (the program loads, the referee
handshakes it), and a game whose clock began in the middle of another game's start
burst would pay for engines that are not its own (the run's first games all start their
engines at once; a process replaced after a fault starts while other games go on). The
real pools and game step (:func:`guti.referee.execution.pairing.play_job`) are run with
real engine processes; one engine's start is held on a FIFO that the test opens when it
chooses, so what happens meanwhile is seen by events, never by timing.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from pathlib import Path

from guti.referee.execution.engine_pool import EnginePool, engine_starts
from guti.referee.execution.pairing import play_job
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import parse_limits
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.game.settings import GameSettings
from tests.conftest import ROOT

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable
BOUND = 60.0  # seconds before a wait that should end is called a hang


async def until(condition, what: str) -> None:
    """Yield to the loop until ``condition()`` holds (a hang fails after BOUND s)."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)
    try:
        await asyncio.wait_for(poll(), BOUND)
    except TimeoutError:
        raise AssertionError(f"{what}: not within {BOUND:g} s") from None


def test_a_game_asks_its_first_move_only_once_the_starts_under_way_have_ended(tmp_path: Path):
    fifo = tmp_path / "start-c"
    os.mkfifo(fifo)
    good = [PY, FAULTY, "--mode", "good"]
    held = [shutil.which("sh") or "sh", "-c",
            f"read go < {shlex.quote(str(fifo))}; exec {shlex.join(good)}"]
    configs = [EngineConfig(name="A", argv=good), EngineConfig(name="B", argv=good),
               EngineConfig(name="C", argv=held)]
    settings = GameSettings(name="egara-guti", limits=parse_limits({"tc": "10+0.1"}))
    traffic: list[tuple[str, str, str]] = []  # (direction, engine, line), in order

    def hook(_wall: float, direction: str, name: str, line: str) -> None:
        traffic.append((direction, name, line))

    def game(game_id: int, white: int, black: int) -> ScheduledGame:
        return ScheduledGame(game_id=game_id, pair_id=game_id, round=1, white=white,
                             black=black, opening=None)

    async def main() -> list[str]:
        pools = [EnginePool(c, settings.name, 30, hook) for c in configs]
        starts = engine_starts()
        try:
            # game 2 (A vs C) starts first: C's start is held on the FIFO
            second = asyncio.create_task(play_job(game(1, 0, 2), pools[0], pools[2], settings))
            await until(lambda: pools[2].starts == 1, "C's start begun")
            first = asyncio.create_task(play_job(game(0, 0, 1), pools[0], pools[1], settings))
            await until(lambda: starts.waiting == 1, "game 1 ready, waiting for C's start")
            # game 1's engines are started and handshaken, and no go was written yet
            assert not [t for t in traffic if t[0] == ">" and t[2].startswith("go")], traffic
            assert {name for _, name, line in traffic if line == "readyok"} >= {"A", "B"}
            await asyncio.to_thread(fifo.write_text, "go\n")  # C may start now
            records = await asyncio.wait_for(asyncio.gather(first, second), BOUND)
        finally:
            await asyncio.gather(*(p.close() for p in pools))
        return [r.reason for r in records]

    reasons = asyncio.run(main())
    assert all(r is not None for r in reasons)
    ugiok_c = next(i for i, (d, name, line) in enumerate(traffic)
                   if d == "<" and name == "C" and line == "ugiok")
    first_go = next(i for i, (d, _, line) in enumerate(traffic)
                    if d == ">" and line.startswith("go"))
    assert ugiok_c < first_go, "a game asked a move while C was still starting"


def test_a_game_alone_does_not_wait(tmp_path: Path):
    """No start under way: the game goes on at once (nothing is held, nothing waits)."""
    good = EngineConfig(name="A", argv=[PY, FAULTY, "--mode", "good"])
    settings = GameSettings(name="egara-guti", limits=parse_limits({"tc": "10+0.1"}))

    async def main() -> int:
        pools = [EnginePool(good, settings.name, 30), EnginePool(good, settings.name, 30)]
        starts = engine_starts()
        waited = []
        real = starts.settled

        async def settled() -> None:
            waited.append(len(starts.pending))
            await real()

        starts.settled = settled  # type: ignore[method-assign]
        try:
            await play_job(ScheduledGame(0, 0, 1, 0, 1, None), pools[0], pools[1], settings)
        finally:
            await asyncio.gather(*(p.close() for p in pools))
        return waited[0]

    assert asyncio.run(main()) == 0


def test_pinned_processes_are_forgotten_once_quit() -> None:
    """``restart=on`` with ``-use-affinity``: a fresh process a game, each pinned to its
    slot; the executor's note of what it pinned holds the live processes only, not one
    per game ever played."""
    import gc

    from guti.referee.execution.local import LocalExecutor

    good = [PY, FAULTY, "--mode", "good"]
    configs = [EngineConfig(name=n, argv=good, restart=True) for n in ("A", "B")]
    settings = GameSettings(name="egara-guti", limits=parse_limits({"tc": "10+0.1"}))
    cpu = sorted(os.sched_getaffinity(0))[:1]

    async def main() -> int:
        executor = LocalExecutor(configs, settings, 1, cpus=cpu)
        try:
            for number in range(4):
                job = ScheduledGame(game_id=number, pair_id=number // 2, round=1,
                                    white=number % 2, black=1 - number % 2, opening=None)
                record = await asyncio.wait_for(executor.play(job, 0), BOUND)
                assert record.reason is not None
            gc.collect()
            return len(executor.pinned)
        finally:
            await executor.close()

    assert asyncio.run(main()) <= 2
