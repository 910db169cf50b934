"""The edge cases protocol.md 5.6 decides, through the reference engine's pipes.

Why: a stranger writing an engine from protocol.md alone could not tell what a bare ``go``
means, whether a bad ``go`` argument drops the whole command, or when ``readyok`` follows
``go perft``. protocol.md now says; these tests hold the reference engine to it, so the
document and the engine cannot drift apart.
"""

from __future__ import annotations

import pytest

from tests.conftest import ENGINE_ARGV, UgiProgram
from tests.perft_reference import load_perft_tables, load_start_fens


@pytest.fixture
def engine():
    eng = UgiProgram(ENGINE_ARGV)
    eng.handshake()
    yield eng
    eng.close()


def _search_until_depth(engine: UgiProgram, depth: int) -> list[str]:
    """Lines up to the first ``info depth D`` with D >= ``depth``; fails on a bestmove first."""
    seen: list[str] = []
    while True:
        line = engine.read()
        seen.append(line)
        assert not line.startswith("bestmove"), f"search ended before depth {depth}: {seen}"
        words = line.split()
        if words[:2] == ["info", "depth"] and int(words[2]) >= depth:
            return seen


def test_bare_go_searches_until_stop(engine):
    engine.send("position startpos")
    engine.send("go")
    _search_until_depth(engine, 3)  # went past depth 1: no limit ended it
    engine.send("stop")
    lines = engine.read_until("bestmove")
    assert lines[-1].split()[1] in {"13-12", "14-12", "15-12"}


def test_infinite_wins_over_depth(engine):
    engine.send("position startpos")
    engine.send("go infinite depth 1")
    _search_until_depth(engine, 1)
    # Depth 1 is done, and the bestmove still waits for stop.
    assert not any(x.startswith("bestmove") for x in engine.ask("isready"))
    engine.send("stop")
    lines = engine.read_until("bestmove")
    assert lines[-1].split()[1] in {"13-12", "14-12", "15-12"}


@pytest.mark.parametrize("bad", ["go depth abc", "go movetime", "go depth 3 frobnicate 2"])
def test_bad_go_argument_rejects_the_whole_command(engine, bad):
    engine.send("position startpos")
    lines = engine.ask(bad)
    assert len(lines) == 1 and lines[0].startswith("info string error go"), lines
    # No search was started: a stop has nothing to end, and no bestmove ever comes.
    assert engine.ask("stop") == []


@pytest.mark.parametrize("move", ["99-12", "0-12", "09-12", "12-"])
def test_moves_naming_no_point_are_rejected_whole(engine, move):
    engine.send("position startpos moves 13-12")
    before = [x for x in engine.ask("d") if x.startswith("fen ")]
    lines = engine.ask(f"position startpos moves {move}")
    assert len(lines) == 1 and lines[0].startswith("info string error position: move 1"), lines
    assert [x for x in engine.ask("d") if x.startswith("fen ")] == before  # old position kept
    assert before != [f"fen {load_start_fens()['egara-guti']}"]


@pytest.mark.parametrize(
    "fen",
    [
        "bbbbb/bbb/bbb/01/www/www/wwwww w 0 1",
        "bbbbb/bbb/bbb/1/www/www/wwwww w 00 1",
        "bbbbb/bbb/bbb/1/www/www/wwwww w 0 07",
        "bbbbb/bbb/bbb/1/www/www/wwwww w 1000000000 1",
    ],
)
def test_leading_zeros_and_too_large_numbers_in_fen_are_errors(engine, fen):
    lines = engine.ask(f"position fen {fen}")
    assert len(lines) == 1 and lines[0].startswith("info string error position"), lines


def test_largest_fen_numbers_are_accepted(engine):
    fen = "bbbbb/bbb/bbb/1/www/www/wwwww w 49 999999999"
    assert engine.ask(f"position fen {fen}") == []
    assert f"fen {fen}" in engine.ask("d")


def test_variant_values_ignore_case_and_setting_again_resets(engine):
    start = load_start_fens()["pretwa"]
    assert engine.ask("setoption name UGI_Variant value Pretwa") == []
    engine.send("position startpos moves 5-1")
    assert engine.ask("setoption name UGI_Variant value pretwa") == []
    assert f"fen {start}" in engine.ask("d")


def test_readyok_after_go_perft_follows_its_lines(engine):
    engine.send("position startpos")
    depth = 9  # long enough that an early readyok would come first
    lines = engine.ask(f"go perft {depth}", timeout=60)
    assert lines[-1] == f"nodes {load_perft_tables()['egara-guti'][depth]}"
    assert len(lines) == 4  # three first moves, then the total


def test_readyok_during_a_search_comes_at_once(engine):
    engine.send("position startpos")
    engine.send("go infinite")
    lines = engine.ask("isready")  # answered while the search goes on
    assert not any(x.startswith("bestmove") for x in lines)
    engine.send("stop")
    engine.read_until("bestmove")


def test_movestogo_is_accepted(engine):
    engine.send("position startpos")
    engine.send("go p1time 2000 p2time 2000 movestogo 1")
    lines = engine.read_until("bestmove", timeout=10)
    assert not any(x.startswith("info string error") for x in lines), lines
