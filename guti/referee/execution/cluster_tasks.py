"""The bookkeeping of a cluster run's tasks, apart from the executor that submits them.

:class:`TaskBook` knows which batch each task carries, which tasks this client took
back (withdrawn on a stop, or submitted again because Dask parked them for want of a
worker), and asks the scheduler which tasks no worker has taken; :class:`JobFeed` gives
the jobs still to submit. Plain bookkeeping, so that the executor's loop
(:mod:`guti.referee.execution.cluster`) reads as what it decides.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from distributed import Future, as_completed

if TYPE_CHECKING:
    from guti.referee.execution.stopping import RunControl
    from guti.referee.game.scheduled import ScheduledGame

#: A task no worker has taken yet (the scheduler's states): withdrawn on a stop.
UNTAKEN = frozenset({"released", "waiting", "no-worker", "queued"})


class TaskBook:
    """The run's tasks in flight: their batches, the ones taken back, and ``done``, the
    ``as_completed`` they all end in (a task taken back ends there too, cancelled, and
    :meth:`pop` says it carries nothing more)."""

    def __init__(self, client: Any, in_flight: dict[int, ScheduledGame]) -> None:
        self.client = client
        self.in_flight = in_flight  # the executor's games submitted, not yet reported
        self.jobs: dict[Future, list[ScheduledGame]] = {}
        self.withdrawn: set[Future] = set()
        self.done = as_completed(loop=client.loop)

    @property
    def load(self) -> int:
        """Tasks in flight."""
        return len(self.jobs)

    def futures(self) -> list[Future]:
        return list(self.jobs)

    def add(self, future: Future, batch: list[ScheduledGame]) -> None:
        self.jobs[future] = batch
        self.in_flight.update((job.game_id, job) for job in batch)
        self.done.add(future)

    def pop(self, future: Future) -> list[ScheduledGame] | None:
        """The batch of a task that ended; None for one taken back."""
        batch = self.jobs.pop(future)
        if future in self.withdrawn:
            self.withdrawn.discard(future)
            return None
        return batch

    async def withdraw(self, futures: list[Future],
                       again: Callable[[list[ScheduledGame]], Future] | None = None) -> None:
        """Take back tasks no worker has taken: submitted ``again``, or not played (a
        stop: their games are no longer in flight)."""
        for future in futures:
            batch = self.jobs.get(future)
            if batch is None or future in self.withdrawn:
                continue
            self.withdrawn.add(future)
            if again is not None:
                self.add(again(batch), batch)
            else:
                for job in batch:
                    self.in_flight.pop(job.game_id, None)
        if futures:
            await self.client.cancel(futures)

    async def held_by(self, workers: set[str]) -> list[Future]:
        """The tasks (not taken back) that ``workers`` run or hold to run next."""
        processing: dict[str, list[Any]] = {}
        with contextlib.suppress(Exception):  # (a worker that left meanwhile: asked again)
            processing = await self.client.scheduler.processing(workers=sorted(workers))
        keys = {key for held in processing.values() for key in held}
        return [f for f in self.jobs if f.key in keys and f not in self.withdrawn]

    async def untaken(self) -> tuple[list[Future], list[Future]]:
        """The tasks no worker has (the scheduler's view), and those of them Dask parked
        for want of a worker (it does not look at them again when a worker gains the
        run's resource, so they are submitted again)."""
        futures = [f for f in self.jobs if f not in self.withdrawn]
        if not futures:
            return [], []
        states: dict[Any, Any] = {}
        with contextlib.suppress(Exception):
            states = await self.client.scheduler.get_task_status(keys=[f.key for f in futures])
        untaken = [f for f in futures if states.get(f.key) in UNTAKEN]
        return untaken, [f for f in untaken if states.get(f.key) == "no-worker"]


class JobFeed:
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


async def gathered(future: Future, interval: float, limit: float) -> Any:
    """The result of a finished task, fetched from the worker that holds it; None if that
    worker died first, or did not hand it over within ``limit`` s (a frozen worker).

    When the worker died, Dask resets the task to be played again and its gather waits
    until it has been; with no worker fit for the run the task is parked and that wait
    has no end. So the task's state is looked at every ``interval`` s while the result
    travels, and the gather is given up once the task is no longer finished (the caller
    keeps the task in its book, where a parked one is submitted again) or ``limit`` s
    have passed (the caller plays the games again)."""

    async def result() -> Any:
        return await future

    fetch = asyncio.ensure_future(result())
    waited = 0.0
    try:
        while True:
            done, _ = await asyncio.wait({fetch}, timeout=interval)
            if done:
                return fetch.result()
            waited += interval
            if future.status != "finished" or waited >= limit:
                return None
    finally:
        fetch.cancel()  # given up, or this wait was cancelled (a no-op once done)


async def set_when_stopping(control: RunControl, stop: asyncio.Event) -> None:
    """Bridge the run's stop state (a flag set by signal handlers and the SPRT) to the
    event the submitting loop waits on."""
    while not control.stopping:
        await asyncio.sleep(0.05)
    stop.set()

