"""An engine's stdout on the event loop: chunks in, lines out to one waiting reader.

:class:`StdoutWatch` owns the read end of an engine's stdout. The event loop calls it
when the pipe has data; each chunk goes, stamped with its arrival, into a
:class:`~guti.referee.process.line_reader.LineReader` (bounded in bytes). The one reader
(the UGI client, through :class:`~guti.referee.process.engine_process.EngineProcess`)
waits for a line with :meth:`StdoutWatch.read`, and is woken only by a chunk that may
hold the line it waits for, so a flood costs a copy per chunk, not Python work per line,
and cannot delay the reading of other engines. A line's arrival is the arrival of the
chunk that completed it: a move's time ends when its ``bestmove`` bytes arrived.

Every wait ends by its deadline, at the end of output, or when the process side calls
:meth:`StdoutWatch.wake` (the engine exited).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable

from guti.referee.process.deadline_timer import DeadlineTimer
from guti.referee.process.errors import (
    UNFINISHED_SHOWN,
    EngineDisconnected,
    EngineProtocolError,
    EngineTimeout,
)
from guti.referee.process.line_reader import LineReader, line_text
from guti.referee.process.pipes import read_chunk

#: ``hook(wall_time, direction, engine_name, line)``; direction ``">"`` to the
#: engine, ``"<"`` from it, ``"!"`` a line of its stderr (logged, never parsed).
TrafficHook = Callable[[float, str, str, str], None]
#: ``block(wall_time, direction, engine_name, text)``: several lines at once, joined by "\n".
TrafficBlockHook = Callable[[float, str, str, str], None]


class StdoutWatch:
    """The reading side of one engine's stdout (``name`` for messages, ``traffic`` the
    hook its completed lines go to, if any)."""

    def __init__(self, name: str, traffic: TrafficHook | None) -> None:
        self.name = name
        self.traffic = traffic
        #: The hook's bulk form (``hook.block(wall, direction, name, text)``, ``text`` the
        #: lines of one chunk joined by newlines), used when it has one: one call per chunk
        #: of a flood instead of one per line.
        self.traffic_block: TrafficBlockHook | None = getattr(traffic, "block", None)
        self.lines = LineReader()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fd = -1
        #: The reader waiting for a line (and the first word it waits for; None: any).
        self._waiter: asyncio.Future[None] | None = None
        self._want: bytes | None = None
        self._timer: DeadlineTimer | None = None  # made by the first wait
        #: A whole reply handed to the waiting reader (see :meth:`_on_chunk`) and its
        #: arrival, until the reader takes it.
        self._handed: tuple[bytes, float] | None = None

    def watch(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        """Start reading ``fd`` (made non-blocking) whenever it has data."""
        self._loop, self._fd = loop, fd
        os.set_blocking(fd, False)
        loop.add_reader(fd, self._readable)

    @property
    def is_open(self) -> bool:
        """The pipe is still watched and has not reached its end."""
        return self._fd >= 0 and not self.lines.closed

    def close(self) -> None:
        """Stop watching and close the descriptor (safe to call more than once)."""
        if self._timer is not None:
            self._timer.close()
        if self._fd >= 0:
            self._unwatch()
            os.close(self._fd)
            self._fd = -1

    # -- the event loop's side -------------------------------------------------------
    def _readable(self) -> None:
        data = read_chunk(self._fd)
        if data is None:
            return
        if data:
            self._on_chunk(data, time.monotonic())
            return
        self._unwatch()
        self.lines.close(time.monotonic())
        self._log_completed()
        self.wake()

    def _on_chunk(self, data: bytes, now: float) -> None:
        """A chunk of stdout arrived at ``now``: keep it, log its lines, and wake the
        waiting reader when the chunk may hold the line it waits for.

        A chunk that is exactly the line the reader waits for, with nothing unread
        before it (a quick engine's ``bestmove``), is handed to the reader as it is,
        without the buffer, a stamp or a search: with engines that answer at once that
        was about a tenth of the referee's CPU per ply."""
        lines, waiter, want = self.lines, self._waiter, self._want
        if (want is not None and waiter is not None and not waiter.done()
                and self.traffic is None and lines.is_whole_reply(data, want)):
            lines.hand_over(data)
            self._handed = data, now
            waiter.set_result(None)
            return
        if not lines.feed(data, now):
            return
        if self.traffic is not None:
            self._log_completed()
        if waiter is None or waiter.done():
            return
        if want is None or lines.error is not None or lines.completed_contains(want):
            waiter.set_result(None)

    def _log_completed(self) -> None:
        """Hand the lines the last chunk completed to the traffic hook (in one call when
        it takes blocks of lines)."""
        text = self.lines.completed_text()
        if self.traffic is None or text is None:
            return
        wall = time.time()
        if self.traffic_block is not None:
            self.traffic_block(wall, "<", self.name, text)
        else:
            for line in text.split("\n"):
                self.traffic(wall, "<", self.name, line)

    def wake(self) -> None:
        """Wake the waiting reader, if any, to look again (the process exited)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _unwatch(self) -> None:
        if self._loop is not None and self._fd >= 0:
            self._loop.remove_reader(self._fd)

    # -- the reader's side -----------------------------------------------------------
    async def read(self, word: bytes | None, deadline: float, keep: int,
                   disconnected: Callable[[], Awaitable[str]]) -> tuple[list[str], float]:
        """Wait for a complete line opening with ``word`` (any line: None) until
        ``deadline``: the last ``keep`` lines through it and its arrival. Woken by a
        chunk that may hold it, the end of output, the exit or a fault, not by every
        chunk; at the end of output, :class:`EngineDisconnected` with the text
        ``disconnected()`` words."""
        loop = self._loop
        if loop is None:
            raise EngineDisconnected(f"engine {self.name} is not running")
        lines = self.lines
        while True:
            found = lines.take_through(word, keep)
            if found is not None:
                return found
            if lines.error is not None:
                raise EngineProtocolError(f"engine {self.name} {lines.error}")
            if lines.closed:
                raise EngineDisconnected(await disconnected())
            if deadline - time.monotonic() <= 0:
                raise EngineTimeout(f"engine {self.name} did not answer in time",
                                    lines=lines.take_all(keep), unfinished=lines.unfinished(UNFINISHED_SHOWN + 1))
            if self._timer is None:
                self._timer = DeadlineTimer(loop, self.wake)
            waiter = self._waiter = loop.create_future()
            self._want = word
            self._timer.arm(deadline)
            try:
                await waiter
                if self._handed is not None:
                    data, at = self._handed
                    self._handed = None
                    return ([line_text(data[:-1])] if keep else []), at
            finally:
                self._timer.disarm()
                self._waiter = self._want = None
                if self._handed is not None:  # cancelled before taking it
                    lines.give_back(*self._handed)
                    self._handed = None
