"""Stopping a match or tournament: a graceful stop and an abort, both *states*.

Why states and not task cancellation alone: in Python 3.11 ``asyncio.wait_for`` can
swallow a cancellation when the awaited read completes in the same step, and a
worker that swallowed it would simply start the next game. So a stop is a flag every loop checks before it starts anything,
and an abort is a flag plus an event every wait races against
(:meth:`RunControl.unless_aborted`); the engines are SIGKILLed at once so whatever
they were doing ends, and a hard deadline thread ends the process if, against all
expectations, the event loop has not wound down within :data:`ABORT_BOUND` seconds.

The signals (:meth:`RunControl.signals`), the same for ``guti match`` and ``guti
tournament``:

- first Ctrl-C (SIGINT): graceful stop: no new game starts, the running ones finish
  (each is bounded by its time control) and are stored; while the engines are started
  and checked, before any game, it ends that at once (nothing runs to be finished);
- second Ctrl-C, SIGTERM or SIGHUP: abort: every engine is killed, no running game is
  stored or written anywhere (it has no true result), exit status 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from guti.referee.process import lifeline

T = TypeVar("T")

#: Seconds an aborted game's task gets to wind down after its engines were killed.
ABORT_GRACE = 2.0
#: Seconds after an abort by which the process has exited, whatever it was doing.
ABORT_BOUND = 8.0


class RunControl:
    """The stop state of one run; see the module docstring."""

    def __init__(self) -> None:
        self.stopping = False  # no new games
        self.aborted = False  # kill everything, report nothing
        self.reason: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: one future per :meth:`unless_aborted` under way, set when the run is aborted
        self._waiters: set[asyncio.Future[None]] = set()
        #: those of them that a graceful stop ends as well (``or_stopped``)
        self._stoppable: set[asyncio.Future[None]] = set()
        self._deadline = threading.Event()
        self._disarmed = threading.Event()
        self._say: Callable[[str], None] = lambda _text: None

    # -- the two states ---------------------------------------------------------
    def stop(self, reason: str) -> bool:
        """Start no new game from now on; True the first time."""
        if self.stopping:
            return False
        self.stopping = True
        self.reason = reason
        self._loop_call(self._wake_stoppable)
        return True

    def abort(self) -> None:
        """Abort: flags first (so a game that ends because its engine was just killed
        is never reported), then SIGKILL every engine, then wake every waiter."""
        first = not self.aborted
        self.aborted = True
        self.stopping = True
        self.reason = self.reason or "interrupted"
        lifeline.kill_registered()
        if first:
            self._deadline.set()
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _wake_stoppable(self) -> None:
        for waiter in self._stoppable:
            if not waiter.done():
                waiter.set_result(None)

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, which :meth:`abort` wakes the waiters on (it may be called
        from a signal handler, outside the loop)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    # -- waiting ----------------------------------------------------------------
    async def unless_aborted(self, work: Awaitable[T], or_stopped: bool = False) -> T | None:
        """The result of ``work``, or None if the run is aborted first (or was aborted
        by the time it finished: its result is then not to be trusted). ``or_stopped``: a
        graceful stop ends the wait as well, for work no running game depends on (the
        engines' start check, which one Ctrl-C need not wait out); ``work`` is then
        cancelled and None returned, unless it had finished.

        One future per wait, set by whichever comes first: ``work`` ending, the abort
        (:meth:`_wake`) or, with ``or_stopped``, the stop (:meth:`_wake_stoppable`). Every
        game is such a wait, and ``asyncio.wait`` on the work and an abort event's waiter
        costs several times more CPU per game."""
        task = asyncio.ensure_future(work)

        def ended() -> bool:
            return self.aborted or (or_stopped and self.stopping)

        if not ended():
            waiter = self._bind_loop().create_future()

            def wake(_task: object) -> None:
                if not waiter.done():
                    waiter.set_result(None)

            task.add_done_callback(wake)
            self._waiters.add(waiter)
            if or_stopped:
                self._stoppable.add(waiter)
            try:
                await waiter
            except BaseException:
                task.cancel()
                raise
            finally:
                self._waiters.discard(waiter)
                self._stoppable.discard(waiter)
                task.remove_done_callback(wake)
        if task.done() and not self.aborted:
            return task.result()
        task.cancel()
        await asyncio.wait({task}, timeout=ABORT_GRACE)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: an aborted game's error means nothing
        return None

    # -- signals ----------------------------------------------------------------
    @contextlib.contextmanager
    def signals(self, say: Callable[[str], None], running: Callable[[], int]) -> Iterator[None]:
        """Install the SIGINT/SIGTERM/SIGHUP handlers (see the module docstring) for the
        body of the ``with``; ``running()`` counts the games a graceful stop waits for.

        Plain ``signal.signal`` handlers, not the loop's: they run at the next bytecode
        of the main thread even when the loop is busy, and do only what is safe there
        (set flags, kill process groups, hand the rest to the loop)."""
        self._say = say
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._hard_deadline, daemon=True).start()

        def on_sigint(_signo: int, _frame: object) -> None:
            if self.stop("interrupted"):
                count = running()
                text = ("stopping: no new games; finishing "
                        f"{count} running game(s) (Ctrl-C again to abort them)" if count
                        else "stopping: no new games, and none is running")
                self._loop_call(lambda: say(text))
            else:
                self._abort_now()

        def on_term(_signo: int, _frame: object) -> None:
            self._abort_now()

        previous: dict[signal.Signals, Any] = {}
        for sig, handler in ((signal.SIGINT, on_sigint), (signal.SIGTERM, on_term),
                             (signal.SIGHUP, on_term)):
            with contextlib.suppress(ValueError, OSError):  # not the main thread
                previous[sig] = signal.signal(sig, handler)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if not self.aborted:  # after an abort the bound holds until the process ends
                self._disarmed.set()
                self._deadline.set()

    def _abort_now(self) -> None:
        first = not self.aborted
        self.abort()
        if first:
            self._loop_call(lambda: self._say("aborting: running games are not stored; "
                                              "every engine is killed"))

    def _loop_call(self, fn: Callable[[], None]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(fn)

    def _hard_deadline(self) -> None:
        """Last resort: ABORT_BOUND s after an abort the process ends, engines killed."""
        self._deadline.wait()
        if self._disarmed.is_set() or self._disarmed.wait(ABORT_BOUND):
            return
        lifeline.kill_registered()
        with contextlib.suppress(OSError):
            os.write(2, b"guti: abort did not finish in time; exiting (interrupted)\n")
        os._exit(130)
