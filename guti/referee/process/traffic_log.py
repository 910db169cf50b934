"""The full engine traffic of a match, with timestamps and direction (``-log file=FILE``).

One line per protocol line::

    2024-05-01T12:00:00.123456 [Alpha] > go p1time 5000 p2time 5000 p1inc 50 p2inc 50
    2024-05-01T12:00:00.131002 [Alpha] < bestmove 17-12
    2024-05-01T12:00:00.131100 [Alpha] ! some debug text on stderr

``>`` is referee to engine, ``<`` engine to referee, ``!`` the engine's stderr
(recorded for diagnosis, never parsed), ``#`` a referee note (game start/end).
The time is the local wall clock, microseconds. Writes are buffered and
flushed at the end of every game (:meth:`TrafficLog.flush`) and on close,
so logging costs next to nothing per line. A log that cannot be written (a full disk)
stops taking lines at once, and the next :meth:`TrafficLog.flush` or :meth:`~TrafficLog.close`
raises the error, naming the file, once.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import time
from typing import TextIO

from guti.referee.process.text import visible


class TrafficLog:
    """Appends traffic lines to a file; the object itself is a :data:`TrafficHook`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh: TextIO | None = open(path, "a", encoding="utf-8", buffering=1 << 16)  # noqa: SIM115
        self._error: OSError | None = None  # a write that failed, not reported yet

    def __call__(self, wall: float, direction: str, name: str, line: str) -> None:
        fh = self._fh
        if fh is None:
            return
        stamp = _dt.datetime.fromtimestamp(wall).isoformat(timespec="microseconds")
        self._write(fh, f"{stamp} [{visible(name)}] {direction} {visible(line)}\n")

    def _write(self, fh: TextIO, text: str) -> None:
        try:
            fh.write(text)
        except OSError as exc:  # from the event loop's callbacks: kept for flush to raise
            self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        """Stop writing the log, keeping the error (with the log's name) for the caller."""
        fh, self._fh = self._fh, None
        if self._error is None:
            self._error = OSError(exc.errno, exc.strerror, self.path)
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.close()  # what could not be written is dropped with it

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def block(self, wall: float, direction: str, name: str, text: str) -> None:
        """Several lines that arrived together (``text``: joined by newlines), one stamp:
        the prefix is formatted once and the lines written in one string operation, so
        an engine flooding output costs the log one write per chunk, not one per line
        (each line is still made :func:`visible`)."""
        fh = self._fh
        if fh is None:
            return
        stamp = _dt.datetime.fromtimestamp(wall).isoformat(timespec="microseconds")
        prefix = f"{stamp} [{visible(name)}] {direction} "
        shown = "\n".join(visible(line) for line in text.split("\n"))
        self._write(fh, prefix + shown.replace("\n", "\n" + prefix) + "\n")

    def hook(self, tag: str) -> TaggedHook:
        """A hook that prefixes engine names with ``tag`` (e.g. a process number), for
        concurrent games sharing one log."""
        return TaggedHook(self, tag)

    def note(self, text: str, wall: float | None = None) -> None:
        """A referee line (``#``), e.g. game start and result."""
        self(time.time() if wall is None else wall, "#", "referee", text)

    def flush(self) -> None:
        """Write out what is buffered (OSError naming the log when it cannot be)."""
        if self._fh is not None:
            try:
                self._fh.flush()
            except OSError as exc:
                self._give_up(exc)
        self._raise_error()

    def close(self) -> None:
        """Flush and close (OSError naming the log when that fails, or when a write failed
        that no flush has told yet)."""
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError as exc:
                self._give_up(exc)
        self._raise_error()

    def __enter__(self) -> TrafficLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TaggedHook:
    """A :data:`~guti.referee.process.engine_process.TrafficHook` (with the bulk ``block``
    form) writing to ``log`` with engine names prefixed by ``tag``."""

    __slots__ = ("log", "tag")

    def __init__(self, log: TrafficLog, tag: str) -> None:
        self.log, self.tag = log, tag

    def __call__(self, wall: float, direction: str, name: str, line: str) -> None:
        self.log(wall, direction, f"{self.tag} {name}", line)

    def block(self, wall: float, direction: str, name: str, text: str) -> None:
        self.log.block(wall, direction, f"{self.tag} {name}", text)
