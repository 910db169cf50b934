"""The C greedy bot and the Java random bot, driven as real processes over UGI.

Expected perft figures and capture-sequence move sets come from the reference
figures in tests/data (read by ``perft_reference``), so the bots are checked
against the reference numbers, never against our own output.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.perft_reference import (
    load_capture_positions,
    load_divides,
    load_perft_tables,
    load_start_fens,
)

ROOT = Path(__file__).resolve().parent.parent
READ_TIMEOUT = 30.0  # generous: the machine is shared and noisy

# Highest start-position perft depth checked per bot (each stays well under ~2 s).
MAX_PERFT_DEPTH = {"c": 14, "java": 13}


# --------------------------------------------------------------------------- reference figures


@dataclass
class CaptureCase:
    """A hand-checked reference position: its legal moves and the FEN after each."""

    game: str
    fen: str
    after: dict[str, str]


@dataclass
class PerftReference:
    start_fen: dict[str, str]
    nodes: dict[str, dict[int, int]]
    divide: dict[str, tuple[int, dict[str, int]]]
    captures: list[CaptureCase]


def load_perft_reference() -> PerftReference:
    """The reference figures (tests/data, through perft_reference) in this file's shape."""
    return PerftReference(
        start_fen=load_start_fens(),
        nodes=load_perft_tables(),
        divide={g: (depth, moves) for g, (depth, moves, _n) in load_divides().items()},
        captures=[CaptureCase(g, fen, after) for g, fen, _moves, after in load_capture_positions()],
    )


REF = load_perft_reference()


def test_reference_parsed() -> None:
    """Guard: the reference file holds what these tests need (else other tests would test nothing)."""
    assert set(REF.nodes) == {"egara-guti", "pretwa"}
    for game in REF.nodes:
        assert len(REF.nodes[game]) >= 10
        assert game in REF.divide
    assert len(REF.captures) >= 4
    assert all(all(REF.captures[i].after.values()) for i in range(len(REF.captures)))


# --------------------------------------------------------------------------- process driver


class UgiProcess:
    """A bot process with line-based I/O and a reader thread (so reads can time out)."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = READ_TIMEOUT) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s") from None
        if line is None:
            raise AssertionError(f"bot exited (rc={self.proc.poll()})")
        return line

    def read_until(self, pred, timeout: float = READ_TIMEOUT) -> list[str]:
        """All lines up to and including the first one satisfying `pred`."""
        got = []
        while True:
            line = self.read(timeout)
            got.append(line)
            if pred(line):
                return got

    def sync(self) -> list[str]:
        """Lines printed before `readyok` (the answer to the commands sent so far)."""
        self.send("isready")
        return self.read_until(lambda s: s == "readyok")[:-1]

    def variant(self, game: str) -> None:
        self.send(f"setoption name UGI_Variant value {game}")

    def perft(self, depth: int) -> tuple[dict[str, int], int]:
        self.send(f"go perft {depth}")
        lines = self.read_until(lambda s: s.startswith("nodes "))
        moves = [ln.split(": ") for ln in lines[:-1]]
        assert all(len(p) == 2 for p in moves), lines
        names = [p[0] for p in moves]
        assert names == sorted(names, key=lambda s: s.encode()), "divide not in byte order"
        return {mv: int(n) for mv, n in moves}, int(lines[-1].split()[1])

    def query(self, what: str) -> str:
        self.send(f"query {what}")
        line = self.read_until(lambda s: s.startswith("response "))[-1]
        return line.split()[1]

    def fen(self) -> str:
        self.send("d")
        fens = [ln[4:] for ln in self.sync() if ln.startswith("fen ")]
        assert len(fens) == 1, fens
        return fens[0]

    def bestmove(self, go: str = "go") -> str:
        self.send(go)
        return self.read_until(lambda s: s.startswith("bestmove "))[-1].split()[1]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


# --------------------------------------------------------------------------- fixtures


def _build_c() -> list[str]:
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc/make not installed: cannot build bots/c")
    res = subprocess.run(
        ["make", "-B", "-C", str(ROOT / "bots/c")], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "warning" not in (res.stdout + res.stderr).lower(), res.stderr
    return [str(ROOT / "bots/c/bot")]


def _build_java() -> list[str]:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac/java not installed: cannot build bots/java")
    sources = sorted(str(p) for p in (ROOT / "bots/java").glob("*.java"))
    res = subprocess.run(
        ["javac", "-d", str(ROOT / "bots/java/build"), *sources],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return ["java", "-cp", str(ROOT / "bots/java/build"), "Bot"]


@pytest.fixture(scope="session")
def built_c() -> list[str]:
    return _build_c()


@pytest.fixture(scope="session")
def built_java() -> list[str]:
    return _build_java()


@pytest.fixture(params=["c", "java"])
def bot_name(request) -> str:
    return request.param


@pytest.fixture
def bot_argv(bot_name: str, request) -> list[str]:
    return request.getfixturevalue(f"built_{bot_name}")


@pytest.fixture
def bot(bot_argv: list[str]) -> Iterator[UgiProcess]:
    p = UgiProcess(bot_argv)
    yield p
    p.close()


GAMES = ["egara-guti", "pretwa"]


# --------------------------------------------------------------------------- handshake


def test_handshake(bot: UgiProcess) -> None:
    bot.send("ugi")
    lines = bot.read_until(lambda s: s == "ugiok", timeout=10)
    assert any(ln.startswith("id name ") for ln in lines)
    assert any(ln.startswith("id author ") for ln in lines)
    variant = [ln for ln in lines if ln.startswith("option name UGI_Variant ")]
    assert len(variant) == 1
    tokens = variant[0].split()
    assert tokens[3:6] == ["type", "combo", "default"] and tokens[6] == "egara-guti"
    assert {"egara-guti", "pretwa"} <= {tokens[i + 1] for i, t in enumerate(tokens) if t == "var"}
    assert any(ln.startswith("option name Seed type spin") for ln in lines)
    assert bot.sync() == []


# --------------------------------------------------------------------------- perft


@pytest.mark.parametrize("game", GAMES)
def test_perft_start_positions(bot: UgiProcess, bot_name: str, game: str) -> None:
    bot.variant(game)
    bot.send("position startpos")
    assert bot.fen() == REF.start_fen[game]
    depths = [d for d in sorted(REF.nodes[game]) if d <= MAX_PERFT_DEPTH[bot_name]]
    assert depths
    for d in depths:
        divide, total = bot.perft(d)
        assert total == REF.nodes[game][d], f"{game} perft {d}"
        assert sum(divide.values()) == total
    depth, expected = REF.divide[game]
    assert bot.perft(depth) == (expected, sum(expected.values()))
    # A position given by FEN perfts the same as startpos.
    bot.send(f"position fen {REF.start_fen[game]}")
    assert bot.perft(5)[1] == REF.nodes[game][5]


@pytest.mark.parametrize("case", REF.captures, ids=lambda c: f"{c.game}:{c.fen}")
def test_capture_sequences(bot: UgiProcess, case: CaptureCase) -> None:
    bot.variant(case.game)
    bot.send(f"position fen {case.fen}")
    divide, total = bot.perft(1)
    assert set(divide) == set(case.after)
    assert total == len(case.after)
    for mv, fen_after in case.after.items():
        bot.send(f"position fen {case.fen} moves {mv}")
        assert bot.fen() == fen_after, mv


# --------------------------------------------------------------------------- end rules


def _assert_over(bot: UgiProcess, result: str) -> None:
    assert bot.query("gameover") == "true"
    assert bot.query("result") == result
    assert bot.perft(1) == ({}, 0)
    assert bot.bestmove("go") == "none"
    assert bot.bestmove("go infinite") == "none"


def _assert_running(bot: UgiProcess) -> None:
    assert bot.query("gameover") == "false"
    assert bot.query("result") == "none"


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("1/www3/w5/bbb3 w 0 1", "p1win"),  # Black 3, White 4: White wins on White's turn
        ("1/www3/w5/bbb3 b 0 1", "p1win"),
        ("1/bbb3/b5/ww4 w 0 1", "p2win"),
        ("1/w1w1w1/w5/2wb2 b 0 1", "p1win"),
    ],
)
def test_pretwa_three_or_fewer(bot: UgiProcess, fen: str, result: str) -> None:
    bot.variant("pretwa")
    bot.send(f"position fen {fen}")
    assert bot.sync() == []
    _assert_over(bot, result)


def test_pretwa_both_three_or_fewer_plays_on(bot: UgiProcess) -> None:
    bot.variant("pretwa")
    bot.send("position fen 1/ww4/b5/b5 w 0 1")
    _assert_running(bot)
    assert bot.perft(1)[1] > 0


def test_three_or_fewer_is_pretwa_only(bot: UgiProcess) -> None:
    bot.variant("egara-guti")
    bot.send("position fen bbbb1/3/3/1/3/3/2w2 w 0 1")
    _assert_running(bot)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("bww2/w2/w2/1/3/3/5 b 0 1", "p1win"),  # Black's only piece is blocked
        ("5/3/3/1/2b/2b/2bbw w 0 1", "p2win"),  # White's only piece is blocked
        ("5/3/3/w/3/3/5 b 0 1", "p1win"),  # Black has no pieces
    ],
)
def test_no_legal_move_loses(bot: UgiProcess, fen: str, result: str) -> None:
    bot.variant("egara-guti")
    bot.send(f"position fen {fen}")
    assert bot.sync() == []
    _assert_over(bot, result)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("bbbbb/bbb/bbb/1/www/www/wwwww w 50 1", "draw"),
        ("bbbb1/bbb/bbb/1/www/www/wwwww w 50 1", "p1win"),
        ("bbbbb/bbb/bbb/1/www/www/wwww1 b 77 9", "p2win"),
    ],
)
def test_fifty_plies_from_fen(bot: UgiProcess, fen: str, result: str) -> None:
    bot.variant("egara-guti")
    bot.send(f"position fen {fen}")
    assert bot.sync() == []
    _assert_over(bot, result)


def test_fifty_plies_reached_by_a_step(bot: UgiProcess) -> None:
    bot.variant("egara-guti")
    start = REF.start_fen["egara-guti"].split()[0]
    bot.send(f"position fen {start} w 49 1")
    _assert_running(bot)
    bot.send(f"position fen {start} w 49 1 moves 13-12")  # Black could capture, but clock is 50
    assert bot.fen().split()[2] == "50"
    _assert_over(bot, "draw")


def test_repetition(bot: UgiProcess) -> None:
    bot.variant("egara-guti")
    base = "b4/3/3/1/3/3/4w w 0 1"
    cycle = ["23-22", "1-2", "22-23", "2-1"]
    moves = cycle * 2
    for n in range(len(moves)):
        bot.send(f"position fen {base} moves {' '.join(moves[:n])}".rstrip())
        _assert_running(bot)
    bot.send(f"position fen {base} moves {' '.join(moves)}")  # base occurs for the third time
    _assert_over(bot, "draw")
    # The history starts at the `position` base: the same position given as a fresh FEN
    # has been seen once only.
    bot.send("position fen b4/3/3/1/3/3/4w w 8 5")
    _assert_running(bot)
    bot.send(f"position fen b4/3/3/1/3/3/4w w 8 5 moves {' '.join(cycle)}")
    _assert_running(bot)


def test_repetition_scored_by_pieces(bot: UgiProcess) -> None:
    bot.variant("egara-guti")
    base = "bb3/3/3/1/3/3/4w w 0 1"  # Black 2 pieces, White 1: no capture is possible
    moves = ["23-22", "1-6", "22-23", "6-1"] * 2
    bot.send(f"position fen {base} moves {' '.join(moves[:-1])}")
    _assert_running(bot)
    bot.send(f"position fen {base} moves {' '.join(moves)}")
    _assert_over(bot, "p2win")


# --------------------------------------------------------------------------- bad input

BAD_FENS = [
    "bbbbb/bbb/bbb/1/www/www/wwww w 0 1",  # last row short
    "bbbbb/bbb/bbb/1/www/www/wwwwww w 0 1",  # last row long
    "bbbbb/bbb/bbb/1/www/www/wwwww/1 w 0 1",  # extra row
    "bbbbb/bbb/bbb/www/www/wwwww w 0 1",  # missing row
    "bbbbb/bbb/bbb/0/www/www/wwwww w 0 1",  # zero count
    "bbbbb/bbb/bbb/1/www/www/ww03 w 0 1",  # leading zero
    "bbbbb/bbb/bbb/1/www/www/ww4 w 0 1",  # count past the end of row
    "bbbbb/bbb/bbb/1/wxw/www/wwwww w 0 1",  # bad letter
    "bbbbb/bbb/bbb/1/www/www/wwwww x 0 1",  # bad side
    "bbbbb/bbb/bbb/1/www/www/wwwww w -1 1",  # negative clock
    "bbbbb/bbb/bbb/1/www/www/wwwww w 0 0",  # move number 0
    "bbbbb/bbb/bbb/1/www/www/wwwww w a 1",  # non-numeric clock
    "bbbbb/bbb/bbb/1/www/www/wwwww",  # no side
    "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1 7",  # too many fields
    "1/bbwwwb/bbwwwb/bbwwwb w 0 1",  # a pretwa FEN in egara-guti
    "",
]

BAD_MOVES = [
    "startpos moves 13-12 1-2",  # Black must capture
    "startpos moves 13-13",
    "startpos moves 13--12",
    "startpos moves 013-12",
    "startpos moves 13-12 11x13 zz",
    "startpos moves 12-13",
    "startpos moves 13x12",
    "startpos moves 13-12 11x13 18x8",  # not maximal / not a jump
    "startpos 13-12",  # missing `moves`
    "nowhere",
]


def test_bad_fen_and_moves_keep_position(bot: UgiProcess) -> None:
    bot.variant("egara-guti")
    kept = "bbbbb/bbb/bbb/1/www/w1w/wwwww b 3 7"
    bot.send(f"position fen {kept}")
    assert bot.fen() == kept
    for fen in BAD_FENS:
        bot.send(f"position fen {fen}")
        out = bot.sync()
        assert len(out) == 1 and out[0].startswith("info string error "), (fen, out)
        assert bot.fen() == kept
    for cmd in BAD_MOVES:
        bot.send(f"position {cmd}")
        out = bot.sync()
        assert len(out) == 1 and out[0].startswith("info string error "), (cmd, out)
        assert bot.fen() == kept
    bot.send("position startpos moves 13-12 11x13")  # a legal sequence is accepted
    assert bot.fen() == "bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2"


def test_bad_options_and_commands(bot: UgiProcess) -> None:
    for cmd in [
        "setoption name UGI_Variant value chess",
        "setoption name Seed value -3",
        "setoption name Seed value x",
        "setoption name NoSuchOption value 1",
        "setoption UGI_Variant pretwa",
        "go perft",
        "go perft x",
        "go p1time",
        "go p1time abc",
        "go sideways",
        "query",
        "query colour",
    ]:
        bot.send(cmd)
        out = bot.sync()
        assert len(out) == 1 and out[0].startswith("info string error "), (cmd, out)
    bot.send("hello world")
    assert bot.sync() == ["info string unknown command hello world"]
    assert bot.fen() == REF.start_fen["egara-guti"]
    bot.send("setoption name ugi_variant value pretwa")  # option names are case-insensitive
    assert bot.fen() == REF.start_fen["pretwa"]


def test_huge_lines_do_not_crash(bot: UgiProcess) -> None:
    mib = 1 << 20
    bot.send("x" * mib)
    out = bot.sync()
    assert len(out) == 1 and out[0].startswith("info string unknown command x")
    bot.send("position startpos moves " + "13-12 " * (mib // 6))
    out = bot.sync()
    assert len(out) == 1 and out[0].startswith("info string error ")
    bot.send("position fen " + "b" * mib + " w 0 1")
    out = bot.sync()
    assert len(out) == 1 and out[0].startswith("info string error ")
    bot.send("go " + "infinite " * (mib // 9))
    bot.send("stop")
    assert bot.read().startswith("bestmove ")
    assert bot.fen() == REF.start_fen["egara-guti"]


# --------------------------------------------------------------------------- playing


def test_go_forms_and_stop(bot: UgiProcess) -> None:
    assert bot.query("p1turn") == "true"
    assert bot.bestmove("go p1time 1000 p2time 900 p1inc 10 p2inc 0") in {"13-12", "14-12", "15-12"}
    assert bot.bestmove("go movetime 50") in {"13-12", "14-12", "15-12"}
    assert bot.bestmove("go depth 3 nodes 1000") in {"13-12", "14-12", "15-12"}
    bot.send("go infinite")
    assert bot.sync() == []  # no bestmove before stop, isready still answered
    bot.send("stop")
    assert bot.read() in {"bestmove 13-12", "bestmove 14-12", "bestmove 15-12"}
    assert bot.sync() == []  # a second stop-less sync: nothing pending
    bot.send("stop")
    assert bot.sync() == []  # stop without a search is ignored
    bot.send("position startpos moves 13-12")
    assert bot.query("p1turn") == "false"


def _self_play(bot: UgiProcess, game: str, seed: int) -> tuple[list[str], str]:
    bot.send(f"setoption name Seed value {seed}")
    bot.variant(game)
    bot.send("uginewgame")
    moves: list[str] = []
    for _ in range(3000):
        bot.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        if bot.query("gameover") == "true":
            break
        assert bot.query("p1turn") == ("true" if len(moves) % 2 == 0 else "false")
        divide, total = bot.perft(1)
        assert total == len(divide) > 0
        mv = bot.bestmove("go p1time 5000 p2time 5000")
        assert mv in divide, (mv, moves)
        moves.append(mv)
    else:
        raise AssertionError("game did not end")
    assert bot.query("result") in {"p1win", "p2win", "draw"}
    assert bot.bestmove() == "none"
    return moves, bot.query("result")


@pytest.mark.parametrize("game", GAMES)
def test_self_play(bot: UgiProcess, bot_argv: list[str], game: str) -> None:
    moves, result = _self_play(bot, game, seed=7)
    assert moves
    # Deterministic given Seed: a fresh process with the same seed plays the same game.
    other = UgiProcess(bot_argv)
    try:
        assert _self_play(other, game, seed=7) == (moves, result)
    finally:
        other.close()


def test_greedy_c_takes_most(built_c: list[str]) -> None:
    """The C bot prefers the capture taking the most pieces (reference capture positions)."""
    p = UgiProcess(built_c)
    try:
        for case in REF.captures:
            p.variant(case.game)
            p.send(f"position fen {case.fen}")
            longest = max(mv.count("x") for mv in case.after)
            for seed in range(5):
                p.send(f"setoption name Seed value {seed}")
                mv = p.bestmove()
                assert mv in case.after and mv.count("x") == longest
    finally:
        p.close()


def test_eof_and_quit_exit(bot_argv: list[str]) -> None:
    for final in ["quit\n", ""]:
        proc = subprocess.run(
            bot_argv, input="isready\n" + final, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 0
        assert proc.stdout.splitlines() == ["readyok"]
