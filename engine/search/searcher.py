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

from engine.rules import Board
from engine.rules.movegen import capture_children, capture_sources, count_moves, step_children

from .evaluate import NO_MOVES, build_evaluator
from .history import repetition_counts
from .level import level_settings
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
        perf_counter = time.perf_counter
        start = limits.start if limits.start is not None else perf_counter()
        legal = board.legal_moves
        if not legal:
            return SearchResult(None)

        game = board.game
        geo = game.geometry
        size = geo.size
        few = game.few_pieces_limit or 0
        fifty = game.no_capture_plies
        repetitions = game.repetitions
        evaluate = self._evaluator(board)
        settings = level_settings(self.level)
        rng = random.Random(f"{self.seed}:{board.fen()}")

        turn0 = 0 if board.turn == "w" else 1
        own0, enemy0 = (board.white, board.black) if turn0 == 0 else (board.black, board.white)
        clock0 = board.clock
        turn_bit = 1 << (2 * size)
        wide_keys = 2 * size + 1 > 48  # keys past the six inline Zobrist bytes
        reps = repetition_counts(board)
        reps_get = reps.get

        tt = self.tt
        tt.new_search()
        slots = tt.slots
        tt_mask = tt.mask
        age = tt.age
        z0, z1, z2, z3, z4, z5 = BYTE_TABLES
        clock_keys = CLOCK_KEYS
        history = self.history
        hist_get = history.get
        killers = [[0, 0] for _ in range(MAX_PLY + 2)]
        pv_at: list[tuple | None] = [None] * (MAX_PLY + 2)

        plan = plan_time(limits, board.turn, self.overhead_ms)
        hard_at = None if plan.hard is None else start + plan.hard
        soft_at = None if plan.soft is None else start + plan.soft
        node_limit = limits.nodes if limits.nodes is not None and limits.nodes > 0 else None
        max_depth = MAX_DEPTH if limits.depth is None else max(1, min(limits.depth, MAX_DEPTH))
        if settings.depth_cap is not None:
            max_depth = min(max_depth, settings.depth_cap)

        nodes = 0
        seldepth = 0
        next_check = CHECK_EVERY if node_limit is None else min(CHECK_EVERY, node_limit)

        def checkpoint() -> None:
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

        # --- the root ---------------------------------------------------------------------
        root: list[tuple[int, int, str]] = []
        seen: set[tuple[int, int]] = set()
        for move in legal:
            src, dst = 1 << (move.path[0] - 1), 1 << (move.path[-1] - 1)
            child = ((own0 & ~src) | dst, enemy0 & ~move.capture_mask)
            if child not in seen:
                seen.add(child)
                root.append((child[0], child[1], str(move)))
        rng.shuffle(root)  # seeded tie-break among equal moves
        root.sort(key=lambda item: item[1].bit_count())  # most pieces taken first
        full_width = not settings.full_strength
        root_scores: dict[str, int] = {}
        iteration_best: tuple[str, int] | None = None

        def root_search(depth: int) -> int:
            nonlocal iteration_best
            iteration_best = None
            alpha, beta = -INF, INF
            best, best_i = -INF, 0
            for i, (oa, ea, text) in enumerate(root):
                ck = (oa | (ea << size) | turn_bit) if turn0 == 0 else (ea | (oa << size))
                reps[ck] = reps_get(ck, 0) + 1
                cclock = clock0 + 1 if ea == enemy0 else 0
                if i == 0 or full_width:
                    s = -negamax(ea, oa, depth - 1, -INF if full_width else -beta,
                                 INF if full_width else -alpha, 1, cclock, ck, turn0 ^ 1)
                else:
                    s = -negamax(ea, oa, depth - 1, -alpha - 1, -alpha, 1, cclock, ck, turn0 ^ 1)
                    if s > alpha:
                        s = -negamax(ea, oa, depth - 1, -beta, -alpha, 1, cclock, ck, turn0 ^ 1)
                reps[ck] -= 1
                root_scores[text] = s
                if s > best:
                    best, best_i = s, i
                    if s > alpha:
                        alpha = s
                        iteration_best = (text, s)
                        pv_at[0] = ((oa, ea), pv_at[1])
            root.insert(0, root.pop(best_i))
            return best

        best_text = root[0][2]
        best_score: int | None = None
        best_pv: list[str] = [best_text]
        completed = 0
        last_scores: dict[str, int] = {}
        single = len(root) == 1
        for depth in range(1, max_depth + 1):
            seldepth = 0
            try:
                score = root_search(depth)
            except _Abort:
                if iteration_best is not None and not full_width:
                    best_text, best_score = iteration_best
                    best_pv = [best_text]
                break
            completed = depth
            best_text, best_score = root[0][2], score
            last_scores = dict(root_scores)
            best_pv = self._pv_strings(board, pv_at[0]) or [best_text]
            now = perf_counter()
            if on_info is not None:
                on_info(Iteration(depth, seldepth, score, nodes, int((now - start) * 1000), best_pv))
            if limits.infinite:
                continue
            if soft_at is not None and now >= soft_at:
                break
            if single and limits.depth is None:
                break
            if abs(score) > MATE_BOUND and MATE - abs(score) <= depth:
                break  # a forced result no deeper search can change

        if limits.infinite and stop is not None:
            stop.wait()  # go infinite: bestmove only after stop

        if full_width and last_scores:
            best_text = self._weakened_choice(last_scores, settings, rng, legal)
        return SearchResult(best_text, best_score, completed, nodes, best_pv)

    # ------------------------------------------------------------------------------------

    @staticmethod
    def _weakened_choice(scores: dict[str, int], settings, rng: random.Random, legal) -> str:
        """The move a weakened level plays: sometimes any legal move, else the best noisy score."""
        if rng.random() < settings.blunder:
            return str(rng.choice(legal))
        noisy = {}
        for text in sorted(scores):
            s = scores[text]
            if abs(s) <= MATE_BOUND:
                s += rng.randint(-settings.noise_cp, settings.noise_cp)
            noisy[text] = s
        return max(sorted(noisy), key=lambda t: noisy[t])

    @staticmethod
    def _pv_strings(board: Board, chain: tuple | None) -> list[str]:
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
