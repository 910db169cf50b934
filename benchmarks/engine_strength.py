"""Strength of the reference engine against the bundled random and greedy bots.

For each game (default: all seven the rules core knows) and each bot, plays ``--games``
games (default 200)
at ``--st`` seconds per move (default 0.1, sent as ``go movetime 100``), colours
alternating and every balanced random opening played once with each colour (see
``engine_common``). Targets: >= 95 % against random, >= 80 % against greedy,
in every game. Time forfeits or other engine faults are counted and listed.

    nice python benchmarks/engine_strength.py [--games 200] [--st 0.1] [--jobs 2]
                                              [--games-only gol-skuish,alquerque]
                                              [--bots random,greedy] [--margin 0]

``--jobs`` pairings run at once (each uses about one core while the engine thinks).
``--margin MS`` lets an answer come that much late before it is a time forfeit (the
referee's ``timemargin``): on a machine shared with other work, a 100 ms move can be
descheduled past its time, which measures the machine, not the engine's play.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from engine_common import (
    balanced_openings,
    bot_config,
    engine_config,
    play_match,
)

from guti.referee.game.limits import Limits
from guti.rules import GAMES

TARGETS = {"random": 0.95, "greedy": 0.80}


async def pairing(game: str, bot: str, games: int, st: float, openings: list,
                  margin_ms: int = 0) -> dict:
    limits = Limits(movetime_ms=int(st * 1000), margin_ms=margin_ms)
    began = time.perf_counter()
    score, records = await play_match(engine_config("engine"), bot_config(bot), game, games,
                                      limits, openings)
    faults = [r for r in records if r.fault is not None]
    return {
        "game": game,
        "bot": bot,
        "score": score,
        "ratio": score.points / max(1, score.games),
        "faults": faults,
        "engine_faults": [r for r in faults if r.winner != "engine"],
        "seconds": time.perf_counter() - began,
        "plies": sum(r.plies for r in records) / max(1, len(records)),
    }


async def run_all(args) -> list[dict]:
    jobs = [(g, b) for g in args.games_only for b in args.bots]
    # Openings are searched for here, before any game: computed inside a running match
    # they would block the event loop and charge that time to the engine on move.
    openings = [balanced_openings(g, (args.games + 1) // 2, args.seed + i)
                for i, (g, _b) in enumerate(jobs)]
    sem = asyncio.Semaphore(args.jobs)
    results: list[dict] = []

    async def one(game: str, bot: str, index: int) -> None:
        async with sem:
            res = await pairing(game, bot, args.games, args.st, openings[index], args.margin)
            results.append(res)
            show(res)

    await asyncio.gather(*(one(g, b, i) for i, (g, b) in enumerate(jobs)))
    return results


def show(res: dict) -> None:
    s = res["score"]
    target = TARGETS[res["bot"]]
    verdict = "ok" if res["ratio"] >= target else "BELOW TARGET"
    print(f"{res['game']:<13} vs {res['bot']:<7}: {s.wins}-{s.draws}-{s.losses} (W-D-L) "
          f"score {100 * res['ratio']:.1f} % (target {100 * target:.0f} %: {verdict}), "
          f"{s.games} games, {res['plies']:.0f} plies/game, engine faults "
          f"{len(res['engine_faults'])}, {res['seconds']:.0f} s", flush=True)
    for r in res["engine_faults"][:5]:
        print(f"    fault: {r.summary()}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--st", type=float, default=0.1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--margin", type=int, default=0,
                        help="ms an answer may come late before it is a time forfeit (default 0); "
                             "on a loaded machine the strength figure is about moves, not the OS")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--games-only", default=",".join(GAMES),
                        help=f"comma-separated games (default all: {','.join(GAMES)})")
    parser.add_argument("--bots", default="random,greedy")
    args = parser.parse_args()
    args.games_only = [g for g in args.games_only.split(",") if g]
    unknown = [g for g in args.games_only if g not in GAMES]
    if unknown:
        parser.error(f"--games-only: unknown game(s) {', '.join(unknown)} "
                     f"(known: {', '.join(GAMES)})")
    args.bots = [b for b in args.bots.split(",") if b]
    results = asyncio.run(run_all(args))
    ok = all(r["ratio"] >= TARGETS[r["bot"]] and not r["engine_faults"] for r in results)
    print("all targets met" if ok else "some targets missed", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
