"""How many referee processes a run starts: ``-referees N``, or ``auto`` chosen by guti.

Why: one Python process referees every game of a run on one event loop, on one core.
The more games it referees at once, the later it reads their replies, and a reply read
late is charged to the engine that wrote it in time. Referee processes
(:mod:`guti.referee.execution.referee_pool`) spread the games over the cores, but a user
should not have to know that: ``auto`` (the default) keeps a run of few games at once in
this process (it pays for no process it does not need) and gives one more process per
:data:`GAMES_PER_REFEREE` games at once, at most one per core guti may use.

This module imports nothing of guti's, so that ``--help`` can show the rule.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: ``-referees auto``: chosen from the games at once and the cores.
AUTO_REFEREES = 0
#: ``-referees auto``: games at once one referee process takes before a second one helps.
#: How late a process reads replies grows with the games it referees: on two cores, with
#: 50 ms moves, one process read 99 % of the replies within about 2 ms at 32 games at
#: once and forfeited engines that had answered in time at 128. 16 games a process keep
#: each well inside that, and a run of 16 games at once or fewer starts no process.
GAMES_PER_REFEREE = 16


def usable_cores(cpus: Sequence[int] | None = None) -> int:
    """The cores a run may use: ``-use-affinity``'s CPUs when given, else those this
    process may run on."""
    if cpus:
        return len(set(cpus))
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def referee_count(referees: int, concurrency: int, games: int | None = None,
                  cpus: Sequence[int] | None = None) -> int:
    """How many processes referee a run's games (1: this one alone). ``referees``: the
    number asked for (at most one per game slot), or :data:`AUTO_REFEREES`: one per
    :data:`GAMES_PER_REFEREE` of the games at once (``concurrency``, or the ``games`` of
    the run when fewer), at most one per core (:func:`usable_cores` of ``cpus``)."""
    at_once = max(1, concurrency if games is None else min(concurrency, games))
    if referees != AUTO_REFEREES:
        return max(1, min(referees, max(1, concurrency)))
    wanted = -(-at_once // GAMES_PER_REFEREE)  # rounded up
    return max(1, min(wanted, usable_cores(cpus), at_once))
