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


def _status_fields(pid: int) -> dict[str, str]:
    """The ``Name: value`` lines of ``/proc/PID/status`` ({} when it cannot be read)."""
    fields: dict[str, str] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return fields


def _kib(text: str | None) -> int | None:
    """``"1776 kB"`` -> bytes."""
    if not text:
        return None
    number = text.split()[0]
    return int(number) * 1024 if number.isdigit() else None


def vm_hwm(status: bytes) -> int | None:
    """``VmHWM`` (bytes) from the text of a ``/proc/PID/status`` (None: not there, as for
    a zombie or a kernel thread)."""
    at = status.find(b"\nVmHWM:")
    if at < 0:
        return None
    words = status[at + 7 : status.find(b"\n", at + 7)].split()
    return int(words[0]) * 1024 if words and words[0].isdigit() else None


def peak_rss(pids: Iterable[int]) -> int | None:
    """The largest ``VmHWM`` (peak resident memory, bytes) among ``pids`` (None: none
    readable, e.g. all gone or off Linux)."""
    peaks = []
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status", "rb") as fh:
            peak = vm_hwm(fh.read())
            if peak:
                peaks.append(peak)
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
        fields = _status_fields(pid)
        if not fields.get("Threads", "").isdigit():
            continue  # gone, or a zombie
        processes += 1
        threads += int(fields["Threads"])
        peak = _kib(fields.get("VmHWM"))
        if peak:
            peaks.append(peak)
    return UsageSample(processes, threads, max(peaks) if peaks else None)
