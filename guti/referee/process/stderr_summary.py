"""What a crashed engine's stderr says, in one line and in a bounded tail.

Why not simply the last line: a Rust panic ends in ``note: run with `RUST_BACKTRACE=1`
environment variable to display a backtrace``, which hides the panic message above it,
and a C++ abort or a Go panic end in similar boilerplate. :func:`telling_line` skips such
notes and joins a panic's location with its message; :func:`tail_lines` keeps the last
lines (at most :data:`TAIL_LINES`, of the 4 KiB the process keeps) for the game's record.
:class:`StderrTail` reads an engine's stderr pipe on the event loop, keeps its last
bytes, copies them to the engine's stderr log and hands whole lines to the traffic hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Callable
from typing import BinaryIO

from guti.referee.process.pipes import read_chunk

#: Lines of a crashed engine's stderr kept in the game's detail.
TAIL_LINES = 20
#: Bytes of stderr kept for error messages and a crashed engine's record, and the most
#: of one line handed to the traffic hook.
STDERR_TAIL = 4096

#: Lines that explain how to get more output rather than what went wrong.
_BOILERPLATE = re.compile(
    r"^(note: run with `?RUST_BACKTRACE|note: Some details are omitted|stack backtrace:"
    r"|\s*at \S+:\d+|\s*\d+: |goroutine \d+ \[|Aborted \(core dumped\))"
)
_PANIC = re.compile(r"panicked at (?!')")  # Rust >= 1.73: "panicked at FILE:L:C:" + message


def tail_lines(text: str, limit: int = TAIL_LINES) -> list[str]:
    """The last ``limit`` non-empty lines of ``text`` (each cut at 300 characters)."""
    lines = [line.rstrip()[:300] for line in text.splitlines() if line.strip()]
    return lines[-limit:]


def telling_line(lines: list[str]) -> str:
    """The line that best says why the engine died (``""`` for no stderr at all)."""
    useful = [line for line in lines if not _BOILERPLATE.match(line)]
    if not useful:
        return lines[-1][:200] if lines else ""
    for i in range(len(useful) - 1, -1, -1):
        if _PANIC.search(useful[i]) and useful[i].rstrip().endswith(":") and i + 1 < len(useful):
            return f"{useful[i].rstrip()} {useful[i + 1].strip()}"[:300]
    return useful[-1][:200]


class StderrTail:
    """An engine's stderr as it comes: the last :data:`STDERR_TAIL` bytes kept, every
    byte copied to ``sink`` (the engine's stderr log, when it has one), and each line
    given to ``hook(wall_time, "!", name, line)`` when there is a hook. Never parsed."""

    def __init__(self, name: str, sink: BinaryIO | None,
                 hook: Callable[[float, str, str, str], None] | None) -> None:
        self.name = name
        self.sink = sink
        self.hook = hook
        self.tail = bytearray()
        self._partial = bytearray()  # the unfinished line, for the hook
        self._fd = -1
        self._loop: asyncio.AbstractEventLoop | None = None
        self.ended = asyncio.Event()  # the pipe is at its end: the tail is complete

    def watch(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        """Read the pipe ``fd`` (our end of the engine's stderr) as data comes."""
        os.set_blocking(fd, False)
        self._loop, self._fd = loop, fd
        loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        data = read_chunk(self._fd)
        if data:
            self.feed(data)
        elif data is not None:  # the end
            self._unwatch()
            self.close()
            self.ended.set()

    def _unwatch(self) -> None:
        if self._loop is not None and self._fd >= 0:
            self._loop.remove_reader(self._fd)
            self._loop = None

    def stop(self) -> None:
        """Stop reading: close the pipe and the log."""
        self._unwatch()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.sink is not None:
            with contextlib.suppress(OSError):
                self.sink.close()
            self.sink = None

    def feed(self, data: bytes) -> None:
        self.tail += data
        if len(self.tail) > STDERR_TAIL:
            del self.tail[: len(self.tail) - STDERR_TAIL]
        if self.sink is not None:
            with contextlib.suppress(OSError):
                self.sink.write(data)
        if self.hook is None:
            return
        self._partial += data
        if b"\n" in self._partial:
            *lines, rest = self._partial.split(b"\n")
            self._partial = bytearray(rest)
            for raw in lines:
                self._line(raw)
        if len(self._partial) > STDERR_TAIL:
            self._line(self._partial)
            self._partial.clear()

    def close(self) -> None:
        """The stream ended: its unfinished last line goes to the hook too."""
        if self._partial:
            self._line(self._partial)
            self._partial.clear()

    def _line(self, raw: bytes | bytearray) -> None:
        if self.hook is not None:
            text = raw[:STDERR_TAIL].decode("utf-8", "replace").rstrip("\r")
            self.hook(time.time(), "!", self.name, text)

    def lines(self) -> list[str]:
        """The last lines (at most :data:`TAIL_LINES`, of the kept bytes)."""
        return tail_lines(self.tail.decode("utf-8", "replace"))
