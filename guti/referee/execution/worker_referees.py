"""Referee processes on a cluster worker: its games spread over its cores, as on one machine.

Why: a Dask worker plays its games on one event loop (:mod:`guti.referee.execution.cluster_worker`),
one core's worth of refereeing. With ``-concurrency`` per worker above
:data:`~guti.referee.execution.referee_choice.GAMES_PER_REFEREE` that loop reads its replies
late, as one process does on one machine, and the engines' clocks would pay for it. So the
worker does what ``-referees auto`` does locally: it keeps the run's setups (requirements,
builds, uploaded folders) and hands each game to one of
:func:`~guti.referee.execution.referee_choice.referee_count`'s referee processes
(:class:`~guti.referee.execution.referee_pool.RefereeLink`, started as new interpreters:
a Dask worker has threads, so nothing is forked from it), the one with the fewest games
in play. Each plays it as the worker would have (:mod:`guti.referee.execution.referee_child`)
and its outcome goes back to the client as the worker's own.

Faults keep the worker's outcomes: a referee process that dies is started again and its
games are played again (at most :data:`~guti.referee.execution.referee_pool.MAX_ATTEMPTS`
times each, then the game raises and the client reports it); an abort cancels every game
(each process kills its engines); closing the run closes the processes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import TYPE_CHECKING

from guti.referee.execution.referee_choice import AUTO_REFEREES, referee_count
from guti.referee.execution.referee_pool import (
    MAX_ATTEMPTS,
    RefereeFailed,
    RefereeLink,
    RefereeLost,
)

if TYPE_CHECKING:
    from guti.referee.execution.remote_games import GameOutcome, RunSpec
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.scheduled import ScheduledGame


def worker_referee_count(spec: RunSpec) -> int:
    """How many referee processes a worker starts for a run (0: it referees its games on
    its own loop): ``auto``'s rule for the games at once on a worker (``-concurrency``
    with ``-cluster``; one game per worker thread otherwise, which keeps the loop's)."""
    count = referee_count(AUTO_REFEREES, spec.per_worker)
    return count if count > 1 else 0


class WorkerReferees:
    """One run's referee processes on this worker, for games of ``engines`` (as this
    worker starts them: its paths, its Python)."""

    def __init__(self, spec: RunSpec, engines: list[EngineConfig], count: int) -> None:
        # the processes' run: the engines as this worker starts them, nothing left to set
        # up (the worker has done it), no games at once of its own
        child = dataclasses.replace(spec, engines=engines, setups=(), per_worker=0,
                                    python=sys.executable)
        self.links = [RefereeLink(k + 1, child, None) for k in range(count)]
        self.load = [0] * count  # games handed to each process and not back yet

    async def check(self) -> list[str]:
        """Start every process, and in each every engine once; the errors."""
        answers = await asyncio.gather(*(link.check() for link in self.links),
                                       return_exceptions=True)
        return [str(a) for a in answers if isinstance(a, BaseException) or a]

    async def play(self, job: ScheduledGame) -> GameOutcome:
        """The game played by the process with the fewest games in play; played again
        when that process dies, at most :data:`MAX_ATTEMPTS` times."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            k = min(range(len(self.links)), key=self.load.__getitem__)
            self.load[k] += 1
            try:
                return await self.links[k].play(job)
            except RefereeLost as exc:
                if attempt == MAX_ATTEMPTS:
                    raise RefereeFailed(f"game {job.game_id + 1}: its referee process died "
                                        f"{MAX_ATTEMPTS} times (last: {exc})") from None
            finally:
                self.load[k] -= 1
        raise AssertionError("unreachable")

    def abort(self) -> None:
        for link in self.links:
            link.send(("abort",))

    async def close(self) -> None:
        await asyncio.gather(*(link.close() for link in self.links), return_exceptions=True)
