"""The search: iterative deepening over the alpha-beta tree, and what it reports.

:class:`Searcher` holds what outlives one search (the transposition table, the history
heuristic, the options); each search plans its :class:`~.limits.Budget`, builds the tree
(:func:`.tree.build_tree`, the hot loop), orders the root moves (:class:`.root.RootMoves`)
and deepens one iteration at a time until a limit or a forced result (:meth:`Searcher._deepen`).
Move strings are only made at the root and for the principal variation.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .evaluate import build_evaluator
from .level import LevelSettings, level_settings
from .limits import Budget, SearchLimits
from .root import RootMoves, child_of
from .scores import MATE, MATE_BOUND
from .tree import PvChain, SearchAborted, Tree, build_tree
from .zobrist import TranspositionTable

if TYPE_CHECKING:
    from guti.rules import Board, Move


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
        self.weights: dict[str, int] = {}  # evaluation weights changed from their defaults

    def set_weight(self, name: str, value: int) -> None:
        """Change one evaluation weight (``EvalMobility``, ...); the evaluators are rebuilt."""
        self.weights[name] = value
        self._evaluators.clear()

    def set_hash(self, megabytes: int) -> None:
        self.tt.resize(megabytes)

    def new_game(self) -> None:
        """Forget everything learnt in the previous game."""
        self.tt.clear()
        self.history.clear()

    def _evaluator(self, board: Board) -> Callable[[int, int], int]:
        name = board.game.name
        if name not in self._evaluators:
            self._evaluators[name] = build_evaluator(board.game, self.weights)
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
        budget = Budget.plan(limits, settings, board.turn, self.overhead_ms, start)
        self.tt.new_search()
        tree = build_tree(board, self._evaluator(board), self.tt, self.history, budget, stop)
        root = RootMoves(board, legal, rng, tree, full_width=not settings.full_strength)
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
        budget: Budget,
        tree: Tree,
        root: RootMoves,
        on_info: Callable[[Iteration], None] | None,
    ) -> SearchResult:
        """Iterative deepening: one root search per depth until a limit or a forced result.

        An aborted iteration is thrown away, except at full strength, where the best
        move found so far in it is played (``iteration_best``; the previous iteration's
        best is searched first). A weakened level's full-width root throws it away: its
        choice comes from the last complete iteration's scores."""
        best_text = root.moves[0][2]
        best_score: int | None = None
        best_pv: list[str] = [best_text]
        completed = 0
        single = len(root.moves) == 1
        for depth in range(1, budget.max_depth + 1):
            tree.new_iteration()
            try:
                score = root.search(depth)
            except SearchAborted:
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
                if child_of(own, enemy, move) == (oa, ea):
                    found = move
                    break
            if found is None:
                break
            work.push(found)
            out.append(str(found))
        return out
