"""A tournament's games played away from the process that stores them.

Why a module of its own: two executors hand games to other processes, Dask workers
(``-cluster``, :mod:`guti.referee.execution.cluster_worker`) and guti's own referee
processes (``-referees``, :mod:`guti.referee.execution.referee_child`). On the far side both
keep a run's engines warm in pools, play each game as the local executor does
(:func:`~guti.referee.execution.pairing.play_job`), route each engine process's traffic to the
game that holds it, and send back a :class:`GameOutcome`; on this side both write that
traffic into ``-log`` the same way (:func:`log_outcome`). Written once here, without
Dask, so that a run with ``-referees`` never imports Dask.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from guti.referee.execution.builds import first_missing, run_build
from guti.referee.execution.cluster_uploads import moved
from guti.referee.execution.engine_pool import EnginePool
from guti.referee.execution.pairing import play_job
from guti.referee.process.errors import EngineStartError

if TYPE_CHECKING:
    from guti.referee.execution.cluster_address import EngineSetup
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.process.engine_process import TrafficHook
    from guti.referee.ugi.client import UgiEngine

#: Most traffic lines one game sends back with its result (``-log``); the rest are counted.
TRAFFIC_LINES = 20_000

TrafficLine = tuple[float, str, str, str]


@dataclass(frozen=True)
class RunSpec:
    """What a worker needs to play a tournament's games: sent with every task (small:
    the openings travel with each game, not here)."""

    run_id: str
    engines: list[EngineConfig]
    settings: GameSettings
    version: str
    traffic: bool = False
    setups: tuple[EngineSetup, ...] = ()  # requirements and builds, seen to once per worker
    per_worker: int = 0  # games at once on a worker (0: one per worker thread)
    python: str = ""  # the client's interpreter: ``{python}``, the worker's own there
    uploads_of: str = ""  # the run whose sent folders its engines use ("": its own)


@dataclass
class GameOutcome:
    """A task's answer: the record (None: not played, the run was stopping), where it
    was played, and its engines' traffic when ``-log`` asked for it."""

    game_id: int
    record: GameRecord | None
    worker: str
    traffic: list[TrafficLine] = field(default_factory=list)
    dropped: int = 0
    seconds: float = 0.0  # the game's length on the worker (the client sizes batches by it)


class WorkerUnfit(Exception):
    """This worker cannot play the run's games (an engine does not start, or a build
    failed); the message is one line naming the worker."""


class GameTraffic:
    """One game's traffic, bounded: the first :data:`TRAFFIC_LINES` lines, then a count."""

    def __init__(self) -> None:
        self.lines: list[TrafficLine] = []
        self.dropped = 0

    def add(self, wall: float, direction: str, name: str, line: str) -> None:
        if len(self.lines) < TRAFFIC_LINES:
            self.lines.append((wall, direction, name, line[:4096]))
        else:
            self.dropped += 1


class PoolTraffic:
    """The traffic hook of one engine's pool: each process's lines go to the game that
    holds the process (tag ``#N``, its start number), none between games."""

    def __init__(self) -> None:
        self.sinks: dict[str, GameTraffic] = {}

    def __call__(self, wall: float, direction: str, name: str, line: str) -> None:
        """Untagged lines (never sent: the pool tags every process)."""

    def hook(self, tag: str) -> Any:
        def tagged(wall: float, direction: str, name: str, line: str) -> None:
            sink = self.sinks.get(tag)
            if sink is not None:
                sink.add(wall, direction, f"{tag} {name}", line)

        return tagged


class GameReferees(Protocol):
    """Processes a worker hands its games to instead of refereeing them on its own loop
    (:class:`~guti.referee.execution.worker_referees.WorkerReferees`)."""

    async def check(self) -> list[str]: ...
    async def play(self, job: ScheduledGame) -> GameOutcome: ...
    def abort(self) -> None: ...
    async def close(self) -> None: ...


class WorkerRun:
    """One tournament's engines on this worker (lives on the engine loop); ``places``:
    the folders sent to this worker, {the client's path: this worker's copy}. With
    ``referees`` (set by the worker when it has many games at once) the games are played
    by those processes, with the engines as this worker starts them."""

    def __init__(self, spec: RunSpec, places: dict[str, str] | None = None) -> None:
        self.spec = spec
        places = places or {}
        self.setups = tuple((name, build, moved(cwd, places), requires, upload)
                            for name, build, cwd, requires, upload in spec.setups)
        timeout = spec.settings.timeouts.handshake
        self.traffic = [PoolTraffic() for _ in spec.engines]
        self.pools = [
            EnginePool(_here(c, spec.python, places), spec.settings.name, timeout,
                       t if spec.traffic else None, tag_processes=spec.traffic)
            for c, t in zip(spec.engines, self.traffic, strict=True)
        ]
        self.running: set[asyncio.Task[Any]] = set()
        # -concurrency per worker: the games at once, whatever the worker's threads
        # (a task past them waits here, its thread seceded from the worker's pool).
        self.slots = asyncio.Semaphore(spec.per_worker) if spec.per_worker else None
        self.stopped = False
        self.checked: list[str] | None = None  # the check's errors, once it has run
        self.checking = asyncio.Lock()  # one check, however many threads ask at once
        self.last_used = time.monotonic()
        self.referees: GameReferees | None = None

    async def check(self) -> list[str]:
        """Check what the engines require, build what must be built, start every engine
        once (kept warm); the errors."""
        async with self.checking:
            if self.checked is None:
                setups = self.setups
                errors = [e for s in setups if (e := missing_requirement(s))] or [
                    e for name, argv, cwd, _, _ in setups if argv
                    and (e := await build_once(name, argv, cwd,
                                               self.spec.uploads_of or self.spec.run_id))]
                if not errors and self.referees is not None:
                    errors = await self.referees.check()
                elif not errors:
                    for pool in self.pools:
                        try:
                            await pool.give_back(await pool.take(), faulty=False, played=False)
                        except EngineStartError as exc:
                            errors.append(str(exc))
                self.checked = errors
            return self.checked

    async def play(self, job: ScheduledGame, where: str) -> GameOutcome:
        """One game, as the local executor plays it (:func:`~guti.referee.execution.pairing.
        play_job`), as the outcome sent back from ``where``: with its traffic when the run
        logs it (each process's lines routed to the game while it holds the process), and
        no record if the run stopped before the game began."""
        if self.stopped:
            return GameOutcome(job.game_id, None, where)
        if self.referees is not None:
            if self.slots is None:
                return await self._play_there(job, where)
            async with self.slots:
                if self.stopped:
                    return GameOutcome(job.game_id, None, where)
                return await self._play_there(job, where)
        sink = GameTraffic() if self.spec.traffic else None
        if self.slots is None:
            record, seconds = await self._play(job, sink)
        else:
            async with self.slots:
                if self.stopped:
                    return GameOutcome(job.game_id, None, where)
                record, seconds = await self._play(job, sink)
        return GameOutcome(job.game_id, record, where, sink.lines if sink else [],
                           sink.dropped if sink else 0, seconds)

    async def _play(self, job: ScheduledGame, sink: GameTraffic | None
                    ) -> tuple[GameRecord, float]:
        began = time.monotonic()
        task = asyncio.current_task()
        assert task is not None
        self.running.add(task)
        self.last_used = time.monotonic()
        taken: list[UgiEngine] = []

        def before_play(white: UgiEngine, black: UgiEngine) -> None:
            taken.extend((white, black))
            self._route(job, taken, sink)

        try:
            pools = self.pools
            record = await play_job(job, pools[job.white], pools[job.black],
                                    self.spec.settings, before_play)
            return record, time.monotonic() - began
        finally:
            self._route(job, taken, None)
            self.running.discard(task)
            self.last_used = time.monotonic()

    async def _play_there(self, job: ScheduledGame, where: str) -> GameOutcome:
        """The game played by one of :attr:`referees`, as played by ``where``."""
        assert self.referees is not None
        task = asyncio.current_task()
        assert task is not None
        self.running.add(task)
        self.last_used = time.monotonic()
        try:
            outcome = await self.referees.play(job)
        finally:
            self.running.discard(task)
            self.last_used = time.monotonic()
        return dataclasses.replace(outcome, worker=where)

    def _route(self, job: ScheduledGame, procs: list[UgiEngine], sink: GameTraffic | None) -> None:
        if not self.spec.traffic:
            return
        for index, proc in zip((job.white, job.black), procs, strict=False):
            tag = f"#{self.pools[index].number.get(proc)}"
            if sink is None:
                self.traffic[index].sinks.pop(tag, None)
            else:
                self.traffic[index].sinks[tag] = sink

    def abort(self) -> None:
        """Cancel the running games (their engines are killed) and start no new one."""
        self.stopped = True
        for task in list(self.running):
            task.cancel()
        for pool in self.pools:
            pool.kill_all()
        if self.referees is not None:
            self.referees.abort()

    async def close(self) -> None:
        await asyncio.gather(*(p.close() for p in self.pools), return_exceptions=True)
        if self.referees is not None:
            await self.referees.close()



def _here(config: EngineConfig, client_python: str, places: dict[str, str]) -> EngineConfig:
    """An engine as this machine starts it: the client's Python interpreter (TOML's
    ``{python}``) is this machine's own, and paths under a folder sent here are the
    copy's."""
    argv = [moved(word, places) for word in config.argv]
    if client_python and argv and argv[0] == client_python:
        argv[0] = sys.executable
    cwd = moved(config.cwd, places) if config.cwd is not None else None
    return dataclasses.replace(config, argv=argv, cwd=cwd)


#: (run, argv, cwd) -> the build, done or under way (its error; "" = built). By run: a
#: worker that lives on builds again for the next run, as a machine does; the iterations
#: of a tuning run (which share its sent folders) build once.
_BUILDS: dict[tuple[str, tuple[str, ...], str], asyncio.Future[str | None]] = {}


def missing_requirement(setup: EngineSetup) -> str:
    """The first program an engine requires that is not on this worker's PATH, in a line."""
    engine, _build, _cwd, requires, _upload = setup
    tool = first_missing(requires)
    if tool is None:
        return ""
    return f"engine {engine} requires {tool}, which is not installed here (not on PATH)"


async def build_once(engine: str, argv: tuple[str, ...], cwd: str, run: str) -> str:
    """Run an engine's ``build`` once per run on this worker (a second check while it is
    under way waits for the same build); the error line ("" if built)."""
    key = (run, argv, cwd)
    if key not in _BUILDS:
        _BUILDS[key] = asyncio.ensure_future(asyncio.to_thread(run_build, argv, cwd, run))
    error = await asyncio.shield(_BUILDS[key])
    return f"engine {engine}: build {shlex.join(argv)} failed: {error}" if error else ""


def log_outcome(traffic: TrafficHook | None, job: ScheduledGame, outcome: GameOutcome) -> None:
    """The game's traffic, as the far side saw it, into ``-log`` (one block per game)."""
    if traffic is None or outcome.record is None:
        return
    note = getattr(traffic, "note", None)
    record = outcome.record
    if note is not None:  # stamped as the game began on the far side
        began = outcome.traffic[0][0] if outcome.traffic else None
        note(f"game {job.game_id + 1}: {record.white} (white) vs {record.black} (black)"
             f" on {outcome.worker}", began)
    for line in outcome.traffic:
        traffic(*line)
    if note is not None:
        if outcome.dropped:
            note(f"game {job.game_id + 1}: {outcome.dropped} more lines not kept")
        note(f"game {job.game_id + 1}: {record.result} ({record.reason}) "
             f"{record.detail}".rstrip())
