"""The reference engine's per-game evaluation defaults.

Why: Gol-skuish is scored by material and the end rules alone unless a weight is set (the
positional terms lost games there), while the other games keep every term; a weight set
by ``setoption`` must still apply to Gol-skuish, or tuning it would be impossible.
"""

from __future__ import annotations

from guti.engine.search.evaluate import DEFAULT_WEIGHTS, default_weights
from guti.engine.search.searcher import Searcher
from guti.rules import Board


def two_placements(game: str) -> tuple[Board, Board]:
    """Two positions one ply from the start: same material, pieces placed differently."""
    start = Board(game)
    first, second = start.copy(), start.copy()
    moves = start.legal_moves
    first.push(moves[0])
    second.push(moves[1])
    assert first.fen() != second.fen() and first.count("w") == second.count("w")
    return first, second


def scores(searcher: Searcher, boards: tuple[Board, Board]) -> list[int]:
    return [searcher._evaluator(b)(b.white, b.black) for b in boards]  # White as if to move


def test_gol_skuish_is_scored_by_material_unless_a_weight_is_set() -> None:
    assert set(default_weights("gol-skuish").values()) == {0}
    boards = two_placements("gol-skuish")
    material = scores(Searcher(), boards)
    assert material[0] == material[1] == 0  # equal material, nothing else counts
    tuned = Searcher()
    tuned.set_weight("EvalPlacement", 40)
    assert scores(tuned, boards) != material


def test_the_other_games_keep_the_declared_defaults() -> None:
    for game in ("egara-guti", "pretwa", "lau-kata-kati", "dash-guti", "alquerque",
                 "butterfly"):
        assert default_weights(game) == DEFAULT_WEIGHTS
    first, second = scores(Searcher(), two_placements("egara-guti"))
    assert first != second  # placement and mobility tell them apart
