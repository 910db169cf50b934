"""``go perft N`` for the UGI front end: perft by first move, interruptible.

The rules core's :func:`guti.rules.perft` is the reference, but it cannot be stopped,
and an engine must stay responsive (``stop``, ``quit``, a new ``position``) even when asked
for ``go perft 30``. This is the same counting (protocol.md: finished positions have no moves,
the repetition history and the clock are carried through the tree, leaves are counted
without being made) with a look at a stop flag every few thousand nodes.
"""

from __future__ import annotations

import threading

from guti.rules import Board
from guti.rules.movegen import count_moves, successors

_CHECK_EVERY = 4096


class PerftStopped(Exception):
    """The stop flag was set before the count finished."""


def _key(board: Board) -> int:
    size = board.game.geometry.size
    return board.white | (board.black << size) | ((board.turn == "b") << (2 * size))


def _history(board: Board) -> dict[int, int]:
    """Occurrences of the positions since the last capture (the only ones that can recur)."""
    counts: dict[int, int] = {}
    work = board.copy()
    for i in range(min(board.clock, len(board.move_stack)) + 1):
        if i:
            work.pop()
        key = _key(work)
        counts[key] = counts.get(key, 0) + 1
    return counts


def perft_count(board: Board, depth: int, stop: threading.Event | None = None) -> int:
    """Number of legal move sequences of length ``depth``; PerftStopped if ``stop`` is set."""
    if depth == 0:
        return 1
    game = board.game
    geo = game.geometry
    size = geo.size
    few = game.few_pieces_limit
    fifty = game.no_capture_plies
    repetitions = game.repetitions
    counts = _history(board)
    get = counts.get
    turn_bit = 1 << (2 * size)
    visited = 0

    def node(own: int, enemy: int, turn: int, clock: int, depth: int, key: int) -> int:
        nonlocal visited
        visited += 1
        if visited % _CHECK_EVERY == 0 and stop is not None and stop.is_set():
            raise PerftStopped
        if few is not None and (own.bit_count() <= few) != (enemy.bit_count() <= few):
            return 0
        if clock >= fifty or get(key, 0) >= repetitions:
            return 0
        if depth == 1:
            return count_moves(geo, own, enemy)
        total = 0
        for own_after, enemy_after, captured in successors(geo, own, enemy):
            if turn == 0:
                child_key = own_after | (enemy_after << size) | turn_bit
            else:
                child_key = enemy_after | (own_after << size)
            counts[child_key] = get(child_key, 0) + 1
            total += node(enemy_after, own_after, turn ^ 1, 0 if captured else clock + 1,
                          depth - 1, child_key)
            counts[child_key] -= 1
        return total

    turn = 0 if board.turn == "w" else 1
    own, enemy = (board.white, board.black) if turn == 0 else (board.black, board.white)
    return node(own, enemy, turn, board.clock, depth, _key(board))


def perft_divide(board: Board, depth: int,
                 stop: threading.Event | None = None) -> list[tuple[str, int]]:
    """``(move, count)`` per legal move in byte order of the move strings (depth >= 1)."""
    out = []
    work = board.copy()
    for move in sorted(work.legal_moves, key=str):
        work.push(move)
        out.append((str(move), perft_count(work, depth - 1, stop)))
        work.pop()
    return out
