"""The wall-clock time a command took, printed at its end.

Why measured: how long a tournament takes depends on the machine and its load (the same
tournament can take twice as long on a loaded machine), so the command reports its own
time rather than the docs promising one.
"""

from __future__ import annotations

import time


class Stopwatch:
    """Started when made; :meth:`line` is the ``Elapsed: ...`` line of the command."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.start

    def line(self) -> str:
        """``Elapsed: 12.3 s`` (``Elapsed: 2 min 5.0 s`` from a minute on)."""
        secs = self.seconds()
        if secs < 60:
            return f"Elapsed: {secs:.1f} s"
        minutes, rest = divmod(secs, 60)
        return f"Elapsed: {int(minutes)} min {rest:.1f} s"
