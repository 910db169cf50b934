"""Move generation on integer bitmasks: the hot path of perft, search and the referee.

Works on two masks, ``own`` (side to move) and ``enemy``, with 0-based bit
indices, and knows nothing of FEN, history or end rules (see board.py).

Legal moves (protocol.md): if any jump exists the side must capture, and a
capture is a maximal jump sequence of one piece (it must go on while it
can); otherwise every step is legal. Pieces jumped leave the board at once.

Speed notes: captures are looked for from the empty landing points when
there are fewer empties than own pieces (the opening and middle game), and
from the pieces otherwise; tests use ``(mask & m) == m`` on packed masks
so one AND checks "over is an enemy and land is empty".
"""

from __future__ import annotations

from .geometry import Geometry

Path = tuple[int, ...]
#: ``Geometry.jumps_from``: per point, its jumps as ``(over_bit, land_index, land_bit)``.
Jumps = tuple[tuple[tuple[int, int, int], ...], ...]


def _extend(jumps_from: Jumps, pos: int, path: Path, captured: int, blockers: int, enemy: int,
            out: list[tuple[Path, int]]) -> None:
    """Depth-first continuation of a capture from ``pos``; appends maximal sequences to ``out``."""
    ended = True
    for over_bit, land, land_bit in jumps_from[pos]:
        if enemy & over_bit and not blockers & land_bit:
            ended = False
            _extend(jumps_from, land, path + (land,), captured | over_bit,
                    blockers ^ over_bit, enemy ^ over_bit, out)
    if ended:
        out.append((path, captured))


def _count_extend(jumps_from: Jumps, pos: int, blockers: int, enemy: int) -> int:
    """Number of maximal capture sequences continuing from ``pos`` (1 if it cannot go on)."""
    total = 0
    for over_bit, land, land_bit in jumps_from[pos]:
        if enemy & over_bit and not blockers & land_bit:
            total += _count_extend(jumps_from, land, blockers ^ over_bit, enemy ^ over_bit)
    return total or 1


def capture_sources(geo: Geometry, own: int, enemy: int) -> int:
    """Mask of own pieces that have at least one jump."""
    occupied = own | enemy
    empty = geo.full ^ occupied
    sources = 0
    if empty.bit_count() < own.bit_count():
        into = geo.jumps_into
        while empty:
            low = empty & -empty
            empty ^= low
            for from_bit, over_bit in into[low.bit_length() - 1]:
                if own & from_bit and enemy & over_bit:
                    sources |= from_bit
    else:
        jumps_from = geo.jumps_from
        rest = own
        while rest:
            low = rest & -rest
            rest ^= low
            for over_bit, _land, land_bit in jumps_from[low.bit_length() - 1]:
                if enemy & over_bit and not occupied & land_bit:
                    sources |= low
                    break
    return sources


def captures(geo: Geometry, own: int, enemy: int, sources: int | None = None) -> list[tuple[Path, int]]:
    """All maximal capture sequences as ``(path of bit indices, captured mask)``."""
    if sources is None:
        sources = capture_sources(geo, own, enemy)
    out: list[tuple[Path, int]] = []
    jumps_from = geo.jumps_from
    while sources:
        low = sources & -sources
        sources ^= low
        src = low.bit_length() - 1
        blockers = (own ^ low) | enemy
        for over_bit, land, land_bit in jumps_from[src]:
            if enemy & over_bit and not blockers & land_bit:
                _extend(jumps_from, land, (src, land), over_bit, blockers ^ over_bit,
                        enemy ^ over_bit, out)
    return out


def steps(geo: Geometry, own: int, enemy: int) -> list[tuple[int, int]]:
    """All steps ``(from, to)`` as bit indices (ignores compulsory capture)."""
    adjacent = geo.adjacent
    empty = geo.full ^ (own | enemy)
    out: list[tuple[int, int]] = []
    rest = own
    while rest:
        low = rest & -rest
        rest ^= low
        src = low.bit_length() - 1
        targets = adjacent[src] & empty
        while targets:
            t = targets & -targets
            targets ^= t
            out.append((src, t.bit_length() - 1))
    return out


def count_moves(geo: Geometry, own: int, enemy: int) -> int:
    """Number of legal moves (compulsory capture applied), without building them."""
    sources = capture_sources(geo, own, enemy)
    if sources:
        jumps_from = geo.jumps_from
        total = 0
        while sources:
            low = sources & -sources
            sources ^= low
            blockers = (own ^ low) | enemy
            for over_bit, land, land_bit in jumps_from[low.bit_length() - 1]:
                if enemy & over_bit and not blockers & land_bit:
                    total += _count_extend(jumps_from, land, blockers ^ over_bit, enemy ^ over_bit)
        return total
    adjacent = geo.adjacent
    occupied = own | enemy
    empty = geo.full ^ occupied
    total = 0
    if empty.bit_count() < own.bit_count():
        while empty:
            low = empty & -empty
            empty ^= low
            total += (adjacent[low.bit_length() - 1] & own).bit_count()
    else:
        rest = own
        while rest:
            low = rest & -rest
            rest ^= low
            total += (adjacent[low.bit_length() - 1] & empty).bit_count()
    return total


def successors(geo: Geometry, own: int, enemy: int) -> list[tuple[int, int, bool]]:
    """Positions after each legal move as ``(own_after, enemy_after, was_capture)``.

    For perft and search, which need the child positions, not the move strings.
    """
    sources = capture_sources(geo, own, enemy)
    if sources:
        out = []
        for path, captured in captures(geo, own, enemy, sources):
            out.append(((own & ~(1 << path[0])) | (1 << path[-1]), enemy & ~captured, True))
        return out
    return [(own ^ ((1 << a) | (1 << b)), enemy, False) for a, b in steps(geo, own, enemy)]


# --- child positions only, for search ------------------------------------------------------
#
# Search needs neither move strings nor paths, only the positions a move leads to. Two
# capture sequences that take the same pieces and end on the same point (Pretwa
# ``2x4x6x2`` / ``2x6x4x2``) lead to the same position, so search sees it once.


def step_children(geo: Geometry, own: int, enemy: int) -> list[tuple[int, int]]:
    """``(own_after, enemy)`` after each step (ignores compulsory capture, like :func:`steps`)."""
    adjacent = geo.adjacent
    empty = geo.full ^ (own | enemy)
    out: list[tuple[int, int]] = []
    if empty.bit_count() < own.bit_count():
        while empty:
            low = empty & -empty
            empty ^= low
            movers = adjacent[low.bit_length() - 1] & own
            base = own | low
            while movers:
                m = movers & -movers
                movers ^= m
                out.append((base ^ m, enemy))
        return out
    rest = own
    while rest:
        low = rest & -rest
        rest ^= low
        targets = adjacent[low.bit_length() - 1] & empty
        base = own ^ low
        while targets:
            t = targets & -targets
            targets ^= t
            out.append((base | t, enemy))
    return out


def _end_points(jumps_from: Jumps, pos: int, blockers: int, enemy: int, out: set[tuple[int, int]]) -> None:
    """Collect ``(landing index, enemy left)`` of every maximal continuation from ``pos``."""
    ended = True
    for over_bit, land, land_bit in jumps_from[pos]:
        if enemy & over_bit and not blockers & land_bit:
            ended = False
            _end_points(jumps_from, land, blockers ^ over_bit, enemy ^ over_bit, out)
    if ended:
        out.add((pos, enemy))


def capture_children(geo: Geometry, own: int, enemy: int,
                     sources: int | None = None) -> list[tuple[int, int]]:
    """Distinct ``(own_after, enemy_after)`` over all maximal captures (no paths built).

    Different moving pieces never give the same position (a piece cannot land where another
    own piece stands), so de-duplicating per source is enough.
    """
    if sources is None:
        sources = capture_sources(geo, own, enemy)
    jumps_from = geo.jumps_from
    out: list[tuple[int, int]] = []
    while sources:
        low = sources & -sources
        sources ^= low
        src = low.bit_length() - 1
        blockers = (own ^ low) | enemy
        ends: set[tuple[int, int]] = set()
        for over_bit, land, land_bit in jumps_from[src]:
            if enemy & over_bit and not blockers & land_bit:
                _end_points(jumps_from, land, blockers ^ over_bit, enemy ^ over_bit, ends)
        base = own ^ low
        for land, left in ends:
            out.append((base | (1 << land), left))
    return out
