"""A run's presence on a Dask cluster: reaching it, checking its workers, leaving it.

:class:`ClusterSession` holds what one run has on the cluster: the Dask client (and the
local cluster it started, with ``-cluster local``), the run's spec and Dask resource, and
the roster of workers fit to play it. It connects (starting a local cluster or reaching a
scheduler), registers the run's worker plugin (which checks each worker and uploads the
engines' folders), tells every worker to stop or abort the run, and leaves: the run's
engines quit and its plugin taken back, other runs on the same scheduler untouched.
:class:`~guti.referee.execution.cluster.ClusterExecutor` plays the games over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from distributed.comm.core import CommClosedError

from guti.referee.execution.cluster_address import ClusterAddress, ClusterError, EngineSetup
from guti.referee.execution.cluster_connect import connect_remote, quiet_dask, start_local
from guti.referee.execution.cluster_roster import CHECK_GRACE, WorkerRoster
from guti.referee.execution.cluster_uploads import pack_folders
from guti.referee.execution.cluster_worker import (
    GutiWorkerPlugin,
    abort_run,
    check_worker,
    close_run,
    guti_code_hash,
    run_resource,
    stop_run,
)
from guti.referee.execution.remote_games import RunSpec

if TYPE_CHECKING:
    from distributed import Future

    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.settings import GameSettings
    from guti.referee.process.engine_process import TrafficHook

#: Seconds the end of a run may take on the workers (quitting engines) before giving up.
CLOSE_TIMEOUT = 30.0


class ClusterSession:
    """One run on a Dask cluster, from connecting to leaving; see the module docstring."""

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
        self.address = address
        self.tell = tell
        self.traffic = traffic
        self.say = say
        # The openings travel with each game: the settings sent with every task stay small.
        slim = dataclasses.replace(settings, openings=None, start_fen=None)
        self.spec = RunSpec(uuid.uuid4().hex, engines, slim, guti_code_hash(),
                            traffic is not None, setups, address.per_worker, sys.executable)
        self.resource = run_resource(self.spec.run_id)
        self.client: Any = None
        self.cluster: Any = None  # a local cluster this run started
        self.roster = WorkerRoster(self.resource, say)

    async def connect(self) -> None:
        """Start the local cluster, or reach the scheduler and wait for a worker; then
        this run's plugin on every worker, and its refusals heard."""
        quiet_dask()
        a = self.address
        if a.local:
            self.client = await start_local(a.local, self._keep_cluster)
        else:
            self.client = await connect_remote(a)
        self.client.subscribe_topic(self.resource, self.roster.on_refusal)
        plugin = GutiWorkerPlugin(self.spec, local=bool(a.local),
                                  uploads=pack_folders(self.spec.setups),
                                  client_id=self.client.id)
        # Dask stores the plugin for every worker, then waits for each worker's answer: a
        # frozen worker never gives one, so the others are not waited for past the grace
        registering = asyncio.ensure_future(
            self.client.register_plugin(plugin, name=self.resource))
        registering.add_done_callback(_retrieved)
        await asyncio.wait({registering}, timeout=CHECK_GRACE)
        if registering.done():
            registering.result()

    def _keep_cluster(self, cluster: Any) -> None:
        self.cluster = cluster

    async def check_engines(self) -> None:
        """Every engine started once on every worker (and kept warm), same guti code
        everywhere. A worker that fails is named and left out of this run; when every
        worker fails, :class:`ClusterError` naming one, and nothing is left running."""
        try:
            await self.connect()
            roster = self.roster
            await roster.first_check(self.client, check_worker, self.spec)
            if roster.slots:
                self.tell(f"cluster {self.address.text}: {len(roster.slots)} worker(s) "
                          f"playing, concurrency {roster.concurrency}")
            else:
                self.tell(f"cluster {self.address.text}: no worker yet; the run waits for one")
        except (CommClosedError, ConnectionError, TimeoutError) as exc:  # the scheduler went away
            await asyncio.shield(self.close())
            raise ClusterError(f"lost the Dask scheduler at {self.address.text} ({exc})"
                               ) from None
        except BaseException:
            await asyncio.shield(self.close())
            raise

    @property
    def answering(self) -> list[str] | None:
        """The workers given the run's tasks, and told of a stop, an abort or the end of
        the run (None: all): not the silent ones, which would hold each telling up for
        its whole bound, and whose slots Dask would fill with new games. A
        silent worker that runs again ends the games taken from it (it no longer holds
        their tasks) and quits the run's engines when its plugin is taken back."""
        return self.roster.playing if self.roster.silent else None

    async def stop_runs(self) -> None:
        """A graceful stop: every worker plays no new game of this run (bounded: a
        worker that does not answer is not waited for)."""
        await asyncio.wait_for(self.client.run(stop_run, self.spec.run_id, on_error="ignore",
                                               workers=self.answering), CLOSE_TIMEOUT)

    def lost(self, whom: str, cause: BaseException | None = None) -> ClusterError:
        """The run's one line when ``whom`` went away mid-run: what is stored is safe."""
        why = "" if cause is None else f" ({cause})"
        return ClusterError(f"lost {whom} at {self.address.text}{why}; every game stored so "
                            "far is safe, and -resume continues the tournament")

    async def lost_whom(self) -> str:
        """Who went away when a connection broke mid-run: the scheduler, unless it still
        answers (then a worker's connection broke past Dask's own recovery)."""
        client = self.client
        if client is not None and client.status == "running":
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.scheduler.identity(), 5)
                return "contact with a worker of the cluster"
        return "the Dask scheduler"

    async def abort(self, futures: list[Future]) -> None:
        """Cancel the tasks and kill this run's games on every worker (bounded)."""
        if self.client is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.cancel(futures, force=True), 5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.client.run(abort_run, self.spec.run_id, on_error="ignore",
                                workers=self.answering), 5)

    def kill_all(self) -> None:
        """Nothing to kill on this machine: the engines run on the workers, where
        :meth:`abort` kills this run's games and :meth:`close` quits its engines."""

    async def close(self) -> None:
        """Quit this run's engines on every worker, take its plugin and resource back
        from them (other runs go on), leave the scheduler, stop a local
        cluster. Safe to call twice."""
        client, self.client = self.client, None
        cluster, self.cluster = self.cluster, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.run(close_run, self.spec.run_id, on_error="ignore",
                                                  workers=self.answering), CLOSE_TIMEOUT)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.unregister_worker_plugin(self.resource), 10)
            with contextlib.suppress(Exception):  # bounded: a frozen scheduler never answers
                await asyncio.wait_for(client.close(), 10)
        if cluster is not None:
            with contextlib.suppress(Exception):
                await cluster.close()


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A task left to finish in the background: its exception, if any, is not reported."""
    if not task.cancelled():
        task.exception()
