"""``guti perft GAME DEPTH [--fen FEN] [--divide]``: perft from the command line.

Prints ``MOVE: N`` per legal move with ``--divide`` (byte order), always a
last line ``nodes N``; time and nodes/s go to stderr so stdout stays
machine-readable. Bad input: one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from guti.referee.cli.engine_argv import OneLineParser, game_argument
from guti.rules import GAMES, Board, RulesError, divide, perft
from guti.rules.numbers import whole_number

#: The deepest perft asked for: the largest ``go perft`` depth of protocol.md (5.4).
MAX_PERFT_DEPTH = 1000


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="guti perft",
                           description="Count move sequences (perft) of a position.")
    parser.add_argument("game", type=game_argument,
                        help=f"one of: {', '.join(GAMES)} (any case)")
    parser.add_argument("depth", type=_depth, help="plies to count (a whole number)")
    parser.add_argument("--fen", help="start from this FEN instead of the start position")
    parser.add_argument("--divide", action="store_true", help="print the count of every first move")
    args = parser.parse_args(argv)
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


def _depth(text: str) -> int:
    """A perft depth: a whole number in ASCII digits (as every number guti reads)."""
    depth = whole_number(text, 4)
    if depth is None or depth > MAX_PERFT_DEPTH:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a whole number from 0 to {MAX_PERFT_DEPTH}")
    return depth
