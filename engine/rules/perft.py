"""Perft: count move sequences of a given length, the move generator's test and benchmark.

Counts follow protocol.md exactly: a finished position (by any end rule,
repetition included) has no moves, so the repetition history of the board
is carried through the tree. Leaves are counted without being made (bulk
counting at the last ply, the usual perft practice): a node two plies above
the leaves makes its moves, applies the end rules to each child in place and
asks :func:`count_moves` for the child's moves, so the last two plies cost no
function call per child beyond the count.
"""

from __future__ import annotations

from .board import Board
from .movegen import count_moves, successors


def perft(board: Board, depth: int) -> int:
    """Number of legal move sequences of length ``depth`` from ``board``."""
    if depth < 0:
        raise ValueError("perft depth must be >= 0")
    if depth == 0:
        return 1
    game = board.game
    geo = game.geometry
    size = geo.size
    limit = game.few_pieces_limit
    fifty = game.no_capture_plies
    repetitions = game.repetitions
    counts = dict(board._reps)
    get = counts.get
    black_shift = size
    turn_bit = 1 << (2 * size)

    def node(own: int, enemy: int, turn: int, clock: int, depth: int, key: int) -> int:
        """Count below a position that is not finished by end rules 1, 3 or 4; depth >= 2."""
        total = 0
        child_turn = turn ^ 1
        next_clock = clock + 1
        for own_after, enemy_after, captured in successors(geo, own, enemy):
            # the child from the child side's view: its own pieces are our enemy's
            child_clock = 0 if captured else next_clock
            if limit is not None and (
                    (enemy_after.bit_count() <= limit) != (own_after.bit_count() <= limit)):
                continue
            if child_clock >= fifty:
                continue
            if child_turn:
                child_key = own_after | (enemy_after << black_shift) | turn_bit
            else:
                child_key = enemy_after | (own_after << black_shift)
            seen = get(child_key, 0) + 1  # occurrences once the child is on the board
            if seen >= repetitions:
                continue
            if depth == 2:  # bulk count: the child's moves are counted, not made
                total += count_moves(geo, enemy_after, own_after)
                continue
            counts[child_key] = seen
            total += node(enemy_after, own_after, child_turn, child_clock, depth - 1, child_key)
            counts[child_key] = seen - 1
        return total

    own, enemy = board._sides()
    if limit is not None and (own.bit_count() <= limit) != (enemy.bit_count() <= limit):
        return 0
    if board.clock >= fifty or get(board._key(), 0) >= repetitions:
        return 0
    if depth == 1:
        return count_moves(geo, own, enemy)
    return node(own, enemy, board._turn, board.clock, depth, board._key())


def divide(board: Board, depth: int) -> list[tuple[str, int]]:
    """Perft split by first move: ``(move string, count)`` in byte order of the strings."""
    if depth < 1:
        raise ValueError("divide depth must be >= 1")
    work = board.copy()
    out = []
    for move in work.legal_moves:
        work.push(move)
        out.append((str(move), perft(work, depth - 1)))
        work.pop()
    out.sort()
    return out
