"""The referee's own lateness: when its event loop did not run, so that nothing was read.

Why: a move's time runs from the write of ``go`` to the arrival of ``bestmove`` as the
event loop reads it. When the referee itself is not running (suspended by Ctrl-Z or
SIGSTOP, starved of CPU, or its loop held up by work of its own), a reply written in
time is read late, and the engine would be charged for the referee's trouble. The
kernel does not stamp pipe data, so the referee cannot learn when the reply was
written; it can learn when it was itself not listening.

:class:`LatenessWatch` is a heartbeat on the loop: a timer every :data:`PERIOD`
seconds. A tick that comes more than :data:`LATE_AFTER` after it was due means the
loop did not run from the tick before it (the last moment it is known to have run)
to this one, and that span is kept. :meth:`LatenessWatch.late_within` says how much
of a span of time the loop was late for, the span still running at the time of asking
included (the heartbeat may not have run yet after a stop). A suspension shows up
whole: ``time.monotonic()`` runs on while the process is stopped.

The game loop asks it about a move that was over its time, or a wait that ran out:
when the move would have been in time but for the referee's lateness, it is not the
engine's fault (see :mod:`guti.referee.game.runner`). One watch runs per event loop,
while at least one game holds it (:func:`hold`); a tick costs a few microseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import Iterator

#: Seconds between two heartbeats.
PERIOD = 0.02
#: A heartbeat later than this (seconds) past its time marks the loop as late.
LATE_AFTER = 0.002
#: Late spans kept (the oldest are forgotten first).
KEPT = 4096


class LatenessWatch:
    """Spans of ``time.monotonic()`` during which ``loop`` did not run (see the module)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._spans: deque[tuple[float, float]] = deque(maxlen=KEPT)
        self._last = time.monotonic()  # the last moment the loop is known to have run
        self._timer: asyncio.TimerHandle | None = None
        self.holders = 0

    def start(self) -> None:
        if self._timer is None:
            self._last = time.monotonic()
            self._timer = self._loop.call_later(PERIOD, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        now = time.monotonic()
        self._note(now)
        self._timer = self._loop.call_later(PERIOD, self._tick)

    def _note(self, now: float) -> None:
        """The loop runs at ``now``: keep the span since the last run if it was late."""
        if now - self._last > PERIOD + LATE_AFTER:
            self._spans.append((self._last, now))
        self._last = now

    def late_within(self, start: float, end: float) -> float:
        """Seconds of ``[start, end]`` (``time.monotonic()``) the loop was late for: the
        kept spans, and the one running now when the heartbeat is overdue."""
        spans = list(self._spans)
        now = time.monotonic()
        if self._timer is not None and now - self._last > PERIOD + LATE_AFTER:
            spans.append((self._last, now))
        late = 0.0
        for a, b in reversed(spans):
            if b <= start:
                break
            late += max(0.0, min(b, end) - max(a, start))
        return late


_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LatenessWatch] = (
    weakref.WeakKeyDictionary())


def watch() -> LatenessWatch:
    """The running loop's watch (made when first asked for; ticking while held)."""
    loop = asyncio.get_running_loop()
    found = _WATCHES.get(loop)
    if found is None:
        found = _WATCHES[loop] = LatenessWatch(loop)
    return found


@contextlib.contextmanager
def hold() -> Iterator[LatenessWatch]:
    """The running loop's watch, ticking for the block (a game): it stops when the last
    block holding it ends, so an idle loop is not woken."""
    current = watch()
    current.holders += 1
    current.start()
    try:
        yield current
    finally:
        current.holders -= 1
        if current.holders == 0:
            current.stop()
