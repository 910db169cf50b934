"""What an engine's processes hold, read from ``/proc``: peak memory and threads.

The kernel keeps, per process, the most resident memory it ever held (``VmHWM`` in
``/proc/PID/status``) and its number of threads (``Threads``). An engine in a memory
cgroup of its own is measured whole by the cgroup
(:meth:`~guti.referee.process.cgroups.EngineCgroup.peak_memory`); these readings are
the fallback for an engine without one (the largest single process's peak, read before
the engine is stopped: once a process is gone, its figures are too), and what
``guti check`` reports (peak memory and threads during its searches). Off Linux every
reading is None.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass


def _status(pid: int) -> bytes:
    """The text of ``/proc/PID/status`` (empty when it cannot be read)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status", "rb") as fh:
        return fh.read()
    return b""


def _field(status: bytes, name: bytes) -> bytes | None:
    """The first word of the ``Name:`` line of a ``/proc/PID/status`` text (None: no such
    line, or an empty one). Found in the bytes: the referee reads one field after every
    game, and splitting the whole text into lines cost five times as much."""
    at = status.find(b"\n" + name + b":")
    if at < 0:
        return None
    start = at + len(name) + 2
    end = status.find(b"\n", start)
    words = status[start : end if end >= 0 else len(status)].split()
    return words[0] if words else None


def stat_fields(stat: bytes) -> list[bytes]:
    """The fields of a ``/proc/PID/stat`` line after the command's name (which is in
    parentheses and may itself hold spaces or ``)``): ``[0]`` is the state (field 3 of
    proc(5)), ``[1]`` the parent's pid, ``[2]`` the process group, ``[13]`` and ``[14]``
    the CPU of the children it has reaped (``cutime``, ``cstime``, in clock ticks)."""
    return stat[stat.rfind(b")") + 2 :].split()


def vm_hwm(status: bytes) -> int | None:
    """``VmHWM`` (bytes) from the text of a ``/proc/PID/status`` (None: not there, as for
    a zombie or a kernel thread)."""
    kib = _field(status, b"VmHWM")
    return int(kib) * 1024 if kib and kib.isdigit() else None


def peak_rss(pids: Iterable[int]) -> int | None:
    """The largest ``VmHWM`` (peak resident memory, bytes) among ``pids`` (None: none
    readable, e.g. all gone or off Linux)."""
    peaks = [peak for pid in pids if (peak := vm_hwm(_status(pid)))]
    return max(peaks) if peaks else None


@dataclass(frozen=True)
class UsageSample:
    """One look at an engine's processes: how many, their threads together, and the
    largest peak resident memory among them (bytes; None: not readable)."""

    processes: int
    threads: int
    peak_memory: int | None


def sample(pids: Iterable[int]) -> UsageSample:
    """Count the processes ``pids`` that are still there and their threads."""
    processes = threads = 0
    peaks: list[int] = []
    for pid in pids:
        status = _status(pid)
        count = _field(status, b"Threads")
        if count is None or not count.isdigit():
            continue  # gone, or a zombie
        processes += 1
        threads += int(count)
        peak = vm_hwm(status)
        if peak:
            peaks.append(peak)
    return UsageSample(processes, threads, max(peaks) if peaks else None)
