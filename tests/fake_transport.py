"""An engine in memory: a :class:`~guti.referee.ugi.transport.Transport` that answers from
a script, so the UGI client and the game loop are tested in milliseconds, without
processes.

The script is a function called with every line written to the engine; it
returns the lines to answer with. A returned :class:`Reply` can also stamp a
line as if it had arrived ``after_ms`` after the write (a slow engine without
the wait), or close the output (a crash). Returning nothing for a ``go`` is a
silent engine: the read waits until its deadline and times out.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from guti.referee.process.cpu_time import cpu_unknown
from guti.referee.process.errors import EngineDisconnected, EngineProtocolError, EngineTimeout


@dataclass(frozen=True)
class Reply:
    """One answer line; ``after_ms``: its arrival stamp, counted from the write that caused
    it (None: now); ``close``: the engine's output ends instead (``line`` is ignored);
    ``flood``: the engine overflowed the bounded pipe (a protocol error)."""

    line: str = ""
    after_ms: float | None = None
    close: bool = False
    flood: bool = False


Answer = str | Reply
Script = Callable[[str], Iterable[Answer]]


class FakeTransport:
    """Scripted lines in, written lines recorded in :attr:`sent`."""

    def __init__(self, name: str, script: Script) -> None:
        self.name = name
        self.script = script
        self.sent: list[str] = []
        self.pid: int | None = None
        self.closed = False
        self.quit_called = False
        self._lines: deque[tuple[str, float]] = deque()
        self._fault: Exception | None = None
        self._wake = asyncio.Event()

    @property
    def returncode(self) -> int | None:
        return 0 if self.closed else None

    @property
    def is_alive(self) -> bool:
        return not self.closed and self._fault is None

    async def start(self) -> None:
        self.pid = 0

    def send(self, line: str) -> None:
        self.send_lines((line,))

    def send_lines(self, lines: Sequence[str]) -> float:
        sent_at = time.monotonic()
        for line in lines:
            self.sent.append(line)
            if self.closed:
                continue
            for answer in self.script(line):
                self._queue(answer, sent_at)
        return sent_at

    def _queue(self, answer: Answer, sent_at: float) -> None:
        reply = Reply(answer) if isinstance(answer, str) else answer
        if reply.close:
            self.closed = True
            self._fault = EngineDisconnected(f"engine {self.name} exited (exit code 0)")
        elif reply.flood:
            self._fault = EngineProtocolError(f"engine {self.name} sent a line too long")
        else:
            at = time.monotonic() if reply.after_ms is None else sent_at + reply.after_ms / 1000
            self._lines.append((reply.line, at))
        self._wake.set()

    def drop_pending(self) -> None:
        self._lines.clear()

    async def read_stamped(self, deadline: float) -> tuple[str, float]:
        while True:
            if self._lines:
                return self._lines.popleft()
            if self._fault is not None:
                raise self._fault
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EngineTimeout(f"engine {self.name} did not answer in time")
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), remaining)
            except TimeoutError:
                pass

    async def read_through(
        self, word: str, deadline: float, keep: int
    ) -> tuple[list[str], float]:
        seen: deque[str] = deque(maxlen=keep)
        while True:
            try:
                line, at = await self.read_stamped(deadline)
            except EngineTimeout as exc:
                raise EngineTimeout(str(exc), lines=list(seen)) from None
            seen.append(line)
            if line.split()[:1] == [word]:
                return list(seen), at

    async def read_line(self, timeout: float) -> str:
        line, _ = await self.read_stamped(time.monotonic() + timeout)
        return line

    def stderr_lines(self) -> list[str]:
        return []

    #: The bytes of output read (what a test sets it to: the script has no bytes).
    output_bytes = 0

    def cpu_clock(self) -> Callable[[], float | None]:
        return cpu_unknown

    def resource_breach(self, memory_only: bool = False) -> str | None:
        return None

    def reap_ended_helpers(self) -> None:
        pass

    def peak_memory(self) -> tuple[int | None, str]:
        return None, ""

    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None:
        self.quit_called = True
        self.closed = True

    def kill_now(self) -> None:
        self.closed = True
