"""Questions protocol.md left open to an engine written from it alone, through the pipes.

Why: a stranger's engine, written in another language from protocol.md only, found
places where the text allowed two readings (or the reference engine did something else).
protocol.md now settles each in one sentence; these tests hold the reference engine
(``python -m guti.engine``) to that sentence, so document and engine cannot drift apart.
"""

from __future__ import annotations

import re

import pytest

from guti.rules import GAMES
from tests.conftest import ENGINE_ARGV, ROOT, UgiProgram
from tests.test_protocol_decisions import _search_until_depth


def test_bestmove_comes_before_readyok_after_stop(engine):
    """5.2: ``isready`` is answered after everything sent before, ``stop`` included."""
    engine.send("position startpos")
    engine.send("go infinite")
    _search_until_depth(engine, 3)  # deep in the tree, not about to finish
    engine.send(b"stop\nisready")  # one write: the engine reads both at once
    lines = engine.read_until(lambda line: line == "readyok")[:-1]
    assert [x for x in lines if x.startswith("bestmove")], lines
    assert lines[-1].startswith("bestmove"), lines


@pytest.mark.parametrize("bad", ["go depth 0", "go depth -1", "go nodes 0", "go nodes -5",
                                 "go movestogo 0", "go movestogo -1",
                                 "go p1time 1000 p2time 1000 movestogo 0"])
def test_depth_nodes_and_movestogo_below_one_reject_the_go(engine, bad):
    engine.send("position startpos")
    lines = engine.ask(bad)
    assert len(lines) == 1 and lines[0].startswith("info string error go"), lines
    assert engine.ask("stop") == []  # no search was started


def test_a_rejected_command_during_a_search_leaves_it_running(engine):
    engine.send("position startpos")
    engine.send("go infinite")
    _search_until_depth(engine, 1)
    for bad in ("position fen nonsense w", "go depth abc", "setoption name Hash value 0",
                "query colour", "frobnicate"):
        engine.send(bad)
    lines = engine.sync()
    assert not [x for x in lines if x.startswith("bestmove")], lines
    assert len([x for x in lines if x.startswith("info string ")]) >= 5
    engine.send("stop")
    assert engine.read_until("bestmove")[-1].split()[1] in {"13-12", "14-12", "15-12"}


@pytest.mark.parametrize("moves, clock", [("", "p2time 1 p2inc 0"), ("13-12", "p1time 1"),
                                          ("14-12", "p1inc 5 p2inc 5 movestogo 3")])
def test_only_the_other_sides_clock_is_no_limit(engine, moves, clock):
    """Only the other side's clock (or only increments): a go without a limit, so infinite;
    even a position with one legal move waits for ``stop``."""
    engine.send(f"position startpos moves {moves}".rstrip())
    engine.send(f"go {clock}")
    _search_until_depth(engine, 1 if moves else 4)  # 4: past what a 1 ms clock allows
    assert not [x for x in engine.sync() if x.startswith("bestmove")]
    engine.send("stop")
    engine.read_until("bestmove")


@pytest.mark.parametrize("ender", ["stop", "quit"])
def test_stop_and_quit_interrupt_go_perft(ender):
    eng = UgiProgram(ENGINE_ARGV)
    try:
        eng.handshake()
        eng.send("position startpos")
        eng.send("go perft 40")
        eng.send(ender)
        if ender == "quit":
            assert eng.proc.wait(10) == 0
            return
        lines = eng.sync()
        assert not [x for x in lines if x.startswith("nodes")], lines
        assert lines == ["info string perft stopped"], lines
    finally:
        eng.close()


@pytest.mark.parametrize("fen", ["bbbbb/bbb/bbb/1/www/www/14 w", "bbbbb/bbb/bbb/1/www/www/w13 w"])
def test_consecutive_digits_are_one_number(engine, fen):
    """4.2: ``14`` is a run of fourteen, never a run of one then a run of four."""
    lines = engine.ask(f"position fen {fen}")
    assert len(lines) == 1 and lines[0].startswith("info string error position"), lines


def test_unknown_command_echo_replaces_control_and_bad_bytes(engine):
    lines = engine.ask(b"frob\x01\x1b[31m\xff\xc3( end")
    assert lines == ["info string unknown command frob??[31m\ufffd\ufffd( end"]


def test_unknown_command_echo_is_cut_at_200_characters(engine):
    lines = engine.ask("x" * 500)
    echo = lines[0].removeprefix("info string unknown command ")
    assert len(lines) == 1 and len(echo) == 200 and echo.endswith("...")


def test_score_win_counts_plies_to_a_win_by_any_end_rule(engine):
    """5.3: White wins by the fifty-ply rule (more pieces) with its next ply: ``win 1``."""
    engine.send("position fen 4b/3/3/1/3/3/ww3 w 49 30")
    engine.send("go depth 3")
    lines = engine.read_until("bestmove")
    scores = [x.split(" score ")[1].split()[:2] for x in lines if " score " in x]
    assert scores and scores[-1] == ["win", "1"], lines


def test_combo_values_ignore_case(engine):
    assert engine.ask("setoption name ugi_variant value PreTWA") == []
    assert "fen 1/bbwwwb/bbwwwb/bbwwwb w 0 1" in engine.ask("d")


def test_uci_clock_names_are_unknown_go_arguments(engine):
    """5.2: guti never sends ``wtime``/``btime``; an engine need not know them."""
    engine.send("position startpos")
    lines = engine.ask("go wtime 1000 btime 1000")
    assert len(lines) == 1 and lines[0].startswith("info string error go"), lines


def test_each_board_page_states_its_edges_and_directed_jumps():
    """2.3: edges are counted once per pair, jump triples once per direction."""
    for name, game in GAMES.items():
        page = "lau-kata-kati" if name == "butterfly" else name  # one board, and says so
        text = " ".join((ROOT / "docs" / "rules" / f"{page}.md").read_text().split())
        edges = re.search(r"\*\*(\d+) edges\*\*", text)
        jumps = re.search(r"(\d+) jump triples", text)
        assert edges and jumps, f"{name}: the page states no edge or jump count"
        assert int(edges.group(1)) == sum(m.bit_count() for m in game.geometry.adjacent) // 2, name
        assert int(jumps.group(1)) == sum(len(j) for j in game.geometry.jumps_from), name
