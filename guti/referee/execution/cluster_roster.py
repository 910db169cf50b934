"""Which workers play a cluster run: those that hold its resource, read from the scheduler.

Kept apart from the executor (:mod:`guti.referee.execution.cluster`), which decides what
to submit: the roster knows the workers fit for the run and how many games each plays at
once (the units of the run's resource it holds), how each is named (its ``--name``, else
its address), which were left out and why (each said once), and how long the run has
been without any worker (said after :data:`NO_WORKER_NOTICE` s, again every
:data:`NO_WORKER_REPEAT` s), and which workers went silent: a worker whose heartbeats
stopped reaching the scheduler for :data:`WORKER_SILENCE` s (stopped, or its machine
frozen: its connections stay open, so Dask counts it among the workers until its
``worker-ttl``) plays nothing more of this run until it is heard again.
:meth:`WorkerRoster.first_check` runs the run's check on the workers there at its start
(:func:`check_workers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from distributed.comm.core import CommClosedError

from guti.referee.execution.cluster_address import ClusterError

#: What a worker's answer is when the worker went away while it was asked.
GONE = (CommClosedError, ConnectionError)
#: Seconds without a fit worker before the run says it is waiting for one (and again
#: every :data:`NO_WORKER_REPEAT` s while it waits).
NO_WORKER_NOTICE = 10.0
NO_WORKER_REPEAT = 60.0
#: Seconds the start waits for workers still checking once one has passed the check.
CHECK_GRACE = 30.0
#: Seconds to wait, after the check, for the workers that passed it to hold the run's
#: resource (the plugin gives it them once its own check, the same one, is done).
ADMIT_TIMEOUT = 30.0
#: Seconds without a heartbeat from a worker (Dask's come every second or so) before the
#: run counts it silent and plays its games on the other workers.
WORKER_SILENCE = 30.0


class WorkerRoster:
    """The run's view of the cluster's workers; see the module docstring."""

    def __init__(self, resource: str, say: Callable[[str], None]) -> None:
        self.resource = resource
        self.say = say
        self.slots: dict[str, int] = {}  # fit worker address -> games at once there
        self.silent: set[str] = set()  # fit workers not heard for WORKER_SILENCE s
        self.heard: dict[str, tuple[object, float]] = {}  # address -> (beat, seen when)
        self.names: dict[str, str] = {}  # worker address -> its name in messages
        self.left_out: set[str] = set()  # workers said to be unfit for this run
        self.refusals: dict[str, str] | None = {}  # heard during the first check (then None)
        self.without_workers: float | None = None  # since when no worker is fit
        self.told_waiting = 0.0

    @property
    def concurrency(self) -> int:
        """The games the cluster plays at once for this run (its fit workers' slots, the
        silent ones' left out)."""
        return sum(n for address, n in self.slots.items() if address not in self.silent)

    @property
    def playing(self) -> list[str]:
        """The fit workers that are not silent."""
        return [address for address in self.slots if address not in self.silent]

    async def read(self, client: Any) -> None:
        """The workers now fit for the run, how many games each plays at once, and which
        of them are silent (each change said once)."""
        with contextlib.suppress(Exception):
            info = await client.scheduler.identity(n_workers=-1)
            workers = info.get("workers", {})
            self.names = {address: worker_name(address, w) for address, w in workers.items()}
            slots = {address: int(w.get("resources", {}).get(self.resource, 0))
                     for address, w in workers.items()}
            self.slots = {address: n for address, n in slots.items() if n > 0}
            self._listen({a: w.get("last_seen") for a, w in workers.items()})

    def _listen(self, beats: dict[str, object]) -> None:
        """Note each worker's last heartbeat (the scheduler's time of it, compared only
        with itself, so that clocks of other machines never matter); those not heard for
        :data:`WORKER_SILENCE` s by this client's clock are silent."""
        now = time.monotonic()
        heard = {}
        for address, beat in beats.items():
            before = self.heard.get(address)
            heard[address] = before if before is not None and before[0] == beat else (beat, now)
        self.heard = heard
        silent = {address for address, (beat, since) in heard.items()  # (no time: not told)
                  if address in self.slots and beat is not None
                  and now - since >= WORKER_SILENCE}
        for address in sorted((self.silent & set(heard)) - silent):
            self.say(f"worker {self.names.get(address, address)} is heard again; it plays "
                     "again")
        newly = silent - self.silent
        self.silent = silent
        elsewhere = ("its games are played on the other workers" if self.playing
                     else "the run waits for it")
        for address in sorted(newly):
            self.say(f"worker {self.names.get(address, address)}: no heartbeat for "
                     f"{WORKER_SILENCE:g} s (stopped or frozen?); {elsewhere}")

    async def first_check(self, client: Any, check: Callable[..., Any], spec: Any) -> None:
        """``check(spec)`` on every worker there at the run's start: one that fails is
        named and left out of this run, and :class:`ClusterError` names one when every
        worker fails. Then the workers that passed are waited for (at most
        :data:`ADMIT_TIMEOUT` s) until they hold the run's resource, which the run's
        plugin gives each once its own check is done."""
        await self.read(client)
        answers = await check_workers(client, check, spec, list(self.names), CHECK_GRACE)
        await self.read(client)
        bad = {self.names.get(w, w): a for w, a in sorted(answers.items()) if a}
        for worker, why in bad.items():
            if isinstance(why, BaseException):
                bad[worker] = f"cannot run guti's tasks ({type(why).__name__}: {why})"
        if bad and len(bad) == len(answers):
            worker, why = next(iter(bad.items()))
            more = f" (and {len(bad) - 1} more worker(s))" if len(bad) > 1 else ""
            raise ClusterError(f"worker {worker}: {why}{more}")
        self.first_check_done({worker: str(why) for worker, why in bad.items()})
        deadline = time.monotonic() + ADMIT_TIMEOUT
        while len(self.slots) < len(answers) - len(bad) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # the plugin gives the resource once checked
            await self.read(client)

    def on_refusal(self, event: tuple[float, dict[str, str]]) -> None:
        """A worker failed this run's check (the plugin's event): it is left out, said
        once; during the first check the check tells it (:meth:`first_check_done`)."""
        worker, why = str(event[1].get("name", "?")), str(event[1].get("why", "?"))
        if self.refusals is not None:
            self.refusals[worker] = why
        else:
            self.leave_out(worker, why)

    def first_check_done(self, bad: dict[str, str]) -> None:
        """Say the workers the first check found unfit, and those refused meanwhile."""
        for worker, why in {**(self.refusals or {}), **bad}.items():
            self.leave_out(worker, why)
        self.refusals = None

    def leave_out(self, worker: str, why: str) -> None:
        if worker not in self.left_out:
            self.left_out.add(worker)
            self.say(f"worker {worker}: {why}; it is left out of this run")

    def tell_waiting(self) -> None:
        """With no fit worker for :data:`NO_WORKER_NOTICE` s, say the run waits for one."""
        now = time.monotonic()
        if self.playing:
            self.without_workers = None
            return
        since = self.without_workers = self.without_workers or now
        if now - since >= NO_WORKER_NOTICE and now - self.told_waiting >= NO_WORKER_REPEAT:
            self.told_waiting = now
            self.say(f"no worker for {now - since:.0f} s; waiting (Ctrl-C stops)")


def worker_name(address: str, worker: dict[str, Any]) -> str:
    """A worker's name in messages: its ``--name`` when it has one, else its address."""
    name = worker.get("name")
    return name if isinstance(name, str) and name and name != address else address


async def check_workers(client: Any, check: Callable[..., Any], spec: Any, workers: list[str],
                        grace: float) -> dict[str, Any]:
    """``check(spec)`` run on each of ``workers`` at once: its answer by address ("" if
    fit, else why not). A worker that went away meanwhile (its nanny may start another,
    which the run's plugin checks) has no answer. Once one worker has passed, those still
    checking ``grace`` s later (a frozen worker, a long build) are not waited for: each
    joins the run when its own check is done. ConnectionError or TimeoutError if the
    client lost the scheduler (or Dask's CommClosedError)."""
    checks = {address: asyncio.ensure_future(client.run(
        check, spec, workers=[address], on_error="return")) for address in workers}
    passed_at: float | None = None
    while pending := [task for task in checks.values() if not task.done()]:
        if passed_at is not None and time.monotonic() - passed_at >= grace:
            break
        await asyncio.wait(pending, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
        if passed_at is None and any(_answer(task, address) == ""
                                     for address, task in checks.items()):
            passed_at = time.monotonic()
    if client.status != "running":
        raise ConnectionError("the client was closed")
    answers = {}
    for address, task in checks.items():
        if task.done() and not task.cancelled() and not isinstance(task.exception(), GONE):
            task.result()  # a failure of the asking itself, not of the worker: raised
        answer = _answer(task, address)
        if answer is not None:
            answers[address] = answer
        task.cancel()  # a no-op once done
    if workers and not answers:  # every worker gone, or the scheduler: asked, to know which
        await asyncio.wait_for(client.scheduler.identity(), 10)
    return answers


def _answer(task: asyncio.Future[Any], address: str) -> Any:
    """A worker's answer to the check: "" (fit), why not, or the exception it raised; None
    while it checks, or when the worker went away (a connection error)."""
    if not task.done() or task.cancelled() or task.exception() is not None:
        return None
    answer = task.result().get(address)
    return None if answer is None or isinstance(answer, GONE) else answer
