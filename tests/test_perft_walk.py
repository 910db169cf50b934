"""perft against a plain walk of the referee's path, from positions with a history.

Why: perft memoises what depends on the position alone (children, move counts, sums)
and checks what depends on the line (repetition counts, the no-capture clock, both
carried from the board's history) per node. The reference figures start from set-up
positions with no history, so they cannot catch a memo that leaks a line's state into
another line; this compares perft with ``Board.legal_moves``/``push``/``pop`` (which
apply every end rule by themselves) from positions reached by play that shuffles
pieces back and forth (so repetitions are near), and with the clock near its limit.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from guti.rules import Board, perft
from tests.perft_reference import ALL_GAMES


def _walk_count(board: Board, depth: int) -> int:
    """Perft written on the referee's path: a finished position lists no moves."""
    moves = board.legal_moves
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += _walk_count(board, depth - 1)
        board.pop()
    return total


def _played(game: str, seed: int, plies: int, shuffles: int) -> Board:
    """Random play, then play in which each side steps back where it came from whenever
    it can (so positions recur: the line holds repetitions)."""
    rng = random.Random(seed)
    board = Board(game)
    for ply in range(plies + shuffles):
        moves = board.legal_moves
        if not moves:
            break
        back = None
        if ply >= plies and len(board.move_stack) >= 2:
            mine = str(board.move_stack[-2])
            if "-" in mine:
                back = board.legal_move("-".join(reversed(mine.split("-"))))
        board.push(back if back is not None else rng.choice(moves))
    return board


def _with_clock(board: Board, clock: int) -> Board:
    """The same position, no history, its no-capture clock set to ``clock``."""
    fields = board.fen().split()
    fields[-2] = str(clock)
    return Board(board.game, " ".join(fields))


@settings(max_examples=60, deadline=None)
@given(game=st.sampled_from(ALL_GAMES), seed=st.integers(0, 10**6), plies=st.integers(0, 40),
       shuffles=st.integers(0, 12), depth=st.integers(1, 5))
def test_perft_matches_walk_with_repetitions(game, seed, plies, shuffles, depth):
    board = _played(game, seed, plies, shuffles)
    assert perft(board, depth) == _walk_count(board.copy(), depth)


@settings(max_examples=40, deadline=None)
@given(game=st.sampled_from(ALL_GAMES), seed=st.integers(0, 10**6), plies=st.integers(0, 40),
       clock=st.integers(44, 50), depth=st.integers(1, 5))
def test_perft_matches_walk_near_clock_limit(game, seed, plies, clock, depth):
    board = _with_clock(_played(game, seed, plies, 0), clock)
    assert perft(board, depth) == _walk_count(board.copy(), depth)
