"""The cluster executor: a tournament's games played by Dask workers, kept by guti.

:class:`ClusterExecutor` is a
:class:`~guti.referee.execution.executor.GameExecutor` (``check_engines``,
``run(next_job, on_result, control)``, ``kill_all``, ``close``, ``running``), as the local
executor and the referee processes are, so a match and a tournament play on either. The workers play (:mod:`guti.referee.execution.cluster_worker`); this process, the
client, stays the only writer of the database: each result is handed to ``on_result``
the moment it arrives (``as_completed``), so it is stored in its own transaction
exactly as locally, and ``-resume``, standings, SPRT, PDN and ``-log`` are unchanged.

- Games in flight: each worker is given twice as many tasks as it plays games at once
  (its threads, or ``-concurrency`` per worker), named for it, so that one is waiting
  on the worker when a game ends (no round trip to the scheduler or this client between
  two games) and no worker hoards the queue. The workers are re-read every
  :data:`WORKERS_INTERVAL` s: a worker that joins gets work.
- A task is a batch of games, as many as last about :data:`BATCH_SECONDS` (from the
  games' lengths so far; one game at first, and always one for games of a second or
  more): Dask costs some milliseconds of CPU per task in client, scheduler and worker,
  as much as a whole game between instant-reply engines, and a batch shares that cost.
  Each game of it is still stored the moment the batch's result arrives.
- A worker that dies mid-game: Dask plays the game again elsewhere; after Dask gives
  up (``KilledWorker``) it is submitted again here. A game is reported once, whatever
  arrives twice (and the store's UNIQUE game id would refuse it anyway).
- ``stop`` (first Ctrl-C, an SPRT decision): every worker is told to start no game of
  this run; queued tasks return unplayed, running games finish and are stored.
- Cancelled (second Ctrl-C, SIGTERM): the tasks are cancelled and every worker kills
  this run's games; nothing unfinished is stored. A client that is killed outright
  has its tasks released by the scheduler, and each worker cancels a game whose task
  it no longer holds (see ``cluster_worker``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import signal
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import dask
from distributed import Client, Future, LocalCluster, as_completed
from distributed.scheduler import KilledWorker

from guti.referee.execution.cluster_address import ClusterAddress, ClusterError, EngineSetup
from guti.referee.execution.cluster_worker import (
    GutiWorkerPlugin,
    abort_run,
    check_worker,
    close_run,
    guti_version,
    play_task,
    stop_run,
)
from guti.referee.execution.remote_games import (
    GameOutcome,
    RunSpec,
    WorkerUnfit,
    log_outcome,
    say_error,
)
from guti.referee.execution.slots import ResultHandler
from guti.referee.execution.stopping import RunControl
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.record import GameRecord
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.game.settings import GameSettings
from guti.referee.process.engine_process import TrafficHook

#: Seconds to reach a remote scheduler, and for its first worker to be there.
CONNECT_TIMEOUT = 30.0
#: Times one game is submitted again after Dask gave it up (its workers kept dying).
RESUBMITS = 3
#: Seconds the end of a run may take on the workers (quitting engines) before giving up.
CLOSE_TIMEOUT = 30.0
#: A task holds as many games as last about this long (a longer game is a task of its own).
BATCH_SECONDS = 0.5
#: Most games in one task.
BATCH_MOST = 16
#: Seconds between two readings of the cluster's workers and their threads.
WORKERS_INTERVAL = 2.0
#: Dask's settings for the cluster of ``local:N`` (guti's own, on the machine the engines
#: play on): its housekeeping woken less often (event-loop ticks, system and memory
#: monitors, statistical profiler) and no work stealing (each task is named for a
#: worker). Idle, the scheduler and two workers then take 1.6 % of a core, not 11 %.
LOCAL_CONFIG = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.work-stealing": False,
}


class ClusterExecutor:
    """Plays jobs on a Dask cluster; see the module docstring."""

    def __init__(
        self,
        address: ClusterAddress,
        engines: list[EngineConfig],
        settings: GameSettings,
        traffic: TrafficHook | None = None,
        say: Callable[[str], None] = say_error,
        setups: tuple[EngineSetup, ...] = (),
    ) -> None:
        self.address = address
        self.traffic = traffic
        self.say = say
        # The openings travel with each game: the settings sent with every task stay small.
        slim = dataclasses.replace(settings, openings=None, start_fen=None)
        self.spec = RunSpec(uuid.uuid4().hex, engines, slim, guti_version(),
                            traffic is not None, setups, address.per_worker)
        self.in_flight: dict[int, ScheduledGame] = {}  # submitted, not yet reported
        self.reported: set[int] = set()
        self.client: Any = None
        self.cluster: Any = None
        self.attempts: dict[int, int] = {}  # by a batch's first game
        self.slots: dict[str, int] = {}  # worker address -> games at once there
        self.load: Counter[str] = Counter()  # worker address -> its tasks in flight
        self.game_seconds: float | None = None  # a game's length, smoothed

    # ------------------------------------------------------------------ connecting
    async def connect(self) -> None:
        """Start the local cluster, or reach the scheduler and wait for a worker."""
        logging.getLogger("distributed").setLevel(logging.ERROR)
        a = self.address
        if a.local:
            # Ctrl-C at the terminal is guti's alone (as engines' are locally): the worker
            # processes start with SIGINT ignored (kept across exec), the plugin keeps it so.
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                with dask.config.set(LOCAL_CONFIG):
                    self.cluster = await LocalCluster(
                        n_workers=a.local, threads_per_worker=1, processes=True,
                        asynchronous=True, dashboard_address=None, silence_logs=logging.ERROR)
            finally:
                signal.signal(signal.SIGINT, previous)
            self.client = await Client(self.cluster, asynchronous=True, set_as_default=False)
        else:
            try:
                self.client = await Client(a.scheduler, asynchronous=True, set_as_default=False,
                                           timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"cannot reach the Dask scheduler at {a.text}: {exc}") from None
            try:
                await self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"no Dask worker joined {a.text} within "
                                   f"{CONNECT_TIMEOUT:g} s ({exc})") from None
        await self.client.register_plugin(GutiWorkerPlugin(local=bool(a.local)), name="guti")

    async def check_engines(self) -> None:
        """Every engine started once on every worker (and kept warm), same guti everywhere;
        else :class:`ClusterError` naming the worker, and nothing is left running."""
        try:
            await self.connect()
            answers = await self.client.run(check_worker, self.spec, on_error="return")
            bad = {w: a for w, a in sorted(answers.items()) if a}
            if bad:
                worker, why = next(iter(bad.items()))
                if isinstance(why, BaseException):
                    why = f"cannot run guti's tasks ({type(why).__name__}: {why})"
                more = f" (and {len(bad) - 1} more worker(s))" if len(bad) > 1 else ""
                raise ClusterError(f"worker {worker}: {why}{more}")
        except BaseException:
            await asyncio.shield(self.close())
            raise

    async def read_workers(self) -> None:
        """The workers now in the cluster and how many games each plays at once."""
        with contextlib.suppress(Exception):
            info = await self.client.scheduler.identity(n_workers=-1)
            per_worker = self.spec.per_worker
            self.slots = {address: per_worker or max(1, int(w.get("nthreads", 1)))
                          for address, w in info.get("workers", {}).items()}

    def _room(self) -> str | None:
        """The worker with most room for one more task ("": none known, any worker), or
        None when each has two tasks per game it plays at once."""
        slots = self.slots or {"": 1}
        room = [(self.load[w] / n, w) for w, n in slots.items() if self.load[w] < 2 * n]
        return min(room)[1] if room else None

    def _batch_size(self) -> int:
        if self.game_seconds is None:
            return 1
        return max(1, min(BATCH_MOST, int(BATCH_SECONDS / max(self.game_seconds, 1e-3))))

    @property
    def running(self) -> dict[int, ScheduledGame]:
        """The games a graceful stop waits for, as far as this client can tell: those in
        flight, at most as many as the workers play at once (the rest are queued)."""
        playing = sum(self.slots.values()) or len(self.in_flight)
        return dict(itertools.islice(self.in_flight.items(), playing))

    # ------------------------------------------------------------------ playing
    def _submit(self, batch: list[ScheduledGame], worker: str = "") -> Future:
        """One task for ``batch``, for ``worker`` if named (another if it is gone)."""
        first = batch[0].game_id
        key = f"guti-games-{self.spec.run_id}-{first}-{self.attempts.get(first, 0)}"
        where: dict[str, Any] = {"workers": [worker], "allow_other_workers": True} if worker else {}
        return self.client.submit(play_task, self.spec, batch, key=key, pure=False, **where)

    async def _settle(self, future: Future, batch: list[ScheduledGame]
                      ) -> list[GameOutcome] | Future:
        """The outcomes of a finished task, or the future of the same batch submitted again
        (a worker kept dying under it, or the worker cannot play the run)."""
        if future.status == "finished":
            outcomes: list[GameOutcome] = await future
            return outcomes
        if future.status in ("pending", "lost"):
            # done, but its result died with its worker before it reached this client
            # ("Couldn't gather ... rescheduling"): Dask plays the batch again; wait for it
            return future
        exc = await future.exception() if future.status == "error" else None
        first = batch[0].game_id
        again = self.attempts.get(first, 0) + 1
        games = ", ".join(str(job.game_id + 1) for job in batch)
        if isinstance(exc, WorkerUnfit):
            worker = str(exc).split(": ")[0].removeprefix("worker ")
            self.say(f"{exc}; it is retired from the cluster")
            self.slots.pop(worker, None)
            with contextlib.suppress(Exception):
                await self.client.retire_workers([worker])
        elif not isinstance(exc, KilledWorker) or again > RESUBMITS:
            raise ClusterError(f"game {games} failed on the cluster: "
                               f"{type(exc).__name__}: {exc}") from exc
        else:
            self.say(f"game {games}: its workers died ({exc}); playing it again")
        self.attempts[first] = again
        return self._submit(batch)

    async def play(self, job: ScheduledGame) -> GameRecord:
        """One game on the cluster (a match plays its games one by one this way)."""
        future = self._submit([job])
        while True:
            async for _ in as_completed([future], loop=self.client.loop):
                pass  # finished, failed or cancelled: _settle tells which
            settled = await self._settle(future, [job])
            if isinstance(settled, list):
                break
            future = settled
        outcome = settled[0]
        log_outcome(self.traffic, job, outcome)
        if outcome.record is None:
            raise ClusterError(f"game {job.game_id + 1} was not played (the run was stopped)")
        return outcome.record

    async def run(
        self,
        next_job: Callable[[], ScheduledGame | None],
        on_result: ResultHandler,
        control: RunControl,
        games: int | None = None,
        ahead: bool = False,
    ) -> None:
        """Play until ``next_job()`` returns None while no game is in flight (it is asked
        again after each result: a knockout schedules from them), or ``control`` stops
        (see module docstring); an abort cancels every task and reports nothing more.
        ``games`` (the local executor's cap on idle workers) and ``ahead`` do not apply:
        the cluster's size does, and its workers never wait for a result to be stored."""
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(_set_when_stopping(control, stop))

        async def report(job: ScheduledGame, record: GameRecord) -> None:
            if not control.aborted:  # an aborted run reports nothing (no true result)
                await on_result(job, record)

        try:
            await control.unless_aborted(self._run(next_job, report, stop))
        finally:
            watcher.cancel()

    async def _run(
        self,
        next_job: Callable[[], ScheduledGame | None],
        on_result: ResultHandler,
        stop: asyncio.Event,
    ) -> None:
        jobs: dict[Future, tuple[list[ScheduledGame], str]] = {}
        done = as_completed(loop=self.client.loop)
        feed = _Feed(next_job, stop)

        def top_up() -> None:
            while (worker := self._room()) is not None and (batch := feed.take(
                    self._batch_size())):
                future = self._submit(batch, worker)
                jobs[future] = (batch, worker)
                self.load[worker] += 1
                self.in_flight.update((job.game_id, job) for job in batch)
                done.add(future)

        stopper = asyncio.ensure_future(self._stop_when(stop))
        watcher = asyncio.ensure_future(self._watch_workers(top_up))
        try:
            await self.read_workers()
            top_up()
            async for future in done:
                batch, worker = jobs.pop(future)
                self.load[worker] -= 1
                settled = await self._settle(future, batch)
                if isinstance(settled, list):
                    for job, outcome in zip(batch, settled, strict=True):
                        self.in_flight.pop(job.game_id, None)
                        await self._report(job, outcome, on_result)
                else:
                    jobs[settled] = (batch, "")
                    self.load[""] += 1
                    done.add(settled)
                top_up()
        except BaseException:
            watcher.cancel()  # nothing more is submitted while the tasks are cancelled
            await asyncio.shield(self._abort(list(jobs)))
            raise
        finally:
            stopper.cancel()
            watcher.cancel()
            await asyncio.shield(self.close())

    async def _watch_workers(self, top_up: Callable[[], None]) -> None:
        """Re-read the workers now and then; one that joined gets work at once."""
        while True:
            await asyncio.sleep(WORKERS_INTERVAL)
            await self.read_workers()
            top_up()

    async def _report(self, job: ScheduledGame, outcome: GameOutcome,
                      on_result: ResultHandler) -> None:
        if outcome.record is None or job.game_id in self.reported:
            return  # not played (stopping), or a second result of a stored game
        self.reported.add(job.game_id)
        seconds = self.game_seconds
        self.game_seconds = outcome.seconds if seconds is None else (
            0.8 * seconds + 0.2 * outcome.seconds)
        log_outcome(self.traffic, job, outcome)
        await on_result(job, outcome.record)

    async def _stop_when(self, stop: asyncio.Event) -> None:
        await stop.wait()
        with contextlib.suppress(Exception):
            await self.client.run(stop_run, self.spec.run_id, on_error="ignore")

    async def _abort(self, futures: list[Future]) -> None:
        """Cancel the tasks and kill this run's games on every worker (bounded)."""
        if self.client is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.cancel(futures, force=True), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.client.run(abort_run, self.spec.run_id, on_error="ignore"), 5)

    def kill_all(self) -> None:
        """Nothing to kill on this machine: the engines run on the workers, where an abort
        of :meth:`run` kills this run's games and :meth:`close` quits its engines."""

    async def close(self) -> None:
        """Quit this run's engines on every worker, leave the scheduler, stop a local
        cluster. Safe to call twice."""
        client, self.client = self.client, None
        cluster, self.cluster = self.cluster, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    client.run(close_run, self.spec.run_id, on_error="ignore"), CLOSE_TIMEOUT)
            with contextlib.suppress(Exception):
                await client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                await cluster.close()


class _Feed:
    """The jobs still to submit: none once ``stop`` is set.

    ``next_job`` is asked again after every result even when it had none: a knockout
    schedules its next encounter from the results of the last one. The run ends when
    it has none while no game is in flight."""

    def __init__(self, next_job: Callable[[], ScheduledGame | None], stop: asyncio.Event):
        self.next_job = next_job
        self.stop = stop

    def take(self, most: int) -> list[ScheduledGame]:
        """Up to ``most`` jobs (none: the run is stopping or no job is ready now)."""
        batch: list[ScheduledGame] = []
        while len(batch) < most and not self.stop.is_set():
            job = self.next_job()
            if job is None:
                break
            batch.append(job)
        return batch


async def _set_when_stopping(control: RunControl, stop: asyncio.Event) -> None:
    """Bridge the run's stop state (a flag set by signal handlers and the SPRT) to the
    event the submitting loop waits on."""
    while not control.stopping:
        await asyncio.sleep(0.05)
    stop.set()
