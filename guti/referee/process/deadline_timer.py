"""One timer per engine for the deadlines of its reader's waits.

A reader waits for the engine's answer until a deadline, which needs a timer. Made
afresh for every wait, that timer costs a handle, a heap entry and a cancellation
every ply: with engines that answer at once, on asyncio's own loop, about a tenth of
the referee's CPU per ply (on uvloop, less than its run-to-run noise).
:class:`DeadlineTimer` keeps one timer instead: a game's deadlines only grow, so the
timer set for an earlier deadline is kept, and when it fires before the deadline of
the wait then running it is set again for that one. A game thus makes a timer every
few seconds, not one per ply.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable


class DeadlineTimer:
    """Calls ``wake`` once ``time.monotonic()`` has passed the deadline last given to
    :meth:`arm`, while :meth:`disarm` has not been called since."""

    def __init__(self, loop: asyncio.AbstractEventLoop, wake: Callable[[], None]) -> None:
        self._loop = loop
        self._wake = wake
        self._deadline = math.inf  # of the current wait (inf: none)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def arm(self, deadline: float) -> None:
        """Wake at ``deadline`` (``time.monotonic()`` seconds)."""
        self._deadline = deadline
        if self._timer is not None and self._timer_at <= deadline:
            return  # fires first, then sets itself again for this deadline
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self._loop.call_later(max(0.0, deadline - time.monotonic()), self._fired)

    def disarm(self) -> None:
        """The wait is over (its timer may stay set for a later one)."""
        self._deadline = math.inf

    def close(self) -> None:
        """No more waits: cancel the timer."""
        self._deadline = math.inf
        if self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, math.inf

    def _fired(self) -> None:
        self._timer, self._timer_at = None, math.inf
        if self._deadline == math.inf:
            return
        if time.monotonic() >= self._deadline:
            self._wake()
        else:
            self.arm(self._deadline)
