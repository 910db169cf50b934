"""The reference engine's time budget keeps a safety margin on every clock.

Why: the referee charges a move from ``go`` to ``bestmove``, so an engine that plans to
use its whole clock loses on time as soon as the machine is loaded (a stranger saw the
engine lose at 2+0.02, "used 43 ms, 34 ms allowed"). The plan must leave the reply's
latency untouched: the hard deadline plus the margin never passes the remaining time,
and the margin never drops below 10 ms, whatever ``Move Overhead`` says.
"""

from __future__ import annotations

import pytest

from guti.engine.search.limits import (
    MIN_MARGIN_MS,
    SearchLimits,
    plan_time,
    safety_margin_ms,
)


def _hard_ms(limits: SearchLimits, overhead_ms: int) -> float:
    plan = plan_time(limits, "w", overhead_ms)
    assert plan.hard is not None and plan.soft is not None
    assert plan.soft <= plan.hard
    return plan.hard * 1000


@pytest.mark.parametrize("overhead_ms", [0, 30])
@pytest.mark.parametrize("inc", [0, 20, 1000])
def test_hard_deadline_leaves_the_margin_on_every_clock(overhead_ms, inc):
    for remaining in [*range(0, 400, 3), 1000, 2000, 10_000, 60_000, 3_600_000]:
        limits = SearchLimits(p1time=remaining, p2time=remaining, p1inc=inc, p2inc=inc)
        margin = safety_margin_ms(remaining, overhead_ms)
        assert margin >= MIN_MARGIN_MS and margin >= overhead_ms
        assert margin >= remaining * 0.05
        hard = _hard_ms(limits, overhead_ms)
        if remaining - margin > 1:
            assert hard + margin <= remaining, (remaining, inc, hard, margin)
        else:  # nothing of its own left: the quickest answer there is
            assert hard == 1.0


def test_the_lost_move_at_two_seconds_plus_twenty_ms_is_budgeted_inside_the_clock():
    # 34 ms left, 20 ms increment: the move that was lost (43 ms used).
    limits = SearchLimits(p1time=34, p2time=500, p1inc=20, p2inc=20)
    assert _hard_ms(limits, 30) <= 34 - 30
    assert _hard_ms(limits, 0) <= 34 - MIN_MARGIN_MS


def test_movetime_is_a_ceiling_less_the_margin():
    hard = _hard_ms(SearchLimits(movetime=300), 0)
    assert hard <= 300 - MIN_MARGIN_MS
    assert _hard_ms(SearchLimits(movetime=5), 0) == 1.0


def test_only_the_other_sides_clock_sets_no_deadline():
    plan = plan_time(SearchLimits(p2time=1, p2inc=0), "w", 30)
    assert plan.hard is None and plan.soft is None
