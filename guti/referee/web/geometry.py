"""A game's board as plain JSON-able data: the one geometry source for every picture.

Both the Python SVG renderer (:mod:`guti.referee.web.svg`) and the report's JavaScript draw
from :func:`board_geometry`, so a board looks the same in ``guti board -svg`` and in the
browser, and a new game of the family needs no drawing code: everything comes from the
game's entry in :data:`guti.rules.GAMES` (coordinates with y up, lines, circles).

Coordinates stay in the game's own units; the picture is flipped (SVG's y grows
downwards) and padded here once (:func:`to_svg`), and sizes (piece radius, stroke, font)
scale with the smallest distance between two points, so Gol-skuish's 43 points and
Alquerque's grid both come out readable.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from guti.rules import Game, get_game

#: How close to the circumcircle every point of a closed line must lie to be drawn as a circle.
_CONCYCLIC_TOLERANCE = 1e-6


def _circumcircle(a: tuple[float, float], b: tuple[float, float],
                  c: tuple[float, float]) -> tuple[float, float, float] | None:
    """Centre and radius of the circle through three points (None if they are collinear)."""
    (ax, ay), (bx, by), (cx, cy) = a, b, c
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if abs(d) < 1e-12:
        return None
    ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay)
          + (cx * cx + cy * cy) * (ay - by)) / d
    uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx)
          + (cx * cx + cy * cy) * (bx - ax)) / d
    return ux, uy, math.hypot(ax - ux, ay - uy)


def circle_of(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """The circle through every point (at least three), or None if they are not concyclic."""
    if len(points) < 3:
        return None
    circle = _circumcircle(points[0], points[1], points[2])
    if circle is None:
        return None
    cx, cy, r = circle
    if all(abs(math.hypot(x - cx, y - cy) - r) <= _CONCYCLIC_TOLERANCE * max(1.0, r)
           for x, y in points):
        return circle
    return None


def _smallest_distance(points: list[tuple[float, float]]) -> float:
    best = math.inf
    for i, (ax, ay) in enumerate(points):
        for bx, by in points[i + 1:]:
            d = math.hypot(ax - bx, ay - by)
            if 1e-9 < d < best:
                best = d
    return best if math.isfinite(best) else 1.0


def _jumps(game: Game) -> list[list[int]]:
    """Every jump as ``[from, over, to]`` (1-based): what a capture path step removes."""
    found = []
    for src, entries in enumerate(game.geometry.jumps_from):
        for over_bit, dst, _ in entries:
            found.append([src + 1, over_bit.bit_length(), dst + 1])
    return found


@cache
def board_geometry(name: str) -> dict[str, Any]:
    """The board of game ``name`` as JSON-able data (see the module docstring)."""
    game = get_game(name)
    points = [(float(x), float(y)) for x, y in game.coordinates]
    lines = []
    for line in game.geometry.lines:
        circle = circle_of([points[p - 1] for p in line.points]) if line.closed else None
        lines.append({
            "points": list(line.points),
            "closed": line.closed,
            "circle": [round(v, 6) for v in circle] if circle else None,
        })
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    unit = _smallest_distance(points)
    return {
        "name": game.name,
        "size": game.geometry.size,
        "rows": list(game.geometry.rows),
        "points": [[round(x, 6), round(y, 6)] for x, y in points],
        "lines": lines,
        "jumps": _jumps(game),
        "start_fen": game.start_fen,
        "unit": round(unit, 6),
        "bounds": [min(xs), min(ys), max(xs), max(ys)],
    }


def to_svg(geo: dict[str, Any], x: float, y: float) -> tuple[float, float]:
    """Board coordinates (y up) to the picture's (y down, padded by one unit)."""
    minx, _, _, maxy = geo["bounds"]
    pad = geo["unit"]
    return round(x - minx + pad, 4), round(maxy - y + pad, 4)


def view_box(geo: dict[str, Any]) -> tuple[float, float]:
    """Width and height of the picture in board units (the board plus a unit all round)."""
    minx, miny, maxx, maxy = geo["bounds"]
    pad = geo["unit"]
    return round(maxx - minx + 2 * pad, 4), round(maxy - miny + 2 * pad, 4)
