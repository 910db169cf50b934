"""The games of the family: geometry, start position and end-rule table.

Follows protocol.md section 3 (the rules as guti referees them). Adding a cousin (Lau kata kati,
Dash-guti, ...) means adding an entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import RulesError
from .geometry import Geometry, Line


@dataclass(frozen=True)
class Game:
    """A game: its name, board geometry, start FEN and which optional end rules apply.

    ``few_pieces_limit``: when set (Pretwa: 3), a side with that many pieces or
    fewer loses at once if the other side has more (end rule 1).
    """

    name: str
    geometry: Geometry
    start_fen: str
    few_pieces_limit: int | None = None
    no_capture_plies: int = 50
    repetitions: int = 3


def _egara_guti() -> Game:
    lines = (
        Line((1, 2, 3, 4, 5)),
        Line((6, 7, 8)),
        Line((9, 10, 11)),
        Line((13, 14, 15)),
        Line((16, 17, 18)),
        Line((19, 20, 21, 22, 23)),
        Line((1, 6, 9, 12, 15, 18, 23)),
        Line((5, 8, 11, 12, 13, 16, 19)),
        Line((3, 7, 10, 12, 14, 17, 21)),
        Line((2, 6, 16, 20)),
        Line((4, 8, 18, 22)),
    )
    geometry = Geometry.from_lines(23, (5, 3, 3, 1, 3, 3, 5), lines)
    return Game("egara-guti", geometry, "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1")


def pretwa_point(circle: int, ray: int) -> int:
    """Point number of Pretwa's ``circle`` (1 inner .. 3 outer) on ``ray`` (0..5 clockwise from 12)."""
    return 2 + 6 * (circle - 1) + ray % 6


def _pretwa() -> Game:
    circles = tuple(Line(tuple(pretwa_point(c, r) for r in range(6)), closed=True) for c in (1, 2, 3))
    diameters = tuple(
        Line(
            tuple(pretwa_point(c, r + 3) for c in (3, 2, 1))
            + (1,)
            + tuple(pretwa_point(c, r) for c in (1, 2, 3))
        )
        for r in range(3)
    )
    geometry = Geometry.from_lines(19, (1, 6, 6, 6), circles + diameters)
    return Game("pretwa", geometry, "1/bbwwwb/bbwwwb/bbwwwb w 0 1", few_pieces_limit=3)


GAMES: dict[str, Game] = {game.name: game for game in (_egara_guti(), _pretwa())}


def get_game(name: str) -> Game:
    """The game called ``name`` (case-insensitive); RulesError names the known games otherwise."""
    game = GAMES.get(name.strip().lower()) if isinstance(name, str) else None
    if game is None:
        raise RulesError(f"unknown game {name!r}: expected one of {', '.join(GAMES)}")
    return game
