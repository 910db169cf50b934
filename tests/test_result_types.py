"""The typed results: one spelling per side, ending and result, shared by rules and referee."""

from __future__ import annotations

import pytest

from guti.referee.game.pdn import format_game
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.ugi.lines import RESULT_WORDS, result_word
from guti.rules import Board, Result, RulesError, Side, Termination


def test_outcome_is_typed_and_spelt_as_before():
    board = Board.from_fen("egara-guti", "bbbbb/bbb/bbb/1/3/3/5 w 0 1")
    out = board.outcome()
    assert out is not None
    assert out.reason is Termination.NO_LEGAL_MOVE and out.winner is Side.BLACK
    assert out.result is Result.BLACK_WINS
    assert (str(out.result), str(out.reason)) == ("0-1", "no legal move")
    assert result_word(board) == "p2win"
    assert board.turn is Side.WHITE and str(board.turn) == "w"


def test_result_from_sides():
    assert [Result.win_for(s).value for s in (Side.WHITE, Side.BLACK, None)] == ["1-0", "0-1", "1/2-1/2"]
    assert Result.loss_for(Side.WHITE) is Result.BLACK_WINS
    assert [RESULT_WORDS[r] for r in Result] == ["p1win", "p2win", "draw", "none"]
    assert Result.DRAW.winner is None and Result.WHITE_WINS.winner is Side.WHITE
    assert Side.BLACK.other is Side.WHITE and Side.BLACK.label == "Black"


def test_reason_rule_endings_are_the_rules_terminations():
    rule = {r for r in Reason if r.is_rule}
    assert {r.value for r in rule} == {t.value for t in Termination}
    for t in Termination:
        assert Reason.from_termination(t).termination is t
    assert Reason.STALLED.termination is None


def test_illegal_move_after_the_end_names_the_rule():
    board = Board.from_fen("egara-guti", "b4/3/3/1/3/3/ww3 w 50 30")
    with pytest.raises(RulesError, match=r"the game is over \(fifty plies\)"):
        board.parse_move("19-20")


def test_record_read_back_from_text_gets_the_types():
    record = GameRecord(game="egara-guti", white="A", black="B", result="0-1",
                        reason=Reason.DISCONNECT, fault="w", first_side="b")
    assert record.result is Result.BLACK_WINS and record.fault is Side.WHITE
    assert record.first_side is Side.BLACK and record.winner == "B"
    assert "[Result \"0-1\"]" in format_game(record)
