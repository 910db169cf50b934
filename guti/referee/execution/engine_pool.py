"""Processes of one engine, each owned by one game at a time: started on demand, reused
while they behave, replaced after a fault.

A game *takes* a process from its engine's pool (starting one if none is idle) and gives
it back afterwards. A process that was at fault (crash, stall, protocol error, ...) is
quit and never reused; with ``restart=on`` every process is quit after its game. A match
uses one pool per engine with one game at a time (so one process each); a tournament at
concurrency N may run several processes of the same engine.

Every start in an event loop is known to that loop's :class:`EngineStarts`, and a game
asks its first move only once the starts that were under way when its own engines were
ready have ended (:func:`engine_starts`, awaited by
:func:`~guti.referee.execution.pairing.play_job`). Why: a start is a burst of work (the
program loads, the referee handshakes it), the run's first games start all their engines
at once, and a process replaced after a fault starts while other games go on; a game
whose clock began in the middle of such a burst would pay for engines that are not its
own. Games already under way are not held (their clocks run anyway); a start is bounded
by the handshake timeout, and a game waits only for the starts under way when it asks,
never for later ones, so a stream of starts cannot hold it for long.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from guti.referee.game.defaults import DEFAULT_HANDSHAKE_TIMEOUT
from guti.referee.process.event_loop import PerLoop
from guti.referee.ugi.client import UgiEngine

if TYPE_CHECKING:
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.process.engine_process import TrafficHook


class EngineStarts:
    """The engine processes being started in one event loop (see the module docstring)."""

    def __init__(self) -> None:
        self.pending: set[asyncio.Future[None]] = set()
        #: Games waiting in :meth:`settled` now (what a test looks at).
        self.waiting = 0

    def began(self) -> asyncio.Future[None]:
        """A start has begun; its future is to be ended with :meth:`ended`."""
        start: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.add(start)
        return start

    def ended(self, start: asyncio.Future[None]) -> None:
        self.pending.discard(start)
        if not start.done():
            start.set_result(None)

    async def settled(self) -> None:
        """Return once every start under way now has ended (at once when there is none)."""
        under_way = set(self.pending)
        if not under_way:
            return
        self.waiting += 1
        try:
            await asyncio.wait(under_way)
        finally:
            self.waiting -= 1


_STARTS: PerLoop[EngineStarts] = PerLoop(lambda loop: EngineStarts())


def engine_starts() -> EngineStarts:
    """The running loop's :class:`EngineStarts` (made when first asked for)."""
    return _STARTS.get()


class EnginePool:
    """Idle, handshaken processes of one engine; started on demand. With
    ``tag_processes`` each process's traffic-log lines are tagged ``#N`` (its start
    number), for logs shared by concurrent games."""

    def __init__(
        self,
        config: EngineConfig,
        game: str,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
        traffic: TrafficHook | None = None,
        tag_processes: bool = False,
    ) -> None:
        self.config = config
        self.tag_processes = tag_processes
        self.game = game
        self.handshake_timeout = handshake_timeout
        self.traffic = traffic
        self.idle: list[UgiEngine] = []
        self.busy: set[UgiEngine] = set()
        self.starts = 0
        self.number: dict[UgiEngine, int] = {}  # process -> its start count, for logs
        #: Set by :meth:`close`: a process that comes back afterwards (one started while the
        #: pool was closing, e.g. a late worker's check) is quit, never kept idle.
        self.closed = False

    @property
    def name(self) -> str:
        return self.config.name

    async def take(self) -> UgiEngine:
        """A running engine for one game (EngineStartError if none can be started)."""
        while self.idle:
            proc = self.idle.pop()
            if proc.is_alive:
                self.busy.add(proc)
                return proc
            self.number.pop(proc, None)
            await proc.quit(grace=0.0)
        self.starts += 1
        number = self.starts  # taken before the await: another take() may start one meanwhile
        traffic = self.traffic
        tagged = getattr(traffic, "hook", None) if self.tag_processes else None
        if tagged is not None:  # concurrent games share one log: "#2 ref" is ref's 2nd process
            traffic = tagged(f"#{number}")
        starts = engine_starts()
        start = starts.began()
        try:
            proc = await UgiEngine.launch(self.config, self.game, self.handshake_timeout,
                                          traffic)
        finally:
            starts.ended(start)
        self.number[proc] = number
        self.busy.add(proc)
        return proc

    async def give_back(self, proc: UgiEngine, faulty: bool, played: bool = True) -> None:
        """After a game: keep the process for the next one, unless it was at fault
        (never trusted again) or ``restart=on`` and it has just played a game
        (``played=False``: it was only started, e.g. to check that it starts)."""
        self.busy.discard(proc)
        if self.closed or faulty or not proc.is_alive or (self.config.restart and played):
            self.number.pop(proc, None)
            await proc.quit(grace=0.0 if faulty else 1.0)
        else:
            self.idle.append(proc)

    async def close(self) -> None:
        """Quit every process politely (idle ones) and kill any still in a game."""
        self.closed = True
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
