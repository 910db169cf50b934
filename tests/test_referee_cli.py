"""``guti match`` as a real process: exit status 2 with one line for every mistake,
and a real match with its PDN file, traffic log and terminal output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.rules import Board

FAULTY = str(Path(__file__).parent / "engines" / "faulty.py")


def guti(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from referee.cli.match import main; sys.exit(main(sys.argv[1:]))", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )


def engine(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={sys.executable}", f"args={FAULTY} --seed {len(name)} {' '.join(extra)}", f"name={name}"]


GOOD_PAIR = [*engine("Alpha"), *engine("Beta")]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-bogus", "1"], "unknown option '-bogus'"),
        ([*engine("A"), "-each", "tc=1+0"], "exactly two -engine"),
        ([*GOOD_PAIR, "-each", "tc=abc"], "not a number of seconds"),
        ([*GOOD_PAIR], "no time control"),
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
    proc = guti(*engine("A"), *engine("B", "--mode", mode), "-each", "tc=1+0", "-handshake-timeout", "1")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().split("\n")
    assert len(lines) == 1 and "engine B" in lines[0], proc.stderr


def test_missing_engine_program_exits_2():
    proc = guti("-engine", "cmd=/no/such/engine", "name=Ghost", *engine("B"), "-each", "tc=1")
    assert proc.returncode == 2
    assert "Ghost" in proc.stderr and "No such file" in proc.stderr
    assert len(proc.stderr.strip().split("\n")) == 1


def _records(pdn: str) -> list[tuple[dict[str, str], str]]:
    out = []
    for chunk in re.split(r"\n\n(?=\[Event )", pdn.strip()):
        head, _, moves = chunk.partition("\n\n")
        tags = dict(re.findall(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$', head, re.M))
        out.append((tags, moves))
    return out


def _moves(movetext: str) -> list[str]:
    text = re.sub(r"\{[^}]*\}", " ", movetext)
    return [w for w in text.split() if not re.fullmatch(r"\d+\.+|1-0|0-1|1/2-1/2|\*", w)]


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
    records = _records(pdn.read_text())
    assert len(records) == 3
    wins = draws = 0
    for i, (tags, movetext) in enumerate(records):
        assert tags["Event"] == "Test Cup" and tags["Round"] == str(i + 1)
        assert (tags["White"], tags["Black"]) == (("Alpha", "Beta") if i % 2 == 0 else ("Beta", "Alpha"))
        assert tags["GameType"] == tags["Variant"] == "pretwa"
        assert tags["TimeControl"] == "2+0.05"
        assert "FEN" not in tags
        assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", tags["Date"])
        # Re-derive the end from the moves with the rules core.
        board = Board("pretwa")
        moves = _moves(movetext)
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
    records = _records(pdn.read_text())
    assert [t["Termination"] for t, _ in records] == ["illegal move", "illegal move"]
    assert [t["Result"] for t, _ in records] == ["1-0", "0-1"]
    assert "{engine Bad played illegal" in records[0][1]


def test_fen_start_is_tagged(tmp_path):
    pdn = tmp_path / "out.pdn"
    fen = "bbbbb/bbb/bbb/1/www/www/wwwww b 0 1"
    proc = guti(*GOOD_PAIR, "-each", "tc=2+0", "-games", "1", "-fen", *fen.split(), "-pdnout", str(pdn))
    assert proc.returncode == 0, proc.stderr
    tags, movetext = _records(pdn.read_text())[0]
    assert tags["SetUp"] == "1" and tags["FEN"] == fen
    assert movetext.startswith("1... ")
    board = Board.from_fen("egara-guti", fen)
    for move in _moves(movetext):
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
    for _tags, movetext in _records(pdn.read_text()):
        assert movetext.startswith(f"1. {first} {{book}}")


def test_sigterm_to_the_referee_still_reaps_the_engines(tmp_path):
    import signal
    import time

    pids = tmp_path / "pids"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from referee.cli.match import main; sys.exit(main(sys.argv[1:]))",
         *engine("A", "--pidfile", str(pids)), *engine("B", "--mode", "hang", "--pidfile", str(pids)),
         "-each", "tc=30+0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (pids.exists() and len(pids.read_text().split()) >= 4):
        time.sleep(0.05)  # wait until both engines have started
    time.sleep(0.5)  # B is now sitting on its first go
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
