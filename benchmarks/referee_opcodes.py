"""Python bytecodes the referee runs per ply, by module and function: a count, not a time.

Why: on this 2-core virtual machine the CPU time of one run moves by 10-25 % from one
minute to the next, so a change worth 5-10 % of a ply cannot be seen in
``referee_cpu.py`` even with alternated rounds. The number of bytecode instructions guti's
Python executes per ply is the same in every run, and most of a ply's CPU is that
interpreter loop (RESULTS.md, round 4): this counts them (``sys.settrace`` with opcode
events) while two instant-reply C bots play ``--games`` games with ``play_game``, after
``--warm-up`` games that fill the rules core's lazily built tables. It says what a change
removes or adds; what that is worth in time still needs ``referee_cpu.py``. C code (the
event loop, SQLite, the kernel) is not counted.

    python benchmarks/referee_opcodes.py [--games 30] [--warm-up 300] [--baseline COMMIT]

``--baseline COMMIT`` counts COMMIT too (checked out into a temporary git worktree, this
same script run there) and prints both.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
from types import FrameType
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def count(games: int, warm_up: int) -> dict[str, Any]:
    """Opcodes per ply over ``games`` games, by module and by function."""
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.runner import play_game
    from guti.referee.game.timecontrol import parse_tc
    from guti.referee.process.event_loop import run
    from guti.referee.ugi.client import UgiEngine

    ops: collections.Counter[tuple[str, str]] = collections.Counter()

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "opcode":
            code = frame.f_code
            ops[(os.path.relpath(code.co_filename, ROOT), code.co_name)] += 1
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        frame.f_trace_opcodes = True
        return local

    async def play(bot: str) -> int:
        engines = [await UgiEngine.launch(EngineConfig(name=name, argv=[bot],
                                                       options={"Seed": seed}), "egara-guti")
                   for name, seed in (("a", "1"), ("b", "2"))]
        limits = parse_tc("10+0.1")
        try:
            for _ in range(warm_up):
                await play_game(*engines, "egara-guti", limits=limits)
            plies = 0
            sys.settrace(tracer)
            try:
                for _ in range(games):
                    plies += len((await play_game(*engines, "egara-guti", limits=limits)).moves)
            finally:
                sys.settrace(None)
            return plies
        finally:
            await asyncio.gather(*(engine.quit() for engine in engines))

    from referee_cpu import build_bot  # the same C bot as the CPU benchmark's

    with tempfile.TemporaryDirectory() as folder:
        plies = run(play(build_bot(folder)))
    modules: collections.Counter[str] = collections.Counter()
    for (module, _), n in ops.items():
        modules[module] += n
    return {"plies": plies, "total": sum(ops.values()) / plies,
            "modules": {m: n / plies for m, n in modules.items()},
            "functions": {f"{m} {f}": n / plies for (m, f), n in ops.items()}}


def _baseline(commit: str, games: int, warm_up: int) -> dict[str, Any]:
    from baseline import json_at

    return json_at(commit, __file__, ["--games", str(games), "--warm-up", str(warm_up)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--warm-up", type=int, default=300)
    parser.add_argument("--baseline", metavar="COMMIT")
    parser.add_argument("--top", type=int, default=25, help="functions listed")
    parser.add_argument("--json", action="store_true", help="one JSON line of counts")
    args = parser.parse_args()
    now = count(args.games, args.warm_up)
    if args.json:
        print(json.dumps(now))
        return 0
    sides = [("this checkout", now)]
    if args.baseline:
        sides.insert(0, (f"baseline {args.baseline}", _baseline(args.baseline, args.games,
                                                                 args.warm_up)))
    print(f"{args.games} games after {args.warm_up} not counted; opcodes per ply")
    for key in ("modules", "functions"):
        seen = {name: max(side[key].get(name, 0) for _, side in sides)
                for _, side in sides for name in side[key]}
        names = sorted(seen, key=lambda name: -seen[name])
        if key == "functions":
            names = names[: args.top]
        print(f"| {key[:-1]} | " + " | ".join(name for name, _ in sides) + " |")
        print("|---|" + "---|" * len(sides))
        print("| all | " + " | ".join(f"{side['total']:.0f}" for _, side in sides) + " |")
        for name in names:
            print(f"| {name} | "
                  + " | ".join(f"{side[key].get(name, 0):.0f}" for _, side in sides) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
