"""Board geometry built from the straight lines of a board.

A game of the Alquerque family is a graph of points on which pieces move
along lines and jump along them. Everything move generation needs is
derived here, once, from the list of lines: adjacency masks for steps and
jump tables (from, over, to) for captures. A new game of the family is a
new list of lines, not new move code.

Points are numbered from 1 in the public API; internally point ``p`` is
bit ``p - 1`` of an ``int`` mask.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .patterns import PatternTables


@dataclass(frozen=True)
class Line:
    """A straight line of the board: its points in order; ``closed`` joins last to first (a circle)."""

    points: tuple[int, ...]
    closed: bool = False


@dataclass(frozen=True)
class Geometry:
    """Precomputed step and jump tables of a board (all indices 0-based bits).

    ``adjacent[i]``: mask of the neighbours of bit i.
    ``jumps_from[i]``: tuple of ``(over_bit, land_index, land_bit)`` for jumps starting at i.
    ``patterns``: the move generator's memoised lookup tables (patterns.py), derived
    from the fields above in ``__post_init__`` so ``dataclasses.replace`` rebuilds them.
    """

    size: int
    rows: tuple[int, ...]
    lines: tuple[Line, ...]
    adjacent: tuple[int, ...] = field(repr=False)
    jumps_from: tuple[tuple[tuple[int, int, int], ...], ...] = field(repr=False)
    patterns: PatternTables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", PatternTables(self))

    @property
    def full(self) -> int:
        """Mask with every point set."""
        return (1 << self.size) - 1

    @classmethod
    def from_lines(cls, size: int, rows: tuple[int, ...], lines: tuple[Line, ...]) -> Geometry:
        """Derive adjacency and jump tables from the board's lines."""
        if sum(rows) != size:
            raise ValueError(f"rows {rows} do not add up to {size} points")
        adjacent = [0] * size
        jumps_from: list[list[tuple[int, int, int]]] = [[] for _ in range(size)]
        for line in lines:
            pts = [p - 1 for p in line.points]
            if any(not 0 <= p < size for p in pts):
                raise ValueError(f"line {line.points} leaves the board")
            n = len(pts)
            triples = []
            pairs = []
            for i in range(n if line.closed else n - 1):
                pairs.append((pts[i], pts[(i + 1) % n]))
            for i in range(n if line.closed else n - 2):
                triples.append((pts[i], pts[(i + 1) % n], pts[(i + 2) % n]))
            for a, b in pairs:
                adjacent[a] |= 1 << b
                adjacent[b] |= 1 << a
            for a, b, c in triples:
                for src, dst in ((a, c), (c, a)):
                    entry = (1 << b, dst, 1 << dst)
                    if entry not in jumps_from[src]:
                        jumps_from[src].append(entry)
        return cls(
            size=size,
            rows=rows,
            lines=lines,
            adjacent=tuple(adjacent),
            jumps_from=tuple(tuple(j) for j in jumps_from),
        )
