"""Shared pieces of the engine benchmarks: engine/bot commands, balanced openings, matches.

Matches are played by the real referee (:func:`guti.referee.tournament.match.run_match`) between real
processes, so everything the referee measures (time from ``go`` written to ``bestmove``
read, legality, the end rules) is what a tournament would see.

Openings: random plies from the start, kept only when *balanced*: equal material and a
shallow search (depth 4, reference engine) scores the position within 100 cp. Without
the filter, a few random Pretwa plies often hand one side a multi-capture, and every
such opening is a lost game for whichever engine gets the bad side, whatever its strength.
Each opening is played twice, once with each colour (run_match pairs games 2k, 2k+1).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from guti.engine.search import Searcher, SearchLimits  # noqa: E402
from guti.referee.game.engine_config import EngineConfig  # noqa: E402
from guti.referee.game.limits import Limits  # noqa: E402
from guti.referee.game.openings import Opening  # noqa: E402
from guti.referee.game.record import GameRecord  # noqa: E402
from guti.referee.game.settings import GameSettings  # noqa: E402
from guti.referee.tournament.match import MatchScore, run_match  # noqa: E402
from guti.referee.tournament.settings import MatchSettings  # noqa: E402
from guti.rules import Board  # noqa: E402

ENGINE_ARGV = [sys.executable, "-m", "guti.engine"]
BOTS = {
    "random": [sys.executable, os.path.join(ROOT, "bots", "python", "random_bot.py")],
    "greedy": [sys.executable, os.path.join(ROOT, "bots", "python", "greedy_bot.py")],
}
GAMES = ("egara-guti", "pretwa")


def engine_config(name: str, options: dict[str, str] | None = None,
                  limits: Limits | None = None, stderr_path: str | None = None) -> EngineConfig:
    return EngineConfig(name=name, argv=list(ENGINE_ARGV), cwd=ROOT, options=dict(options or {}),
                        limits=limits, stderr_path=stderr_path or os.devnull)


def bot_config(kind: str, limits: Limits | None = None) -> EngineConfig:
    return EngineConfig(name=kind, argv=list(BOTS[kind]), cwd=ROOT, limits=limits,
                        stderr_path=os.devnull)


def balanced_openings(game: str, count: int, seed: int, plies: tuple[int, int] = (2, 10),
                      max_cp: int = 100) -> list[Opening]:
    """``count`` distinct balanced random openings (see the module docstring)."""
    rng = random.Random(seed)
    searcher = Searcher(hash_mb=4)
    found: list[Opening] = []
    seen: set[tuple[str, ...]] = set()
    attempts = 0
    while len(found) < count and attempts < count * 200:
        attempts += 1
        board = Board(game)
        moves: list[str] = []
        target = rng.randint(*plies)
        while len(moves) < target and not board.is_game_over():
            move = rng.choice(board.legal_moves)
            board.push(move)
            moves.append(str(move))
        key = tuple(moves)
        if board.is_game_over() or key in seen or board.count("w") != board.count("b"):
            continue
        seen.add(key)
        searcher.new_game()
        result = searcher.search(board, SearchLimits(depth=4))
        if result.score is None or abs(result.score) > max_cp:
            continue
        found.append(Opening(None, key, f"balanced {len(found) + 1}"))
    if not found:
        raise SystemExit(f"{game}: no balanced opening found (seed {seed})")
    if len(found) < count:  # a game with few balanced openings: reuse them
        found = [found[i % len(found)] for i in range(count)]
    return found


async def play_match(first: EngineConfig, second: EngineConfig, game: str, games: int,
                     limits: Limits, openings: list[Opening] | None,
                     on_game: Callable[[int, GameRecord], None] | None = None,
                     ) -> tuple[MatchScore, list[GameRecord]]:
    """Play ``games`` games (colours alternate, opening k for games 2k and 2k+1)."""
    records: list[GameRecord] = []

    def collect(index: int, record: GameRecord) -> None:
        records.append(record)
        if on_game is not None:
            on_game(index, record)

    settings = MatchSettings(first=first, second=second, games=games,
                             game=GameSettings(game, limits=limits, openings=openings))
    score = await run_match(settings, collect)
    return score, records
