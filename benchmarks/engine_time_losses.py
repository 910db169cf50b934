"""Time safety of the reference engine: many fast games between two instances of it.

Plays ``--games`` games (default 200, split evenly between Egara-guti and Pretwa) at
``--tc`` (default ``1+0.01``: 1 s a game plus 10 ms a move) between two engine processes
running at once, refereed by the real referee, which charges each move from ``go``
written to ``bestmove`` read and allows no margin. Reports time forfeits (target: none),
other faults, and how well the time is used: the share of each side's available time
(base + increments earned) it spent, the average and longest move, and the least time
any engine had left after a move.

    nice python benchmarks/engine_time_losses.py [--games 200] [--tc 1+0.01]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from engine_common import GAMES, balanced_openings, engine_config, play_match

from guti.referee.game.limits import parse_tc
from guti.referee.game.reasons import Reason


async def run(args) -> int:
    limits = parse_tc(args.tc)
    per_game = [args.games // len(GAMES) + (1 if i < args.games % len(GAMES) else 0)
                for i in range(len(GAMES))]
    records = []
    began = time.perf_counter()
    for game, count in zip(GAMES, per_game, strict=True):
        if not count:
            continue
        openings = balanced_openings(game, (count + 1) // 2, args.seed)
        _, recs = await play_match(engine_config("A"), engine_config("B"), game, count,
                                   limits, openings)
        records += recs
        print(f"{game}: {count} games played", flush=True)
    forfeits = [r for r in records if r.reason == Reason.TIME_FORFEIT]
    faults = [r for r in records if r.fault is not None]
    moves = [ms for r in records for ms in r.elapsed_ms if ms is not None]
    left = [ms for r in records for ms in r.clock_ms if ms is not None]
    usage = []
    for r in records:
        for parity in (0, 1):
            spent = [ms for i, ms in enumerate(r.elapsed_ms) if ms is not None and i % 2 == parity]
            if spent:
                available = limits.base_ms + limits.inc_ms * len(spent)
                usage.append(sum(spent) / available)
    print(f"games {len(records)} at tc={args.tc}, {time.perf_counter() - began:.0f} s")
    print(f"time forfeits: {len(forfeits)}; other faults: {len(faults) - len(forfeits)}")
    for r in faults[:10]:
        print(f"    {r.summary()}")
    if moves:
        print(f"moves {len(moves)}: mean {statistics.mean(moves):.1f} ms, median "
              f"{statistics.median(moves):.1f} ms, max {max(moves):.1f} ms")
    if left:
        print(f"least time left after a move: {min(left):.0f} ms")
    if usage:
        print(f"share of available time used per side and game: mean "
              f"{100 * statistics.mean(usage):.0f} %, min {100 * min(usage):.0f} %, "
              f"max {100 * max(usage):.0f} %")
    results = {}
    for r in records:
        results[r.result] = results.get(r.result, 0) + 1
    print("results: " + ", ".join(f"{k} {v}" for k, v in sorted(results.items())))
    return 0 if not faults else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--seed", type=int, default=77)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
