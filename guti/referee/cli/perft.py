"""``guti perft GAME DEPTH [--fen FEN] [--divide]``: perft from the command line.

Prints ``MOVE: N`` per legal move with ``--divide`` (byte order), always a
last line ``nodes N``; time and nodes/s go to stderr so stdout stays
machine-readable. Bad input: one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import NoReturn

from guti.referee.cli.engine_argv import game_argument
from guti.rules import GAMES, Board, RulesError, divide, perft


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        print(f"guti perft: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str]) -> int:
    parser = _Parser(prog="guti perft", description="Count move sequences (perft) of a position.")
    parser.add_argument("game", type=game_argument,
                        help=f"one of: {', '.join(GAMES)} (any case)")
    parser.add_argument("depth", type=int)
    parser.add_argument("--fen", help="start from this FEN instead of the start position")
    parser.add_argument("--divide", action="store_true", help="print the count of every first move")
    args = parser.parse_args(argv)
    if args.depth < 0:
        parser.error("depth must be >= 0")
    try:
        board = Board(args.game, args.fen)
    except RulesError as exc:
        print(f"guti perft: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.divide and args.depth >= 1:
        rows = divide(board, args.depth)
        for move, count in rows:
            print(f"{move}: {count}")
        nodes = sum(count for _, count in rows)
    else:
        nodes = perft(board, args.depth)
    elapsed = time.perf_counter() - start
    print(f"nodes {nodes}", flush=True)
    rate = nodes / elapsed if elapsed > 0 else 0.0
    print(f"time {elapsed:.3f} s  nps {rate:,.0f}", file=sys.stderr)
    return 0
