"""A tuning run's games on a Dask cluster (``guti tune -cluster``).

The cluster executor (:class:`~guti.referee.execution.cluster.ClusterExecutor`) plays a
run whose engines are fixed, sending them with every task as its *run spec*; the workers
keep each spec's engines warm. A tuning run's engines change with every iteration, so
here every iteration is a run spec of its own (the engine with that iteration's plus and
minus values), its engines quit on every worker once its games are stored. Every task is
one game, so a task never mixes two iterations. Importing this module imports Dask (through the cluster
executor; only the execution package's cluster modules import it): the run driver does it
only for ``-cluster``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from guti.referee.execution.cluster import ClusterExecutor
from guti.referee.execution.cluster_worker import abort_run, close_run, stop_run
from guti.referee.tournament.tuning.executor import ConfigFor, declared_options

if TYPE_CHECKING:
    from guti.referee.execution.cluster_address import ClusterAddress, EngineSetup
    from guti.referee.execution.remote_games import RunSpec
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.ugi.options import EngineOption

#: Seconds the workers may take to quit one iteration's engines.
RELEASE_TIMEOUT = 30.0


class TuneCluster(ClusterExecutor):
    """Plays a tuning run's games on the cluster at ``address``, iteration by iteration
    (see the module docstring); ``config_for`` gives each iteration's engines."""

    def __init__(self, address: ClusterAddress, base: EngineConfig, config_for: ConfigFor,
                 settings: GameSettings, games_per_iteration: int, say: Callable[[str], None],
                 tell: Callable[[str], None], setups: tuple[EngineSetup, ...] = ()) -> None:
        super().__init__(address, [base], settings, say, tell, setups=setups)
        self.base = base
        self.config_for = config_for
        self.games_per_iteration = games_per_iteration
        self.specs: dict[int, RunSpec] = {}
        self.declared: dict[str, EngineOption] = {}

    async def check_engines(self) -> None:
        """The engine as given started on every worker (the cluster's check), and once
        here to read the options it declares."""
        self.declared = await declared_options(self.base, self.spec.settings)
        await super().check_engines()

    def _spec_of(self, iteration: int) -> RunSpec:
        if iteration not in self.specs:
            engines = [self.config_for(iteration, side) for side in (0, 1)]
            self.specs[iteration] = dataclasses.replace(
                self.spec, run_id=f"{self.spec.run_id}-{iteration}", engines=engines,
                uploads_of=self.spec.run_id)
        return self.specs[iteration]

    def _batch_size(self) -> int:
        return 1

    def _spec_for(self, batch: list[ScheduledGame]) -> RunSpec:
        """Its iteration's spec: a task is one game, so never two iterations."""
        return self._spec_of(batch[0].game_id // self.games_per_iteration)

    async def release(self, iteration: int) -> None:
        """Every game of ``iteration`` is stored: quit its engines on every worker."""
        spec = self.specs.pop(iteration, None)
        if spec is not None and self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.run(close_run, spec.run_id, on_error="ignore",
                                                       workers=self.answering), RELEASE_TIMEOUT)

    async def stop_runs(self) -> None:
        """A graceful stop: no worker starts a new game of any iteration."""
        for spec in list(self.specs.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.run(stop_run, spec.run_id, on_error="ignore",
                                                       workers=self.answering), RELEASE_TIMEOUT)

    async def abort(self, futures: list[Any]) -> None:
        await super().abort(futures)
        for spec in list(self.specs.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.client.run(abort_run, spec.run_id, on_error="ignore",
                                    workers=self.answering), 5)

    async def close(self) -> None:
        for iteration in list(self.specs):
            await self.release(iteration)
        await super().close()
