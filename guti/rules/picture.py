"""ASCII pictures of the boards, for `d`, the console and the docs.

Each point is drawn where its coordinates put it (from the game's entry in games.py, so a
new game needs no drawing code), showing the piece (``W``, ``B`` or ``.``) beside its number,
so a reader can check a move string against the picture. The scale is chosen from the
coordinates: one text row per smallest vertical step between points, and columns wide
enough that labels on one text row never touch (and at least two columns per row, since a
character cell is about twice as high as wide); a board only a few rows tall is spread out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .fen import parse_fen

if TYPE_CHECKING:
    from .games import Game, Point

#: Widest label ("W43") plus one blank.
_LABEL_ROOM = 4
#: Boards fewer text rows tall than this get twice the rows (Alquerque's 5 x 5 grid).
_MIN_SPAN = 6


def _smallest_gap(values: list[float]) -> float:
    ordered = sorted(set(round(v, 6) for v in values))
    gaps = [b - a for a, b in zip(ordered, ordered[1:], strict=False) if b - a > 1e-6]
    return min(gaps) if gaps else 1.0


def layout(game: Game) -> tuple[dict[int, tuple[int, int]], int, int]:
    """Text (row, column) of every point, and the canvas height and width."""
    points: dict[int, Point] = dict(enumerate(game.coordinates, start=1))
    row_scale = 1 / _smallest_gap([y for _, y in points.values()])
    top = max(y for _, y in points.values())
    if (top - min(y for _, y in points.values())) * row_scale < _MIN_SPAN:
        row_scale *= 2  # a small grid reads better with a blank row between its rows
    left = min(x for x, _ in points.values())
    rows = {p: round((top - y) * row_scale) for p, (_, y) in points.items()}
    same_row_gaps = [
        _smallest_gap([points[p][0] for p in points if rows[p] == r]) for r in set(rows.values())
        if sum(1 for p in points if rows[p] == r) > 1
    ]
    col_scale = max([2 * row_scale] + [_LABEL_ROOM / gap for gap in same_row_gaps])
    cells = {p: (rows[p], round((x - left) * col_scale)) for p, (x, _) in points.items()}
    height = max(r for r, _ in cells.values()) + 1
    width = max(c for _, c in cells.values()) + _LABEL_ROOM
    return cells, height, width


def draw_board(game: Game, fen: str) -> str:
    """The position ``fen`` of ``game`` as lines of text, then the FEN, side to move and clock."""
    position = parse_fen(game, fen)
    cells, height, width = layout(game)
    canvas = [[" "] * width for _ in range(height)]
    for point, (row, col) in cells.items():
        mask = 1 << (point - 1)
        piece = "W" if position.white & mask else "B" if position.black & mask else "."
        for i, ch in enumerate(piece + str(point)):
            canvas[row][col + i] = ch
    lines = ["".join(row).rstrip() for row in canvas]
    side = "White (p1)" if position.turn == 0 else "Black (p2)"
    lines.append(f"{game.name}  {side} to move  clock {position.clock}  move {position.fullmove}")
    lines.append(f"fen {fen}")
    return "\n".join(lines)
