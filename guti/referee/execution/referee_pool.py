"""``-referees``: a tournament's game slots refereed by N processes of guti's own.

Why: one Python process referees about one ply per 0.1 ms of its CPU; with engines that
answer in microseconds that, not the engines, limits games per second, and a second core
cannot help a single process; and the more games one process referees at once, the later
it reads their replies, which the engines' clocks would pay for. How many processes a run
gets (``-referees N``, or ``auto`` by default) is for
:mod:`guti.referee.execution.referee_choice` to say. :class:`RefereePool` keeps the local
executor's game slots
(:class:`~guti.referee.execution.slots.GameSlots`: the same scheduling, ``-wait``, stops
and aborts) and plays each slot's games in a referee process
(:mod:`guti.referee.execution.referee_child`). The slots are cut into N consecutive groups,
one per process. With ``-use-affinity`` each process is pinned to its slots' CPUs
together with the engines it starts.

How a referee process starts: ``guti tournament`` forks them from itself before its event
loop begins (:func:`fork_referees`, :mod:`guti.referee.process.forked`), so each is ready at
once with guti's modules already imported; a new interpreter (``python -m
guti.referee.execution.referee_child``) takes 0.1 s or more of CPU to import them, which a
short run of instant engines feels. Where guti cannot fork safely (not Linux, a loop or
another thread already running, as in a caller's own loop) and for every process started
again after a death, it is such a new interpreter. Either way it names itself
``guti-referee``.

This process stays the only writer of the database: a game's record comes back over the
link (:mod:`guti.referee.execution.referee_link`) when it ends and is stored by the caller at
once, as locally; ``-log`` gets each game's traffic in one block as it ends, as with
``-cluster`` (:func:`~guti.referee.execution.remote_games.log_outcome`), and the live page is
told each game's start and end, not its moves.

Faults, each with one outcome:

- a referee process that dies (killed, or crashed) is started again and its running
  games are played again from their start (nothing of them was stored); if the same game
  loses its referee :data:`MAX_ATTEMPTS` times the run ends with an error;
- an abort (second Ctrl-C, SIGTERM) tells every process to kill its games' engines, and
  nothing of those games is reported; then every process is told to close;
- guti killed outright: each process is killed by the kernel with it (parent-death
  signal) and its engines with it (their own parent-death signal and its lifeline).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from guti.referee.execution import referee_child
from guti.referee.execution.referee_link import Message, frame, read_message
from guti.referee.execution.remote_games import GameOutcome, RunSpec, log_outcome
from guti.referee.execution.slots import GameSlots
from guti.referee.process.affinity import slot_cpus
from guti.referee.process.engine_process import TrafficHook, describe_exit
from guti.referee.process.errors import EngineStartError
from guti.referee.process.event_loop import loop_factory
from guti.referee.process.forked import ForkedChild, ForkedProcess, can_fork, fork_child

if TYPE_CHECKING:
    from guti.referee.execution.observer import TournamentObserver
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings

#: Times one game may lose its referee process before the run gives up.
MAX_ATTEMPTS = 3
#: Seconds a referee process has to quit its engines and exit once told to close.
CLOSE_GRACE = 10.0


#: CPU seconds of every referee process this guti has closed, its engines not counted: the
#: referee's own cost, which ``getrusage`` of this process cannot see (the engines'
#: would be mixed in): refereeing, and starting. A measurement of what refereeing costs
#: adds it to this process's own.
_closed_cpu_seconds = {"run": 0.0, "start": 0.0}


def referee_processes_cpu(part: str = "run") -> float:
    """CPU seconds the referee processes of this guti reported as they closed, so far:
    ``run``, from the run's arrival on; ``start``, before it (Python and the imports)."""
    return _closed_cpu_seconds[part]


class RefereeLost(Exception):
    """The referee process playing a game died; the game is played again."""


class RefereeFailed(EngineStartError):
    """A game raised inside a referee process (a bug), or lost its referee too often, or a
    referee process died while its engines started. An :class:`EngineStartError`, as
    ``-cluster``'s ``ClusterError``: the run ends with one line, exit 2."""


class RefereeLink:
    """One referee process: started on demand, its answers routed to who waits for them."""

    def __init__(self, number: int, spec: RunSpec, cpus: tuple[int, ...] | None,
                 forked: ForkedChild | None = None) -> None:
        self.name = f"referee {number}"
        self.spec = spec
        self.cpus = cpus
        self.forked = forked  # its first process, forked before the loop began
        self.process: asyncio.subprocess.Process | ForkedProcess | None = None
        #: each game's future, with the process playing it: a process that died fails
        #: its own games only, not those of the process that replaced it
        self.games: dict[int, tuple[object, asyncio.Future[GameOutcome]]] = {}
        self.checked: asyncio.Future[str] | None = None
        self.closed: asyncio.Future[float] | None = None
        self.reader: asyncio.Task[None] | None = None
        self.starting = asyncio.Lock()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        """Start the process (again, after a death) and send it the run: the child forked
        for it before the loop began (:func:`fork_referees`) the first time, else a new
        interpreter."""
        async with self.starting:
            if self.alive:
                return
            forked, self.forked = self.forked, None
            if forked is not None:
                self.process = await forked.adopt()
            else:
                self.process = await asyncio.create_subprocess_exec(
                    # -P: not the working folder first on the module path (-m would put it
                    # there), so that a folder named like one of guti's packages cannot stand
                    # in for guti's own code (that of _same_code_env)
                    sys.executable, "-P", "-m", "guti.referee.execution.referee_child",
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    env=_same_code_env(),
                    start_new_session=True,  # Ctrl-C at the terminal reaches guti alone
                )
            self.reader = asyncio.create_task(self._read(self.process))
            self.send(("setup", self.spec, self.name, self.cpus))

    def send(self, message: Message) -> None:
        process = self.process
        if process is None or process.stdin is None or process.stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            process.stdin.write(frame(message))

    async def check(self) -> str:
        """Every engine started once in this process: "" or the first error."""
        await self.start()
        self.checked = asyncio.get_running_loop().create_future()
        self.send(("check",))
        return await self.checked

    async def play(self, job: ScheduledGame) -> GameOutcome:
        await self.start()
        future = asyncio.get_running_loop().create_future()
        self.games[job.game_id] = (self.process, future)
        self.send(("play", job))
        try:
            return await future
        except asyncio.CancelledError:
            self.send(("cancel", job.game_id))  # aborted: its engines are killed there
            raise
        finally:
            self.games.pop(job.game_id, None)

    async def _read(self, process: asyncio.subprocess.Process | ForkedProcess) -> None:
        assert process.stdout is not None
        while (message := await read_message(process.stdout)) is not None:
            self._dispatch(message)
        rc = await process.wait()
        lost = RefereeLost(f"{self.name} (pid {process.pid}) {describe_exit(rc)}")
        waiting: list[asyncio.Future[Any] | None] = [
            future for player, future in self.games.values() if player is process]
        if self.process is process:  # (a check or close asks the current process)
            waiting += [self.checked, self.closed]
        for future in waiting:
            if future is not None and not future.done():
                future.set_exception(lost)

    def _dispatch(self, message: Message) -> None:
        kind = message[0]
        if kind == "result":
            outcome: GameOutcome = message[1]
            future = self._future_of(outcome.game_id)
            if future is not None and not future.done():
                future.set_result(outcome)
        elif kind == "failed":
            future = self._future_of(message[1])
            if future is not None and not future.done():
                future.set_exception(RefereeFailed(f"{self.name}: game {message[1] + 1} "
                                                   f"raised:\n{message[2]}"))
        elif kind == "checked" and self.checked is not None and not self.checked.done():
            self.checked.set_result(message[1])
        elif kind == "closed":
            _closed_cpu_seconds["run"] += message[1]
            _closed_cpu_seconds["start"] += message[2]
            if self.closed is not None and not self.closed.done():
                self.closed.set_result(message[1])

    def _future_of(self, game_id: int) -> asyncio.Future[GameOutcome] | None:
        entry = self.games.get(game_id)
        return None if entry is None else entry[1]

    async def close(self) -> None:
        """Tell the process to quit its engines and exit; kill it if it does not."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            self.closed = asyncio.get_running_loop().create_future()
            self.send(("close",))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.closed), CLOSE_GRACE)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 2.0)
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


@contextlib.contextmanager
def fork_referees(count: int) -> Iterator[list[ForkedChild]]:
    """``count`` referee processes forked from this one, for a run about to start its
    loop: each is ready at once, where a new interpreter takes 0.1 s or more to import
    guti (:mod:`guti.referee.process.forked`). Empty where this process cannot fork (not
    Linux, a loop or another thread running, fork failing): the pool then starts new
    interpreters, as it does for every process after a death. Those the run did not use
    are closed and reaped when the ``with`` ends."""
    children: list[ForkedChild] = []
    if count > 0 and can_fork():
        loop_factory()  # the event loop's module imported once, here, not in each child
        try:
            for _ in range(count):
                children.append(fork_child(referee_child.main, "guti-referee"))
        except OSError:
            pass  # the ones forked serve; the pool starts the others itself
    try:
        yield children
    finally:
        for child in children:
            child.discard()


def _same_code_env() -> dict[str, str]:
    """The environment for a referee process started as a new interpreter: this one's, with
    this process named as the parent it dies with
    (:data:`~guti.referee.execution.referee_child.PARENT_VARIABLE`: it asks the kernel for
    that itself, so no Python code runs between fork and exec here, which is what lets a
    process with threads, a Dask worker, start one), and the folder guti was imported from
    first on its module path, so that it runs the same code as guti, unless that folder
    is one of Python's own package folders (an installed guti, which every process finds,
    and which must not come before the standard library)."""
    import site

    import guti

    env = {**os.environ, referee_child.PARENT_VARIABLE: str(os.getpid())}
    root = os.path.dirname(os.path.dirname(os.path.abspath(guti.__file__)))
    installed = {os.path.abspath(p) for p in (*site.getsitepackages(), site.getusersitepackages())}
    if root not in installed:
        path = os.environ.get("PYTHONPATH")
        env["PYTHONPATH"] = root + (os.pathsep + path if path else "")
    return env


class RefereePool(GameSlots):
    """Game slots played in ``processes`` referee processes (as many as
    :func:`~guti.referee.execution.referee_choice.referee_count` chose, at most one per
    slot); see the module docstring."""

    def __init__(
        self,
        engines: list[EngineConfig],
        settings: GameSettings,
        concurrency: int,
        processes: int,
        traffic: TrafficHook | None = None,
        *,
        say: Callable[[str], None],
        observer: TournamentObserver | None = None,
        wait_ms: int = 0,
        cpus: Sequence[int] | None = None,
        forked: Sequence[ForkedChild] = (),
    ) -> None:
        super().__init__(concurrency, wait_ms)
        self.engines = engines
        self.traffic = traffic
        self.observer = observer
        self.say = say
        spec = RunSpec(uuid.uuid4().hex, engines, settings, version="",
                       traffic=traffic is not None)
        count = max(1, min(processes, self.concurrency))
        self.links = [
            RefereeLink(k + 1, spec, self._cpus_of(k, count, cpus),
                        forked[k] if k < len(forked) else None)
            for k in range(count)
        ]

    def _cpus_of(self, k: int, count: int, cpus: Sequence[int] | None) -> tuple[int, ...] | None:
        """Referee ``k``'s CPUs: those of the game slots it plays (None: not pinned)."""
        if not cpus:
            return None
        mine = [s for s in range(self.concurrency) if self._link_index(s, count) == k]
        return tuple(c for s in mine for c in slot_cpus(cpus, self.concurrency, s))

    def _link_index(self, slot: int, count: int) -> int:
        return slot * count // self.concurrency

    async def check_engines(self) -> None:
        """Start every referee process, and in each every engine once."""
        errors = await asyncio.gather(*(link.check() for link in self.links),
                                      return_exceptions=True)
        for error in errors:
            if isinstance(error, BaseException):
                await self.close()
                if isinstance(error, RefereeLost):
                    raise RefereeFailed(f"{error} while starting the engines") from None
                raise error
        first = next((e for e in errors if e), None)
        if first:
            await self.close()
            raise EngineStartError(str(first))

    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        link = self.links[self._link_index(slot, len(self.links))]
        if self.observer is not None:
            self.observer.started(job, self.engines[job.white].name,
                                  self.engines[job.black].name)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                outcome = await link.play(job)
                break
            except RefereeLost as exc:
                if attempt == MAX_ATTEMPTS:
                    raise RefereeFailed(f"game {job.game_id + 1}: its referee process died "
                                        f"{MAX_ATTEMPTS} times (last: {exc})") from None
                self.say(f"guti: {exc}; game {job.game_id + 1} is played again")
        log_outcome(self.traffic, job, outcome)
        assert outcome.record is not None
        return outcome.record

    def kill_all(self) -> None:
        """Every referee process kills its games' engines (an abort)."""
        for link in self.links:
            link.send(("abort",))

    async def close(self) -> None:
        await asyncio.gather(*(link.close() for link in self.links), return_exceptions=True)
