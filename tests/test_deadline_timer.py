"""The engine reader's deadline timer: one timer kept across waits, never waking early."""

from __future__ import annotations

import asyncio
import time

from guti.referee.process.deadline_timer import DeadlineTimer


def woken_at(steps: list[tuple[str, float]]) -> tuple[float, float]:
    """Apply ``steps`` (``("arm", seconds from now)`` / ``("disarm", 0)``) and return the
    last deadline armed and the time the wake came."""

    async def main() -> tuple[float, float]:
        woke = asyncio.Event()
        timer = DeadlineTimer(asyncio.get_running_loop(), woke.set)
        deadline = 0.0
        for step, seconds in steps:
            if step == "arm":
                deadline = time.monotonic() + seconds
                timer.arm(deadline)
            else:
                timer.disarm()
        await asyncio.wait_for(woke.wait(), 10)
        at = time.monotonic()
        timer.close()
        return deadline, at

    return asyncio.run(main())


def test_it_wakes_at_the_deadline() -> None:
    deadline, at = woken_at([("arm", 0.02)])
    assert at >= deadline


def test_a_timer_set_for_an_earlier_wait_does_not_wake_a_later_one_early() -> None:
    """The first wait's timer fires during the second wait, whose deadline is later:
    it sets itself again rather than waking the reader."""
    deadline, at = woken_at([("arm", 0.01), ("disarm", 0), ("arm", 0.08)])
    assert at >= deadline


def test_an_earlier_deadline_moves_the_timer() -> None:
    deadline, at = woken_at([("arm", 30), ("disarm", 0), ("arm", 0.02)])
    assert at >= deadline  # and it came (within wait_for's bound), not after 30 s


def test_nothing_wakes_after_disarm_and_close() -> None:
    async def main() -> bool:
        woke = asyncio.Event()
        timer = DeadlineTimer(asyncio.get_running_loop(), woke.set)
        timer.arm(time.monotonic())
        timer.disarm()
        done = asyncio.Event()
        asyncio.get_running_loop().call_later(0.05, done.set)  # after the timer's time
        await done.wait()
        timer.close()
        return woke.is_set()

    assert asyncio.run(main()) is False
