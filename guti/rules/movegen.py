"""Move generation on integer bitmasks: the hot path of perft, search and the referee.

Works on two masks, ``own`` (side to move) and ``enemy``, with 0-based bit
indices, and knows nothing of FEN, history or end rules (see board.py).

Legal moves (protocol.md): if any jump exists the side must capture, and a
capture is a maximal jump sequence of one piece (it must go on while it
can); otherwise every step is legal. Pieces jumped leave the board at once.

Speed notes (pure Python: the cost is bytecodes per position): whether a side
can capture, and how many steps it has, is read from the memoised per-segment
patterns of patterns.py (one AND and one dict lookup per straight segment of
the board); a capturing piece's next jumps are read from its per-point pattern
memo, so a capture sequence costs one lookup per jump made.

Order: search (guti/engine/search) orders moves with stable sorts over the lists of
:func:`step_children` and :func:`capture_children`, so their order is part of
``guti bench``'s node count and must not change; :func:`successors` (perft) may
list moves in any order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .geometry import Geometry
    from .patterns import PatternTables

Path = tuple[int, ...]
#: ``Geometry.jumps_from``: per point, its jumps as ``(over_bit, land_index, land_bit)``.
Jumps = tuple[tuple[tuple[int, int, int], ...], ...]


def capture_sources(geo: Geometry, own: int, enemy: int) -> int:
    """Mask of own pieces that have at least one jump."""
    tables = geo.patterns
    packed = own | (enemy << tables.size)
    sources = 0
    for mask, memo in tables.segments:
        sources |= memo[packed & mask][0]
    return sources


def _jump_state(tables: PatternTables, own: int, enemy: int, start_bit: int) -> int:
    """Jump state (patterns.py) of the piece on ``start_bit``: enemies, and empties + its start."""
    return enemy | ((tables.full ^ (own | enemy) | start_bit) << tables.size)


# The three walks below share one shape. Each is called on a point with at least one open
# jump, and looks one jump ahead before recursing: most sequences are a single jump, and a
# look-up is cheaper than a call that finds nothing to do.


def _extend(tables: PatternTables, pos: int, path: Path, state: int,
            out: list[tuple[Path, int]]) -> None:
    """Append ``(path, final state)`` of every maximal sequence continuing from ``pos``
    (the enemies left are the state's low half)."""
    jump_memo, jump_masks = tables.jump_memo, tables.jump_masks
    for land, flip in jump_memo[pos][state & jump_masks[pos]]:
        after = state ^ flip
        if jump_memo[land][after & jump_masks[land]]:
            _extend(tables, land, path + (land,), after, out)
        else:
            out.append((path + (land,), after))


def _count_chains(tables: PatternTables, pos: int, state: int) -> int:
    """Number of maximal capture sequences continuing from ``pos``."""
    jump_memo, jump_masks = tables.jump_memo, tables.jump_masks
    total = 0
    for land, flip in jump_memo[pos][state & jump_masks[pos]]:
        after = state ^ flip
        if jump_memo[land][after & jump_masks[land]]:
            total += _count_chains(tables, land, after)
        else:
            total += 1
    return total


def _chain_ends(tables: PatternTables, pos: int, state: int, out: list[tuple[int, int]]) -> None:
    """Append ``(landing index, final state)`` of every maximal sequence continuing from ``pos``."""
    jump_memo, jump_masks = tables.jump_memo, tables.jump_masks
    for land, flip in jump_memo[pos][state & jump_masks[pos]]:
        after = state ^ flip
        if jump_memo[land][after & jump_masks[land]]:
            _chain_ends(tables, land, after, out)
        else:
            out.append((land, after))


def captures(geo: Geometry, own: int, enemy: int, sources: int | None = None) -> list[tuple[Path, int]]:
    """All maximal capture sequences as ``(path of bit indices, captured mask)``."""
    if sources is None:
        sources = capture_sources(geo, own, enemy)
    tables = geo.patterns
    full = tables.full
    out: list[tuple[Path, int]] = []
    while sources:
        low = sources & -sources
        sources ^= low
        src = low.bit_length() - 1
        found: list[tuple[Path, int]] = []
        _extend(tables, src, (src,), _jump_state(tables, own, enemy, low), found)
        out.extend((path, enemy & ~(state & full)) for path, state in found)
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


def scan(geo: Geometry, own: int, enemy: int) -> tuple[int, int]:
    """``(capture sources, number of steps)`` in one pass over the segment patterns: all
    the board needs to know whether a side has a move, and whether a step may be legal
    (only when the sources are 0: capture is compulsory), without building any move."""
    tables = geo.patterns
    packed = own | (enemy << tables.size)
    sources = 0
    steps = 0
    for mask, memo in tables.segments:
        found, count = memo[packed & mask]
        sources |= found
        steps += count
    return sources, steps


def count_moves(geo: Geometry, own: int, enemy: int) -> int:
    """Number of legal moves (compulsory capture applied), without building them.

    One pass over the segment patterns yields both the capture sources and the number
    of steps, so a position without capture is counted with no further work. The pass
    is :func:`scan`'s, written out again: this runs at every perft leaf's parent, where
    calling :func:`scan` instead makes perft some 7 % slower.
    """
    tables = geo.patterns
    packed = own | (enemy << tables.size)
    sources = 0
    steps = 0
    for mask, memo in tables.segments:
        found, count = memo[packed & mask]
        sources |= found
        steps += count
    if not sources:
        return steps
    size = tables.size
    empty_high = (tables.full ^ (own | enemy)) << size
    total = 0
    while sources:
        low = sources & -sources
        sources ^= low
        total += _count_chains(tables, low.bit_length() - 1, enemy | empty_high | (low << size))
    return total


def successors(geo: Geometry, own: int, enemy: int) -> list[tuple[int, int, bool]]:
    """Positions after each legal move as ``(own_after, enemy_after, was_capture)``.

    For perft, which needs the child positions (one per move, so two sequences that
    end alike count twice), not the move strings.
    """
    sources = capture_sources(geo, own, enemy)
    tables = geo.patterns
    full = tables.full
    out: list[tuple[int, int, bool]] = []
    if not sources:
        adjacent = geo.adjacent
        empty = full ^ (own | enemy)
        while empty:  # by empty point: after the opening there are fewer empties than pieces
            low = empty & -empty
            empty ^= low
            movers = adjacent[low.bit_length() - 1] & own
            base = own | low
            while movers:
                m = movers & -movers
                movers ^= m
                out.append((base ^ m, enemy, False))
        return out
    size = tables.size
    empty_high = (full ^ (own | enemy)) << size
    ends: list[tuple[int, int]] = []
    while sources:
        low = sources & -sources
        sources ^= low
        ends.clear()
        _chain_ends(tables, low.bit_length() - 1, enemy | empty_high | (low << size), ends)
        base = own ^ low
        for land, state in ends:
            out.append((base | (1 << land), state & full, True))
    return out


# --- child positions only, for search ------------------------------------------------------
#
# Search needs neither move strings nor paths, only the positions a move leads to. Two
# capture sequences that take the same pieces and end on the same point (Pretwa
# ``2x4x6x2`` / ``2x6x4x2``) lead to the same position, so search sees it once.


def step_children(geo: Geometry, own: int, enemy: int) -> list[tuple[int, int]]:
    """``(own_after, enemy)`` after each step (ignores compulsory capture, like :func:`steps`).

    It walks the empty points or the pieces, whichever are fewer. What that buys, per
    call, over the better of the two walks alone (positions of random play without a
    capture, ``python`` 3.11): 1.66 against 1.71 us in Egara-guti, 1.22 against 1.26 in
    Pretwa, 3.32 against 3.90 in Gol-skuish; a few per cent of the search's time at
    most. It stays because the two walks list the steps in different orders, and the
    order is part of the search's move ordering and of ``guti bench``'s node count."""
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


def _end_points(jumps_from: Jumps, pos: int, blockers: int, enemy: int,
                out: set[tuple[int, int]]) -> None:
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
    own piece stands), so de-duplicating per source is enough. The order (by source, then
    the set's iteration order) is part of search's move ordering and of ``guti bench``'s
    node count: keep it. It is a walk of its own, not :func:`successors` (perft's), which
    lists a child per capture sequence, two sequences that end alike included: search
    wants each position once.
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
