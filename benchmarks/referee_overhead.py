"""How much time the referee itself adds per ply, and how many games per second it runs.

Two instant-reply engines (``tests/engines/faulty.py --mode good``: a legal
random mover answering at once) play ``--games`` games. For every ply after
the first of a game we take the moment the previous ``bestmove`` line was
received (stamped on arrival by the pipe reader) and the moment the next
``go`` was written: the difference is the referee's own work (checking the
move with the rules core, deciding the end, clock bookkeeping, building the
``position`` command, the event loop). Target: median under 0.5 ms.

    python benchmarks/referee_overhead.py [--games 20] [--game egara-guti] [--tc 60+1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)

from guti.referee.game.engine_config import EngineConfig  # noqa: E402
from guti.referee.game.runner import play_game  # noqa: E402
from guti.referee.game.timecontrol import parse_tc  # noqa: E402
from guti.referee.ugi.client import GoReply, Position, UgiEngine  # noqa: E402
from guti.referee.ugi.go import Go  # noqa: E402

FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")


class Recorder:
    """Wraps ``UgiEngine.go`` of both engines to collect the send/receive stamps."""

    def __init__(self) -> None:
        self.stamps: list[GoReply] = []

    def wrap(self, eng: UgiEngine) -> None:
        original = eng.go

        async def go(position: Position | None, go: Go, timeout: float) -> GoReply:
            result = await original(position, go, timeout)
            self.stamps.append(result)
            return result

        eng.go = go  # type: ignore[method-assign]


async def run(games: int, game: str, tc: str) -> None:
    limits = parse_tc(tc)
    engines = []
    for i in (1, 2):
        cfg = EngineConfig(name=f"instant{i}", argv=[sys.executable, FAULTY, "--seed", str(i)])
        engines.append(await UgiEngine.launch(cfg, game))
    gaps: list[float] = []
    engine_ms: list[float] = []
    plies = 0
    started = time.perf_counter()
    try:
        for g in range(games):
            white, black = engines if g % 2 == 0 else engines[::-1]
            rec = Recorder()
            rec.wrap(white)
            rec.wrap(black)
            record = await play_game(white, black, game, limits=limits)
            for eng in engines:  # unwrap
                del eng.go
            plies += record.plies
            engine_ms.extend(r.elapsed_ms for r in rec.stamps)
            for prev, nxt in zip(rec.stamps, rec.stamps[1:], strict=False):
                gaps.append((nxt.sent_at - prev.received_at) * 1000)
    finally:
        for eng in engines:
            await eng.quit()
    wall = time.perf_counter() - started
    gaps.sort()
    print(f"game {game}, tc {tc}: {games} games, {plies} plies in {wall:.2f} s")
    print(f"games/s: {games / wall:.2f}   plies/s: {plies / wall:.0f}")
    print(
        "referee overhead per ply (bestmove received -> next go written): "
        f"median {statistics.median(gaps):.3f} ms, p90 {gaps[int(len(gaps) * 0.9)]:.3f} ms, "
        f"max {gaps[-1]:.3f} ms over {len(gaps)} plies"
    )
    print(f"engine reply time (go written -> bestmove received): median {statistics.median(engine_ms):.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--game", default="egara-guti")
    ap.add_argument("--tc", default="60+1")
    opts = ap.parse_args()
    asyncio.run(run(opts.games, opts.game, opts.tc))


if __name__ == "__main__":
    main()
