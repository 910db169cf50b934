"""CPU time used by an engine's processes, read from /proc.

The kernel counts, per process, the time its threads ran in user and in kernel mode
(``utime``, ``stime``) and that of its children it has reaped (``cutime``, ``cstime``),
in clock ticks (usually 100 a second: a move's CPU time is known to 10 ms). The
referee reads it before and after each move, so a move's CPU time is what the engine
used while it was thinking, however many threads it ran; an engine whose processes sit
in a cgroup of their own (:mod:`guti.referee.process.cgroups`) is read whole, else its
leading process (its threads, and the children it has reaped) is.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pids: Iterable[int]) -> float | None:
    """CPU seconds used so far by the processes ``pids`` together (None: none is known,
    e.g. off Linux or all gone)."""
    ticks, found = 0, False
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
            # After the command name (in parentheses, which may hold anything): state is
            # field 3, utime..cstime fields 14-17.
            fields = data[data.rfind(b")") + 2 :].split()
            ticks += sum(int(value) for value in fields[11:15])
            found = True
    return ticks / _TICKS if found else None
