"""Perft: count move sequences of a given length, the move generator's test and benchmark.

Counts follow protocol.md exactly: a finished position (by any end rule,
repetition included) has no moves, so the repetition history of the board
is carried through the tree. Leaves are counted without being made (bulk
counting at the last ply, the usual perft practice).

Speed: a perft tree is full of transpositions (steps commute), so one position
is reached again and again. What depends on the position alone is memoised per
perft run, keyed by the position key (``white | black << n | turn << 2n``, the
board's repetition key, which says who moves):

- ``_Children``: the keys of the children of a position, without those finished by
  the few-pieces rule (a rule of the position alone), and whether they capture;
- ``_MoveCounts``: the number of legal moves of a position (a leaf's parent's count);
- ``_LeafTotals``: the sum of those counts over a position's children, which is the
  count two plies below it whenever none of its children repeats a position of the
  current line (checked in C by one ``isdisjoint``) and the no-capture clock is far.

What depends on the line (the repetition counts, the clock) is still checked per
node, so the figures are exactly those of a walk without memos. Each memo starts
afresh when it reaches ``MEMO_LIMIT`` entries, so memory stays bounded on any run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .movegen import count_moves, successors

if TYPE_CHECKING:
    from .board import Board
    from .geometry import Geometry

#: Entries one memo keeps before it starts afresh: Egara-guti depth 13 fills about 70,000;
#: at about 120 bytes an entry (measured), one full memo holds some 30 MB.
MEMO_LIMIT = 1 << 18

#: Calls of the walk's inner step between two looks at ``should_stop`` (a few ms of work).
STOP_CHECK_EVERY = 256


class PerftStopped(Exception):
    """``should_stop`` said yes before the count was done."""


#: A ``_Children`` entry: the children's keys, and whether the moves are captures
#: (capture is compulsory, so a position's moves are all captures or all steps).
ChildList = tuple[tuple[int, ...], bool]


class _Children(dict[int, ChildList]):
    """``children[key]``: see :data:`ChildList`; children that the few-pieces rule finishes
    are left out (they have no moves and are not leaves: they count 0 below any depth)."""

    __slots__ = ("geo", "size", "limit")

    def __init__(self, geo: Geometry, limit: int | None):
        super().__init__()
        self.geo, self.size, self.limit = geo, geo.size, limit

    def __missing__(self, key: int) -> ChildList:
        size, limit = self.size, self.limit
        full = (1 << size) - 1
        turn = key >> (2 * size)
        white, black = key & full, (key >> size) & full
        own, enemy = (black, white) if turn else (white, black)
        moves = successors(self.geo, own, enemy)
        keys = []
        for own_after, enemy_after, _ in moves:
            if limit is not None and (
                    (enemy_after.bit_count() <= limit) != (own_after.bit_count() <= limit)):
                continue
            if turn:  # black moved: white to move in the child
                keys.append(enemy_after | (own_after << size))
            else:
                keys.append(own_after | (enemy_after << size) | (1 << (2 * size)))
        if len(self) >= MEMO_LIMIT:
            self.clear()
        entry = self[key] = (tuple(keys), bool(moves) and moves[0][2])
        return entry


class _MoveCounts(dict[int, int]):
    """``counted[key]``: number of legal moves of the position (no end rule applied)."""

    __slots__ = ("geo", "size")

    def __init__(self, geo: Geometry):
        super().__init__()
        self.geo, self.size = geo, geo.size

    def __missing__(self, key: int) -> int:
        size = self.size
        full = (1 << size) - 1
        white, black = key & full, (key >> size) & full
        if key >> (2 * size):
            count = count_moves(self.geo, black, white)
        else:
            count = count_moves(self.geo, white, black)
        if len(self) >= MEMO_LIMIT:
            self.clear()
        self[key] = count
        return count


class _LeafTotals(dict[int, int]):
    """``totals[key]``: sum of ``counted`` over ``children[key]``: perft 2 of the position
    when no child is finished by repetition or by the clock."""

    __slots__ = ("children", "counted")

    def __init__(self, children: _Children, counted: _MoveCounts):
        super().__init__()
        self.children, self.counted = children, counted

    def __missing__(self, key: int) -> int:
        counted = self.counted
        total = sum([counted[child] for child in self.children[key][0]])
        if len(self) >= MEMO_LIMIT:
            self.clear()
        self[key] = total
        return total


def perft(board: Board, depth: int, should_stop: Callable[[], bool] | None = None) -> int:
    """Number of legal move sequences of length ``depth`` from ``board``. ``should_stop``,
    asked every few milliseconds, ends the count early with :class:`PerftStopped` (an
    engine's ``go perft 30`` must still heed ``stop``)."""
    if depth < 0:
        raise ValueError("perft depth must be >= 0")
    if depth == 0:
        return 1
    game = board.game
    geo = game.geometry
    limit = game.few_pieces_limit
    fifty = game.no_capture_plies
    repeat_at = game.repetitions - 1  # a child seen this often already is finished
    counts = board.repetition_counts()  # of the line: the history, then the path
    get = counts.get
    line = counts.keys()
    children = _Children(geo, limit)
    counted = _MoveCounts(geo)
    totals = _LeafTotals(children, counted)
    steps = 0

    def two(key: int, clock: int) -> int:
        """Count two plies below a position not finished by end rules (its parent's view)."""
        keys, captured = children[key]
        if (0 if captured else clock + 1) >= fifty:
            return 0
        if line.isdisjoint(keys):
            return totals[key]
        return sum([counted[child] for child in keys if get(child, 0) < repeat_at])

    def node(key: int, clock: int, depth: int) -> int:
        """Count below a position not finished by end rules; depth >= 3."""
        nonlocal steps
        steps += 1
        if should_stop is not None and steps % STOP_CHECK_EVERY == 0 and should_stop():
            raise PerftStopped
        keys, captured = children[key]
        child_clock = 0 if captured else clock + 1
        if child_clock >= fifty:
            return 0
        total = 0
        for child in keys:
            seen = get(child, 0)
            if seen >= repeat_at:
                continue
            counts[child] = seen + 1
            if depth == 3:
                total += two(child, child_clock)
            else:
                total += node(child, child_clock, depth - 1)
            if seen:
                counts[child] = seen
            else:  # keep the line's keys only, so two()'s isdisjoint stays short
                del counts[child]
        return total

    own, enemy = board._sides()
    if limit is not None and (own.bit_count() <= limit) != (enemy.bit_count() <= limit):
        return 0
    key = board.position_key()
    if board.clock >= fifty or get(key, 0) >= repeat_at + 1:
        return 0
    if depth == 1:
        return count_moves(geo, own, enemy)
    if depth == 2:
        return two(key, board.clock)
    return node(key, board.clock, depth)


def divide(board: Board, depth: int,
           should_stop: Callable[[], bool] | None = None) -> list[tuple[str, int]]:
    """Perft split by first move: ``(move string, count)`` in byte order of the strings
    (``should_stop``: as for :func:`perft`)."""
    if depth < 1:
        raise ValueError("divide depth must be >= 1")
    work = board.copy()
    out = []
    for move in work.legal_moves:
        work.push(move)
        if should_stop is not None and should_stop():
            raise PerftStopped
        out.append((str(move), perft(work, depth - 1, should_stop)))
        work.pop()
    out.sort()
    return out
