"""Were a tournament's drawn games already drawn at their last capture?

For each game of a guti database drawn by the fifty-ply rule or by repetition, takes the
position just after its last capture (the 50-ply count at 0: from there no piece came
off) and asks an engine to search it for ``--movetime`` ms. An engine that sees a win for
either side there tells that the draw was missed; scores near 0 to a depth well past what
was played say the material left was a draw for both. Positions met in several games are
searched once.

    python benchmarks/drawn_endings.py DB --engine bots/c/bot \\
        --option Search=alphabeta [--movetime 4000] [--limit 20]

Any UGI engine serves; a deep one (the C bot's alpha-beta searches 12-17 plies in 4 s
there) makes the answer worth more.

``--plies`` searches nothing: it prints, per game, the ply of every game's last capture
(openings included) and the median game length, which tells how early the material
that ends a game is settled.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
from pathlib import Path

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.reasons import Reason
from guti.referee.process.errors import EngineStartError, EngineTimeout
from guti.referee.storage.errors import StoreError
from guti.referee.storage.store import TournamentStore
from guti.referee.ugi.client import UgiEngine
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import Position
from guti.rules import Board
from guti.rules.result import Result

#: The draws by the rules this looks into.
DRAWS = (Reason.FIFTY_PLIES, Reason.REPETITION)


def last_captures(db: Path) -> list[tuple[str, str]]:
    """``(game, fen)`` after the last capture of each drawn game, first met first."""
    found: dict[tuple[str, str], None] = {}
    with TournamentStore.checked(str(db)) as store:
        for _info, record in store.records_by_game():
            if record.result is not Result.DRAW or record.reason not in DRAWS:
                continue
            board = Board(record.game, record.start_fen) if record.start_fen \
                else Board(record.game)
            last = board.fen()
            for move in record.moves:
                if board.push_str(move).is_capture:
                    last = board.fen()
            found[(record.game, last)] = None
    return list(found)


def last_capture_plies(db: Path) -> dict[str, tuple[list[int], list[int]]]:
    """Per game: the ply of each game's last capture (0: none) and each game's length."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    with TournamentStore.checked(str(db)) as store:
        for _info, record in store.records_by_game():
            board = Board(record.game, record.start_fen) if record.start_fen \
                else Board(record.game)
            last = 0
            for ply, move in enumerate(record.moves, 1):
                if board.push_str(move).is_capture:
                    last = ply
            plies, lengths = found.setdefault(record.game, ([], []))
            plies.append(last)
            lengths.append(len(record.moves))
    return found


async def search_all(positions: list[tuple[str, str]], config: EngineConfig,
                     movetime: int) -> None:
    engines: dict[str, UgiEngine] = {}
    try:
        for game, fen in positions:
            if game not in engines:
                engines[game] = await UgiEngine.launch(config, game)
            engine = engines[game]
            sent_at = engine.start_go(Position(fen), Go(movetime=movetime))
            reply = await engine.wait_bestmove(sent_at, movetime / 1000 + 30)
            info = reply.search
            depth = "?" if info is None or info.depth is None else info.depth
            score = "?" if info is None or info.score is None else info.score
            print(f"{game} {fen} | depth {depth} score {score} bestmove {reply.bestmove}",
                  flush=True)
    finally:
        for engine in engines.values():
            await engine.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--engine", help="the engine's program (not with --plies)")
    parser.add_argument("--plies", action="store_true",
                        help="only print when the last capture of each game came")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--movetime", type=int, default=4000)
    parser.add_argument("--limit", type=int, default=20, help="positions searched at most")
    args = parser.parse_args()
    if not args.db.is_file():
        parser.error(f"{args.db}: no such database")
    if args.plies:
        try:
            for game, (plies, lengths) in last_capture_plies(args.db).items():
                print(f"{game}: last capture at ply {sorted(plies)}; "
                      f"median game {sorted(lengths)[len(lengths) // 2]} plies")
        except (StoreError, sqlite3.Error) as exc:
            parser.error(f"{args.db}: {exc}")
        return
    if args.engine is None:
        parser.error("--engine is required unless --plies is given")
    bad = [o for o in args.option if "=" not in o]
    if bad:
        parser.error(f"--option {bad[0]!r}: expected NAME=VALUE")
    options = dict(o.split("=", 1) for o in args.option)
    config = EngineConfig(name="judge", argv=[os.path.abspath(args.engine)],
                          options=options, stderr_path=os.devnull)
    try:
        positions = last_captures(args.db)[: args.limit]
    except (StoreError, sqlite3.Error) as exc:
        parser.error(f"{args.db}: {exc}")
    print(f"{len(positions)} positions after the last capture of a drawn game", flush=True)
    try:
        asyncio.run(search_all(positions, config, args.movetime))
    except (EngineStartError, EngineTimeout) as exc:
        sys.exit(f"drawn_endings.py: {exc}")


if __name__ == "__main__":
    main()
