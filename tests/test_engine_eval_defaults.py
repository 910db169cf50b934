"""The reference engine's per-game evaluation defaults.

Why: Gol-skuish is scored by material, the end rules and hanging pieces alone unless a
weight is set (the other positional terms lost games there), while the other games keep
every term; a weight set by ``setoption`` must still apply to Gol-skuish, or tuning it
would be impossible.
"""

from __future__ import annotations

import io
import random

from guti.engine.search.evaluate import (
    DEFAULT_WEIGHTS,
    NO_MOVES,
    default_weights,
    material_score,
)
from guti.engine.search.searcher import Searcher
from guti.engine.ugi import EngineSession, Output
from guti.rules import Board
from guti.rules.movegen import capture_sources


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


def material_and_hanging(boards: tuple[Board, Board]) -> list[int]:
    """Gol-skuish's default score of ``boards`` (equal material, White as if to move):
    only Black's pieces that could jump count, at the default ``EvalHanging`` each."""
    hanging = DEFAULT_WEIGHTS["EvalHanging"]
    return [-hanging * capture_sources(b.game.geometry, b.black, b.white).bit_count()
            for b in boards]


def test_gol_skuish_is_scored_by_material_and_hanging_pieces_unless_a_weight_is_set() -> None:
    assert default_weights("gol-skuish") == {**dict.fromkeys(DEFAULT_WEIGHTS, 0),
                                             "EvalHanging": DEFAULT_WEIGHTS["EvalHanging"]}
    boards = two_placements("gol-skuish")
    expected = material_and_hanging(boards)
    assert scores(Searcher(), boards) == expected  # placement and mobility do not count
    tuned = Searcher()
    tuned.set_weight("EvalPlacement", 40)
    assert scores(tuned, boards) != expected


def test_the_other_games_keep_the_declared_defaults() -> None:
    for game in ("egara-guti", "pretwa", "lau-kata-kati", "dash-guti", "alquerque",
                 "butterfly"):
        assert default_weights(game) == DEFAULT_WEIGHTS
    first, second = scores(Searcher(), two_placements("egara-guti"))
    assert first != second  # placement and mobility tell them apart


def engine_scores(commands: list[str], boards: tuple[Board, Board]) -> list[int]:
    """The scores the engine's own searcher gives ``boards`` after the UGI ``commands``."""
    engine = EngineSession(Output(io.StringIO()))
    for line in commands:
        engine.handle(line)
    return scores(engine.searcher(), boards)


def test_the_engine_keeps_the_game_defaults_until_a_weight_is_set() -> None:
    """Through the UGI engine, whose options all have declared defaults: only a weight
    given by ``setoption`` replaces a game's own default."""
    boards = two_placements("gol-skuish")
    variant = "setoption name UGI_Variant value gol-skuish"
    expected = material_and_hanging(boards)
    assert engine_scores([variant], boards) == expected
    assert engine_scores([variant, "setoption name EvalPlacement value 40"], boards) != expected
    first, second = engine_scores(["ugi"], two_placements("egara-guti"))
    assert first != second



def material_and_hanging_searcher() -> Searcher:
    searcher = Searcher()
    for name in ("EvalMobility", "EvalBlocked", "EvalPlacement", "EvalCentre"):
        searcher.set_weight(name, 0)
    searcher.set_weight("EvalHanging", 18)
    return searcher


def test_the_material_and_hanging_evaluation_over_random_play() -> None:
    """With placement, mobility and blocked pieces at 0 the evaluation takes its own, shorter
    path; over the quiet positions of random play it must still be a piece each (and the
    end-rule bonus of a side ahead) and ``EvalHanging`` per enemy piece that could jump."""
    rng = random.Random(3)
    for game in ("egara-guti", "gol-skuish"):
        evaluate = material_and_hanging_searcher()._evaluator(Board(game))
        board = Board(game)
        for _ in range(400):
            if board.outcome() is not None:
                board = Board(game)
            own, enemy = (board.white, board.black) if board.turn == "w" else (board.black, board.white)
            geo = board.game.geometry
            if capture_sources(geo, own, enemy):  # only quiet positions are evaluated
                board.push(rng.choice(board.legal_moves))
                continue
            material = material_score(board.game.few_pieces_limit or 0, own.bit_count(),
                                       enemy.bit_count())
            hanging = 18 * capture_sources(geo, enemy, own).bit_count()
            assert evaluate(own, enemy) == material - hanging
            board.push(rng.choice(board.legal_moves))


def test_the_material_and_hanging_evaluation_sees_a_side_without_a_step() -> None:
    # Black's only piece is on 1 (neighbours 2 and 6), White holds 2, 3, 6 and 9: Black can
    # neither step nor jump, and loses (end rule 2) whatever the material.
    board = Board("egara-guti", "bww2/1w1/w2/1/3/3/5 w 0 1")
    board.push(next(m for m in board.legal_moves if str(m) == "7-6"))
    evaluate = material_and_hanging_searcher()._evaluator(board)
    assert evaluate(board.black, board.white) == NO_MOVES
