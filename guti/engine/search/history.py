"""Position keys and the repetition history a search starts from.

End rule 4 counts occurrences since the position the game was set up from. Only
positions since the last capture can recur (a capture lowers the piece count for good),
so the history the search needs is the current position and the ``clock`` positions
before it, taken from the board with public calls only (copy and pop).
"""

from __future__ import annotations

from guti.rules import Board


def position_key(white: int, black: int, turn: int, size: int) -> int:
    """Exact key of a position: the cells and the side to move (0 White, 1 Black)."""
    return white | (black << size) | (turn << (2 * size))


def board_key(board: Board) -> int:
    return position_key(board.white, board.black, 0 if board.turn == "w" else 1,
                        board.game.geometry.size)


def repetition_counts(board: Board) -> dict[int, int]:
    """key -> occurrences, over the positions since the last capture (current one included)."""
    counts: dict[int, int] = {}
    work = board.copy()
    plies = min(board.clock, len(board.move_stack))
    key = board_key(work)
    counts[key] = 1
    for _ in range(plies):
        work.pop()
        key = board_key(work)
        counts[key] = counts.get(key, 0) + 1
    return counts
