"""``guti match`` as a real process: exit status 2 with one line for every mistake,
and a real match with its PDN file, traffic log and terminal output."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from guti.rules import Board
from tests.conftest import GUTI, parse_pdn, wait_for

FAULTY = str(Path(__file__).parent / "engines" / "faulty.py")


def guti(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, "match", *args], capture_output=True, text=True,
                          timeout=timeout)


def engine(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={sys.executable}", f"args={FAULTY} --seed {len(name)} {' '.join(extra)}", f"name={name}"]


GOOD_PAIR = [*engine("Alpha"), *engine("Beta")]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-bogus", "1"], "unknown option '-bogus'"),
        ([*engine("A"), "-each", "tc=1+0"], "exactly two -engine"),
        ([*GOOD_PAIR, "-each", "tc=abc"], "not a number of seconds"),
        ([*GOOD_PAIR], "no limit on its moves"),
        ([*GOOD_PAIR, "-each", "tc=inf"], "tc=inf only beside depth=, nodes= or st="),
        ([*GOOD_PAIR, "-each", "tc=1", "-openings", "random:-1"], "-openings random:-1: must be >= 0"),
        ([*GOOD_PAIR, "-each", "tc=1", "-openings", "random:x"], "-openings random:x: not a whole"),
        ([*GOOD_PAIR, "-each", "tc=1", "-openings", "file=random:5", "plies=3"],
         "give the plies once"),
        ([*GOOD_PAIR, "-each", "tc=1", "-games", "x"], "not a whole number"),
        ([*GOOD_PAIR, "-each", "tc=1", "-games", "0"], "less than 1"),
        ([*GOOD_PAIR, "-each", "tc=1", "-game", "chess"], "unknown game 'chess'"),
        (["-engine", "name=x", *engine("B"), "-each", "tc=1"], "no cmd=PATH"),
        (["stray", *GOOD_PAIR, "-each", "tc=1"], "unexpected argument 'stray'"),
        ([*GOOD_PAIR, "-each", "tc=1", "colour=red"], "-each: unknown engine setting 'colour'"),
        ([*GOOD_PAIR, "-each", "tc=1", "-fen", "zzz w"], "-fen"),
        ([*GOOD_PAIR, "-each", "tc=1", "-engine", "cmd=x", "args=\"unclosed"], "args="),
        ([*GOOD_PAIR, "-each", "tc=1", "-games"], "-games needs a value"),
        ([*GOOD_PAIR, "-each", "tc=1", "-openings", "file=/nonexistent/book"], "openings file"),
        ([*GOOD_PAIR, "-each", "tc=1", "bogus=1", "-games", "2"], "unknown engine setting 'bogus'"),
    ],
)
def test_command_line_mistakes_exit_2_with_one_line(argv, needle):
    proc = guti(*argv)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().split("\n")
    assert len(lines) == 1, proc.stderr
    assert needle in lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("mode", ["exit-now", "startup-crash", "no-ugiok"])
def test_engine_that_cannot_start_exits_2_with_one_line(mode):
    # a handshake timeout long enough for engine A to start on a loaded machine (it takes
    # a tenth of a second), short enough not to hold the tier up for the engine that never
    # finishes its own
    proc = guti(*engine("A"), *engine("B", "--mode", mode), "-each", "tc=1+0",
                "-handshake-timeout", "3")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().split("\n")
    assert len(lines) == 1 and "engine B" in lines[0], proc.stderr


def test_missing_engine_program_exits_2():
    proc = guti("-engine", "cmd=/no/such/engine", "name=Ghost", *engine("B"), "-each", "tc=1")
    assert proc.returncode == 2
    assert "Ghost" in proc.stderr and "No such file" in proc.stderr
    assert len(proc.stderr.strip().split("\n")) == 1


def test_a_bare_name_in_dir_but_not_on_path_says_how_to_name_it(tmp_path):
    """``cmd=NAME dir=D``: a name without a ``/`` is looked up on PATH, as a shell does; the
    line that says it was not found there points at ``./NAME`` in D."""
    program = tmp_path / "myengine"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAULTY}\n")
    program.chmod(0o755)
    proc = guti("-engine", "cmd=myengine", f"dir={tmp_path}", "name=Mine", *engine("B"),
                "-each", "tc=1")
    assert proc.returncode == 2
    assert proc.stderr == (f"guti match: engine Mine: cannot start myengine: No such file or "
                           f"directory (a name without a / is looked up on PATH; the one in "
                           f"{tmp_path} is ./myengine)\n")
    proc = guti("-engine", "cmd=./myengine", f"dir={tmp_path}", "name=Mine", *engine("B"),
                "-each", "tc=1", "-games", "2")
    assert proc.returncode == 0, proc.stderr


def test_a_program_in_a_relative_dir_starts(tmp_path):
    """``cmd=./NAME dir=D`` with D relative to where guti runs: the program is D/NAME, found
    once (the engine starts in D, where D/NAME would be D/D/NAME)."""
    (tmp_path / "sub").mkdir()
    program = tmp_path / "sub" / "myengine"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {FAULTY}\n")
    program.chmod(0o755)
    for cmd, folder in (("./myengine", "sub"), ("sub/myengine", ".")):
        proc = subprocess.run([*GUTI, "match", "-engine", f"cmd={cmd}", f"dir={folder}",
                               "name=Mine", *engine("B"), "-each", "tc=1", "-games", "2"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr


def test_match_writes_pdn_log_and_alternates_colours(tmp_path):
    pdn, log = tmp_path / "out.pdn", tmp_path / "traffic.log"
    proc = guti(
        *GOOD_PAIR, "--each", "tc=2+0.05", "timemargin=50", "--game", "pretwa", "--games", "3",
        "-pdnout", f"file={pdn}", "-log", f"file={log}", "-event", "Test Cup",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")
    assert [ln.split(":")[0] for ln in lines[:3]] == ["Game 1/3", "Game 2/3", "Game 3/3"]
    assert "Alpha vs Beta" in lines[0] and "Beta vs Alpha" in lines[1] and "Alpha vs Beta" in lines[2]
    assert lines[3].startswith("Score of Alpha vs Beta: ")
    records = parse_pdn(pdn.read_text())
    assert len(records) == 3
    wins = draws = 0
    for i, record in enumerate(records):
        tags, movetext = record.tags, record.movetext
        assert tags["Event"] == "Test Cup" and tags["Round"] == str(i + 1)
        assert (tags["White"], tags["Black"]) == (("Alpha", "Beta") if i % 2 == 0 else ("Beta", "Alpha"))
        assert tags["GameType"] == tags["Variant"] == "pretwa"
        assert tags["TimeControl"] == "2+0.05"
        assert "FEN" not in tags
        assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", tags["Date"])
        # Re-derive the end from the moves with the rules core.
        board = Board("pretwa")
        moves = record.move_texts
        for move in moves:
            board.push_str(move)
        outcome = board.outcome()
        assert outcome is not None
        assert tags["Result"] == outcome.result and tags["Termination"] == outcome.reason
        assert tags["PlyCount"] == str(len(moves))
        assert movetext.rstrip().endswith(outcome.result)
        assert movetext.count("[%emt ") == len(moves) == movetext.count("[%clk ")
        winner = {"1-0": tags["White"], "0-1": tags["Black"]}.get(outcome.result)
        wins += winner == "Alpha"
        draws += outcome.result == "1/2-1/2"
    assert f": {wins}-{draws}-{3 - wins - draws} (W-D-L)" in lines[3]
    traffic = log.read_text().split("\n")
    pattern = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6} \[(Alpha|Beta)\] ([<>!#]) (.*)$")
    kept = [ln for ln in traffic if ln and "[referee]" not in ln]
    parsed = [pattern.match(ln) for ln in kept]
    assert all(parsed), [ln for ln, m in zip(kept, parsed, strict=True) if not m][:3]
    triples = [(m.group(1), m.group(2), m.group(3)) for m in parsed]
    for name in ("Alpha", "Beta"):
        assert (name, ">", "ugi") in triples and (name, "<", "ugiok") in triples
        assert (name, ">", "setoption name UGI_Variant value pretwa") in triples
        assert (name, ">", "quit") in triples
        assert any(d == ">" and t.startswith("go p1time ") for n, d, t in triples if n == name)
        assert any(d == "<" and t.startswith("bestmove ") for n, d, t in triples if n == name)


def test_fault_shows_on_terminal_and_in_pdn(tmp_path):
    pdn = tmp_path / "out.pdn"
    proc = guti(*engine("Good"), *engine("Bad", "--mode", "illegal", "--at", "1"), "-each", "tc=2+0",
                "-games", "2", "-pdnout", str(pdn))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().split("\n")
    assert "(illegal move," in lines[0] and "(illegal move," in lines[1]
    assert lines[2].startswith("Score of Good vs Bad: 2-0-0 (W-D-L), points 2-0")
    records = parse_pdn(pdn.read_text())
    assert [r.tags["Termination"] for r in records] == ["illegal move", "illegal move"]
    assert [r.tags["Result"] for r in records] == ["1-0", "0-1"]
    assert "{engine Bad played illegal" in records[0].movetext


def test_fen_start_is_tagged(tmp_path):
    pdn = tmp_path / "out.pdn"
    fen = "bbbbb/bbb/bbb/1/www/www/wwwww b 0 1"
    proc = guti(*GOOD_PAIR, "-each", "tc=2+0", "-games", "1", "-fen", *fen.split(), "-pdnout", str(pdn))
    assert proc.returncode == 0, proc.stderr
    record = parse_pdn(pdn.read_text())[0]
    assert record.tags["SetUp"] == "1" and record.tags["FEN"] == fen
    assert record.movetext.startswith("1... ")
    board = Board.from_fen("egara-guti", fen)
    for move in record.move_texts:
        board.push_str(move)
    assert board.outcome() is not None


def test_openings_file_bad_lines_reported_and_book_moves_marked(tmp_path):
    book = tmp_path / "book.txt"
    start = Board("egara-guti")
    first = str(start.legal_moves[0])
    book.write_text(f"# a comment\n{first}\n99-98 nonsense\n\n")
    pdn = tmp_path / "out.pdn"
    proc = guti(*GOOD_PAIR, "-each", "tc=2+0", "-games", "2", "-openings", f"file={book}",
                "-pdnout", str(pdn))
    assert proc.returncode == 0, proc.stderr
    assert f"{book}:3: skipped opening" in proc.stderr
    for record in parse_pdn(pdn.read_text()):
        assert record.movetext.startswith(f"1. {first} {{book}}")


def test_sigterm_to_the_referee_still_reaps_the_engines(tmp_path):
    pids, hung = tmp_path / "pids", tmp_path / "hung"
    proc = subprocess.Popen(
        [*GUTI, "match", *engine("A", "--pidfile", str(pids)),
         *engine("B", "--mode", "hang", "--pidfile", str(pids), "--mark", str(hung)),
         "-each", "tc=30+0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    wait_for(hung.exists, "engine B sitting on its first go")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    for line in pids.read_text().split("\n"):
        if line:
            pid, start = line.split()
            try:
                data = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            assert data[data.rfind(")") + 2 :].split()[19] != start, f"engine pid {pid} survived"
