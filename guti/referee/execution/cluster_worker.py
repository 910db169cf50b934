"""The worker side of ``-cluster``: what runs inside a Dask worker process.

Each Dask task (:func:`play_task`) is a batch of scheduled games (one game, unless the
games last milliseconds: see :mod:`guti.referee.execution.cluster`). Both engines of a game
run on the worker that plays it, and the real game loop
(:func:`guti.referee.game.runner.play_game`) runs there too, so a clock runs from the write
of ``go`` to the read of ``bestmove`` on that machine, exactly as locally: the network
is never on any clock.

Why one asyncio loop per worker *process*, in a thread of its own: engine processes are
kept warm between games, and an asyncio subprocess belongs to the loop that started
it. ``asyncio.run`` per task would close that loop (and the engines' pipes) after
every game; a loop per worker thread would split one engine's processes between
threads. So every task thread hands its game to the one engine loop
(``run_coroutine_threadsafe``) and waits for the record; the loop holds one
:class:`~guti.referee.execution.engine_pool.EnginePool` per engine per tournament
(:class:`WorkerRun`, a module-level registry keyed by the tournament's run id), and
a worker with K threads plays K games at once from the same pools, like the local
executor. With ``-concurrency`` per worker the run's own semaphore says how many games
at once instead, and a task secedes from the worker's thread pool so that a worker with
one thread still plays them all. It is also not Dask's own event loop, so the worker's
network traffic never delays the stamps of the engines' lines. With more games at once
than one loop reads in time (:func:`~guti.referee.execution.worker_referees.worker_referee_count`)
the run's games are handed to referee processes of the worker's own
(:mod:`guti.referee.execution.worker_referees`).

Life cycle, all keyed by run id: the run's :class:`GutiWorkerPlugin` (on every worker,
also those that join later) unpacks the folders sent with the run and runs
:func:`check_worker` (same guti code, the programs the engines ``require`` on PATH,
``build`` once per worker, every engine started once and kept warm), then gives the
worker the run's resource; :func:`play_task` (a batch of games), :func:`stop_run` (start
no new game: queued tasks return without playing), :func:`abort_run` (kill the running
games' engines), :func:`close_run` (quit every engine of the run). A task whose key
the scheduler has released (its client cancelled it, or the client went away) has
its game cancelled within :data:`WATCH_INTERVAL`; a run that has not been used for
:data:`IDLE_CLOSE` seconds (its client died) has its engines quit; and the run's plugin
quits its engines when it is unregistered or the worker shuts down. A worker that dies
closes its engines' stdin, which is every engine's signal to exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import hashlib
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from distributed import WorkerPlugin, get_worker, secede

from guti.referee.execution.builds import kill_builds
from guti.referee.execution.cluster_uploads import unpack_folders
from guti.referee.execution.remote_games import (
    GameOutcome,
    RunSpec,
    WorkerRun,
    WorkerUnfit,
)
from guti.referee.execution.worker_referees import WorkerReferees, worker_referee_count

if TYPE_CHECKING:
    from guti.referee.game.scheduled import ScheduledGame

#: Seconds between a task's checks that the scheduler still wants its game.
WATCH_INTERVAL = 0.25
#: A run unused this long (its client is gone) has its engines quit; a live run keeps its
#: workers busy, and should a game of it come later its engines are simply started again.
IDLE_CLOSE = 15.0


@functools.cache
def guti_code_hash() -> str:
    """A hash of this guti's code (every ``.py`` file of the package, by path and
    content): workers must run the same code as the client, and a version string that
    stays 0.1.0 across checkouts cannot tell."""
    root = Path(__file__).resolve().parents[2]  # the guti package
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def run_resource(run_id: str) -> str:
    """The Dask resource (and worker plugin name) of one run: a worker holds it, as many
    units as it plays the run's games at once, once it has passed the run's check; the
    run's tasks each need one unit, so they go to fit workers only, whatever their
    address, and any number of runs share the workers."""
    return f"guti-{run_id}"


# ------------------------------------------------------------------ the engine loop
_LOCK = threading.Lock()
_LOOP: asyncio.AbstractEventLoop | None = None
_RUNS: dict[str, WorkerRun] = {}
_PLACES: dict[str, dict[str, str]] = {}  # run id -> the folders sent for it, unpacked


def engine_loop() -> asyncio.AbstractEventLoop:
    """This process's engine loop, started on first use in a daemon thread."""
    global _LOOP
    with _LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="guti-engines", daemon=True).start()
            asyncio.run_coroutine_threadsafe(_close_idle_runs(), loop)
            _LOOP = loop
        return _LOOP


def on_engine_loop(coro: Any) -> concurrent.futures.Future[Any]:
    return asyncio.run_coroutine_threadsafe(coro, engine_loop())


def _run_for(spec: RunSpec) -> WorkerRun:
    with _LOCK:
        run = _RUNS.get(spec.run_id)
        if run is None:
            places = _PLACES.get(spec.uploads_of or spec.run_id)
            run = _RUNS[spec.run_id] = WorkerRun(spec, places)
            if count := worker_referee_count(spec):  # many games at once: over the cores
                run.referees = WorkerReferees(spec, [p.config for p in run.pools], count)
        return run


async def _close_idle_runs() -> None:
    """Quit the engines of runs nobody has used for :data:`IDLE_CLOSE` s (a dead client)."""
    while True:
        await asyncio.sleep(IDLE_CLOSE / 4)
        now = time.monotonic()
        for run_id, run in list(_RUNS.items()):
            if not run.running and now - run.last_used > IDLE_CLOSE:
                _RUNS.pop(run_id, None)
                await run.close()


# ------------------------------------------------------------------ the tasks
async def check_worker(spec: RunSpec) -> str:
    """Run by the client on every worker before the first game: "" when this worker can
    play the run, else one line saying why not (another guti, an engine that does not
    start, a failed build)."""
    mine = guti_code_hash()
    if mine != spec.version:
        return (f"runs other guti code (hash {mine}; this guti's is {spec.version}): "
                "install the same guti on every worker")
    errors = await asyncio.wrap_future(on_engine_loop(_run_for(spec).check()))
    return errors[0] if errors else ""


def play_task(spec: RunSpec, jobs: list[ScheduledGame]) -> list[GameOutcome]:
    """A batch of games, one after the other (a Dask task, run in a worker thread): each
    played on the engine loop while this thread watches that the scheduler still wants
    it. A game not started because the run is stopping comes back unplayed."""
    from distributed.worker import thread_state

    worker = get_worker()
    key = getattr(thread_state, "key", None)
    run = _run_for(spec)
    if not run.stopped:
        errors = run.checked if run.checked is not None else on_engine_loop(run.check()).result()
        if errors:  # this worker is no longer fit: it gives the run's resource back
            worker.loop.add_callback(functools.partial(
                worker.set_resources, **{run_resource(spec.run_id): 0}))
            raise WorkerUnfit(f"worker {worker_label(worker)}: {errors[0]}")
        if run.slots is not None:
            secede()  # the run's slots, not the worker's threads, say how many games at once
    return [_play_one(run, job, worker, key) for job in jobs]


def _play_one(run: WorkerRun, job: ScheduledGame, worker: Any, key: Any) -> GameOutcome:
    game = on_engine_loop(run.play(job, worker_label(worker)))
    while True:
        try:
            outcome: GameOutcome = game.result(timeout=WATCH_INTERVAL)
            if outcome.record is not None:  # stored with the game: who played it
                outcome.record.worker = outcome.worker
            return outcome
        except concurrent.futures.TimeoutError:
            ts = worker.state.tasks.get(key) if key is not None else None
            if key is not None and (ts is None or ts.state == "cancelled"):
                game.cancel()  # its client cancelled it or is gone: kill the engines
                raise concurrent.futures.CancelledError(f"game {job.game_id + 1}") from None


def stop_run(run_id: str) -> None:
    """``client.run``: start no new game of this run (queued tasks return unplayed)."""
    run = _RUNS.get(run_id)
    if run is not None:
        run.stopped = True


def abort_run(run_id: str) -> None:
    """``client.run``: kill this run's running games and engines, and its builds."""
    kill_builds(run_id)
    run = _RUNS.get(run_id)
    if run is not None and _LOOP is not None:
        _LOOP.call_soon_threadsafe(run.abort)


async def close_run(run_id: str) -> None:
    """``client.run`` at the end: quit every engine of this run on this worker (a build
    of it still under way is killed)."""
    kill_builds(run_id)
    with _LOCK:
        run = _RUNS.pop(run_id, None)
    if run is not None:
        await asyncio.wrap_future(on_engine_loop(run.close()))


def worker_label(worker: Any) -> str:
    """How a worker is named in messages, the log and the database: its ``--name`` when
    it was given one, else its address."""
    name = getattr(worker, "name", None)
    return name if isinstance(name, str) and name and name != worker.address else str(
        worker.address)


class GutiWorkerPlugin(WorkerPlugin):
    """One run's plugin, registered by its client under :func:`run_resource` on every
    worker there is and every worker that joins later (a replaced worker, a new
    machine). On each it checks the run (:func:`check_worker`: same guti code, the
    engines' requirements and builds, every engine started once) in the background, and
    only then gives the worker the run's resource, so the run's tasks reach it; a worker
    that fails is left out of this run alone, and says why in the run's event topic.

    ``local``: the worker is a child of guti (``-cluster local:N``), so Ctrl-C at the
    terminal must reach guti alone, as it does engines in local mode. Dask's statistical
    profiler is stopped: it samples every thread's stack every 10 ms, taking the GIL from
    the engine loop in the middle of games, and guti's tasks have nothing to profile.
    Unregistered at the end of the run: this run's engines are quit and its resource
    taken back; other runs on the worker go on."""

    def __init__(self, spec: RunSpec, local: bool = False,
                 uploads: dict[str, bytes] | None = None, client_id: str = "") -> None:
        self.spec = spec
        self.client_id = client_id  # the run's Dask client, which the scheduler knows
        self.local = local
        self.uploads = uploads or {}  # the folders sent to every worker, packed
        self.name = run_resource(spec.run_id)
        self.checking: asyncio.Task[None] | None = None

    def setup(self, worker: Any) -> None:
        for name in ("profile", "profile-cycle"):
            callback = worker.periodic_callbacks.get(name)
            if callback is not None:
                callback.stop()
        if self.local:
            with contextlib.suppress(ValueError):  # only possible in the main thread
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        if self.uploads:  # before the run's check, which builds and starts the engines
            _PLACES[self.spec.run_id] = unpack_folders(self.uploads, worker.local_directory)
        self.checking = asyncio.ensure_future(self._admit(worker))

    async def _admit(self, worker: Any) -> None:
        """Check the run here; fit: hold its resource, else tell the client why not. A
        run whose client is gone (killed outright: its plugin stayed registered) starts
        nothing here, and its plugin is taken off the scheduler for every worker."""
        if self.client_id and await _client_gone(worker, self.client_id):
            with contextlib.suppress(Exception):
                await worker.scheduler.unregister_worker_plugin(name=self.name)
            return
        try:
            why = await check_worker(self.spec)
        except Exception as exc:  # noqa: BLE001 - any failure leaves this worker out
            why = f"cannot run guti's tasks ({type(exc).__name__}: {exc})"
        if why:
            worker.log_event(self.name, {"name": worker_label(worker), "why": why})
            return
        slots = self.spec.per_worker or max(1, int(worker.state.nthreads))
        await worker.set_resources(**{self.name: slots})

    async def teardown(self, worker: Any) -> None:
        if self.checking is not None:
            self.checking.cancel()
        with contextlib.suppress(Exception):
            await worker.set_resources(**{self.name: 0})
        with _LOCK:
            run = _RUNS.pop(self.spec.run_id, None)
            _PLACES.pop(self.spec.run_id, None)
        if run is not None and _LOOP is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(
                    asyncio.run_coroutine_threadsafe(_abort_all([run]), _LOOP)), 10)


async def _client_gone(worker: Any, client_id: str) -> bool:
    """Whether the scheduler has removed the client (its last word on it, in the
    client's event topic, is ``remove-client``)."""
    try:
        events = await worker.scheduler.events(topic=client_id)
    except Exception:  # noqa: BLE001 - cannot tell: the run is taken to be alive
        return False
    said = [msg.get("action") for _, msg in events if isinstance(msg, dict)]
    said = [action for action in said if action in ("add-client", "remove-client")]
    return bool(said) and said[-1] == "remove-client"


async def _abort_all(runs: list[WorkerRun]) -> None:
    for run in runs:
        run.abort()
    await asyncio.gather(*(r.close() for r in runs), return_exceptions=True)
