"""Game slots for a tuning run: every iteration's two engines carry their own option values.

A tournament's engines are fixed, so its executors keep one pool of processes per engine.
Here each iteration plays the engine with other values, so the pools are per iteration and
side (:class:`~guti.referee.execution.engine_pool.EnginePool`, a process reused for the
games of its iteration), started when the iteration's first game is played and quit once
all its games are stored. A game is played as a tournament's is
(:func:`~guti.referee.execution.pairing.play_job`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from guti.referee.execution.engine_pool import EnginePool
from guti.referee.execution.executor import GameExecutor
from guti.referee.execution.pairing import play_job
from guti.referee.execution.slots import GameSlots
from guti.referee.game.engine_config import EngineConfig

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.ugi.options import EngineOption

#: (iteration, side) -> the engine as that side of that iteration plays it.
ConfigFor = Callable[[int, int], EngineConfig]


class TuneExecutor(GameExecutor, Protocol):
    """What the run driver needs of the ways to play a tuning run's games: those of every
    executor, the options the engine declared (read by ``check_engines``), and
    ``release``, told when an iteration's games are all stored."""

    declared: dict[str, EngineOption]

    async def release(self, iteration: int) -> None:
        """Every game of ``iteration`` is stored: quit its engines."""


async def declared_options(engine: EngineConfig, settings: GameSettings
                           ) -> dict[str, EngineOption]:
    """The options ``engine`` declares, from one start of it here, for ``settings``'s
    game (EngineStartError if it cannot start)."""
    pool = EnginePool(engine, settings.name, settings.timeouts.handshake)
    proc = await pool.take()
    declared = dict(proc.options)
    await pool.give_back(proc, faulty=False, played=False)
    await pool.close()
    return declared


class TuneSlots(GameSlots):
    """``concurrency`` game slots playing a tuning run's games; ``config_for`` gives the
    engine of each iteration and side, ``base`` the engine as given (checked once)."""

    def __init__(self, base: EngineConfig, config_for: ConfigFor, settings: GameSettings,
                 games_per_iteration: int, concurrency: int) -> None:
        super().__init__(concurrency)
        self.base = base
        self.config_for = config_for
        self.settings = settings
        self.games_per_iteration = games_per_iteration
        self.pools: dict[tuple[int, int], EnginePool] = {}
        self.declared: dict[str, EngineOption] = {}  # the base engine's options, by name

    def _pool(self, iteration: int, side: int) -> EnginePool:
        key = (iteration, side)
        if key not in self.pools:
            config = self.config_for(iteration, side)
            self.pools[key] = EnginePool(config, self.settings.name,
                                         self.settings.timeouts.handshake)
        return self.pools[key]

    async def check_engines(self) -> None:
        """Start the engine once as given and note the options it declares (the
        parameters are checked against them before any game)."""
        self.declared = await declared_options(self.base, self.settings)

    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        k = job.game_id // self.games_per_iteration
        return await play_job(job, self._pool(k, job.white), self._pool(k, job.black),
                              self.settings)

    async def release(self, iteration: int) -> None:
        """Every game of ``iteration`` is stored: quit its engines."""
        pools = [self.pools.pop(key) for key in list(self.pools) if key[0] == iteration]
        await asyncio.gather(*(p.close() for p in pools), return_exceptions=True)

    def kill_all(self) -> None:
        for pool in self.pools.values():
            pool.kill_all()

    async def close(self) -> None:
        pools, self.pools = list(self.pools.values()), {}
        await asyncio.gather(*(p.close() for p in pools), return_exceptions=True)
