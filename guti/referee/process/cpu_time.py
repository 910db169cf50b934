"""CPU time used by an engine's processes, read from /proc.

The kernel counts, per process, the time its threads ran in user and in kernel mode
(``utime``, ``stime``) and that of its children it has reaped (``cutime``, ``cstime``),
in clock ticks (usually 100 a second: a move's CPU time is known to 10 ms). The
referee reads it before and after each move, so a move's CPU time is what the engine
used while it was thinking, however many threads it ran; an engine whose processes sit
in a cgroup of their own (:mod:`guti.referee.process.cgroups`) is read whole, else its
leading process (its threads, and the children it has reaped) is. A reading less than a
tick old is used again rather than read anew (:class:`TickCachedCpu`).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable

from guti.referee.process.usage import vm_hwm

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_seconds(data: bytes) -> float:
    """utime + stime + cutime + cstime of a ``/proc/PID/stat`` line, in seconds. After the
    command name (in parentheses, which may hold anything): state is field 3, utime..cstime
    fields 14-17."""
    fields = data[data.rfind(b")") + 2 :].split()
    return sum(int(value) for value in fields[11:15]) / _TICKS


class ProcessCpu:
    """One process's CPU time and peak memory, read again and again from its
    ``/proc/PID/stat`` and ``/proc/PID/status`` kept open: the referee reads the CPU
    before and after every move and the peak memory after every game, and a ``pread`` of
    an open file takes about a quarter of opening it anew (4 against 16 us for ``stat``,
    8 against 42 us for ``status`` parsed line by line). The open files stay the process's
    (a reused pid is another process): once the process is gone, they read None."""

    def __init__(self, pid: int) -> None:
        self._fd = _open(f"/proc/{pid}/stat")
        self._status_fd = _open(f"/proc/{pid}/status")

    def seconds(self) -> float | None:
        if self._fd is None:
            return None
        try:
            return _stat_seconds(os.pread(self._fd, 4096, 0))
        except (OSError, ValueError, IndexError):
            return None

    def peak_memory(self) -> int | None:
        """The process's peak resident memory in bytes (``VmHWM``; None: not readable)."""
        if self._status_fd is None:
            return None
        try:
            return vm_hwm(os.pread(self._status_fd, 8192, 0))
        except OSError:
            return None

    def close(self) -> None:
        for fd in (self._fd, self._status_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._status_fd = None


def _open(path: str) -> int | None:
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def cpu_unknown() -> float | None:
    """A CPU reader for an engine whose CPU time cannot be read (not started, or
    scripted): it reads None."""
    return None


def cpu_seconds(pids: Iterable[int]) -> float | None:
    """CPU seconds used so far by the processes ``pids`` together (None: none is known,
    e.g. off Linux or all gone)."""
    seconds, found = 0.0, False
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/stat", "rb") as fh:
                seconds += _stat_seconds(fh.read())
            found = True
    return seconds if found else None


class TickCachedCpu:
    """A CPU-time reading (``read``: seconds, or None) taken again only once a clock tick
    has passed since the last one. The kernel's count moves in whole ticks, so two reads
    less than a tick apart tell nothing the first did not; with engines that answer within
    a millisecond, most reads before and after a move fall in one tick, and skipping them
    spares the referee a third of its CPU per ply (formatting another process's
    ``/proc/PID/stat`` costs the kernel about 10 us). What a move's CPU time leaves out
    this way is counted in the next move read afresh: the total stays exact. ``exact``:
    read afresh every time (an engine judged on what it uses between two moves)."""

    def __init__(self, read: Callable[[], float | None], exact: bool = False) -> None:
        self._read = read
        self._max_age = 0.0 if exact else 1 / _TICKS
        self._read_at = -math.inf
        self._seconds: float | None = None

    def seconds(self) -> float | None:
        now = time.monotonic()
        if now - self._read_at >= self._max_age:
            self._seconds = self._read()
            self._read_at = now
        return self._seconds
