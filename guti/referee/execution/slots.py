"""Game slots: N concurrent workers in one asyncio loop pulling scheduled games.

The slots know how to *play* a :class:`~guti.referee.game.scheduled.ScheduledGame`
and nothing about where the list came from or where results go: it pulls
jobs from ``next_job()`` and hands each finished game to ``on_result(job,
record)``, which the slot awaits before its next game (or, with ``ahead``, while it plays
it). A remote or multi-machine executor only has to honour the same three calls.

How one game is played, and where, is a subclass's: this process
(:class:`~guti.referee.execution.local.LocalExecutor`) or referee processes of its own
(:class:`~guti.referee.execution.referee_pool.RefereePool`).

Stopping is a :class:`~guti.referee.execution.stopping.RunControl`: when it is
*stopping* no new game starts, and running games finish (every wait in a game is
bounded by its time control, see :mod:`guti.referee.game.runner`) and are reported.
When it is *aborted* every game's wait ends at once (its engines are killed),
and no game still running is ever reported, so nothing half-played and no
"disconnect" that guti itself caused is ever stored; every engine is killed.
Cancelling :meth:`GameSlots.run` does the same.

Each worker is a *game slot*: with ``wait_ms`` (``-wait``) it pauses that long between
its games; with ``cpus`` (``-use-affinity``) the CPUs are split among the slots
(:func:`~guti.referee.process.affinity.slot_cpus`) and a game pins its two engine processes
to its slot's CPUs when it starts (processes move between slots with the pools); the
referee's own event loop is pinned to all of them for the run (with one slot, to that
slot's CPUs: referee and engines then hand each ply over on the same cores).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable

from guti.referee.execution.stopping import ABORT_GRACE, RunControl
from guti.referee.game.record import GameRecord
from guti.referee.game.scheduled import ScheduledGame

#: What is done with each finished game (store it, count it, ...); when a game slot
#: starts its next game meanwhile: :meth:`GameSlots.run`.
ResultHandler = Callable[[ScheduledGame, GameRecord], Awaitable[None]]


async def _next_turn(handling: Awaitable[None]) -> None:
    """``handling`` (a finished game's result) from the loop's next turn on: a slot that goes
    ahead sends its next game first (with ``-referees``, the referee process waits for it),
    and stores meanwhile (making the row is most of a game's CPU in guti's own process)."""
    await asyncio.sleep(0)
    await handling


class GameSlots(ABC):
    """``concurrency`` game slots that pull jobs and play them (:meth:`run`: the stops,
    aborts and ``-wait`` of the module docstring). How one game is played, and where,
    is the subclass's: :class:`~guti.referee.execution.local.LocalExecutor` in this process;
    :class:`~guti.referee.execution.referee_pool.RefereePool` in referee processes of its own."""

    def __init__(self, concurrency: int, wait_ms: int = 0) -> None:
        self.concurrency = max(1, concurrency)
        self.wait = wait_ms / 1000
        self.running: dict[int, ScheduledGame] = {}

    @abstractmethod
    async def check_engines(self) -> None:
        """Start every engine once before the first game; the first EngineStartError
        propagates (after everything started is quit)."""

    @abstractmethod
    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        """One game in game slot ``slot``; its record."""

    def placement(self) -> contextlib.AbstractContextManager[None]:
        """Where this process runs during :meth:`run` (nothing to change, here)."""
        return contextlib.nullcontext()

    @abstractmethod
    def kill_all(self) -> None:
        """SIGKILL every engine process (an abort)."""

    @abstractmethod
    async def close(self) -> None:
        """Quit every engine (the run is over)."""

    async def run(
        self,
        next_job: Callable[[], ScheduledGame | None],
        on_result: ResultHandler,
        control: RunControl,
        games: int | None = None,
        ahead: bool = False,
    ) -> None:
        """Play until ``next_job()`` returns None while no game runs, or ``control``
        stops; at most ``games`` at once besides the concurrency (no idle workers).
        A worker that finds no job while games run waits for one of them to end: a
        knockout schedules its next games from their results. Engines are closed on
        the way out (killed when aborted or cancelled).

        A slot starts its next game when ``on_result`` has returned; with ``ahead``, while
        its result is handled (its store waits for the disk), one game ahead at most: for
        runs whose results cannot change what is played next (no knockout, no SPRT).
        Either way every result is handled before this returns."""
        ended = asyncio.Event()  # set whenever a game ends (reported or not)
        handling: set[asyncio.Future[None]] = set()  # results handled while slots go on
        broken: list[asyncio.Future[None]] = []  # those that raised (a bug): raised below

        def handled(result: asyncio.Future[None]) -> None:
            handling.discard(result)
            if not result.cancelled() and result.exception() is not None:
                broken.append(result)

        async def worker(slot: int) -> None:
            played = False
            last: asyncio.Future[None] | None = None  # this slot's last result (ahead)
            while not control.stopping:
                job = next_job()
                if job is None:
                    if not self.running:
                        return
                    ended.clear()
                    await ended.wait()
                    continue
                if played and not await self._pause(control):
                    return  # stopped while waiting: the job is not played (nor stored)
                played = True
                # running until its result is handled (or handed on): a knockout schedules
                # its next games from it, so a slot with no job meanwhile waits, not quits
                self.running[job.game_id] = job
                try:
                    record = await control.unless_aborted(self.play(job, slot))
                    if record is None or control.aborted:
                        return  # aborted: this game has no true result; never reported
                    if ahead:
                        if last is not None:  # one game ahead of its results at most
                            await last
                        handling.add(last := asyncio.ensure_future(_next_turn(on_result(job, record))))
                        last.add_done_callback(handled)
                    else:
                        await on_result(job, record)
                finally:
                    self.running.pop(job.game_id, None)
                    ended.set()

        count = self.concurrency if games is None else max(1, min(self.concurrency, games))
        with self.placement():
            tasks = [asyncio.create_task(worker(slot)) for slot in range(count)]
            try:
                await asyncio.gather(*tasks)
                while handling:  # every finished game handled before the run ends
                    await asyncio.wait(handling)
                for result in broken:
                    result.result()
            except BaseException:  # cancelled (or a bug): abort this run's games
                control.aborted = control.stopping = True
                for task in tasks:
                    task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait([*tasks, *handling], timeout=ABORT_GRACE)
                raise
            finally:
                if control.aborted:
                    self.kill_all()
                await asyncio.shield(self.close())

    async def _pause(self, control: RunControl) -> bool:
        """``-wait``: sleep before a slot's next game (after its job is taken, so the last
        game is not followed by a wait), in short steps so that a stop is heard at once;
        False when the run stopped meanwhile (no further game)."""
        until = time.monotonic() + self.wait
        while not control.stopping and (left := until - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 0.05))
        return not control.stopping
