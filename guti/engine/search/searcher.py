"""The search: iterative deepening negamax with alpha-beta, PVS, a transposition table and
move ordering, with the end rules of protocol.md applied exactly at every node.

Positions inside the tree are two int masks from the mover's side (``own``, ``enemy``)
plus the side to move, the 50-ply clock and the exact position key used for repetition.
Moves are the child positions themselves (``(own_after, enemy_after)``); move strings are
only made at the root and for the principal variation.

Per node, in the order of protocol.md: the three-or-fewer rule (Pretwa, Gol-skuish), no legal move (loss),
the 50-ply clock and the third occurrence (both scored by material: a win, a draw or a
loss at that distance). Repetition counts start from the game history the board carries
(see :mod:`.history`) and grow along the search path.

The quiescence part needs no stand-pat: capture is compulsory, so a position where the side
to move can capture is never a leaf; the search goes on through captures until the position
is quiet, and only quiet positions are evaluated. Positions with a single legal move
(forced captures, blocked pieces) are extended by a ply.

The parts: :class:`_Budget` (deadlines, node limit, depth), :func:`_build_tree` (the
negamax closures: the hot loop), :class:`_Root` (root moves and one iteration over them)
and :meth:`Searcher._deepen` (iterative deepening and its stopping rules).

Known simplification shared with most engines: a transposition-table score may come from a
different path (graph-history interaction), so repetition is exact along the searched path
but a table hit can hide it. The 50-ply clock is mixed into the hash whenever it could run
out within the remaining depth, so table hits never hide that rule.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from guti.rules import Board, Move
from guti.rules.movegen import capture_children, capture_sources, count_moves, step_children

from .evaluate import NO_MOVES, build_evaluator
from .history import repetition_counts
from .level import LevelSettings, level_settings
from .limits import SearchLimits, plan_time
from .scores import INF, MATE, MATE_BOUND, MAX_PLY
from .zobrist import BYTE_TABLES, CLOCK_KEYS, EXACT, LOWER, UPPER, TranspositionTable, zobrist_high

#: Nodes between looks at the clock, the stop flag and the node limit (~1 ms of search).
CHECK_EVERY = 32
MAX_DEPTH = 64


class _Abort(Exception):
    """Raised inside the tree when the clock, the node limit or ``stop`` ends the search."""


@dataclass
class Iteration:
    """One finished iteration, as reported in an ``info`` line."""

    depth: int
    seldepth: int
    score: int
    nodes: int
    time_ms: int
    pv: list[str]

    @property
    def nps(self) -> int:
        return self.nodes * 1000 // max(1, self.time_ms)


@dataclass
class SearchResult:
    """The outcome of :meth:`Searcher.search`; ``bestmove`` None on a finished position."""

    bestmove: str | None
    score: int | None = None
    depth: int = 0
    nodes: int = 0
    pv: list[str] | None = None


class Searcher:
    """Holds what outlives one search (table, history heuristic, options) and runs searches."""

    def __init__(self, hash_mb: int = 16, seed: int = 0, level: int = 20, overhead_ms: int = 30):
        self.tt = TranspositionTable(hash_mb)
        self.seed = seed
        self.level = level
        self.overhead_ms = overhead_ms
        self.history: dict[int, int] = {}
        self._evaluators: dict[str, Callable[[int, int], int]] = {}

    def set_hash(self, megabytes: int) -> None:
        self.tt.resize(megabytes)

    def new_game(self) -> None:
        """Forget everything learnt in the previous game."""
        self.tt.clear()
        self.history.clear()

    def _evaluator(self, board: Board) -> Callable[[int, int], int]:
        name = board.game.name
        if name not in self._evaluators:
            self._evaluators[name] = build_evaluator(board.game)
        return self._evaluators[name]

    # ------------------------------------------------------------------------------------

    def search(
        self,
        board: Board,
        limits: SearchLimits,
        on_info: Callable[[Iteration], None] | None = None,
        stop: threading.Event | None = None,
    ) -> SearchResult:
        """Search ``board`` within ``limits``; report each iteration to ``on_info``.

        Returns as soon as a limit is reached or ``stop`` is set, except that a
        ``go infinite`` search that runs out of depth waits for ``stop``.
        """
        start = limits.start if limits.start is not None else time.perf_counter()
        legal = board.legal_moves
        if not legal:
            return SearchResult(None)
        settings = level_settings(self.level)
        rng = random.Random(f"{self.seed}:{board.fen()}")
        budget = _Budget.plan(limits, settings, board.turn, self.overhead_ms, start)
        self.tt.new_search()
        tree = _build_tree(board, self._evaluator(board), self.tt, self.history, budget, stop)
        root = _Root(board, legal, rng, tree, full_width=not settings.full_strength)
        result = self._deepen(board, limits, budget, tree, root, on_info)
        if limits.infinite and stop is not None:
            stop.wait()  # go infinite: bestmove only after stop
        if root.full_width and root.last_scores:
            result.bestmove = self._weakened_choice(root.last_scores, settings, rng, legal)
        return result

    def _deepen(
        self,
        board: Board,
        limits: SearchLimits,
        budget: _Budget,
        tree: _Tree,
        root: _Root,
        on_info: Callable[[Iteration], None] | None,
    ) -> SearchResult:
        """Iterative deepening: one root search per depth until a limit or a forced result.

        An aborted iteration is thrown away, except at a weakened level's full-width root
        (there ``iteration_best`` is the best move found so far in it)."""
        best_text = root.moves[0][2]
        best_score: int | None = None
        best_pv: list[str] = [best_text]
        completed = 0
        single = len(root.moves) == 1
        for depth in range(1, budget.max_depth + 1):
            tree.new_iteration()
            try:
                score = root.search(depth)
            except _Abort:
                if root.iteration_best is not None and not root.full_width:
                    best_text, best_score = root.iteration_best
                    best_pv = [best_text]
                break
            completed = depth
            best_text, best_score = root.moves[0][2], score
            root.last_scores = dict(root.scores)
            best_pv = self._pv_strings(board, tree.pv_at[0]) or [best_text]
            now = time.perf_counter()
            nodes, seldepth = tree.stats()
            if on_info is not None:
                elapsed = int((now - budget.start) * 1000)
                on_info(Iteration(depth, seldepth, score, nodes, elapsed, best_pv))
            if limits.infinite:
                continue
            if budget.soft_at is not None and now >= budget.soft_at:
                break
            if single and limits.depth is None:
                break
            if abs(score) > MATE_BOUND and MATE - abs(score) <= depth:
                break  # a forced result no deeper search can change
        return SearchResult(best_text, best_score, completed, tree.stats()[0], best_pv)

    # ------------------------------------------------------------------------------------

    @staticmethod
    def _weakened_choice(scores: dict[str, int], settings: LevelSettings, rng: random.Random,
                         legal: list[Move]) -> str:
        """The move a weakened level plays: sometimes any legal move, else the best noisy score."""
        if rng.random() < settings.blunder:
            return str(rng.choice(legal))
        noisy: dict[str, int] = {}
        for text in sorted(scores):
            s = scores[text]
            if abs(s) <= MATE_BOUND:
                s += rng.randint(-settings.noise_cp, settings.noise_cp)
            noisy[text] = s
        return max(sorted(noisy), key=lambda t: noisy[t])

    @staticmethod
    def _pv_strings(board: Board, chain: PvChain) -> list[str]:
        """Move strings of a principal variation given as a chain of child positions."""
        out: list[str] = []
        work = board.copy()
        while chain is not None:
            (oa, ea), chain = chain
            own, enemy = (work.white, work.black) if work.turn == "w" else (work.black, work.white)
            found = None
            for move in work.legal_moves:
                src, dst = 1 << (move.path[0] - 1), 1 << (move.path[-1] - 1)
                if (own & ~src) | dst == oa and enemy & ~move.capture_mask == ea:
                    found = move
                    break
            if found is None:
                break
            work.push(found)
            out.append(str(found))
        return out


@dataclass(frozen=True)
class _Budget:
    """When and how deep one search may go: deadlines (perf_counter seconds), node limit."""

    start: float
    soft_at: float | None  # start no further iteration after this
    hard_at: float | None  # abort the iteration in progress at this
    node_limit: int | None
    max_depth: int

    @classmethod
    def plan(cls, limits: SearchLimits, settings: LevelSettings, side: str, overhead_ms: int,
             start: float) -> _Budget:
        plan = plan_time(limits, side, overhead_ms)
        max_depth = MAX_DEPTH if limits.depth is None else max(1, min(limits.depth, MAX_DEPTH))
        if settings.depth_cap is not None:
            max_depth = min(max_depth, settings.depth_cap)
        return cls(
            start=start,
            soft_at=None if plan.soft is None else start + plan.soft,
            hard_at=None if plan.hard is None else start + plan.hard,
            node_limit=limits.nodes if limits.nodes is not None and limits.nodes > 0 else None,
            max_depth=max_depth,
        )


#: A principal variation as a chain of child positions: ``((own, enemy), rest)`` or None.
PvChain = tuple[tuple[int, int], "PvChain"] | None


@dataclass
class _Tree:
    """The alpha-beta tree of one search, seen from outside: what the root and the
    deepening loop need from :func:`_build_tree`'s closures."""

    negamax: Callable[[int, int, int, int, int, int, int, int, int], int]
    stats: Callable[[], tuple[int, int]]  # (nodes, seldepth) so far
    new_iteration: Callable[[], None]  # seldepth starts again at 0
    pv_at: list[PvChain]
    reps: dict[int, int]  # repetition counts along the searched path
    size: int
    turn_bit: int


def _build_tree(
    board: Board,
    evaluate: Callable[[int, int], int],
    tt: TranspositionTable,
    history: dict[int, int],
    budget: _Budget,
    stop: threading.Event | None,
) -> _Tree:
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
    reps = repetition_counts(board)
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
            raise _Abort
        if hard_at is not None and perf_counter() >= hard_at:
            raise _Abort
        if node_limit is not None and nodes >= node_limit:
            raise _Abort
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

    return _Tree(negamax, stats, new_iteration, pv_at, reps, size, turn_bit)


class _Root:
    """The root moves (deduplicated child positions, most captures first, seeded order
    among equals) and the search over them at one depth.

    At full strength the root is a PVS window like the tree's; a weakened level
    searches every root move with a full window (``full_width``) so every move gets
    an exact score for :meth:`Searcher._weakened_choice`."""

    def __init__(self, board: Board, legal: list[Move], rng: random.Random, tree: _Tree,
                 full_width: bool) -> None:
        self.turn = 0 if board.turn == "w" else 1
        own, enemy = (board.white, board.black) if self.turn == 0 else (board.black, board.white)
        self.enemy = enemy
        self.clock = board.clock
        self.tree = tree
        self.full_width = full_width
        moves: list[tuple[int, int, str]] = []
        seen: set[tuple[int, int]] = set()
        for move in legal:
            src, dst = 1 << (move.path[0] - 1), 1 << (move.path[-1] - 1)
            child = ((own & ~src) | dst, enemy & ~move.capture_mask)
            if child not in seen:
                seen.add(child)
                moves.append((child[0], child[1], str(move)))
        rng.shuffle(moves)  # seeded tie-break among equal moves
        moves.sort(key=lambda item: item[1].bit_count())  # most pieces taken first
        self.moves = moves
        self.scores: dict[str, int] = {}  # this iteration's score per move
        self.last_scores: dict[str, int] = {}  # the last completed iteration's
        self.iteration_best: tuple[str, int] | None = None

    def search(self, depth: int) -> int:
        """One iteration: score every root move; the best moves to the front."""
        tree, negamax, reps = self.tree, self.tree.negamax, self.tree.reps
        size, turn_bit, turn0, clock0, enemy0 = tree.size, tree.turn_bit, self.turn, self.clock, self.enemy
        full_width = self.full_width
        self.iteration_best = None
        alpha, beta = -INF, INF
        best, best_i = -INF, 0
        for i, (oa, ea, text) in enumerate(self.moves):
            ck = (oa | (ea << size) | turn_bit) if turn0 == 0 else (ea | (oa << size))
            reps[ck] = reps.get(ck, 0) + 1
            cclock = clock0 + 1 if ea == enemy0 else 0
            if i == 0 or full_width:
                s = -negamax(ea, oa, depth - 1, -INF if full_width else -beta,
                             INF if full_width else -alpha, 1, cclock, ck, turn0 ^ 1)
            else:
                s = -negamax(ea, oa, depth - 1, -alpha - 1, -alpha, 1, cclock, ck, turn0 ^ 1)
                if s > alpha:
                    s = -negamax(ea, oa, depth - 1, -beta, -alpha, 1, cclock, ck, turn0 ^ 1)
            reps[ck] -= 1
            self.scores[text] = s
            if s > best:
                best, best_i = s, i
                if s > alpha:
                    alpha = s
                    self.iteration_best = (text, s)
                    tree.pv_at[0] = ((oa, ea), tree.pv_at[1])
        self.moves.insert(0, self.moves.pop(best_i))
        return best
