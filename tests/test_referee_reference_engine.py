"""``guti match`` between two real reference-engine processes, checked from its files.

Why: the referee's other tests use small scripted engines (tests/engines/);
this one runs the project's own searching engine (``python -m guti.engine``) at
full strength on both sides, under a real base + increment clock, through
the installed ``guti`` command, and then checks everything the match leaves
behind against each other and against the rules core:

- the PDN tags (Event, Site, Date, Round, White, Black, Result,
  GameType/Variant, TimeControl, Termination, PlyCount) and, move by move,
  the ``[%emt] [%clk]`` comments, which must obey the clock arithmetic
  (clock after a move = clock before - time used + increment);
- the traffic log: a timestamp and a direction on every line, in time
  order; the handshake; per game, the ``bestmove`` answers are exactly the
  PDN moves, and each ``go`` tells the engine the clocks the PDN shows;
- the terminal: one summary line per game that agrees with the PDN, and the
  score at the end.

What is already tested elsewhere is not repeated here: the FEN tag of a set
start (test_referee_cli.py), command-line mistakes and exit status 2, the
faults (test_referee_faults.py).

It also checks protocol.md 5.2 for an engine that declares no
``UGI_Variant``: it plays Egara-guti only, so a Pretwa match with it is
refused before any game with one line and exit status 2.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.game.pdn_reader import PdnGame
from guti.rules import Board
from tests.conftest import GUTI, parse_pdn, survivors

ROOT = Path(__file__).resolve().parent.parent
FAULTY = ROOT / "tests" / "engines" / "faulty.py"
TIMEOUT = 120.0  # hard bound on one `guti match` run; it takes a few seconds
BASE_MS, INC_MS = 1000, 20  # tc=1+0.02
SLACK_MS = 2  # the PDN and the go lines round the same clock to whole ms
LOG_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}) \[(RefA|RefB|referee)\] ([<>!#]) (.*)$"
)
#: ``[%emt S] [%clk H:MM:SS.mmm]``, after cutechess's ``SCORE/DEPTH TIMEs`` when the engine
#: reported a score or depth with the move (README "Game records"; the reference engine does).
CLOCK = re.compile(r"^(?:\S+/\S+ (\d+\.\d{3})s )?"
                   r"\[%emt (\d+\.\d{3})\] \[%clk (\d+):(\d\d):(\d\d)\.(\d{3})\]$")
SUMMARY = re.compile(
    r"^Game (\d+)/(\d+): (\S+) vs (\S+): (1-0|0-1|1/2-1/2) \(([a-z ]+), (\d+) plies\)$"
)


def guti(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GUTI, "match", *args], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT
    )


def reference(name: str, seed: int) -> list[str]:
    return [
        "-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}", f"name={name}",
        f"option.Seed={seed}",
    ]  # fmt: skip


def _clock_ms(comment: str) -> tuple[int, int]:
    """(time used, clock after the move) in ms from ``[%emt S] [%clk H:MM:SS.mmm]``."""
    m = CLOCK.match(comment)
    assert m, f"not a clock comment: {comment!r}"
    assert m.group(1) in (None, m.group(2)), comment  # the report's time is the move's time
    h, mi, s, ms = (int(g) for g in m.groups()[2:])
    return round(float(m.group(2)) * 1000), ((h * 60 + mi) * 60 + s) * 1000 + ms


def _check_record(record: PdnGame, index: int, game: str, today: set[str]) -> list[int]:
    """Tags and per-move clocks of game ``index`` (0-based); returns the clocks after each move."""
    tags = record.tags
    assert tags["Event"] == "Ref Cup" and tags["Site"] == "Lab"
    assert tags["Date"] in today
    assert tags["Round"] == str(index + 1)
    assert (tags["White"], tags["Black"]) == (
        ("RefA", "RefB") if index % 2 == 0 else ("RefB", "RefA")
    )
    assert tags["GameType"] == tags["Variant"] == game
    assert tags["TimeControl"] == "1+0.02"
    assert "FEN" not in tags and "SetUp" not in tags  # a start-position game
    board = Board(game)
    for move in record.move_texts:
        board.push_str(move)
    outcome = board.outcome()
    assert outcome is not None, "the recorded game stops in a running position"
    assert (tags["Result"], tags["Termination"]) == (outcome.result, outcome.reason)
    assert record.result == tags["Result"] and record.notes == []
    assert tags["PlyCount"] == str(len(record.moves))
    clocks = [BASE_MS, BASE_MS]  # White, Black
    after = []
    for ply, move in enumerate(record.moves):
        assert len(move.comments) == 1, (ply, move)
        used, clock = _clock_ms(move.comments[0])
        side = ply % 2
        assert 0 <= used < clocks[side] + SLACK_MS, (ply, used, clocks[side])
        assert abs(clock - (clocks[side] - used + INC_MS)) <= SLACK_MS, (ply, move)
        clocks[side] = clock
        after.append(clock)
    return after


def _check_log(log: str, records: list[PdnGame], clocks: list[list[int]], game: str) -> None:
    lines = [ln for ln in log.split("\n") if ln]
    parsed = [LOG_LINE.match(ln) for ln in lines]
    assert all(parsed), [ln for ln, m in zip(lines, parsed, strict=True) if not m][:3]
    stamps = [m.group(1) for m in parsed if m]
    assert stamps == sorted(stamps), "traffic log lines are not in time order"
    triples = [(m.group(2), m.group(3), m.group(4)) for m in parsed if m]
    for name in ("RefA", "RefB"):
        said = [(d, t) for n, d, t in triples if n == name]
        assert said[0] == (">", "ugi")
        assert ("<", "id name guti reference engine 1.0") in said
        assert said.index(("<", "ugiok")) < said.index(
            (">", f"setoption name UGI_Variant value {game}")
        )
        assert said.count((">", "uginewgame")) == len(records)
        assert said[-1] == (">", "quit")
        assert any(d == "<" and t.startswith("info depth ") for d, t in said)
    # Split at the referee's per-game notes and follow each game's traffic.
    starts = [
        i
        for i, (n, _, t) in enumerate(triples)
        if n == "referee" and re.match(r"game \d+: \S+ \(white\)", t)
    ]
    assert len(starts) == len(records)
    for g, (record, after) in enumerate(zip(records, clocks, strict=True)):
        end = starts[g + 1] if g + 1 < len(starts) else len(triples)
        chunk = triples[starts[g] : end]
        gos = [t for _, d, t in chunk if d == ">" and t.startswith("go ")]
        best = [t.split()[1] for _, d, t in chunk if d == "<" and t.startswith("bestmove ")]
        assert best == record.move_texts, f"game {g + 1}: log and PDN moves differ"
        assert len(gos) == len(best)
        clock = [BASE_MS, BASE_MS]
        for ply, go in enumerate(gos):
            words = go.split()
            fields = dict(zip(words[1::2], words[2::2], strict=True))
            assert fields["p1inc"] == fields["p2inc"] == str(INC_MS), go
            assert abs(int(fields["p1time"]) - clock[0]) <= SLACK_MS, (g, ply, go, clock)
            assert abs(int(fields["p2time"]) - clock[1]) <= SLACK_MS, (g, ply, go, clock)
            clock[ply % 2] = after[ply]
        result = next(
            t
            for n, _, t in chunk
            if n == "referee" and t.startswith(f"game {g + 1}: ") and "(white)" not in t
        )
        assert result.startswith(
            f"game {g + 1}: {record.tags['Result']} ({record.tags['Termination']})"
        )


@pytest.mark.slow  # a real match or two runs: seconds; in the slow tier
def test_two_reference_engines_play_a_clocked_match(tmp_path: Path) -> None:
    pdn, log = tmp_path / "out.pdn", tmp_path / "traffic.log"
    game = "pretwa"
    before = dt.date.today()
    proc = guti(
        *reference("RefA", 1), *reference("RefB", 2),
        "-each", "tc=1+0.02", "timemargin=300", "-game", game, "-games", "2",
        "-event", "Ref Cup", "-site", "Lab", "-pdnout", f"file={pdn}", "-log", f"file={log}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    today = {d.strftime("%Y.%m.%d") for d in (before, dt.date.today())}
    records = parse_pdn(pdn.read_text())
    assert len(records) == 2
    clocks = [_check_record(r, i, game, today) for i, r in enumerate(records)]
    _check_log(log.read_text(), records, clocks, game)
    # The terminal: one line per game agreeing with its record, the score, the time taken.
    lines = proc.stdout.strip().split("\n")
    assert len(lines) == len(records) + 2, proc.stdout
    assert lines.pop().startswith("Elapsed: ")
    wins = draws = losses = 0
    for i, (line, record) in enumerate(zip(lines, records, strict=False)):
        m = SUMMARY.match(line)
        assert m, line
        tags = record.tags
        assert m.groups() == (
            str(i + 1), "2", tags["White"], tags["Black"], tags["Result"], tags["Termination"],
            tags["PlyCount"],
        )  # fmt: skip
        winner = {"1-0": tags["White"], "0-1": tags["Black"]}.get(tags["Result"])
        wins += winner == "RefA"
        losses += winner == "RefB"
        draws += winner is None
    assert lines[-1].startswith(f"Score of RefA vs RefB: {wins}-{draws}-{losses} (W-D-L), ")
    assert lines[-1].endswith(", 2 games")


def test_engine_without_ugi_variant_plays_egara_guti_only(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    plain = [
        "-engine", f"cmd={sys.executable}",
        f"args={shlex.join([str(FAULTY), '--variants', '', '--pidfile', str(pids)])}", "name=Plain",
    ]  # fmt: skip
    other = ["-engine", f"cmd={sys.executable}", f"args={FAULTY} --seed 3", "name=Other"]
    pdn = tmp_path / "out.pdn"
    # Pretwa: refused before the first game, one line, exit status 2, nothing played.
    proc = guti(*plain, *other, "-each", "tc=5+0.1", "-game", "pretwa", "-games", "2",
                "-pdnout", f"file={pdn}")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().split("\n")
    assert len(lines) == 1, proc.stderr
    assert "Plain" in lines[0] and "does not play pretwa" in lines[0] and "UGI_Variant" in lines[0]
    assert not pdn.exists() or parse_pdn(pdn.read_text()) == []
    assert survivors(pids) == []
    # Egara-guti: the same engine plays, and is not sent a UGI_Variant it never declared.
    log = tmp_path / "traffic.log"
    proc = guti(*plain, *other, "-each", "tc=5+0.1", "-game", "egara-guti", "-games", "2",
                "-pdnout", f"file={pdn}", "-log", f"file={log}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = parse_pdn(pdn.read_text())
    assert [r.tags["GameType"] for r in records] == ["egara-guti", "egara-guti"]
    assert all(
        r.tags["Termination"] in ("no legal move", "fifty plies", "repetition") for r in records
    )
    assert "[Plain] > setoption name UGI_Variant" not in log.read_text()
    assert "[Other] > setoption name UGI_Variant value egara-guti" in log.read_text()
    assert survivors(pids) == []
