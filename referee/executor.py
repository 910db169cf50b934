"""Runs scheduled games: N concurrent workers in one asyncio loop, engines from pools.

The executor knows how to *play* a :class:`~referee.scheduler.ScheduledGame`
and nothing about where the list came from or where results go: it pulls
jobs from ``next_job()`` and hands each finished game to ``on_result(job,
record)``. A remote or multi-machine executor only has to honour the same
three calls.

Engine processes: one :class:`EnginePool` per engine. A game *takes* a
process from its engine's pool (starting one if none is idle) and gives it
back afterwards, so a process is owned by exactly one game at a time; a
round-robin at concurrency 2 may run two processes of the same engine. A
process that was at fault (crash, stall, protocol error, ...) is quit and
never reused; with ``restart=on`` every process is quit after its game.

Stopping: ``stop`` (an :class:`asyncio.Event`) means "start no new game";
running games finish (every wait in a game is bounded by its time control,
see :mod:`referee.game_runner`) and are reported. Cancelling
:meth:`Executor.run` aborts running games: they are never reported, so
nothing half-played is ever stored, and every engine process is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from .engine_config import EngineConfig
from .engine_process import EngineProcess, EngineStartError, TrafficHook
from .game_record import GameRecord
from .game_runner import (
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
    DEFAULT_SYNC_TIMEOUT,
    play_configured_game,
    start_failure_record,
)
from .scheduler import ScheduledGame
from .timecontrol import Limits


class EnginePool:
    """Idle, handshaken processes of one engine; started on demand."""

    def __init__(
        self,
        config: EngineConfig,
        game: str,
        handshake_timeout: float = DEFAULT_SYNC_TIMEOUT,
        traffic: TrafficHook | None = None,
    ) -> None:
        self.config = config
        self.game = game
        self.handshake_timeout = handshake_timeout
        self.traffic = traffic
        self.idle: list[EngineProcess] = []
        self.busy: set[EngineProcess] = set()
        self.starts = 0
        self.number: dict[EngineProcess, int] = {}  # process -> its start count, for logs

    @property
    def name(self) -> str:
        return self.config.name

    async def take(self) -> EngineProcess:
        """A running engine for one game (EngineStartError if none can be started)."""
        while self.idle:
            proc = self.idle.pop()
            if proc.is_alive:
                self.busy.add(proc)
                return proc
            self.number.pop(proc, None)
            await proc.quit(grace=0.0)
        self.starts += 1
        traffic = self.traffic
        tagged = getattr(traffic, "hook", None)
        if tagged is not None:  # concurrent games share one log: "#2 ref" is ref's 2nd process
            traffic = tagged(f"#{self.starts}")
        proc = await EngineProcess.launch(self.config, self.game, self.handshake_timeout, traffic)
        self.number[proc] = self.starts
        self.busy.add(proc)
        return proc

    async def give_back(self, proc: EngineProcess, faulty: bool) -> None:
        """After a game: keep the process for the next one, unless it was at fault
        (never trusted again) or ``restart=on``."""
        self.busy.discard(proc)
        if faulty or self.config.restart or not proc.is_alive:
            self.number.pop(proc, None)
            await proc.quit(grace=0.0 if faulty else 1.0)
        else:
            self.idle.append(proc)

    async def close(self) -> None:
        """Quit every process politely (idle ones) and kill any still in a game."""
        procs, self.idle = self.idle, []
        busy, self.busy = list(self.busy), set()
        for proc in busy:
            proc.kill_now()
        await asyncio.gather(
            *(p.quit() for p in procs), *(p.quit(grace=0.0, term_grace=0.0) for p in busy),
            return_exceptions=True,
        )

    def kill_all(self) -> None:
        """SIGKILL every process at once (emergency, no waiting)."""
        for proc in [*self.idle, *self.busy]:
            proc.kill_now()


@dataclass
class GameSettings:
    """How every game is played (what the tournament settings say)."""

    game: str
    limits: Limits
    handshake_timeout: float = DEFAULT_SYNC_TIMEOUT
    move_timeout: float = DEFAULT_MOVE_TIMEOUT
    stall_grace: float = DEFAULT_STALL_GRACE
    event: str = "?"
    site: str = "?"


class Executor:
    """Plays jobs with ``concurrency`` workers; see the module docstring."""

    def __init__(
        self,
        engines: list[EngineConfig],
        settings: GameSettings,
        concurrency: int,
        traffic: TrafficHook | None = None,
    ) -> None:
        self.settings = settings
        self.concurrency = max(1, concurrency)
        self.pools = [EnginePool(c, settings.game, settings.handshake_timeout, traffic) for c in engines]
        self.traffic = traffic
        self.running: dict[int, ScheduledGame] = {}

    async def check_engines(self) -> None:
        """Start one process of every engine (concurrently) and keep it idle; the
        first EngineStartError propagates (after every started process is quit)."""
        results = await asyncio.gather(*(p.take() for p in self.pools), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for pool, res in zip(self.pools, results, strict=True):
            if isinstance(res, EngineProcess):
                await pool.give_back(res, faulty=False)
        if errors:
            await self.close()
            raise errors[0]

    async def run(
        self,
        next_job: Callable[[], ScheduledGame | None],
        on_result: Callable[[ScheduledGame, GameRecord], None],
        stop: asyncio.Event,
    ) -> None:
        """Play until ``next_job()`` returns None or ``stop`` is set; engines are
        closed on the way out (killed when cancelled)."""

        async def worker() -> None:
            while not stop.is_set():
                job = next_job()
                if job is None:
                    return
                self.running[job.game_id] = job
                try:
                    record = await self.play(job)
                finally:
                    self.running.pop(job.game_id, None)
                on_result(job, record)

        tasks = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            for pool in self.pools:
                pool.kill_all()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            await asyncio.shield(self.close())

    async def play(self, job: ScheduledGame) -> GameRecord:
        """One game between the job's engines; every engine fault becomes a loss."""
        s = self.settings
        white, black = self.pools[job.white], self.pools[job.black]
        opening = job.opening
        start_fen = opening.fen if opening else None
        moves = opening.moves if opening else ()
        round_ = str(job.round)
        note = getattr(self.traffic, "note", None)
        procs: list[EngineProcess] = []
        try:
            for side, pool in (("w", white), ("b", black)):
                try:
                    procs.append(await pool.take())
                except EngineStartError as exc:
                    if procs:  # black could not start: white did nothing wrong
                        await white.give_back(procs.pop(), faulty=False)
                    return start_failure_record(
                        s.game, white.name, black.name, side, str(exc), start_fen, round_,
                        s.event, s.site, pool.config.limits or s.limits,
                    )
            if note is not None:
                note(f"game {job.game_id + 1}: #{white.number.get(procs[0])} {white.name} (white)"
                     f" vs #{black.number.get(procs[1])} {black.name} (black)")
            record = await play_configured_game(
                s, procs[0], procs[1], white.config.limits, black.config.limits, start_fen,
                moves, round_,
            )
        except BaseException:
            for proc in procs:  # aborted mid-game: these processes are not reusable
                proc.kill_now()
            raise
        await white.give_back(procs[0], record.fault == "w")
        await black.give_back(procs[1], record.fault == "b")
        if note is not None:
            note(f"game {job.game_id + 1}: {record.result} ({record.reason}) {record.detail}".rstrip())
        return record

    async def close(self) -> None:
        await asyncio.gather(*(p.close() for p in self.pools), return_exceptions=True)
