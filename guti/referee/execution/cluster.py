"""The cluster executor: a tournament's games played by Dask workers, kept by guti.

:class:`ClusterExecutor` is a
:class:`~guti.referee.execution.executor.GameExecutor` (``check_engines``,
``run(next_job, on_result, control)``, ``kill_all``, ``close``, ``running``), as the local
executor and the referee processes are, so a match and a tournament play on either. The
workers play (:mod:`guti.referee.execution.cluster_worker`); this process, the client,
stays the only writer of the database: each result is handed to ``on_result`` the moment
it arrives (``as_completed``), so it is stored in its own transaction exactly as locally,
and ``-resume``, standings, SPRT, PDN and ``-log`` are unchanged.

- Which worker plays: any that holds the run's Dask resource (``guti-<run id>``), which
  the run's worker plugin gives a worker once it has passed the run's check, and as many
  units as it plays games at once (its threads, or ``-concurrency`` per worker). Tasks
  are never pinned to addresses: a worker replaced by one at a new address, or a machine
  that joins, gets work as soon as it is checked; a worker that cannot play the run is
  left out of this run alone; any number of runs share one scheduler and its workers.
- Games in flight: twice as many tasks as the fit workers play games at once, so that
  one is waiting on a worker when a game ends and none hoards the queue. The workers are
  re-read every :data:`WORKERS_INTERVAL` s. With no fit worker for
  :data:`~guti.referee.execution.cluster_roster.NO_WORKER_NOTICE` s the run says so and waits; tasks Dask parked for want of a
  worker are submitted again once one is there.
- A task is a batch of games, as many as last about :data:`BATCH_SECONDS` (from the
  games' lengths so far; one game at first, and always one for games of a second or
  more): Dask costs some milliseconds of CPU per task in client, scheduler and worker,
  as much as a whole game between instant-reply engines, and a batch shares that cost.
  Each game of it is still stored the moment the batch's result arrives.
- A worker that dies mid-game: Dask plays the game again elsewhere; after Dask gives
  up (``KilledWorker``) it is submitted again here. A game is reported once, whatever
  arrives twice (and the store's UNIQUE game id would refuse it anyway).
- A worker frozen mid-game (no heartbeat for
  :data:`~guti.referee.execution.cluster_roster.WORKER_SILENCE` s): the tasks it runs or
  holds are submitted again, and while it is silent every task is restricted to the
  other workers (Dask would give the frozen one's freed slots new games).
- ``stop`` (first Ctrl-C, an SPRT decision): every worker is told to start no game of
  this run, tasks no worker has taken are withdrawn; queued tasks return unplayed,
  running games finish and are stored.
- Cancelled (second Ctrl-C, SIGTERM): the tasks are cancelled and every worker kills
  this run's games; nothing unfinished is stored. A client that is killed outright
  has its tasks released by the scheduler, and each worker cancels a game whose task
  it no longer holds (see ``cluster_worker``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

from distributed.comm.core import CommClosedError
from distributed.scheduler import KilledWorker

from guti.referee.execution.cluster_address import ClusterError
from guti.referee.execution.cluster_roster import GONE
from guti.referee.execution.cluster_session import ClusterSession
from guti.referee.execution.cluster_tasks import JobFeed, TaskBook, gathered, set_when_stopping
from guti.referee.execution.cluster_worker import play_task
from guti.referee.execution.remote_games import GameOutcome, RunSpec, WorkerUnfit, log_outcome

if TYPE_CHECKING:
    from distributed import Future

    from guti.referee.execution.cluster_address import ClusterAddress, EngineSetup
    from guti.referee.execution.slots import ResultHandler
    from guti.referee.execution.stopping import RunControl
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.process.engine_process import TrafficHook

#: Times one game is submitted again after Dask gave it up (its workers kept dying).
RESUBMITS = 3
#: A task holds as many games as last about this long (a longer game is a task of its own).
BATCH_SECONDS = 0.5
#: Most games in one task.
BATCH_MOST = 16
#: Seconds between two readings of the cluster's workers and their threads.
WORKERS_INTERVAL = 2.0
#: Seconds a finished task's result may take to come from its worker before its games are
#: played again (the worker is frozen; Dask notices a dead one sooner).
FETCH_TIMEOUT = 60.0
#: Seconds the scheduler may leave a reading of the workers unanswered before the run
#: calls it lost (frozen, or its machine stopped: its connection stays open, so Dask
#: itself would wait for it for ever).
SCHEDULER_SILENCE = 30.0


class ClusterExecutor(ClusterSession):
    """Plays jobs on a Dask cluster (over the run's :class:`ClusterSession`); see the
    module docstring."""

    def __init__(
        self,
        address: ClusterAddress,
        engines: list[EngineConfig],
        settings: GameSettings,
        say: Callable[[str], None],
        tell: Callable[[str], None],
        traffic: TrafficHook | None = None,
        setups: tuple[EngineSetup, ...] = (),
    ) -> None:
        super().__init__(address, engines, settings, say, tell, traffic, setups)
        self.in_flight: dict[int, ScheduledGame] = {}  # submitted, not yet reported
        self.reported: set[int] = set()
        self.attempts: dict[int, int] = {}  # by a batch's first game
        self.game_seconds: float | None = None  # a game's length, smoothed

    def _batch_size(self) -> int:
        if self.game_seconds is None:
            return 1
        return max(1, min(BATCH_MOST, int(BATCH_SECONDS / max(self.game_seconds, 1e-3))))

    @property
    def running(self) -> dict[int, ScheduledGame]:
        """The games a graceful stop waits for, as far as this client can tell: those in
        flight, at most as many as the workers play at once (the rest are queued; a
        silent worker's are not played on a stop). Before the workers are read: all."""
        playing = self.roster.concurrency if self.roster.slots else len(self.in_flight)
        return dict(itertools.islice(self.in_flight.items(), playing))

    # ------------------------------------------------------------------ playing
    def _submit(self, batch: list[ScheduledGame]) -> Future:
        """One task for ``batch``, for any worker that holds the run's resource and is
        not silent (Dask would give a silent one's freed slots new games)."""
        spec = self._spec_for(batch)
        first = batch[0].game_id
        key = f"guti-games-{spec.run_id}-{first}-{self.attempts.get(first, 0)}"
        # (with every worker silent there is none to name: the task is not restricted)
        return self.client.submit(play_task, spec, batch, key=key, pure=False,
                                  resources={self.resource: 1}, workers=self.answering or None)

    def _spec_for(self, batch: list[ScheduledGame]) -> RunSpec:
        """The run spec ``batch`` is played with: the run's own."""
        return self.spec

    async def _settle(self, future: Future, batch: list[ScheduledGame]
                      ) -> list[GameOutcome] | Future:
        """The outcomes of a finished task, or the future of the same batch submitted again
        (a worker kept dying under it, or the worker cannot play the run)."""
        games = ", ".join(str(job.game_id + 1) for job in batch)
        if future.status == "finished":
            outcomes: list[GameOutcome] | None = await gathered(
                future, WORKERS_INTERVAL, FETCH_TIMEOUT)
            if outcomes is not None:
                return outcomes
            if future.status == "finished":  # its worker holds it and does not answer
                self.say(f"game {games}: its result did not come from its worker within "
                         f"{FETCH_TIMEOUT:g} s; playing it again")
                future.release()
                return self._again(batch)
        if future.status in ("pending", "lost"):
            # done, but its result died with its worker before it reached this client
            # ("Couldn't gather ... rescheduling"): Dask plays the batch again, or parks it
            # until a worker is there (then it goes again); wait for it in the book
            return future
        exc = await future.exception() if future.status == "error" else None
        first = batch[0].game_id
        again = self.attempts.get(first, 0) + 1
        if isinstance(exc, WorkerUnfit):
            worker, _, why = str(exc).removeprefix("worker ").partition(": ")
            self.roster.leave_out(worker, why)
        elif self.client.status != "running":
            raise self.lost("the Dask scheduler") from None
        elif exc is None:  # cancelled, not by this client: another one restarted the cluster
            if again > RESUBMITS:
                raise ClusterError(f"game {games} was cancelled on the cluster {again} times "
                                   "(another client of the scheduler)")
            self.say(f"game {games}: its task was cancelled on the cluster; playing it again")
        elif not isinstance(exc, KilledWorker) or again > RESUBMITS:
            raise ClusterError(f"game {games} failed on the cluster: "
                               f"{type(exc).__name__}: {exc}") from exc
        else:
            self.say(f"game {games}: its workers died ({exc}); playing it again")
        self.attempts[first] = again
        return self._submit(batch)

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
        if control.stopping:  # stopped while the cluster started: no game at all
            stop.set()
        watcher = asyncio.ensure_future(set_when_stopping(control, stop))

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
        book = TaskBook(self.client, self.in_flight)
        feed = JobFeed(next_job, stop)

        def top_up() -> None:
            while book.load < 2 * max(1, self.roster.concurrency) and (
                    batch := feed.take(self._batch_size())):
                book.add(self._submit(batch), batch)

        async def look() -> None:
            """Re-read the workers: one that joined gets work; tasks Dask parked without
            a worker go again; no worker for long is said; a stop withdraws what no
            worker has taken; a silent worker's games are taken from it."""
            await self.roster.read(self.client)
            self.roster.tell_waiting()
            await self._take_from_silent(book, stop.is_set())
            untaken, parked = await book.untaken()
            if stop.is_set():
                await book.withdraw(untaken)
            elif self.roster.playing:
                await book.withdraw(parked, self._again)
            top_up()

        async def watch() -> None:
            """:func:`look` now and then; a scheduler that leaves a look unanswered for
            :data:`SCHEDULER_SILENCE` s ends the run as a lost one does."""
            while True:
                await asyncio.sleep(WORKERS_INTERVAL)
                try:
                    await asyncio.wait_for(look(), SCHEDULER_SILENCE)
                except TimeoutError:
                    raise CommClosedError(f"no answer within {SCHEDULER_SILENCE:g} s") from None

        async def consume() -> None:
            """Each result as it comes, until the last game's."""
            await self.roster.read(self.client)
            top_up()
            async for future in book.done:
                batch = book.pop(future)
                if batch is not None:
                    settled = await self._settle(future, batch)
                    if isinstance(settled, list):
                        for job, outcome in zip(batch, settled, strict=True):
                            self.in_flight.pop(job.game_id, None)
                            await self._report(job, outcome, on_result)
                    else:
                        book.add(settled, batch)
                top_up()

        async def on_stop() -> None:
            await stop.wait()
            with contextlib.suppress(Exception):
                await self.stop_runs()
                await book.withdraw((await book.untaken())[0])

        stopper = asyncio.ensure_future(on_stop())
        watcher = asyncio.ensure_future(watch())
        consumer = asyncio.ensure_future(consume())
        try:
            await asyncio.wait({consumer, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if not consumer.done():  # the watcher ended first: the scheduler went silent
                watcher.result()
            await consumer
        except BaseException as exc:
            consumer.cancel()
            watcher.cancel()  # nothing more is submitted while the tasks are cancelled
            await asyncio.shield(self.abort(book.futures()))
            if isinstance(exc, GONE):  # a connection broke: one line, as at the start
                raise self.lost(await self.lost_whom(), exc) from None
            raise
        finally:
            stopper.cancel()
            watcher.cancel()
            await asyncio.shield(self.close())

    async def _take_from_silent(self, book: TaskBook, stopping: bool) -> None:
        """The games a silent worker plays or holds: submitted again for the others, or
        not played when the run is stopping (a stop waits for running games only)."""
        if self.roster.silent and (self.roster.playing or stopping):
            held = await book.held_by(self.roster.silent)
            await book.withdraw(held, None if stopping else self._again)

    def _again(self, batch: list[ScheduledGame]) -> Future:
        """The batch submitted again under a new key (Dask parked the old task)."""
        first = batch[0].game_id
        self.attempts[first] = self.attempts.get(first, 0) + 1
        return self._submit(batch)

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
