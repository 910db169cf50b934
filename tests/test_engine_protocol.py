"""The reference engine as a process: handshake, go perft, queries, errors, stop, EOF.

Why: protocol.md is a contract between processes; these tests speak it through the pipes
of a freshly started ``python -m guti.engine``, exactly as the referee and consoles do.
Expected figures come from the reference figures in tests/data (via ``perft_reference``) and from
positions worked out by hand from protocol.md's rules and example sessions.
"""

from __future__ import annotations

import subprocess

import pytest

from guti.rules import GAMES, Board
from guti.rules.names import GAME_NAMES
from tests.conftest import ENGINE_ARGV, GUTI, ROOT, UgiProgram
from tests.perft_reference import (
    load_capture_positions,
    load_divides,
    load_perft_tables,
)

PERFT_BUDGET = 20_000  # default run: depths whose node count stays under this


def select(eng: UgiProgram, game: str) -> None:
    eng.ask(f"setoption name UGI_Variant value {game}")
    eng.ask("uginewgame")


def perft_lines(eng: UgiProgram, depth: int) -> tuple[dict[str, int], int]:
    eng.send(f"go perft {depth}")
    lines = eng.read_until("nodes ", timeout=60)
    moves = {}
    order = []
    for line in lines[:-1]:
        move, _, count = line.partition(": ")
        moves[move] = int(count)
        order.append(move)
    assert order == sorted(order, key=lambda s: s.encode()), "perft lines not in byte order"
    return moves, int(lines[-1].split()[1])


# --- handshake -------------------------------------------------------------------------------


def test_handshake_declares_options():
    eng = UgiProgram(ENGINE_ARGV)
    try:
        eng.send("ugi")
        lines = eng.read_until("ugiok", timeout=10)
        assert lines[0].startswith("id name ") and lines[1].startswith("id author ")
        options = [line for line in lines if line.startswith("option name ")]
        names = {line.split(" type ")[0][len("option name "):] for line in options}
        assert {"UGI_Variant", "Hash", "Seed", "Level"} <= names
        variant = next(line for line in options if line.startswith("option name UGI_Variant "))
        assert variant == ("option name UGI_Variant type combo default egara-guti "
                           + " ".join(f"var {game}" for game in GAMES))
        assert len(GAMES) == 7
        level = next(line for line in options if line.startswith("option name Level "))
        assert level == "option name Level type spin default 20 min 0 max 20"
        # how fast it answers is measured by benchmarks/engine_stop_latency.py
        eng.send("isready")
        assert eng.read_until("readyok") == ["readyok"]
    finally:
        eng.close()


def test_declared_games_are_the_rules_core_games():
    """The names a --help and the engine's ``ugi`` answer show without loading the
    games' tables are the rules core's games, in its order."""
    assert tuple(GAMES) == GAME_NAMES


def test_guti_engine_command_runs_the_engine():
    proc = subprocess.run([*GUTI, "engine"], cwd=ROOT,
                          input=b"ugi\nisready\nquit\n", capture_output=True, timeout=30)
    out = proc.stdout.decode().splitlines()
    assert proc.returncode == 0
    assert "ugiok" in out and out[-1] == "readyok"


# --- perft -------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["egara-guti", "pretwa"])
def test_go_perft_matches_reference_table(engine, game):
    select(engine, game)
    engine.ask("position startpos")
    table = load_perft_tables()[game]
    checked = 0
    for depth, nodes in sorted(table.items()):
        if nodes > PERFT_BUDGET:
            break
        _, total = perft_lines(engine, depth)
        assert total == nodes, f"{game} perft {depth}"
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("game", ["egara-guti", "pretwa"])
def test_go_perft_divide_matches_reference(engine, game):
    select(engine, game)
    engine.ask("position startpos")
    depth, expected, total = load_divides()[game]
    moves, nodes = perft_lines(engine, depth)
    assert moves == expected and nodes == total


def test_go_perft_lists_the_hand_checked_captures(engine):
    for game, fen, moves, _after in load_capture_positions():
        select(engine, game)
        engine.ask(f"position fen {fen}")
        got, total = perft_lines(engine, 1)
        assert set(got) == moves and total == len(moves), fen


def test_go_perft_zero_and_finished_position(engine):
    engine.send("go perft 0")
    assert engine.read_until("nodes") == ["nodes 1"]
    engine.ask("position fen 1b1b1/b1b/bbb/b/www/www/wwwww w 0 1")
    engine.send("go perft 3")
    assert engine.read_until("nodes") == ["nodes 0"]


def test_go_perft_past_its_bound_says_the_bound(engine):
    """The error line names the range a depth must be in (it said only ``>= 0``)."""
    assert engine.ask("go perft 1001") == [
        "info string error go perft: depth must be a whole number from 0 to 1000, got '1001'"]


def test_go_perft_counts_repetition_history(engine):
    # Two cycles of the four-ply shuffle bring the start back a third time at ply 8: from
    # the position after 7 plies the only continuation ends the game, so perft 2 is 0
    # along that move; with the history forgotten it would not be.
    fen = "4b/3/3/1/3/3/w4 w 0 1"
    engine.ask(f"position fen {fen} moves 19-20 5-4 20-19 4-5 19-20 5-4 20-19")
    moves, _ = perft_lines(engine, 1)
    assert set(moves) == {"4-3", "4-5", "4-8"}
    moves, total = perft_lines(engine, 2)
    assert moves["4-5"] == 0 and moves["4-3"] == 2  # White on 19 steps to 16 or 20


# --- queries on each end rule ----------------------------------------------------------------


def query(eng: UgiProgram, what: str) -> str:
    lines = eng.ask(f"query {what}")
    assert len(lines) == 1 and lines[0].startswith("response "), lines
    return lines[0].split()[1]


def test_query_start_position(engine):
    assert query(engine, "gameover") == "false"
    assert query(engine, "p1turn") == "true"
    assert query(engine, "result") == "none"
    engine.ask("position startpos moves 13-12")
    assert query(engine, "p1turn") == "false"


def test_query_pretwa_three_or_fewer(engine):
    select(engine, "pretwa")
    engine.ask("position fen 1/www1w1/6/bbb3 b 0 1")  # White 4, Black 3: White has won
    assert query(engine, "gameover") == "true"
    assert query(engine, "result") == "p1win"
    engine.send("go depth 3")
    assert engine.read_until("bestmove")[-1] == "bestmove none"


def test_query_three_or_fewer_does_not_apply_to_egara_guti(engine):
    engine.ask("position fen b4/3/3/1/www/3/5 b 0 1")  # 1 vs 3, Black can still move
    assert query(engine, "gameover") == "false"


def test_query_no_legal_move(engine):
    engine.ask("position fen 1b1b1/b1b/bbb/b/www/www/wwwww w 0 1")  # White blocked
    assert query(engine, "gameover") == "true"
    assert query(engine, "p1turn") == "true"
    assert query(engine, "result") == "p2win"
    engine.ask("position fen bbbbb/3/3/1/3/3/5 w 0 1")  # White has no pieces at all
    assert query(engine, "result") == "p2win"
    engine.send("go movetime 1000")
    assert engine.read_until("bestmove")[-1] == "bestmove none"
    # at once: even go infinite answers without waiting for stop
    engine.send("go infinite")
    assert engine.read_until("bestmove")[-1] == "bestmove none"


def test_query_fifty_plies(engine):
    engine.ask("position fen 4b/3/3/1/3/3/ww3 w 49 30")
    assert query(engine, "gameover") == "false"
    engine.ask("position fen 4b/3/3/1/3/3/ww3 w 49 30 moves 19-16")
    assert query(engine, "gameover") == "true"
    assert query(engine, "result") == "p1win"
    engine.ask("position fen 4b/3/3/1/3/3/w4 w 50 30")  # 1 vs 1 at the limit: a draw
    assert query(engine, "result") == "draw"


def test_query_repetition(engine):
    fen = "4b/3/3/1/3/3/w4 w 0 1"
    cycle = "19-20 5-4 20-19 4-5 19-20 5-4 20-19"
    engine.ask(f"position fen {fen} moves {cycle}")
    assert query(engine, "gameover") == "false"
    engine.ask(f"position fen {fen} moves {cycle} 4-5")
    assert query(engine, "gameover") == "true"
    assert query(engine, "result") == "draw"
    # the same cycle with an extra White piece far away: more pieces wins
    engine.ask(f"position fen 4b/3/3/1/3/3/w3w w 0 1 moves {cycle} 4-5")
    assert query(engine, "result") == "p1win"
    lines = engine.ask(f"position fen {fen} moves {cycle} 4-5 19-20")
    assert len(lines) == 1 and lines[0].startswith("info string error position: move 9:")
    assert "game is over" in lines[0]


# --- d -----------------------------------------------------------------------------------------


def test_d_shows_fen_and_legal_moves(engine):
    lines = engine.ask("position startpos moves 13-12 11x13")
    assert lines == []
    lines = engine.ask("d")
    assert "fen bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2" in lines
    assert "legal 16x12" in lines
    assert all(line.startswith(("info string", "fen ", "legal")) for line in lines)


# --- bad input ---------------------------------------------------------------------------------


def test_protocol_error_session(engine):
    """protocol.md section 6.4: every bad line gets one info string line, nothing changes."""
    assert engine.ask("position startpos moves 13-12 11x13") == []
    lines = engine.ask("position startpos moves 13-12 11x13 16-12")
    assert len(lines) == 1
    assert lines[0].startswith("info string error position: move 3: illegal move '16-12'")
    assert "capture is compulsory" in lines[0]
    assert "fen bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2" in engine.ask("d")
    lines = engine.ask("position fen bbbbb/bbb/bbb/1/www/www/wwww w")
    assert len(lines) == 1 and lines[0].startswith("info string error position: bad FEN")
    assert "row 7" in lines[0]
    lines = engine.ask("position startpos moves 13-12 011x13")
    assert len(lines) == 1 and "move 2: malformed move '011x13'" in lines[0]
    lines = engine.ask("setoption name UGI_Variant value chess")
    assert len(lines) == 1 and lines[0].startswith("info string error setoption UGI_Variant")
    assert "chess" in lines[0]
    lines = engine.ask("go perft two")
    assert len(lines) == 1 and lines[0].startswith("info string error go perft")
    # Words are separated by spaces and tabs only (protocol.md): not by control characters.
    assert engine.ask(b"query\x1cp1turn") == ["info string unknown command query?p1turn"]
    assert engine.ask("query\tp1turn") == ["response true"]
    engine.send("go movetime -5")  # a time below 0 reads as 0: a move at once
    assert engine.read_until("bestmove", timeout=30)[-1] == "bestmove 16x12"  # the only one
    lines = engine.ask("go depth 99999999999999999")  # a whole number: said too large
    assert lines == ["info string error go depth: 99999999999999999 is too large (at most 15 "
                     "digits)"]
    lines = engine.ask("query colour")
    assert len(lines) == 1 and lines[0].startswith("info string error query")
    lines = engine.ask("frobnicate 3")
    assert lines == ["info string unknown command frobnicate 3"]
    assert query(engine, "p1turn") == "true"
    assert "fen bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2" in engine.ask("d")
    moves, _ = perft_lines(engine, 1)
    assert list(moves) == ["16x12"]  # still Egara-guti, still that position


@pytest.mark.parametrize("line", [
    "setoption name Hash value 0",
    "setoption name Hash value 99999",
    "setoption name Level value high",
    "setoption name Nonsense value 3",
    "setoption Hash 3",
    "setoption name Hash",
    "go depth x",
    "go depth 0",
    "go movetime",
    "go sideways 3",
    "go nodes -5",
    "position",
    "position fen",
    "position startpos 13-12",
    "position fen 1/bbwwwb/bbwwwb/bbwwwb w 0 1",  # a Pretwa FEN while Egara-guti is selected
    "query",
    "query result now",
])
def test_bad_arguments_get_one_error_line(engine, line):
    lines = engine.ask(line)
    assert len(lines) == 1 and lines[0].startswith("info string error "), lines
    assert query(engine, "result") == "none"
    assert "fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 1" in engine.ask("d")


def test_option_names_are_case_insensitive_and_variant_resets(engine):
    engine.ask("position startpos moves 13-12")
    assert engine.ask("setoption name ugi_variant value PRETWA") == []
    assert "fen 1/bbwwwb/bbwwwb/bbwwwb w 0 1" in engine.ask("d")
    assert engine.ask("setoption name HASH value 1") == []
    assert engine.ask("setoption name move overhead value 50") == []


def test_huge_line_and_garbage_bytes(engine):
    engine.send("position startpos moves " + "13-12 " * 170_000)  # just under 1 MiB
    engine.send(b"\xff\xfe\x00garbage \x1b[31m")
    engine.send("x" * (1 << 20))  # past it, with its line end
    engine.send(b"\r")
    engine.send("isready")
    lines = engine.read_until("readyok", timeout=60)
    errors = [line for line in lines if line.startswith("info string")]
    assert len(errors) == 3 and all(len(line) < 1000 for line in errors)
    assert "illegal move" in errors[0]
    assert errors[1].startswith("info string unknown command")
    assert errors[2] == "info string error a line of more than 1 MiB: not read"
    assert query(engine, "result") == "none"


def test_crlf_line_endings(engine):
    engine.send(b"position startpos moves 14-12\r")
    engine.send(b"query p1turn\r")
    assert engine.read_until("response")[-1] == "response false"


def test_eof_ends_the_engine_cleanly():
    eng = UgiProgram(ENGINE_ARGV)
    eng.send("ugi")
    eng.read_until("ugiok")
    eng.proc.stdin.close()
    assert eng.proc.wait(5) == 0


def test_eof_during_search_ends_the_engine():
    eng = UgiProgram(ENGINE_ARGV)
    eng.handshake()
    eng.send("go infinite")
    eng.read_until("info depth")  # the search is running
    eng.proc.stdin.close()
    assert eng.proc.wait(5) == 0


def test_quit_during_search_exits_promptly():
    eng = UgiProgram(ENGINE_ARGV)
    eng.handshake()
    eng.send("go infinite")
    eng.read_until("info depth")  # the search is running
    eng.send("quit")
    assert eng.proc.wait(2) == 0  # protocol.md 5.5: exit within about a second


# --- go, stop, isready -----------------------------------------------------------------------


def legal_after(moves: str, game: str = "egara-guti") -> list[str]:
    board = Board(game)
    for move in moves.split():
        board.push_str(move)
    return [str(m) for m in board.legal_moves]


def test_stop_during_go_infinite_is_prompt(engine):
    engine.ask("position startpos moves 14-12")
    engine.send("go infinite")
    early = engine.read_until("info depth")  # the search is running
    early += engine.sync()  # isready is answered during the search
    assert not any(line.startswith("bestmove") for line in early)  # still searching
    # how fast stop is answered is measured by benchmarks/engine_stop_latency.py
    engine.send("stop")
    lines = engine.read_until("bestmove")
    assert lines[-1].split()[1] in legal_after("14-12")
    infos = [line for line in early + lines if line.startswith("info depth")]
    assert infos, "no info lines during go infinite"
    # stop without a search: ignored, no answer
    assert engine.ask("stop") == []


def test_go_infinite_waits_for_stop_even_when_search_is_done(engine):
    engine.ask("setoption name Level value 0")  # depth cap 1: the search ends at once
    engine.ask("position fen b4/3/3/1/3/3/4w w 0 1")
    engine.send("go infinite")
    assert not any(line.startswith("bestmove") for line in engine.read_until("info depth 1"))
    assert not any(line.startswith("bestmove") for line in engine.ask("query p1turn"))
    engine.send("stop")
    assert engine.read_until("bestmove")[-1].split()[1] in {"23-22", "23-18"}


def test_go_with_clock_answers_in_time(engine):
    for moves in ("", "13-12 11x13 16x12"):
        engine.ask(f"position startpos moves {moves}".strip().removesuffix(" moves"))
        side = "p1" if len(moves.split()) % 2 == 0 else "p2"
        # time use against the clock is measured by benchmarks/engine_time_losses.py
        engine.send("go p1time 1000 p2time 1000 p1inc 10 p2inc 10")
        lines = engine.read_until("bestmove")
        assert lines[-1].split()[1] in legal_after(moves), side


def test_go_movetime_and_info_lines(engine):
    select(engine, "pretwa")
    engine.ask("position startpos")
    engine.send("go movetime 300")
    lines = engine.read_until("bestmove")
    infos = [line.split() for line in lines if line.startswith("info depth")]
    assert infos
    for words in infos:
        for field in ("depth", "seldepth", "score", "nodes", "nps", "time", "pv"):
            assert field in words
        assert words[words.index("score") + 1] in ("cp", "win", "loss")
        pv = words[words.index("pv") + 1:]
        board = Board("pretwa")
        for move in pv:  # the PV is a legal line of play
            board.push_str(move)
    assert lines[-1].split()[1] == infos[-1][infos[-1].index("pv") + 1]


def test_go_nodes_and_depth_limits(engine):
    engine.send("go nodes 500")
    lines = engine.read_until("bestmove", timeout=30)
    for line in lines:
        if line.startswith("info depth"):
            words = line.split()
            assert int(words[words.index("nodes") + 1]) <= 500
    engine.send("go depth 3")
    lines = engine.read_until("bestmove", timeout=30)
    depths = [int(line.split()[2]) for line in lines if line.startswith("info depth")]
    assert depths == [1, 2, 3]


def test_go_while_searching_ends_the_first_search(engine):
    engine.send("go infinite")
    engine.read_until("info depth")  # the first search is running
    engine.send("go depth 2")
    first = engine.read_until("bestmove")
    second = engine.read_until("bestmove")
    assert first[-1].split()[1] in legal_after("")
    assert second[-1].split()[1] in legal_after("")


@pytest.mark.parametrize("after", [b"quit\n", b"", b"stop\nisready\nquit\n"])
def test_isready_behind_a_perft_that_never_ends_gives_way_to_stop_quit_or_the_end(after):
    """``isready`` waits for a ``go perft``'s lines, but a ``stop``, ``quit`` or the end of
    input behind it ends the perft: the engine never hangs on its input."""
    done = subprocess.run(ENGINE_ARGV, input=b"go perft 1000\nisready\n" + after,
                          capture_output=True, timeout=60, cwd=str(ROOT))
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert lines[:2] == ["info string perft stopped", "readyok"], lines


def test_a_line_past_the_limit_is_one_error_and_the_engine_goes_on():
    """No line grows the engine's memory without bound: past 1 MiB it is dropped whole."""
    big = b"position startpos moves " + b"13-12 " * 200_000 + b"\n"  # 1.2 MB
    done = subprocess.run(ENGINE_ARGV, input=big + b"d\n" + big + b"isready\nquit\n",
                          capture_output=True, timeout=60, cwd=str(ROOT))
    lines = done.stdout.decode().splitlines()
    error = "info string error a line of more than 1 MiB: not read"
    assert lines.count(error) == 2 and lines[-1] == "readyok", lines[-3:]
    assert f"fen {Board('egara-guti').fen()}" in lines  # the start position: nothing applied


def test_the_engine_writes_utf8_whatever_the_locale():
    """An echoed bad byte (U+FFFD) under an ASCII locale: before, the engine fell silent."""
    import os

    done = subprocess.run(ENGINE_ARGV, input=b"foo \xff\nisready\nquit\n", capture_output=True,
                          timeout=60, cwd=str(ROOT), env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.stdout.decode() == "info string unknown command foo \ufffd\nreadyok\n"


def test_a_quit_with_a_control_character_is_no_quit_and_reading_goes_on():
    """The input is read by the same word rule as the commands: ``quit\\v`` is not
    ``quit`` for either (the reader stopped at it while the engine waited for more)."""
    done = subprocess.run(ENGINE_ARGV, input=b"quit\x0b\nisready\nquit\n", capture_output=True,
                          timeout=60, cwd=str(ROOT))
    assert done.returncode == 0 and done.stdout.decode().splitlines()[-1] == "readyok"
