"""The alpha-beta tree below the root: negamax with PVS, the transposition table, move
ordering (table move, killers, history; captures by pieces taken) and the end rules.

Positions inside the tree are two int masks from the mover's side (``own``, ``enemy``)
plus the side to move, the 50-ply clock and the exact position key used for repetition.
Moves are the child positions themselves (``(own_after, enemy_after)``).

Per node, in the order of protocol.md: the three-or-fewer rule (Pretwa, Gol-skuish), no
legal move (loss), the 50-ply clock and the third occurrence (both scored by material: a
win, a draw or a loss at that distance). Repetition counts start from the game history
the board carries (:meth:`~guti.rules.Board.repetition_counts`) and grow along the search path.

The quiescence part needs no stand-pat: capture is compulsory, so a position where the
side to move can capture is never a leaf; the search goes on through captures until the
position is quiet, and only quiet positions are evaluated. Positions with a single legal
move (forced captures, blocked pieces) are extended by a ply.

Known simplification shared with most engines: a transposition-table score may come from
a different path (graph-history interaction), so repetition is exact along the searched
path but a table hit can hide it. The 50-ply clock is mixed into the hash whenever it
could run out within the remaining depth, so table hits never hide that rule.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.rules.movegen import capture_children, capture_sources, count_moves, step_children

from .evaluate import NO_MOVES
from .scores import INF, MATE, MATE_BOUND, MAX_PLY
from .zobrist import BYTE_TABLES, CLOCK_KEYS, EXACT, LOWER, UPPER, TranspositionTable, zobrist_high

if TYPE_CHECKING:
    from guti.rules import Board

    from .limits import Budget

#: Nodes between looks at the clock, the stop flag and the node limit (~1 ms of search).
CHECK_EVERY = 32


class SearchAborted(Exception):
    """Raised inside the tree when the clock, the node limit or ``stop`` ends the search."""


#: A principal variation as a chain of child positions: ``((own, enemy), rest)`` or None.
PvChain = tuple[tuple[int, int], "PvChain"] | None


@dataclass
class Tree:
    """The alpha-beta tree of one search, seen from outside: what the root and the
    deepening loop need from :func:`build_tree`'s closures."""

    negamax: Callable[[int, int, int, int, int, int, int, int, int], int]
    stats: Callable[[], tuple[int, int]]  # (nodes, seldepth) so far
    new_iteration: Callable[[], None]  # seldepth starts again at 0
    pv_at: list[PvChain]
    reps: dict[int, int]  # repetition counts along the searched path
    size: int
    turn_bit: int


def build_tree(
    board: Board,
    evaluate: Callable[[int, int], int],
    tt: TranspositionTable,
    history: dict[int, int],
    budget: Budget,
    stop: threading.Event | None,
) -> Tree:
    """The negamax search of one root position, as closures over local variables.

    Why closures: the hot loop reads everything it needs (tables, the game's
    constants, the counters) from enclosing-scope cells, which CPython reads faster
    than attributes of an object; the node count is the same either way."""
    perf_counter = time.perf_counter
    game = board.game
    geo = game.geometry
    size = geo.size
    few = game.few_pieces_limit or 0
    fifty = game.no_capture_plies
    repetitions = game.repetitions
    turn_bit = 1 << (2 * size)
    wide_keys = 2 * size + 1 > 48  # keys past the six inline Zobrist bytes
    reps = board.repetition_counts()
    reps_get = reps.get
    slots = tt.slots
    tt_mask = tt.mask
    age = tt.age
    z0, z1, z2, z3, z4, z5 = BYTE_TABLES
    clock_keys = CLOCK_KEYS
    hist_get = history.get
    killers = [[0, 0] for _ in range(MAX_PLY + 2)]
    pv_at: list[PvChain] = [None] * (MAX_PLY + 2)
    hard_at = budget.hard_at
    node_limit = budget.node_limit

    nodes = 0
    seldepth = 0
    next_check = CHECK_EVERY if node_limit is None else min(CHECK_EVERY, node_limit)

    def checkpoint() -> None:
        """Every ``CHECK_EVERY`` nodes: abort on ``stop``, the hard deadline or the node limit."""
        nonlocal next_check
        if stop is not None and stop.is_set():
            raise SearchAborted
        if hard_at is not None and perf_counter() >= hard_at:
            raise SearchAborted
        if node_limit is not None and nodes >= node_limit:
            raise SearchAborted
        next_check = nodes + CHECK_EVERY
        if node_limit is not None and next_check > node_limit:
            next_check = node_limit

    def negamax(own: int, enemy: int, depth: int, alpha: int, beta: int, ply: int,
                clock: int, key: int, turn: int) -> int:
        nonlocal nodes, seldepth
        nodes += 1
        if nodes >= next_check:
            checkpoint()
        pv_at[ply] = None
        if ply > seldepth:
            seldepth = ply
        if few:
            no = own.bit_count()
            ne = enemy.bit_count()
            if (no <= few) != (ne <= few):
                return MATE - ply if no > ne else ply - MATE
        sources = capture_sources(geo, own, enemy)
        if not sources and (depth <= 0 or ply >= MAX_PLY):
            if clock >= fifty or reps_get(key, 0) >= repetitions:
                if not count_moves(geo, own, enemy):
                    return ply - MATE
                diff = own.bit_count() - enemy.bit_count()
                return MATE - ply if diff > 0 else (ply - MATE if diff < 0 else 0)
            score = evaluate(own, enemy)
            return ply - MATE if score == NO_MOVES else score
        if sources:
            children = capture_children(geo, own, enemy, sources)
        else:
            children = step_children(geo, own, enemy)
            if not children:
                return ply - MATE
        if clock >= fifty or reps_get(key, 0) >= repetitions:
            diff = own.bit_count() - enemy.bit_count()
            return MATE - ply if diff > 0 else (ply - MATE if diff < 0 else 0)
        if ply >= MAX_PLY:
            return 0

        z = (z0[key & 255] ^ z1[(key >> 8) & 255] ^ z2[(key >> 16) & 255]
             ^ z3[(key >> 24) & 255] ^ z4[(key >> 32) & 255] ^ z5[(key >> 40) & 255])
        if wide_keys:
            z ^= zobrist_high(key)
        if clock + 2 * depth + 4 >= fifty:
            z ^= clock_keys[clock]
        slot = z & tt_mask
        entry = slots[slot]
        tt_child = None
        if entry is not None and entry[0] == z:
            tt_child = (entry[4], entry[5])
            if entry[1] >= depth:
                s = entry[3]
                if s > MATE_BOUND:
                    s -= ply
                elif s < -MATE_BOUND:
                    s += ply
                flag = entry[2]
                if flag == EXACT or (flag == LOWER and s >= beta) or (flag == UPPER and s <= alpha):
                    return s

        n = len(children)
        if n > 1:
            if sources:
                children.sort(key=lambda c: c[1].bit_count())
            else:
                children.sort(key=lambda c: hist_get(c[0] ^ own, 0), reverse=True)
                k1, k2 = killers[ply]
                for k in (k2, k1):
                    if k:
                        for i in range(1, n):
                            if children[i][0] ^ own == k:
                                children.insert(0, children.pop(i))
                                break
            if tt_child is not None and children[0] != tt_child:
                try:
                    i = children.index(tt_child)
                except ValueError:
                    pass
                else:
                    children.insert(0, children.pop(i))
            nd = depth - 1
        else:
            nd = depth if depth > 0 else depth - 1

        alpha0 = alpha
        best = -INF
        best_child = children[0]
        quiet = not sources
        for i in range(n):
            child = children[i]
            oa, ea = child
            ck = (oa | (ea << size) | turn_bit) if turn == 0 else (ea | (oa << size))
            reps[ck] = reps_get(ck, 0) + 1
            cclock = clock + 1 if quiet else 0
            if i == 0:
                score = -negamax(ea, oa, nd, -beta, -alpha, ply + 1, cclock, ck, turn ^ 1)
            else:
                if quiet and i >= 3 and nd >= 2:
                    score = -negamax(ea, oa, nd - 1, -alpha - 1, -alpha, ply + 1, cclock, ck, turn ^ 1)
                else:
                    score = alpha + 1
                if score > alpha:
                    score = -negamax(ea, oa, nd, -alpha - 1, -alpha, ply + 1, cclock, ck, turn ^ 1)
                    if alpha < score < beta:
                        score = -negamax(ea, oa, nd, -beta, -alpha, ply + 1, cclock, ck, turn ^ 1)
            reps[ck] -= 1
            if score > best:
                best = score
                best_child = child
                if score > alpha:
                    alpha = score
                    pv_at[ply] = (child, pv_at[ply + 1])
                    if alpha >= beta:
                        if quiet:
                            moved = oa ^ own
                            kl = killers[ply]
                            if kl[0] != moved:
                                kl[1] = kl[0]
                                kl[0] = moved
                            history[moved] = hist_get(moved, 0) + depth * depth
                        break

        flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
        s = best
        if s > MATE_BOUND:
            s += ply
        elif s < -MATE_BOUND:
            s -= ply
        if entry is None or entry[0] != z or depth >= entry[1] or entry[6] != age:
            slots[slot] = (z, depth, flag, s, best_child[0], best_child[1], age)
        return best

    def stats() -> tuple[int, int]:
        return nodes, seldepth

    def new_iteration() -> None:
        nonlocal seldepth
        seldepth = 0

    return Tree(negamax, stats, new_iteration, pv_at, reps, size, turn_bit)
