"""The fields of an engine's ``info`` lines, as the referee keeps them per move."""

from __future__ import annotations

import pytest

from guti.referee.ugi.lines import GoReply
from guti.referee.ugi.search_info import Score, SearchInfo


def test_all_fields_are_read() -> None:
    info = SearchInfo.parse("info depth 12 seldepth 15 score cp -25 nodes 1000 nps 5000 time 200 pv 1-2")
    assert info == SearchInfo(Score("cp", -25), 12, 15, 1000, 5000, 200)


@pytest.mark.parametrize("line", ["info string depth 3 score cp 5", "info", "info pv 1-2", "bestmove 1-2",
                                  "info currmove 1-2 pv 3-4 depth 5"])
def test_lines_without_search_fields_give_none(line: str) -> None:
    assert SearchInfo.parse(line) is None


@pytest.mark.parametrize("line", ["info depth x score cp y", f"info depth {'9' * 16}",
                                  "info score mate 3", "info score", "info depth"])
def test_a_search_field_that_cannot_be_read_is_absent_but_the_line_counts(line: str) -> None:
    assert SearchInfo.parse(line) == SearchInfo()


def test_an_unreadable_score_is_no_score_not_the_one_before() -> None:
    """The engine's last word was a score guti cannot read: the move has no score (which
    adjudication counts as such), not the earlier one the engine went back on."""
    lines = ["info depth 1 score cp -1000 pv 1-2", "info score mate 3", "bestmove 1-2"]
    assert GoReply.read(lines, 0.0, 0.1).search == SearchInfo()
    lines = ["info depth 1 score cp -1000", "info depth 2 score cp banana", "bestmove 1-2"]
    assert GoReply.read(lines, 0.0, 0.1).search == SearchInfo(depth=2)


def test_forced_results_are_beyond_any_threshold() -> None:
    win, loss = Score("win", 7), Score("loss", 3)
    assert win.at_least(10**9) and not win.within(10**9) and loss.at_most(-(10**9))
    assert (str(win), str(loss), str(Score("cp", 25))) == ("+W7", "-L3", "+0.25")


def test_reply_keeps_the_last_info_with_fields_before_bestmove() -> None:
    lines = ["info depth 1 score cp 3", "info depth 2 score win 5 pv 1-2", "info string done", "bestmove 1-2"]
    reply = GoReply.read(lines, 0.0, 0.1)
    assert reply.search == SearchInfo(Score("win", 5), depth=2)
    assert GoReply.read(["bestmove 1-2"], 0.0, 0.1).search is None


def test_json_round_trip() -> None:
    info = SearchInfo(Score("loss", 4), depth=9, time=31)
    assert SearchInfo.from_json(info.to_json()) == info
