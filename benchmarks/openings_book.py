"""Memory and time of reading a large PDN openings book (``-openings file=BOOK.pdn``).

Writes a book of ``--mb`` MiB (default 39): ``--games`` distinct Egara-guti games of
random play (500 by default, each to its end, as guti's PDN writer writes them), repeated
until the book has that size. Then, in a fresh process, reads it as a run does
(``load_openings(..., plies=8)``) and prints how many openings it found, the seconds it
took and the process's peak resident memory.

    python benchmarks/openings_book.py [--mb 39] [--games 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from guti.referee.game.pdn import format_game  # noqa: E402
from guti.referee.game.record import GameRecord  # noqa: E402
from guti.rules import Board  # noqa: E402


def random_games(count: int, seed: int) -> str:
    """``count`` games of random play, as PDN."""
    rng = random.Random(seed)
    texts = []
    for number in range(1, count + 1):
        board = Board("egara-guti")
        moves = []
        while not board.is_game_over() and len(moves) < 300:
            move = rng.choice(board.legal_moves)
            moves.append(str(move))
            board.push(move)
        record = GameRecord(game="egara-guti", white="a", black="b", moves=moves,
                            result="*", number=number, final_fen=board.fen())
        texts.append(format_game(record))
    return "\n".join(texts) + "\n"


def read_book(path: str) -> None:
    """Read the book as a run does and print one line of figures (in this process)."""
    from guti.referee.game.openings import load_openings

    began = time.perf_counter()
    openings = load_openings(path, "egara-guti", plies=8, on_error=lambda _line: None)
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = os.path.getsize(path) / (1 << 20)
    print(f"{size:.1f} MiB book: {len(openings):,} openings in {seconds:.1f} s, "
          f"peak memory {peak:.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=39.0)
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--read", metavar="BOOK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read:
        read_book(args.read)
        return 0
    games = random_games(args.games, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "book.pdn")
        with open(path, "w", encoding="utf-8") as fh:
            for _ in range(max(1, round(args.mb * (1 << 20) / len(games)))):
                fh.write(games)
        return subprocess.run([sys.executable, __file__, "--read", path], check=False,
                              env=dict(os.environ, PYTHONPATH=ROOT)).returncode


if __name__ == "__main__":
    raise SystemExit(main())
