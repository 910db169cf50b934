"""CPU time used by an engine's processes, read from the kernel's per-process CPU clock.

Linux keeps, for every process, a clock of the CPU time its threads have run, in user
and in kernel mode together, to the nanosecond; ``clock_gettime`` reads it for any
process whose pid is known (the clock ``clock_getcpuclockid`` names, see
:func:`process_cpu_clock`). The referee reads it before and after each move, so a move's
CPU time is what the engine used while it was thinking, however many threads it ran.
One reading is a single system call (about half a microsecond), so the referee reads it
afresh every time. An engine whose processes sit in a cgroup of their own
(:mod:`guti.referee.process.cgroups`) is read whole there; else its leading process (all
its threads) is, and for an engine judged on its CPU (``limits.cpus``,
``limits.ponder=off``) also the children it has reaped (``cutime`` and ``cstime`` of its
``/proc/PID/stat``, in clock ticks): a search run in a child process it waits for counts
as its own. Off Linux, every reading is None.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

from guti.referee.process.usage import stat_fields, vm_hwm

#: The kernel's CPU clock that counts the time a process's threads ran (``CPUCLOCK_SCHED``).
_CPUCLOCK_SCHED = 2
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: ``time.clock_gettime`` (None where the system has none).
_clock_gettime = getattr(time, "clock_gettime", None)


def process_cpu_clock(pid: int) -> int:
    """The clock id of process ``pid``'s CPU time: what glibc's ``clock_getcpuclockid``
    returns (Linux encodes the pid and the kind of clock in the id itself:
    ``~pid << 3 | CPUCLOCK_SCHED``), which Python's :mod:`time` does not offer."""
    return (~pid << 3) | _CPUCLOCK_SCHED


def _clock_seconds(clock: int) -> float | None:
    if _clock_gettime is None:
        return None
    try:
        return float(_clock_gettime(clock))
    except (OSError, OverflowError):  # the process is gone (and reaped), or not Linux
        return None


class ProcessCpu:
    """One process's CPU time and peak memory while it runs: the CPU from its clock, the
    peak memory from its ``/proc/PID/status`` kept open (the referee reads it after every
    game; a ``pread`` of an open file costs a fifth of opening it anew, 8 against 42 us).

    ``reaped`` tells whether the process has been reaped: from then on its pid may be
    another process's, so every reading is None. The caller reaps on the same thread it
    reads on, so no reaping can fall between the question and the reading. ``children``:
    the CPU of the children it has reaped counts too (its ``/proc/PID/stat`` kept open).
    """

    def __init__(self, pid: int, reaped: Callable[[], bool], children: bool = False) -> None:
        self._clock = process_cpu_clock(pid)
        self._reaped = reaped
        self._status_fd = _open(f"/proc/{pid}/status")
        self._stat_fd = _open(f"/proc/{pid}/stat") if children else None

    def seconds(self) -> float | None:
        if self._reaped():
            return None
        own = _clock_seconds(self._clock)
        if own is None or self._stat_fd is None:
            return own
        try:
            fields = stat_fields(os.pread(self._stat_fd, 4096, 0))
            return own + (int(fields[13]) + int(fields[14])) / _TICKS  # cutime, cstime
        except (OSError, ValueError, IndexError):
            return None

    def peak_memory(self) -> int | None:
        """The process's peak resident memory in bytes (``VmHWM``; None: not readable)."""
        if self._status_fd is None or self._reaped():
            return None
        try:
            return vm_hwm(os.pread(self._status_fd, 8192, 0))
        except OSError:
            return None

    def close(self) -> None:
        for fd in (self._status_fd, self._stat_fd):
            if fd is not None:
                os.close(fd)
        self._status_fd = self._stat_fd = None


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
    """CPU seconds used so far by the running processes ``pids`` together (None: none is
    known, e.g. off Linux or all gone)."""
    readings = [_clock_seconds(process_cpu_clock(pid)) for pid in pids]
    known = [seconds for seconds in readings if seconds is not None]
    return sum(known) if known else None
