"""What a ``go`` asks for, and how long to think: the time manager.

The referee charges a move from the moment it writes ``go`` to the moment it reads
``bestmove``, so the plan keeps a safety margin (:func:`safety_margin_ms`) for reading the
command, setting up the search, flushing the answer and the scheduler of a loaded machine,
and never plans past a fraction of the remaining clock. Two deadlines come out: ``soft``
(do not start another iteration after it) and ``hard`` (abort the iteration in progress).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .level import LevelSettings

#: Estimated moves still to play when the GUI gives no ``movestogo``.
DEFAULT_MOVES_TO_GO = 22


@dataclass
class SearchLimits:
    """The limits of one ``go``; times in milliseconds, None = not given.

    ``start`` is the ``time.perf_counter()`` reading taken when ``go`` was read, so time
    spent before the search starts is charged too.
    """

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    p1time: int | None = None
    p2time: int | None = None
    p1inc: int = 0
    p2inc: int = 0
    movestogo: int | None = None
    infinite: bool = False
    start: float | None = None

    def clock_for(self, side: str) -> tuple[int | None, int]:
        """(remaining ms, increment ms) of ``side`` ('w' or 'b')."""
        return (self.p1time, self.p1inc) if side == "w" else (self.p2time, self.p2inc)



@dataclass(frozen=True)
class TimePlan:
    """Deadlines in seconds after ``start``; None = no deadline."""

    soft: float | None
    hard: float | None


#: The smallest margin kept on any clock, whatever ``Move Overhead`` says: the reply's own
#: latency (reading ``go``, starting the search, writing ``bestmove``).
MIN_MARGIN_MS = 10
#: The share of the remaining clock kept back as well: the stalls of a loaded machine grow
#: with how long the engine thinks, so a long clock keeps a longer cushion.
MARGIN_SHARE = 0.05


def safety_margin_ms(remaining_ms: float, overhead_ms: int) -> float:
    """The part of a clock no plan may spend: the largest of ``Move Overhead``, 10 ms and
    5 % of what is left."""
    return max(float(overhead_ms), float(MIN_MARGIN_MS), remaining_ms * MARGIN_SHARE)


def plan_time(limits: SearchLimits, side: str, overhead_ms: int = 30) -> TimePlan:
    """How long to think for ``side`` under ``limits``.

    With a clock: about ``usable / moves_to_go + 3/4 increment``, where ``usable`` is the
    remaining time less :func:`safety_margin_ms`, never more than half of ``usable``; when
    the clock is nearly gone, at most half the increment and half of ``usable``, and with
    nothing usable left, the quickest legal answer (a 1 ms budget). So ``hard`` plus the
    margin never exceeds the remaining time. With ``movetime``: the movetime less the
    margin. Both may apply. Only the other side's clock is no limit for ``side``.
    """
    if limits.infinite:
        return TimePlan(None, None)
    soft = hard = None
    remaining, inc = limits.clock_for(side)
    if remaining is not None:
        remaining = max(0, remaining)
        inc = max(0, inc)
        usable = remaining - safety_margin_ms(remaining, overhead_ms)
        if usable <= 1:
            hard_ms = soft_ms = 1.0  # no time of its own left: answer at once
        elif usable <= max(inc, 1) * 2:
            # Nearly flagged: live off the increment, keep the rest as the cushion.
            hard_ms = max(1.0, min(inc * 0.5, usable * 0.5))
            soft_ms = hard_ms * 0.3
        else:
            togo = limits.movestogo if limits.movestogo and limits.movestogo > 0 else DEFAULT_MOVES_TO_GO
            togo = max(1, min(togo, DEFAULT_MOVES_TO_GO * 2))
            target = usable / togo + inc * 0.75
            target = min(target, usable * 0.5)
            hard_ms = min(usable * 0.6, target * 3.0)
            soft_ms = target * 0.55
        soft, hard = soft_ms / 1000.0, hard_ms / 1000.0
    if limits.movetime is not None:
        cap = max(1.0, limits.movetime - safety_margin_ms(limits.movetime, overhead_ms)) / 1000.0
        hard = cap if hard is None else min(hard, cap)
        cap_soft = cap * 0.6
        soft = cap_soft if soft is None else min(soft, cap_soft)
    return TimePlan(soft, hard)


#: The deepest iteration a search starts.
MAX_DEPTH = 64


@dataclass(frozen=True)
class Budget:
    """When and how deep one search may go: deadlines (perf_counter seconds), node limit."""

    start: float
    soft_at: float | None  # start no further iteration after this
    hard_at: float | None  # abort the iteration in progress at this
    node_limit: int | None
    max_depth: int

    @classmethod
    def plan(cls, limits: SearchLimits, settings: LevelSettings, side: str, overhead_ms: int,
             start: float) -> Budget:
        plan = plan_time(limits, side, overhead_ms)
        max_depth = MAX_DEPTH if limits.depth is None else max(1, min(limits.depth, MAX_DEPTH))
        if settings.depth_cap is not None:
            max_depth = min(max_depth, settings.depth_cap)
        return cls(
            start=start,
            soft_at=None if plan.soft is None else start + plan.soft,
            hard_at=None if plan.hard is None else start + plan.hard,
            node_limit=limits.nodes if limits.nodes is not None and limits.nodes > 0 else None,
            max_depth=max_depth,
        )
