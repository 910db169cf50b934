"""The reference engine's ``Level`` ladder: each level against the one below it.

For each step of the ladder (``--levels``, default every level from 0 to 20), the engine
at level L plays the engine at level L-1 ``--games`` games (default 40) at ``--st``
seconds a move (default 0.05), colours alternating and every balanced random opening
played once with each colour (see ``engine_common``). Each step's score is shown with
its Elo and 95 % interval (guti's own, as the standings give it): ``ok`` when the upper
level is ahead beyond the interval, ``ahead`` or ``behind`` when the match cannot tell,
``WRONG WAY`` when the lower level is ahead beyond it.

    nice python benchmarks/level_ladder.py [--game egara-guti] [--games 40] [--st 0.05]
                                           [--levels 0,5,10,15,20] [--jobs 2] [--seed 1]

``--levels`` lists the rungs compared in order (each against the one before it), so
``0,5,10,15,20`` measures four wider steps instead of twenty narrow ones.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from engine_common import balanced_openings, engine_config, play_match

from guti.engine.search.level import MAX_LEVEL
from guti.referee.game.limits import Limits
from guti.referee.stats.stats import format_elo, score_elo
from guti.rules import GAMES


async def step(game: str, upper: int, lower: int, games: int, st: float,
               openings: list, seed: int) -> dict:
    """``upper`` against ``lower``: the score from ``upper``'s side."""
    limits = Limits(movetime_ms=int(st * 1000), margin_ms=100)
    began = time.perf_counter()
    score, records = await play_match(
        engine_config(f"level{upper}", {"Level": str(upper), "Seed": str(seed)}),
        engine_config(f"level{lower}", {"Level": str(lower), "Seed": str(seed + 1)}),
        game, games, limits, openings)
    return {"upper": upper, "lower": lower, "score": score,
            "faults": sum(r.fault is not None for r in records),
            "seconds": time.perf_counter() - began}


def show(res: dict) -> None:
    s = res["score"]
    elo = score_elo(s.wins, s.draws, s.losses)
    if elo.elo - elo.margin > 0:
        verdict = "ok"
    elif elo.elo + elo.margin < 0:
        verdict = "WRONG WAY"
    else:
        verdict = "ahead" if elo.elo > 0 else "behind"
    print(f"level {res['upper']:2d} vs {res['lower']:2d}: +{s.wins} ={s.draws} -{s.losses}"
          f"  {100 * s.points / s.games:5.1f} %  {format_elo(elo.elo, elo.margin):>16} Elo"
          f"  faults {res['faults']}  {res['seconds']:5.0f} s  {verdict}", flush=True)


async def run_all(args: argparse.Namespace) -> None:
    rungs = args.levels
    openings = balanced_openings(args.game, (args.games + 1) // 2, args.seed)
    sem = asyncio.Semaphore(args.jobs)

    async def one(upper: int, lower: int) -> None:
        async with sem:
            show(await step(args.game, upper, lower, args.games, args.st, openings,
                            args.seed))

    await asyncio.gather(*(one(rungs[i], rungs[i - 1]) for i in range(1, len(rungs))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="egara-guti", choices=sorted(GAMES))
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--st", type=float, default=0.05)
    parser.add_argument("--levels", default=",".join(map(str, range(21))),
                        help="the rungs, lowest first (default: 0,1,...,20)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        args.levels = [int(v) for v in args.levels.split(",")]
    except ValueError:
        parser.error(f"--levels {args.levels!r}: whole numbers separated by commas")
    if len(args.levels) < 2 or args.levels != sorted(set(args.levels)) \
            or not 0 <= args.levels[0] <= args.levels[-1] <= MAX_LEVEL:
        parser.error(f"--levels: at least two levels of 0..{MAX_LEVEL}, each higher than the "
                     "one before")
    if args.games < 2 or args.jobs < 1 or args.st <= 0:
        parser.error("--games must be at least 2, --jobs at least 1, --st above 0")
    asyncio.run(run_all(args))


if __name__ == "__main__":
    main()
