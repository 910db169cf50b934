"""The reference engine's root window (aspiration windows), in process.

Why: from depth 4 the engine searches the root within a narrow window around the last
score and searches again wider when the score falls outside it. That is only sound if a
root search within a window returns a bound on the right side when the true score lies
outside it, and the exact score when it lies inside; and the whole scheme must not change
the move the engine chooses. And since the window makes the search depend on the last
score, ``guti bench`` must still be a deterministic signature of the search.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from guti.engine.bench import POSITIONS
from guti.engine.search import searcher as searcher_module
from guti.engine.search.evaluate import build_evaluator
from guti.engine.search.level import level_settings
from guti.engine.search.limits import Budget, SearchLimits
from guti.engine.search.root import RootMoves
from guti.engine.search.tree import build_tree
from guti.engine.search.zobrist import TranspositionTable
from guti.rules import Board
from tests.conftest import ROOT


def fresh_root(board: Board) -> RootMoves:
    """A root over a fresh table and history, no deadline."""
    budget = Budget.plan(SearchLimits(depth=8), level_settings(20), board.turn, 0, 0.0)
    tree = build_tree(board, build_evaluator(board.game), TranspositionTable(1), {}, budget,
                      None)
    return RootMoves(board, board.legal_moves, random.Random(0), tree, full_width=False)


@pytest.mark.parametrize(("game", "fen"), POSITIONS[:8])
def test_a_window_gives_a_bound_outside_and_the_score_inside(game: str, fen: str) -> None:
    board = Board(game, fen)
    exact = fresh_root(board).search(4)
    assert fresh_root(board).search(4, exact + 20, exact + 60) <= exact + 20  # fails low
    assert fresh_root(board).search(4, exact - 60, exact - 20) >= exact - 20  # fails high
    assert fresh_root(board).search(4, exact - 20, exact + 20) == exact


@pytest.mark.parametrize(("game", "fen"), POSITIONS[:8])
def test_aspiration_keeps_the_move_of_a_full_window_search(
        game: str, fen: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def best(window: int) -> str | None:
        monkeypatch.setattr(searcher_module, "ASPIRATION", window)
        return searcher_module.Searcher().search(Board(game, fen), SearchLimits(depth=6)).bestmove

    assert best(searcher_module.ASPIRATION) == best(1_000_000)


def test_bench_is_a_deterministic_signature() -> None:
    """``guti bench`` through the real command, twice: the same moves, scores and node
    counts (the search has no clock in it), whatever the machine's speed."""
    def bench() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "guti.referee.cli.main", "bench", "5"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len([x for x in lines if x.startswith("position ")]) == len(POSITIONS)
        return [x for x in lines if x.startswith("position ")] + [lines[-1].split(" nps ")[0]]

    assert bench() == bench()
