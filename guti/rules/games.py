"""The games of the family as data: points with coordinates, lines, FEN rows, start, end rules.

Follows protocol.md section 3 (the rules as guti referees them). Every game is one entry of
:data:`GAMES`; move generation, FEN, perft, the end rules and the board picture read only
what an entry holds, so a new member of the family is a new entry and nothing else.

Coordinates are the board's own (x to the right, y up); they place the points in pictures
and tell where each point stands, not how pieces move (the lines do that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import RulesError
from .geometry import Geometry, Line

Point = tuple[float, float]


@dataclass(frozen=True)
class Game:
    """A game: its name, board geometry, point coordinates, start FEN and optional end rules.

    ``coordinates[p - 1]`` is where point ``p`` stands. ``few_pieces_limit``: when set
    (Pretwa, Gol-skuish: 3), a side with that many pieces or fewer loses at once if the other
    side has more (end rule 1).
    """

    name: str
    geometry: Geometry
    coordinates: tuple[Point, ...]
    start_fen: str
    few_pieces_limit: int | None = None
    no_capture_plies: int = 50
    repetitions: int = 3

    def __post_init__(self) -> None:
        if len(self.coordinates) != self.geometry.size:
            raise ValueError(f"{self.name}: {len(self.coordinates)} coordinates for "
                             f"{self.geometry.size} points")


def _lines(*points: tuple[int, ...]) -> tuple[Line, ...]:
    return tuple(Line(p) for p in points)


# --- two triangles joined at the apex ------------------------------------------------------

_EGARA_XY: tuple[Point, ...] = (
    (0, 8), (2, 8), (4, 8), (6, 8), (8, 8),
    (2, 6), (4, 6), (6, 6),
    (3, 5), (4, 5), (5, 5),
    (4, 4),
    (3, 3), (4, 3), (5, 3),
    (2, 2), (4, 2), (6, 2),
    (0, 0), (2, 0), (4, 0), (6, 0), (8, 0),
)


def _egara_guti() -> Game:
    lines = _lines(
        (1, 2, 3, 4, 5), (6, 7, 8), (9, 10, 11), (13, 14, 15), (16, 17, 18),
        (19, 20, 21, 22, 23),
        (1, 6, 9, 12, 15, 18, 23), (5, 8, 11, 12, 13, 16, 19), (3, 7, 10, 12, 14, 17, 21),
        (2, 6, 16, 20), (4, 8, 18, 22),
    )
    geometry = Geometry.from_lines(23, (5, 3, 3, 1, 3, 3, 5), lines)
    return Game("egara-guti", geometry, _EGARA_XY,
                "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1")


#: Lau kata kati's wings: three ranks of three points each side of the apex (3, 3).
_WING_TOP: tuple[Point, ...] = ((0, 6), (3, 6), (6, 6), (1, 5), (3, 5), (5, 5), (2, 4), (3, 4), (4, 4))
_WING_BOTTOM: tuple[Point, ...] = ((2, 2), (3, 2), (4, 2), (1, 1), (3, 1), (5, 1), (0, 0), (3, 0), (6, 0))


def _lau_kata_kati(name: str = "lau-kata-kati") -> Game:
    """Lau kata kati; Butterfly (Gulugufe) is the same board and start under another name."""
    lines = _lines(
        (1, 2, 3), (4, 5, 6), (7, 8, 9), (11, 12, 13), (14, 15, 16), (17, 18, 19),
        (1, 4, 7, 10, 13, 16, 19), (3, 6, 9, 10, 11, 14, 17), (2, 5, 8, 10, 12, 15, 18),
    )
    geometry = Geometry.from_lines(19, (3, 3, 3, 1, 3, 3, 3), lines)
    return Game(name, geometry, _WING_TOP + ((3, 3),) + _WING_BOTTOM,
                "bbb/bbb/bbb/1/www/www/www w 0 1")


def _dash_guti() -> Game:
    """Lau kata kati's board with a middle line 10-11-12 whose ends join the base corners."""
    lines = _lines(
        (1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15), (16, 17, 18), (19, 20, 21),
        (1, 4, 7, 11, 15, 18, 21), (3, 6, 9, 11, 13, 16, 19), (2, 5, 8, 11, 14, 17, 20),
        (1, 10, 19), (3, 12, 21),
    )
    geometry = Geometry.from_lines(21, (3, 3, 3, 3, 3, 3, 3), lines)
    return Game("dash-guti", geometry,
                _WING_TOP + ((0, 3), (3, 3), (6, 3)) + _WING_BOTTOM,
                "bbb/bbb/bbb/w1b/www/www/www w 0 1")


# --- concentric circles cut by three diameters ---------------------------------------------

def circle_point(circle: int, ray: int) -> int:
    """Point number on ``circle`` (1 = innermost) and ``ray`` (0..5 clockwise from 12 o'clock)."""
    return 2 + 6 * (circle - 1) + ray % 6


def _circles(name: str, circles: int, few_pieces_limit: int | None) -> Game:
    """The centre plus ``circles`` rings of six points, cut by three straight diameters.

    White holds rays 2, 3, 4 (the lower half) of every ring, Black rays 5, 0, 1.
    """
    rings = range(1, circles + 1)
    lines = tuple(Line(tuple(circle_point(c, r) for r in range(6)), closed=True) for c in rings)
    lines += tuple(
        Line(tuple(circle_point(c, r + 3) for c in reversed(rings)) + (1,)
             + tuple(circle_point(c, r) for c in rings))
        for r in range(3)
    )
    size = 1 + 6 * circles
    geometry = Geometry.from_lines(size, (1,) + (6,) * circles, lines)
    coordinates: list[Point] = [(0.0, 0.0)]
    for c in rings:
        for r in range(6):
            angle = math.radians(60 * r)
            coordinates.append((round(c * math.sin(angle), 6), round(c * math.cos(angle), 6)))
    start = "/".join(["1"] + ["bbwwwb"] * circles) + " w 0 1"
    return Game(name, geometry, tuple(coordinates), start, few_pieces_limit=few_pieces_limit)


# --- the 5 x 5 grid ------------------------------------------------------------------------

def _alquerque() -> Game:
    """Points 1..25 row by row from the top; each 2 x 2 quarter has both diagonals."""
    rows = [tuple(range(5 * r + 1, 5 * r + 6)) for r in range(5)]
    columns = [tuple(range(c + 1, 26, 5)) for c in range(5)]
    diagonals = [(1, 7, 13, 19, 25), (5, 9, 13, 17, 21), (3, 7, 11), (3, 9, 15), (11, 17, 23),
                 (15, 19, 23)]
    geometry = Geometry.from_lines(25, (5,) * 5, _lines(*rows, *columns, *diagonals))
    coordinates = tuple((float(i % 5), float(4 - i // 5)) for i in range(25))
    return Game("alquerque", geometry, coordinates,
                "bbbbb/bbbbb/bb1ww/wwwww/wwwww w 0 1")


GAMES: dict[str, Game] = {
    game.name: game
    for game in (
        _egara_guti(),
        _circles("pretwa", 3, few_pieces_limit=3),
        _lau_kata_kati(),
        _dash_guti(),
        _circles("gol-skuish", 7, few_pieces_limit=3),
        _alquerque(),
        _lau_kata_kati("butterfly"),
    )
}


def get_game(name: str) -> Game:
    """The game called ``name`` (case-insensitive); RulesError names the known games otherwise."""
    game = GAMES.get(name.strip().lower()) if isinstance(name, str) else None
    if game is None:
        raise RulesError(f"unknown game {name!r}: expected one of {', '.join(GAMES)}")
    return game
