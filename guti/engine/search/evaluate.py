"""Static evaluation of a quiet position (the side to move has no capture).

Scored for the side to move, in hundredths of a piece. What counts in these games:

- **material**, plus a small bonus for the side ahead as pieces come off (the 50-ply and
  repetition rules give the game to the side with more pieces, and in Pretwa and
  Gol-skuish a side down to three loses outright);
- **placement**: points on many lines (the centre of every board: Egara-guti's 12,
  Pretwa's 1, Alquerque's 13) see more of the board, for attack and defence;
- **mobility**: steps available (a side without a move loses, end rule 2);
- **blocked pieces**: pieces with no empty neighbour are dead weight;
- **hanging pieces**: enemy pieces that could jump if it were their turn (we move
  first, so this is a moderate penalty: we can often defend one, rarely two).

Nothing here is written for one board: every term is read from the game's geometry (only
the default weights may differ per game, :data:`GAME_WEIGHTS`).
Piece-square sums use one table per byte of the mask, so boards of up to 24 points (all but
Alquerque and Gol-skuish) cost three lookups; larger boards loop over their bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from guti.rules.movegen import capture_sources

if TYPE_CHECKING:
    from guti.rules import Game

PIECE = 100
MOBILITY = 4
BLOCKED = 6
HANGING = 18
DEGREE = 3  # placement bonus per line neighbour of a point
CENTRE = 8  # extra for the centre point

#: The weights a user may change (UGI options of the same names, see
#: :mod:`guti.engine.ugi_options`), with their defaults: the constants above.
DEFAULT_WEIGHTS: dict[str, int] = {
    "EvalMobility": MOBILITY,
    "EvalBlocked": BLOCKED,
    "EvalHanging": HANGING,
    "EvalPlacement": DEGREE,
    "EvalCentre": CENTRE,
}

#: Games whose defaults differ from :data:`DEFAULT_WEIGHTS`. In Gol-skuish (43 points,
#: long capture chains) matches showed placement, mobility and blocked pieces costing more
#: than they bring and the hanging pieces earning their keep, so it is scored by material,
#: the end rules and hanging pieces unless a weight is set.
GAME_WEIGHTS: dict[str, dict[str, int]] = {
    "gol-skuish": {**dict.fromkeys(DEFAULT_WEIGHTS, 0), "EvalHanging": HANGING},
}


def default_weights(game_name: str) -> dict[str, int]:
    """The weights ``game_name`` is evaluated with when no option sets them."""
    return {**DEFAULT_WEIGHTS, **GAME_WEIGHTS.get(game_name, {})}


#: Returned instead of a score when the side to move has no step (it loses by end rule 2);
#: the search turns it into a loss at the right distance.
NO_MOVES = -(1 << 40)


def _byte_tables(weights: list[int]) -> tuple[tuple[int, ...], ...]:
    """One 256-entry table per byte of a mask: the summed weights of the bits set in it."""
    tables = []
    for start in range(0, max(24, len(weights)), 8):
        table = []
        for byte in range(256):
            total = 0
            for bit in range(8):
                if byte >> bit & 1 and start + bit < len(weights):
                    total += weights[start + bit]
            table.append(total)
        tables.append(tuple(table))
    return tuple(tables)


def placement_weights(game: Game, degree: int = DEGREE, centre_bonus: int = CENTRE) -> list[int]:
    """Bonus per point (0-based bit): ``degree`` per neighbour, ``centre_bonus`` more for the
    centre point."""
    geo = game.geometry
    weights = [degree * mask.bit_count() for mask in geo.adjacent]
    xs = [x for x, _ in game.coordinates]
    ys = [y for _, y in game.coordinates]
    mid_x, mid_y = sum(xs) / len(xs), sum(ys) / len(ys)
    # the most connected point; among equals (Alquerque's 7, 9, 13, ...) the one in the middle
    centre = max(range(geo.size), key=lambda i: (geo.adjacent[i].bit_count(),
                                                  -((xs[i] - mid_x) ** 2 + (ys[i] - mid_y) ** 2)))
    weights[centre] += centre_bonus
    return weights


def _wide_placement(tables: tuple[tuple[int, ...], ...]) -> Callable[[int], int]:
    """Summed placement weights of a mask of any size, one lookup per byte."""

    def placement(mask: int) -> int:
        total = 0
        for table in tables:
            total += table[mask & 255]
            mask >>= 8
        return total

    return placement


def material_score(few: int, no: int, ne: int) -> int:
    """Material for the side with ``no`` pieces against ``ne``: a piece each, a bonus for the
    side ahead that grows as pieces come off, and a little more one capture before the
    other side is down to ``few`` (the three-or-fewer rule; ``few`` 0 where it does not apply)."""
    diff = no - ne
    score = PIECE * diff
    if diff:
        score += 300 * diff // (no + ne)
        if few and ne == few + 1 and diff > 0:
            score += 40
        elif few and no == few + 1 and diff < 0:
            score -= 40
    return score


def _material_evaluator(game: Game, hanging: int) -> Callable[[int, int], int]:
    """The evaluation when only material and hanging pieces count (the placement,
    mobility and blocked weights all 0): :func:`material_score`, ``hanging`` per enemy
    piece that could jump, and the loss of a side without a step. Its own function because
    the full one walks every empty point for terms that would all count 0."""
    geo = game.geometry
    adjacent = geo.adjacent
    full = geo.full
    few = game.few_pieces_limit or 0

    def evaluate(own: int, enemy: int) -> int:
        empty = full ^ (own | enemy)
        while empty:
            low = empty & -empty
            if adjacent[low.bit_length() - 1] & own:
                break
            empty ^= low
        else:
            return NO_MOVES
        score = material_score(few, own.bit_count(), enemy.bit_count())
        if hanging:
            score -= hanging * capture_sources(geo, enemy, own).bit_count()
        return score

    return evaluate


def build_evaluator(game: Game,
                    weights: Mapping[str, int] | None = None) -> Callable[[int, int], int]:
    """The evaluation function ``(own, enemy) -> score`` for ``game``, with ``weights``
    (names of :data:`DEFAULT_WEIGHTS`; a missing one keeps the game's default, see
    :func:`default_weights`)."""
    w = {**default_weights(game.name), **(weights or {})}
    mobility, blocked, hanging = w["EvalMobility"], w["EvalBlocked"], w["EvalHanging"]
    if not (mobility or blocked or w["EvalPlacement"] or w["EvalCentre"]):
        return _material_evaluator(game, hanging)
    geo = game.geometry
    adjacent = geo.adjacent
    full = geo.full
    tables = _byte_tables(placement_weights(game, w["EvalPlacement"], w["EvalCentre"]))
    p0, p1, p2 = tables[:3]
    wide = len(tables) > 3  # more than 24 points: the three inline lookups do not cover it
    placement = _wide_placement(tables)
    few = game.few_pieces_limit or 0

    def evaluate(own: int, enemy: int) -> int:
        score = material_score(few, own.bit_count(), enemy.bit_count())
        if wide:
            score += placement(own) - placement(enemy)
        else:
            score += (p0[own & 255] + p1[(own >> 8) & 255] + p2[own >> 16]
                      - p0[enemy & 255] - p1[(enemy >> 8) & 255] - p2[enemy >> 16])
        empty = full ^ (own | enemy)
        own_moves = enemy_moves = 0
        reach = 0
        while empty:
            low = empty & -empty
            empty ^= low
            adj = adjacent[low.bit_length() - 1]
            reach |= adj
            own_moves += (adj & own).bit_count()
            enemy_moves += (adj & enemy).bit_count()
        if not own_moves:
            return NO_MOVES
        score += mobility * (own_moves - enemy_moves)
        score -= blocked * ((own & ~reach).bit_count() - (enemy & ~reach).bit_count())
        if hanging:
            attackers = capture_sources(geo, enemy, own)
            if attackers:
                score -= hanging * attackers.bit_count()
        return score

    return evaluate
