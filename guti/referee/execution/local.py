"""The local executor: game slots played in this process, engines from pools.

Engine processes come from one :class:`~guti.referee.execution.engine_pool.EnginePool` per
engine, so a process is owned by exactly one game at a time. With ``cpus``
(``-use-affinity``) a game pins its two engine processes to its slot's CPUs when it
starts, and the referee's own loop is pinned for the run
(:mod:`guti.referee.execution.slots`).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from guti.referee.execution.engine_pool import EnginePool
from guti.referee.execution.pairing import play_job
from guti.referee.execution.slots import GameSlots
from guti.referee.process.affinity import pin_process_tree, referee_pinned, slot_cpus
from guti.referee.ugi.client import UgiEngine

if TYPE_CHECKING:
    from guti.referee.execution.observer import TournamentObserver
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.observer import MoveObserver
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.process.engine_process import TrafficHook


class LocalExecutor(GameSlots):
    """Plays jobs with ``concurrency`` workers in this process; see the module docstring."""

    def __init__(
        self,
        engines: list[EngineConfig],
        settings: GameSettings,
        concurrency: int,
        traffic: TrafficHook | None = None,
        tag_processes: bool = True,
        observer: TournamentObserver | None = None,
        wait_ms: int = 0,
        cpus: Sequence[int] | None = None,
    ) -> None:
        super().__init__(concurrency, wait_ms)
        self.settings = settings
        self.cpus = tuple(cpus) if cpus else None
        self.observer = observer  # told of every game start (the live page)
        self.tag_processes = tag_processes
        self.pools = [
            EnginePool(c, settings.name, settings.timeouts.handshake, traffic, tag_processes)
            for c in engines
        ]
        self.traffic = traffic
        #: The CPUs each engine process was last pinned to: a process that stays in one
        #: slot is pinned by its first game only (pinning walks its /proc tree, about
        #: 0.1 ms a game). Weakly held: a process quit is forgotten with it (``restart=on``
        #: quits one a game).
        self.pinned: weakref.WeakKeyDictionary[UgiEngine, tuple[int, ...]] = (
            weakref.WeakKeyDictionary())

    async def check_engines(self) -> None:
        """Start one process of every engine (concurrently) and keep it idle; the
        first EngineStartError propagates (after every started process is quit)."""
        results = await asyncio.gather(*(p.take() for p in self.pools), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for pool, res in zip(self.pools, results, strict=True):
            if isinstance(res, UgiEngine):
                await pool.give_back(res, faulty=False, played=False)
        if errors:
            await self.close()
            raise errors[0]

    def placement(self) -> contextlib.AbstractContextManager[None]:
        """This process's event loop pinned, for the run, to the CPUs of the slots it
        referees (all of ``-use-affinity``'s; nothing without it)."""
        return referee_pinned(self.cpus)

    def kill_all(self) -> None:
        """SIGKILL every engine process of every pool (an abort)."""
        for pool in self.pools:
            pool.kill_all()

    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        """One game between the job's engines (:func:`~guti.referee.execution.pairing.play_job`),
        announced in the traffic log and to the observer; with ``cpus`` both engines are
        pinned to game slot ``slot``'s CPUs first (unless an earlier game left them there:
        what they start later, threads or processes, inherits those CPUs)."""
        white, black = self.pools[job.white], self.pools[job.black]
        note = getattr(self.traffic, "note", None)
        cpus = slot_cpus(self.cpus, self.concurrency, slot) if self.cpus else None

        def before_play(w: UgiEngine, b: UgiEngine) -> MoveObserver | None:
            for proc in (w, b):
                pid = proc.pid
                if cpus and pid is not None and self.pinned.get(proc) != cpus:
                    pin_process_tree(pid, cpus)
                    self.pinned[proc] = cpus
            if note is not None:
                w_tag = f"#{white.number.get(w)} " if self.tag_processes else ""
                b_tag = f"#{black.number.get(b)} " if self.tag_processes else ""
                note(f"game {job.game_id + 1}: {w_tag}{white.name} (white)"
                     f" vs {b_tag}{black.name} (black)")
            return self.observer.started(job, white.name, black.name) if self.observer else None

        record = await play_job(job, white, black, self.settings, before_play)
        if note is not None:
            note(f"game {job.game_id + 1}: {record.result} ({record.reason}) {record.detail}".rstrip())
        return record

    async def close(self) -> None:
        await asyncio.gather(*(p.close() for p in self.pools), return_exceptions=True)
