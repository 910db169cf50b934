"""The ways to run a run's games, behind one interface: :class:`GameExecutor`.

Three ways play games: this process
(:class:`~guti.referee.execution.local.LocalExecutor`), referee processes of its own
(:class:`~guti.referee.execution.referee_pool.RefereePool`, ``-referees``, chosen by
guti by default: what keeps clocks fair with many games at once) and Dask workers
(:class:`~guti.referee.execution.cluster.ClusterExecutor`, ``-cluster``). An
:class:`ExecutionPlan` says which; :func:`prepared` readies it before the event loop
starts (forks the referee processes, or the watcher of the engines' process groups), and
the :class:`Execution` it yields opens the executor once the loop runs.

Dask is imported only when ``-cluster`` was given (a run without it never loads it), and
a missing Dask is one clear line, not a traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from guti.referee.execution.cluster_address import ClusterAddress, EngineSetup, dask_missing
from guti.referee.execution.local import LocalExecutor
from guti.referee.execution.referee_choice import AUTO_REFEREES, referee_count
from guti.referee.execution.referee_pool import RefereePool, fork_referees
from guti.referee.process.forked import ForkedChild, start_lifeline

if TYPE_CHECKING:
    from guti.referee.execution.observer import TournamentObserver
    from guti.referee.execution.slots import ResultHandler
    from guti.referee.execution.stopping import RunControl
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings
    from guti.referee.process.engine_process import TrafficHook

#: Where an executor tells a line (see :meth:`Execution.open`).
Say = Callable[[str], None]


class GameExecutor(Protocol):
    """What every way of running games does: start every engine once, play the jobs
    ``next_job()`` gives (each result to ``on_result``) until none is left or the run
    stops, kill every engine on an abort, quit them at the end
    (:meth:`~guti.referee.execution.slots.GameSlots.run` says how stops and aborts go)."""

    @property
    def running(self) -> dict[int, ScheduledGame]:
        """The games being played now, by id."""

    async def check_engines(self) -> None:
        """Start every engine once; the first EngineStartError propagates."""

    async def run(
        self,
        next_job: Callable[[], ScheduledGame | None],
        on_result: ResultHandler,
        control: RunControl,
        games: int | None = None,
        ahead: bool = False,
    ) -> None:
        """Play until ``next_job()`` returns None while no game runs, or ``control`` stops."""

    def kill_all(self) -> None:
        """SIGKILL every engine process (an abort)."""

    async def close(self) -> None:
        """Quit every engine (the run is over)."""


@dataclass(frozen=True)
class ExecutionPlan:
    """How a run's games are played: the engines and game, ``concurrency`` game slots,
    ``referees`` processes refereeing them (1: this one; 0: ``auto``, chosen from the
    concurrency, the run's ``games`` and the cores), or a ``cluster`` (with the ``setups``
    its workers run first), the slots' ``-wait`` and ``-use-affinity`` CPUs,
    ``tag_processes``: engine processes marked as the tournament's; ``live``: the live
    page shows every move, which only games refereed in this process tell it."""

    engines: list[EngineConfig]
    game: GameSettings
    concurrency: int = 1
    referees: int = 1
    cluster: ClusterAddress | None = None
    setups: tuple[EngineSetup, ...] = ()
    wait_ms: int = 0
    cpus: tuple[int, ...] | None = None
    tag_processes: bool = True
    games: int | None = None
    live: bool = False

    def referee_processes(self) -> int:
        """How many referee processes the run starts (0: it referees every game in this
        process, or on a cluster): :func:`~guti.referee.execution.referee_choice.referee_count`;
        ``auto`` with the live page keeps every game here, where the page sees its moves."""
        if self.referees == 1 or self.cluster is not None:
            return 0
        if self.referees == AUTO_REFEREES and self.live:
            return 0
        count = referee_count(self.referees, self.concurrency, self.games, self.cpus)
        return 0 if count <= 1 else count


class Execution:
    """A plan readied before the loop (:func:`prepared`), or as it is (referee processes
    then start as new interpreters): :meth:`open` gives its executor."""

    def __init__(self, plan: ExecutionPlan, forked: Sequence[ForkedChild] = ()) -> None:
        self.plan = plan
        self._forked = tuple(forked)

    def open(
        self, trouble: Say, news: Say, traffic: TrafficHook | None = None,
        observer: TournamentObserver | None = None,
    ) -> GameExecutor:
        """The executor of the plan (not started: :meth:`GameExecutor.check_engines`
        starts it); ``trouble`` and ``news`` hear of what happens to the referee processes
        or the cluster's workers (a process or worker lost, a game played again; workers
        joining or waited for: the caller shows them, this layer prints nothing);
        ``observer`` hears of every game start (not on a cluster)."""
        p = self.plan
        if p.cluster is not None:  # played by Dask workers; Dask is imported only here
            return cluster_executor(p.cluster, p.engines, p.game, trouble, news, traffic,
                                    setups=p.setups)
        if count := p.referee_processes():
            return RefereePool(p.engines, p.game, p.concurrency, count, traffic,
                               observer=observer, wait_ms=p.wait_ms, cpus=p.cpus,
                               forked=self._forked, say=trouble)
        return LocalExecutor(p.engines, p.game, p.concurrency, traffic,
                             tag_processes=p.tag_processes, observer=observer,
                             wait_ms=p.wait_ms, cpus=p.cpus)


@contextlib.contextmanager
def prepared(plan: ExecutionPlan) -> Iterator[Execution]:
    """``plan`` readied before the event loop starts: its referee processes forked (each
    ready at once), or, when this process starts the engines, the watcher of their
    process groups; referee processes the run did not use are reaped on the way out."""
    count = plan.referee_processes()
    if count == 0 and plan.cluster is None:
        start_lifeline()
    with fork_referees(count) as forked:
        yield Execution(plan, forked)


def cluster_executor(
    address: ClusterAddress,
    engines: list[EngineConfig],
    game: GameSettings,
    trouble: Say,
    news: Say,
    traffic: TrafficHook | None = None,
    setups: tuple[EngineSetup, ...] = (),
) -> GameExecutor:
    """A :class:`~guti.referee.execution.cluster.ClusterExecutor`; Dask is imported here,
    only when ``-cluster`` was given."""
    try:
        from guti.referee.execution.cluster import ClusterExecutor
    except ImportError as exc:
        raise dask_missing(address, exc) from None
    return ClusterExecutor(address, engines, game, trouble, news, traffic, setups)
