"""The wall-clock time a command took, printed at its end instead of promised in the README.

Why measured: how long a tournament takes depends on the machine and its load (the
bundled one took 12 s on an idle machine and 22-34 s on a loaded one), so the README
states no figure and the command reports its own.
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
