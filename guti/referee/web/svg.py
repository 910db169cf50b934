"""Any position of any game as an SVG picture, drawn from :func:`board_geometry`.

Why SVG: it scales, it is text (tests parse it; the report inlines it) and it needs no
image library. The picture's parts carry classes a reader (or a test) can count:
``line`` / ``ring`` for the board's lines (a closed line whose points are concyclic is a
``ring``: a circle), ``point`` for every point, ``piece white`` / ``piece black``,
``label`` for point numbers, ``last-move`` for the path of the last move and
``captured`` for the points it emptied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from guti.referee.web.geometry import board_geometry, to_svg, view_box
from guti.rules import Board, Move, get_game
from guti.rules.fen import parse_fen


@dataclass(frozen=True)
class Marks:
    """What to mark besides the pieces: the last move's path and the points it captured."""

    path: tuple[int, ...] = ()
    captured: tuple[int, ...] = ()
    numbers: bool = True


def replay(game: str, fen: str | None, moves: list[str]) -> tuple[Board, Move | None]:
    """The board after ``moves`` from ``fen`` (None: the start) and the last move played;
    RulesError names a bad FEN or the first illegal move."""
    board = Board(game) if fen is None else Board.from_fen(game, fen)
    last = None
    for text in moves:
        last = board.push_str(text)
    return board, last


def _line_element(geo: dict[str, Any], line: dict[str, Any], stroke: float) -> str:
    if line["circle"] is not None:
        cx, cy, r = line["circle"]
        x, y = to_svg(geo, cx, cy)
        return (f'<circle class="ring" cx="{x}" cy="{y}" r="{round(r, 4)}" fill="none" '
                f'stroke="#6b4f2a" stroke-width="{stroke}"/>')
    coords = " ".join("{},{}".format(*to_svg(geo, *geo["points"][p - 1])) for p in line["points"])
    tag = "polygon" if line["closed"] else "polyline"
    return (f'<{tag} class="line" points="{coords}" fill="none" stroke="#6b4f2a" '
            f'stroke-width="{stroke}" stroke-linejoin="round"/>')


def _marks(geo: dict[str, Any], marks: Marks, unit: float) -> list[str]:
    out = []
    if len(marks.path) > 1:
        coords = " ".join("{},{}".format(*to_svg(geo, *geo["points"][p - 1])) for p in marks.path)
        out.append(f'<polyline class="last-move" points="{coords}" fill="none" stroke="#2a7de1" '
                   f'stroke-width="{round(unit * 0.08, 4)}" stroke-opacity="0.8"/>')
    for p in marks.captured:
        x, y = to_svg(geo, *geo["points"][p - 1])
        d = round(unit * 0.18, 4)
        out.append(f'<path class="captured" data-point="{p}" d="M{x - d},{y - d}L{x + d},{y + d}'
                   f'M{x - d},{y + d}L{x + d},{y - d}" stroke="#d33" '
                   f'stroke-width="{round(unit * 0.07, 4)}"/>')
    return out


def board_svg(game: str, fen: str | None = None, marks: Marks | None = None,
              width_px: int = 420, title: str | None = None) -> str:
    """The position ``fen`` of ``game`` (None: its start) as a standalone SVG document."""
    geo = board_geometry(game)
    marks = marks or Marks()
    position = parse_fen(get_game(game), fen or geo["start_fen"])
    unit = geo["unit"]
    w, h = view_box(geo)
    height_px = round(width_px * h / w)
    stroke = round(unit * 0.04, 4)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="guti-board" data-game={quoteattr(game)} '
        f'viewBox="0 0 {w} {h}" width="{width_px}" height="{height_px}">',
    ]
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    parts.append(f'<rect class="background" x="0" y="0" width="{w}" height="{h}" fill="#f3e3c3"/>')
    parts += [_line_element(geo, line, stroke) for line in geo["lines"]]
    parts += _marks(geo, marks, unit)
    for p, (px, py) in enumerate(geo["points"], start=1):
        x, y = to_svg(geo, px, py)
        parts.append(f'<circle class="point" data-point="{p}" cx="{x}" cy="{y}" '
                     f'r="{round(unit * 0.08, 4)}" fill="#6b4f2a"/>')
        bit = 1 << (p - 1)
        colour = "white" if position.white & bit else "black" if position.black & bit else None
        if colour:
            fill, edge = ("#fdfdf8", "#333") if colour == "white" else ("#222", "#000")
            parts.append(f'<circle class="piece {colour}" data-point="{p}" cx="{x}" cy="{y}" '
                         f'r="{round(unit * 0.32, 4)}" fill="{fill}" stroke="{edge}" '
                         f'stroke-width="{stroke}"/>')
        if marks.numbers:
            text_fill = "#ddd" if colour == "black" else "#555"
            parts.append(f'<text class="label" x="{x}" y="{round(y + unit * 0.1, 4)}" '
                         f'font-size="{round(unit * 0.28, 4)}" text-anchor="middle" '
                         f'font-family="sans-serif" fill="{text_fill}">{p}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
