"""Memoised local patterns: the move generator's lookup tables, built from a Geometry.

Why: in pure Python the cost of move generation is the number of bytecodes per
position, not the number of pieces. Checking every jump of every piece one by one
costs tens of operations per position; but whether a jump exists, and how many steps
there are, depends only on the few points of one straight line. So the board is cut
into *segments* (a line, or a window of at most ``SEGMENT_POINTS`` points of a long
line) and the answer for a segment is looked up by the pattern of pieces on it: one
AND and one dict lookup per segment instead of a loop over jumps.

Likewise, the jumps a capturing piece can make next depend only on the points around
it: ``jump_memo[p]`` maps the pattern of enemies and empty points around ``p`` to the
jumps available from ``p``.

The tables are filled lazily (a pattern is solved the first time it is seen), so
building a Geometry stays cheap and only patterns that occur cost memory; a memo that
reaches MEMO_LIMIT entries starts afresh, so memory stays bounded on any board.
Filling a missing entry is idempotent, so sharing the tables between threads needs no
lock (the GIL makes each dict store atomic).

Everything is derived from ``jumps_from`` and ``adjacent`` (the lines only say how
to group them), so a Geometry with a hand-edited jump table (tests/engines/
buggy_movegen.py) gets tables that agree with it.

Encodings, with ``n`` the number of points:

- *packed position*: ``own | enemy << n``; a segment's key is ``packed & mask``.
- *jump state* of a capturing piece: ``enemy | empty << n``, where the piece's start
  point counts as empty (it has left it); a jump over ``o`` flips ``o | o << n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class _LineShape(Protocol):
    @property
    def points(self) -> tuple[int, ...]: ...

    @property
    def closed(self) -> bool: ...


class BoardShape(Protocol):
    """What the tables read of a :class:`~guti.rules.geometry.Geometry`. A protocol rather
    than the class, because geometry.py builds its tables from this module (no cycle)."""

    @property
    def size(self) -> int: ...

    @property
    def lines(self) -> Sequence[_LineShape]: ...

    @property
    def adjacent(self) -> tuple[int, ...]: ...

    @property
    def jumps_from(self) -> tuple[tuple[tuple[int, int, int], ...], ...]: ...

#: Longest run of one line a window covers (a long line is cut into overlapping windows).
SEGMENT_POINTS = 7
#: Most points of a segment once short windows are merged: fewer segments mean fewer
#: lookups per position, at most 3**MERGED_POINTS patterns each.
MERGED_POINTS = 10

#: Entries one memo keeps before it starts afresh: bounds memory for boards with long
#: lines or many jumps per point, far above what the two classic boards ever fill.
MEMO_LIMIT = 1 << 16

#: A jump as the capture search uses it: (land index, flip = over_bit | over_bit << n).
Jump = tuple[int, int]


class _Segment:
    """Points of one segment and the directed jumps and edges it answers for."""

    __slots__ = ("points", "jumps", "edges")

    def __init__(self, points: tuple[int, ...]):
        self.points = points
        self.jumps: list[tuple[int, int, int]] = []  # (src, over, land) indices
        self.edges: list[tuple[int, int]] = []


def _line_windows(points: tuple[int, ...], closed: bool) -> list[tuple[int, ...]]:
    """Cut a line into windows of <= SEGMENT_POINTS points so every triple lies in one."""
    n = len(points)
    starts = range(n) if closed else range(max(n - 2, 1))
    per_window = SEGMENT_POINTS - 2  # triples starting in one window
    windows = []
    for first in range(0, len(starts), per_window):
        count = min(per_window, len(starts) - first)
        span = min(count + 2, n)
        windows.append(tuple(points[(first + i) % n] for i in range(span)))
    return windows


def _merged(windows: list[tuple[int, ...]]) -> list[_Segment]:
    """Group windows into segments of at most MERGED_POINTS points (fewer lookups)."""
    groups: list[list[int]] = []
    for window in windows:
        best = None
        for group in groups:
            union = set(group) | set(window)
            if len(union) <= MERGED_POINTS and (best is None or len(union) < best[0]):
                best = (len(union), group)
        if best is None:
            groups.append(list(window))
        else:
            best[1].extend(p for p in window if p not in best[1])
    return [_Segment(tuple(group)) for group in groups]


def _segments(geo: BoardShape) -> list[_Segment]:
    """Assign every directed jump and every edge of ``geo`` to exactly one segment."""
    segments = _merged([window for line in geo.lines
                        for window in _line_windows(tuple(p - 1 for p in line.points), line.closed)])
    for src in range(geo.size):
        for over_bit, land, _ in geo.jumps_from[src]:
            over = over_bit.bit_length() - 1
            home = next((s for s in segments if {src, over, land} <= set(s.points)), None)
            if home is None:  # a jump along no line: a segment of its own
                home = _Segment((src, over, land))
                segments.append(home)
            home.jumps.append((src, over, land))
    for a in range(geo.size):
        rest = geo.adjacent[a] >> (a + 1) << (a + 1)  # each edge once, from its lower end
        while rest:
            low = rest & -rest
            rest ^= low
            b = low.bit_length() - 1
            home = next((s for s in segments if a in s.points and b in s.points), None)
            if home is None:
                home = _Segment((a, b))
                segments.append(home)
            home.edges.append((a, b))
    return [s for s in segments if s.jumps or s.edges]


class SegmentMemo(dict[int, tuple[int, int]]):
    """``memo[pattern]`` = ``(capture sources, steps)`` of one segment, solved on first use.

    A dict subclass with ``__missing__`` so the hot loops read it with a plain subscript
    (no ``.get`` call, no None test); only a miss runs Python code.
    """

    __slots__ = ("size", "full", "jumps", "reach")

    def __init__(self, size: int, part: _Segment):
        super().__init__()
        self.size = size
        self.full = (1 << size) - 1
        # (source bit, over bit, land bit) of the segment's jumps
        self.jumps = tuple((1 << src, 1 << over, 1 << land) for src, over, land in part.jumps)
        # (point bit, mask of the points it may step to) over the segment's edges
        reach: dict[int, int] = {}
        for a, b in part.edges:
            reach[1 << a] = reach.get(1 << a, 0) | (1 << b)
            reach[1 << b] = reach.get(1 << b, 0) | (1 << a)
        self.reach = tuple(reach.items())

    def __missing__(self, key: int) -> tuple[int, int]:
        own, enemy = key & self.full, key >> self.size
        empty = self.full ^ (own | enemy)
        sources = 0
        for src_bit, over_bit, land_bit in self.jumps:
            if own & src_bit and enemy & over_bit and empty & land_bit:
                sources |= src_bit
        steps = 0
        for point_bit, targets in self.reach:
            if own & point_bit:
                steps += (targets & empty).bit_count()
        if len(self) >= MEMO_LIMIT:
            self.clear()
        entry = self[key] = (sources, steps)
        return entry


class JumpMemo(dict[int, tuple[Jump, ...]]):
    """``memo[state & mask]`` = the jumps open from one point, solved on first use."""

    __slots__ = ("size", "jumps")

    def __init__(self, size: int, jumps: tuple[tuple[int, int, int], ...]):
        super().__init__()
        self.size = size
        self.jumps = jumps

    def __missing__(self, key: int) -> tuple[Jump, ...]:
        size = self.size
        found = tuple((land, over_bit | (over_bit << size))
                      for over_bit, land, land_bit in self.jumps
                      if key & over_bit and key >> size & land_bit)
        if len(self) >= MEMO_LIMIT:
            self.clear()
        self[key] = found
        return found


class PatternTables:
    """The lazily filled lookup tables of one Geometry (see the module docstring).

    ``segments``: ``(mask, memo)`` per segment; ``memo[packed & mask]`` is
    ``(capture sources, steps)`` of the side whose pieces are the low half.
    ``jump_masks[p]`` / ``jump_memo[p]``: ``jump_memo[p][state & jump_masks[p]]`` is the
    tuple of :data:`Jump` a capturing piece on ``p`` can make next.
    """

    __slots__ = ("size", "full", "segments", "jump_masks", "jump_memo")

    def __init__(self, geo: BoardShape):
        size = geo.size
        self.size = size
        self.full = (1 << size) - 1
        segments = []
        for part in _segments(geo):
            mask = 0
            for p in part.points:
                mask |= (1 << p) | (1 << (p + size))
            segments.append((mask, SegmentMemo(size, part)))
        self.segments: tuple[tuple[int, SegmentMemo], ...] = tuple(segments)
        masks = []
        for entries in geo.jumps_from:
            mask = 0
            for over_bit, _land, land_bit in entries:
                mask |= over_bit | (land_bit << size)
            masks.append(mask)
        self.jump_masks: tuple[int, ...] = tuple(masks)
        self.jump_memo: tuple[JumpMemo, ...] = tuple(JumpMemo(size, entries)
                                                     for entries in geo.jumps_from)
