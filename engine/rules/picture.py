"""ASCII pictures of the boards, for `d`, the console and the docs.

Each point is drawn where it stands on the board (Egara-guti's 9x9 grid,
Pretwa's three circles), showing the piece (``W``, ``B`` or ``.``) beside
its number, so a reader can check a move string against the picture.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .board import Board

_EGARA_XY = {
    1: (0, 8), 2: (2, 8), 3: (4, 8), 4: (6, 8), 5: (8, 8),
    6: (2, 6), 7: (4, 6), 8: (6, 6),
    9: (3, 5), 10: (4, 5), 11: (5, 5),
    12: (4, 4),
    13: (3, 3), 14: (4, 3), 15: (5, 3),
    16: (2, 2), 17: (4, 2), 18: (6, 2),
    19: (0, 0), 20: (2, 0), 21: (4, 0), 22: (6, 0), 23: (8, 0),
}


def _pretwa_xy() -> dict[int, tuple[float, float]]:
    xy: dict[int, tuple[float, float]] = {1: (0.0, 0.0)}
    for circle in (1, 2, 3):
        for ray in range(6):
            angle = math.radians(90 - 60 * ray)
            xy[2 + 6 * (circle - 1) + ray] = (circle * math.cos(angle), circle * math.sin(angle))
    return xy


def _layout(game_name: str) -> tuple[dict[int, tuple[int, int]], int, int]:
    """Text (row, column) of every point, and the canvas size."""
    if game_name == "pretwa":
        cells = {p: (round(6 - 2 * y), round(16 + 5 * x)) for p, (x, y) in _pretwa_xy().items()}
    else:
        cells = {p: (8 - y, 4 * x) for p, (x, y) in _EGARA_XY.items()}
    height = max(r for r, _ in cells.values()) + 1
    width = max(c for _, c in cells.values()) + 4
    return cells, height, width


def draw_board(board: Board) -> str:
    """The board as lines of text, then the FEN, side to move and clock."""
    cells, height, width = _layout(board.game.name)
    canvas = [[" "] * width for _ in range(height)]
    for point, (row, col) in cells.items():
        piece = board.piece_at(point)
        label = ("W" if piece == "w" else "B" if piece == "b" else ".") + str(point)
        for i, ch in enumerate(label):
            if col + i < width:
                canvas[row][col + i] = ch
    lines = ["".join(row).rstrip() for row in canvas]
    side = "White (p1)" if board.turn == "w" else "Black (p2)"
    lines.append(f"{board.game.name}  {side} to move  clock {board.clock}  move {board.fullmove}")
    lines.append(f"fen {board.fen()}")
    return "\n".join(lines)
