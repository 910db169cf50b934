"""CPU affinity of engine processes (``-use-affinity [CPUS]``, fastchess's option).

Why: concurrent games on a shared machine steal each other's time when the kernel moves
engines between cores; pinning each game slot's engines to its own cores keeps one game's
search off the other's. Linux only (``os.sched_setaffinity``).

- :func:`parse_cpu_list` reads fastchess's list form ``3,5,7-11,13``;
- :func:`slot_cpus` splits the CPUs among the game slots: ``n`` CPUs for ``c`` slots give
  slot ``k`` the CPUs at positions ``k*n//c`` up to ``(k+1)*n//c`` of the list (each slot
  at least one CPU, none shared; ``n < c`` is refused by the command-line readers);
- :func:`referee_pinned` pins the referee itself, for a run, to the CPUs of the game
  slots it referees: a ply hands over from referee to engine and back, and on the same
  CPU that hand-over is a plain context switch, while across CPUs it wakes another,
  often idle, core (on a virtual machine several times dearer);
- :func:`pin_process_tree` pins a running engine: every thread of the process and of its
  descendants (an engine started through a wrapper script is pinned too). Engine
  processes are reused by whichever game slot takes them next, so a game pins its two
  processes when it starts, not once at spawn (the local executor skips a process still
  on the slot's CPUs from its last game: threads and processes it started since then
  inherited them).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence

from guti.rules.numbers import whole_number


class CpuListError(ValueError):
    """A CPU list that cannot be used; one line naming the bad part."""


def supported() -> bool:
    """Whether this system can pin processes (Linux: ``sched_setaffinity``)."""
    return hasattr(os, "sched_setaffinity") and os.path.isdir("/proc/self/task")


def available_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on, in order."""
    return tuple(sorted(os.sched_getaffinity(0)))


#: Linux's largest number of CPUs (``CONFIG_NR_CPUS`` at most 8192).
MAX_CPUS = 8192


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"0,2-4"`` -> ``(0, 2, 3, 4)``: in the order given, each CPU once (numbers below
    :data:`MAX_CPUS`, as Linux numbers them)."""
    cpus: dict[int, None] = {}
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        first = whole_number(low, 5)
        last = whole_number(high, 5) if dash else first
        if first is None or last is None:
            raise CpuListError(f"{part!r} is not a CPU number or range such as 2-5")
        if last < first:
            raise CpuListError(f"{part!r} is a range that goes down")
        if last >= MAX_CPUS:
            raise CpuListError(f"{part!r}: CPU numbers go up to {MAX_CPUS - 1}")
        for cpu in range(first, last + 1):
            if cpu in cpus:
                raise CpuListError(f"CPU {cpu} is listed twice")
            cpus[cpu] = None
    return tuple(cpus)


def slot_cpus(cpus: Sequence[int], slots: int, slot: int) -> tuple[int, ...]:
    """The CPUs of game slot ``slot`` (0-based) of ``slots`` (see the module docstring)."""
    n = len(cpus)
    return tuple(cpus[slot * n // slots : (slot + 1) * n // slots])


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (``/proc/PID/task/TID/children``)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{current}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{current}/task/{tid}/children") as fh:
                    todo += [int(child) for child in fh.read().split() if int(child) not in found]
    return found


@contextlib.contextmanager
def referee_pinned(cpus: Sequence[int] | None) -> Iterator[None]:
    """The calling thread (the referee's event loop; the engines it starts inherit its
    CPUs) pinned to ``cpus`` for the block, and given back its CPUs after it; nothing
    when ``cpus`` is None."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cpus))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, before)


def pin_process_tree(pid: int, cpus: Sequence[int]) -> None:
    """Pin every thread of ``pid`` and of its descendants to ``cpus``. A process or thread
    that ends meanwhile is skipped (the game notices a dead engine on its own)."""
    mask = set(cpus)
    for proc in _descendants(pid):
        try:
            threads = [int(tid) for tid in os.listdir(f"/proc/{proc}/task")]
        except OSError:
            continue
        for tid in threads:
            with contextlib.suppress(ProcessLookupError, FileNotFoundError, PermissionError):
                os.sched_setaffinity(tid, mask)
