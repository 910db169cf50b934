"""The referee's own lateness: when its event loop did not run, so that nothing was read.

Why: a move's time runs from the write of ``go`` to the arrival of ``bestmove`` as the
event loop reads it. When the referee itself is not running (suspended by Ctrl-Z or
SIGSTOP, starved of CPU, or its loop held up by work of its own), a reply written in
time is read late, and the engine would be charged for the referee's trouble. The
kernel does not stamp pipe data, so the referee cannot learn when the reply was
written; it can learn when it was itself not listening.

:class:`LatenessWatch` is a heartbeat on the loop: a timer that is due every
:data:`COARSE` seconds, or every :data:`FINE` seconds while a reply is awaited whose
deadline is near (:meth:`LatenessWatch.awaiting`). A tick that comes more than
:data:`LATE_AFTER` after it was due means the loop did not run from the last moment it is
known to have run to this one, and that span is kept whole (the stall may have begun just
after that moment: the engine has the benefit of the doubt, at most one period).
:meth:`LatenessWatch.late_within` says how much of a span of time the loop was late for,
the span still running at the time of asking included (the heartbeat may not have run yet
after a stop). A suspension shows up whole: ``time.monotonic()`` runs on while the
process is stopped.

Why two periods: a stall is seen only when a tick falls due during it, and the stalls
that matter are a few milliseconds long (an engine that answers 3 ms before its deadline
is forfeited by a 3 ms stall as its reply comes in). With a tick every 20 ms nine in ten
of those went unseen (32 games at once on two loaded cores, 50 ms moves answered 3 ms
early: 6-7 forfeits per 1,000 replies; with ticks every millisecond near the deadlines,
0.3-1).
But a tick wakes the process, which costs some 40 us on a virtual machine: every
millisecond all the time, 4 % of a core taken from the engines. A short stall can turn
a reply into a forfeit only when the reply comes near its deadline, and a stall longer
than :data:`COARSE` is seen anyway; so the fine ticks run only while some awaited
deadline is less than twice :data:`COARSE` away (or past, the reply still awaited).

The game loop asks it about a move that was over its time, or a wait that ran out:
when the move would have been in time but for the referee's lateness, it is not the
engine's fault (see :mod:`guti.referee.game.runner`). One watch runs per event loop,
while at least one game holds it (:func:`hold`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Iterator

from guti.referee.process.event_loop import PerLoop

#: Seconds between two heartbeats, while no awaited deadline is near.
COARSE = 0.02
#: Seconds between two heartbeats while an awaited deadline is near (see the module).
FINE = 0.001
#: A heartbeat later than this (seconds) past its time marks the loop as late.
LATE_AFTER = 0.001
#: Late spans kept (the oldest are forgotten first).
KEPT = 4096


class LatenessWatch:
    """Spans of ``time.monotonic()`` during which ``loop`` did not run (see the module)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._spans: deque[tuple[float, float]] = deque(maxlen=KEPT)
        self._last = time.monotonic()  # the last moment the loop is known to have run
        self._timer: asyncio.TimerHandle | None = None
        self._due = math.inf  # when the timer is due
        self.period = COARSE  # of the timer set last
        #: The deadline of each reply awaited now, by who awaits it.
        self._deadlines: dict[object, float] = {}
        self.holders = 0

    def start(self) -> None:
        if self._timer is None:
            self._last = time.monotonic()
            self._schedule(self._last)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._due = math.inf

    def awaiting(self, who: object, deadline: float | None) -> None:
        """``who`` awaits a reply due by ``deadline`` (``time.monotonic()``; None: no
        longer awaits one). A deadline near enough makes the ticks fine at once."""
        if deadline is None:
            self._deadlines.pop(who, None)
            return
        self._deadlines[who] = deadline
        now = time.monotonic()
        if self._timer is not None and self._due - now > FINE and deadline - now < 2 * COARSE:
            self._note(now)
            self._timer.cancel()
            self._schedule(now)

    def _schedule(self, now: float) -> None:
        near = self._deadlines and min(self._deadlines.values()) - now < 2 * COARSE
        self.period = FINE if near else COARSE
        self._due = now + self.period
        self._timer = self._loop.call_later(self.period, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        self._note(now)
        self._schedule(now)

    @property
    def last_run(self) -> float:
        """The last moment the loop is known to have run (a tick, or a call in here)."""
        return self._last

    def _note(self, now: float) -> None:
        """The loop runs at ``now``: keep the span since the last run if it was late."""
        if now - self._due > LATE_AFTER:
            self._spans.append((self._last, now))
        self._last = now

    def late_within(self, start: float, end: float) -> float:
        """Seconds of ``[start, end]`` (``time.monotonic()``) the loop was late for: the
        kept spans, and the one running now when the heartbeat is overdue."""
        spans = list(self._spans)
        now = time.monotonic()
        if self._timer is not None and now - self._due > LATE_AFTER:
            spans.append((self._last, now))
        late = 0.0
        for a, b in reversed(spans):
            if b <= start:
                break
            late += max(0.0, min(b, end) - max(a, start))
        return late


_WATCHES: PerLoop[LatenessWatch] = PerLoop(LatenessWatch)


def watch() -> LatenessWatch:
    """The running loop's watch (made when first asked for; ticking while held)."""
    return _WATCHES.get()


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
