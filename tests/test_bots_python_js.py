"""The Python and JavaScript bots, driven as real processes over UGI pipes.

Why: the bots are independent, from-scratch implementations of protocol.md; the
only way to trust them as tournament entrants (and as a cross-check of the
rules core) is to talk to the running executables exactly as the referee does
and compare their answers with the reference figures in tests/data/perft_reference.toml.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perft_reference import (  # noqa: E402
    ALL_GAMES,
    load_capture_positions,
    load_divides,
    load_perft_tables,
    load_start_fens,
)

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")
LINE_TIMEOUT = 15.0  # generous: a shared, noisy 2-core machine
PERFT_BUDGET = 20_000  # default run: depths whose node count stays under this
SLOW_PERFT_BUDGET = 250_000

BOTS = {
    "python-random": [sys.executable, str(ROOT / "bots" / "python" / "random_bot.py")],
    "python-greedy": [sys.executable, str(ROOT / "bots" / "python" / "greedy_bot.py")],
    "js": [NODE or "node", str(ROOT / "bots" / "js" / "bot.js")],
}
GAMES = ("egara-guti", "pretwa")


class Bot:
    """A bot process with a reader thread, so every read can time out."""

    def __init__(self, argv: list[str]):
        # Run from an unrelated cwd: the bots must find their own modules.
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
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

    def read(self, timeout: float = LINE_TIMEOUT) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"bot sent nothing for {timeout} s") from None
        if line is None:
            raise AssertionError(f"bot closed its output (exit code {self.proc.poll()})")
        return line

    def read_until(self, prefix: str, timeout: float = LINE_TIMEOUT) -> list[str]:
        """All lines up to and including the first that starts with ``prefix``."""
        out = []
        while True:
            out.append(self.read(timeout))
            if out[-1].startswith(prefix):
                return out

    def sync(self) -> list[str]:
        """Lines sent before answering ``isready`` (the readyok itself dropped)."""
        self.send("isready")
        return self.read_until("readyok")[:-1]

    def ask(self, what: str) -> str:
        self.send(f"query {what}")
        line = self.read_until("response ")[-1]
        return line.split()[1]

    def fen(self) -> str:
        self.send("d")
        lines = [line for line in self.sync() if line.startswith("fen ")]
        assert len(lines) == 1, f"'d' gave {len(lines)} fen lines"
        return lines[0][len("fen ") :]

    def perft(self, depth: int, timeout: float = 120.0) -> tuple[dict[str, int], int, list[str]]:
        """(move -> count, total, moves in the order sent) of ``go perft depth``."""
        self.send(f"go perft {depth}")
        lines = self.read_until("nodes ", timeout)
        divide: dict[str, int] = {}
        order: list[str] = []
        for line in lines[:-1]:
            move, _, count = line.partition(": ")
            assert count.isdigit(), f"unexpected perft line {line!r}"
            divide[move] = int(count)
            order.append(move)
        return divide, int(lines[-1].split()[1]), order

    def bestmove(self, go: str = "go") -> str:
        self.send(go)
        return self.read_until("bestmove ")[-1].split()[1]

    def variant(self, game: str) -> None:
        self.send(f"setoption name UGI_Variant value {game}")
        self.send("uginewgame")

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except BrokenPipeError:
                pass
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture(params=list(BOTS))
def bot_argv(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "js" and NODE is None:
        pytest.skip("node is not installed; the JavaScript bot cannot run")
    return BOTS[request.param]


@pytest.fixture
def bot(bot_argv: list[str]) -> Iterator[Bot]:
    b = Bot(bot_argv)
    yield b
    b.close()


# ----------------------------------------------------------------- handshake


def test_handshake_declares_options_and_quits(bot: Bot, bot_argv: list[str]) -> None:
    bot.send("ugi")
    lines = bot.read_until("ugiok", timeout=10)
    assert any(line.startswith("id name ") for line in lines)
    assert any(line.startswith("id author ") for line in lines)
    variant = next(line for line in lines if line.startswith("option name UGI_Variant "))
    words = variant.split()
    assert words[3:5] == ["type", "combo"]
    assert words[words.index("default") + 1] == "egara-guti"
    # the Python bots play all seven games, the JS bot the first two (bots/README.md)
    declared = ALL_GAMES if bot_argv[-1].endswith(".py") else GAMES
    assert {words[i + 1] for i, w in enumerate(words) if w == "var"} == set(declared)
    seed = next(line for line in lines if line.startswith("option name Seed "))
    assert "type spin" in seed
    assert bot.sync() == []
    assert bot.close() == 0


def test_eof_ends_the_bot(bot: Bot) -> None:
    assert bot.sync() == []
    assert bot.proc.stdin is not None
    bot.proc.stdin.close()
    assert bot.proc.wait(timeout=10) == 0


# ----------------------------------------------------------------- perft


def _check_start_perft(bot: Bot, game: str, budget: int) -> None:
    table = load_perft_tables()[game]
    depths = [d for d, n in sorted(table.items()) if n <= budget]
    assert len(depths) >= 5, "reference table unexpectedly small"
    bot.variant(game)
    assert bot.fen() == load_start_fens()[game]
    for depth in depths:
        divide, total, order = bot.perft(depth)
        assert total == table[depth], f"{game} perft {depth}"
        assert sum(divide.values()) == total
        assert order == sorted(order, key=lambda s: s.encode())


@pytest.mark.parametrize("game", GAMES)
def test_start_perft_matches_reference(bot: Bot, game: str) -> None:
    _check_start_perft(bot, game, PERFT_BUDGET)


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_start_perft_matches_reference_deeper(bot: Bot, game: str) -> None:
    _check_start_perft(bot, game, SLOW_PERFT_BUDGET)


@pytest.mark.parametrize("game", GAMES)
def test_divide_matches_reference(bot: Bot, game: str) -> None:
    depth, expected, total = load_divides()[game]
    bot.variant(game)
    divide, nodes, _ = bot.perft(depth)
    assert divide == expected
    assert nodes == total


@pytest.mark.parametrize(
    "case", load_capture_positions(), ids=lambda c: f"{c[0]}:{c[1].split()[0]}"
)
def test_capture_sequences_match_reference(bot: Bot, case: tuple) -> None:
    game, fen, moves, after = case
    bot.variant(game)
    bot.send(f"position fen {fen}")
    assert bot.fen() == fen
    divide, total, _ = bot.perft(1)
    assert set(divide) == moves
    assert total == len(moves)
    for move, fen_after in after.items():
        bot.send(f"position fen {fen} moves {move}")
        assert bot.sync() == []
        assert bot.fen() == fen_after


# ----------------------------------------------------------------- end rules


def _setup(bot: Bot, game: str, position: str) -> list[str]:
    bot.variant(game)
    bot.send(f"position {position}")
    return bot.sync()


def _assert_over(bot: Bot, result: str) -> None:
    assert bot.ask("gameover") == "true"
    assert bot.ask("result") == result
    assert bot.bestmove("go movetime 100") == "none"
    divide, total, _ = bot.perft(1)
    assert divide == {} and total == 0


def _assert_running(bot: Bot) -> None:
    assert bot.ask("gameover") == "false"
    assert bot.ask("result") == "none"


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("1/www3/bbbb2/6 w 0 1", "p2win"),  # White 3, Black 4
        ("1/bbb3/wwwww1/6 b 0 1", "p1win"),  # Black 3, White 5, Black to move
    ],
)
def test_pretwa_three_or_fewer(bot: Bot, fen: str, result: str) -> None:
    assert _setup(bot, "pretwa", f"fen {fen}") == []
    _assert_over(bot, result)


def test_pretwa_three_each_plays_on(bot: Bot) -> None:
    # Rule 1 needs the other side to have more than three.
    assert _setup(bot, "pretwa", "fen 1/www3/6/bbb3 w 0 1") == []
    _assert_running(bot)


def test_egara_three_or_fewer_is_not_a_rule(bot: Bot) -> None:
    assert _setup(bot, "egara-guti", "fen www2/3/3/1/3/3/bbbbb w 0 1") == []
    _assert_running(bot)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("wbb2/b2/b2/1/3/3/5 w 0 1", "p2win"),  # White on 1 boxed in by 2 3 6 9
        ("bww2/w2/w2/1/3/3/5 b 0 1", "p1win"),  # the mirror, Black to move
        ("bbbbb/3/3/1/3/3/5 w 0 1", "p2win"),  # White has no pieces at all
    ],
)
def test_no_legal_move_loses(bot: Bot, fen: str, result: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_over(bot, result)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("bbbbb/bbb/bbb/1/www/www/wwwww w 50 30", "draw"),
        ("bbbbb/bbb/bb1/1/www/www/wwwww b 57 30", "p1win"),
    ],
)
def test_fen_clock_fifty_is_finished(bot: Bot, fen: str, result: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_over(bot, result)


def test_fiftieth_quiet_ply_ends_the_game(bot: Bot) -> None:
    fen = "bbbbb/bbb/bb1/1/www/www/wwwww w 49 30"
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_running(bot)
    bot.send(f"position fen {fen} moves 13-12")
    assert bot.sync() == []
    _assert_over(bot, "p1win")


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("w4/3/3/1/3/3/4b w 0 1", "draw"),  # White on 1, Black on 23
        ("w4/3/3/1/3/3/w3b w 0 1", "p1win"),  # plus a White piece on 19
    ],
)
def test_third_repetition_ends_the_game(bot: Bot, fen: str, result: str) -> None:
    shuffle = ["1-2", "23-22", "2-1", "22-23"]
    bot.variant("egara-guti")
    for plies in range(1, 8):
        bot.send(f"position fen {fen} moves {' '.join((shuffle * 2)[:plies])}")
        assert bot.sync() == []
        _assert_running(bot)
    bot.send(f"position fen {fen} moves {' '.join(shuffle * 2)}")
    assert bot.sync() == []
    assert bot.fen().split()[:2] == fen.split()[:2]
    _assert_over(bot, result)
    # The history starts at the `position` base: the same cells reached from a
    # later base have occurred only twice.
    bot.send(f"position fen {fen} moves {' '.join(shuffle)}")
    later = bot.fen()
    bot.send(f"position fen {later} moves {' '.join(shuffle)}")
    assert bot.sync() == []
    _assert_running(bot)


# ----------------------------------------------------------------- bad input


BAD_POSITIONS = [
    "fen bbbbb/bbb/bbb/1/www/www/wwwwww w 0 1",  # row too long
    "fen bbbbb/bbb/bbb/1/www/www/wwww w 0 1",  # row too short
    "fen bbbbb/bbb/bbb/0/www/www/wwwww w 0 1",  # empty count 0
    "fen bbbbb/bbb/bbb/01/www/www/wwwww w 0 1",  # leading zero
    "fen bbbbb/bbb/b2/1/www/www/wwwww w 0 1",  # (valid: control below)
    "fen bbbbb/bbb/4/1/www/www/wwwww w 0 1",  # count runs past the row
    "fen bbbbb/bbb/bbb/1/www/www/wwwww/ w 0 1",  # trailing slash
    "fen bbbbb/bbb/bbb/1/www/www w 0 1",  # too few rows
    "fen bbbbb/bbb/bbx/1/www/www/wwwww w 0 1",  # bad character
    "fen bbbbb/bbb/bbb/1/www/www/wwwww x 0 1",  # bad side
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w -1 1",  # negative clock
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 0",  # move number 0
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 1 9",  # five fields
    "fen 1/bbwwwb/bbwwwb/bbwwwb w 0 1",  # a Pretwa FEN in Egara-guti
    "fen",  # no FEN at all
    "startpos moves 12-13",  # illegal (12 is empty)
    "startpos moves 13-12 11-13",  # capture 11x13 is compulsory
    "startpos moves 13-12 11x13 99-1",  # no point 99
    "startpos moves 13-12 11x13 banana",  # malformed
    "startpos moves 13-12 11x13 14x12",  # 12 is empty
    "startpos 13-12",  # missing 'moves'
    "somewhere",
    "",
]


def test_bad_position_is_rejected_and_old_position_kept(bot: Bot) -> None:
    kept = "5/3/1b1/w/b1b/1b1/5 w 0 1"
    bot.variant("egara-guti")
    bot.send(f"position fen {kept}")
    assert bot.sync() == []
    for bad in BAD_POSITIONS:
        bot.send(f"position {bad}".rstrip())
        lines = bot.sync()
        if bad == "fen bbbbb/bbb/b2/1/www/www/wwwww w 0 1":
            assert lines == [], "a valid FEN was rejected"
            assert bot.fen() == bad[4:]
            bot.send(f"position fen {kept}")
            continue
        assert len(lines) == 1 and lines[0].startswith("info string error"), (bad, lines)
        assert bot.fen() == kept, bad


def test_unknown_and_malformed_commands_are_reported(bot: Bot) -> None:
    bot.send("frobnicate now")
    assert bot.sync() == ["info string unknown command frobnicate now"]
    for line in (
        "go perft x",
        "query colour",
        "setoption name Seed value -3",
        "setoption name UGI_Variant value chess",
        "setoption name Nope value 1",
        "setoption Seed 3",
    ):
        bot.send(line)
        lines = bot.sync()
        assert len(lines) == 1 and lines[0].startswith("info string error"), (line, lines)
    assert bot.fen() == load_start_fens()["egara-guti"]


def test_megabyte_lines_do_not_crash(bot: Bot) -> None:
    bot.send("x" * (1 << 20))
    lines = bot.sync()
    assert len(lines) == 1 and lines[0].startswith("info string unknown command x")
    assert len(lines[0]) < 10_000
    bot.send("position startpos moves " + "13-12 11x13 " * 90_000)
    lines = bot.sync()
    assert len(lines) == 1 and lines[0].startswith("info string error")
    assert bot.fen() == load_start_fens()["egara-guti"]
    assert bot.ask("p1turn") == "true"


def test_variant_switch_resets_to_that_start(bot: Bot) -> None:
    bot.send("position startpos moves 13-12 11x13")
    assert bot.ask("p1turn") == "true"
    bot.send("position startpos moves 13-12")
    assert bot.ask("p1turn") == "false"
    bot.send("setoption name ugi_variant value pretwa")
    assert bot.fen() == load_start_fens()["pretwa"]
    assert bot.ask("p1turn") == "true"


# ----------------------------------------------------------------- playing


def test_go_infinite_waits_for_stop(bot: Bot) -> None:
    bot.send("go infinite")
    assert bot.sync() == []  # no bestmove yet, but isready is answered
    bot.send("stop")
    move = bot.read_until("bestmove ")[-1].split()[1]
    divide, _, _ = bot.perft(1)
    assert move in divide
    bot.send("stop")  # stop with no search: ignored
    assert bot.sync() == []


GO_FORMS = [
    "go",
    "go p1time 60000 p2time 60000 p1inc 1000 p2inc 1000",
    "go movetime 50",
    "go depth 3",
    "go nodes 1000",
]


def _self_play(bot: Bot, game: str, max_plies: int | None = None) -> list[str]:
    """Let the bot play both sides from the start, checking every answer.

    Plays until ``query gameover`` says true (then checks the finished state),
    or for ``max_plies`` plies when given. Without a limit the game must end:
    the 50-ply clock and the finite number of captures bound its length.
    """
    bot.variant(game)
    moves: list[str] = []
    limit = max_plies if max_plies is not None else 3000
    for ply in range(limit):
        bot.send(f"position startpos moves {' '.join(moves)}".rstrip())
        legal, total, _ = bot.perft(1)
        assert total == len(legal)
        if bot.ask("gameover") == "true":
            assert legal == {}
            assert bot.ask("result") in ("p1win", "p2win", "draw")
            assert bot.bestmove() == "none"
            return moves
        assert bot.ask("result") == "none"
        assert bot.ask("p1turn") == ("true" if ply % 2 == 0 else "false")
        move = bot.bestmove(GO_FORMS[ply % len(GO_FORMS)])
        assert move in legal, (moves, move)
        moves.append(move)
    assert max_plies is not None, f"game not over after {limit} plies"
    return moves


@pytest.mark.parametrize("game", GAMES)
def test_self_play_until_game_over(bot: Bot, game: str) -> None:
    bot.send("setoption name Seed value 7")
    moves = _self_play(bot, game)
    assert moves


@pytest.mark.parametrize("game", GAMES)
def test_seed_reproduces_the_game(bot_argv: list[str], game: str) -> None:
    games = []
    for _ in range(2):
        b = Bot(bot_argv)
        try:
            b.send("setoption name Seed value 12345")
            moves = _self_play(b, game, max_plies=60)
            b.send("position startpos")
            answers = [b.bestmove("go movetime 10") for _ in range(30)]
            games.append((moves, answers))
        finally:
            b.close()
    assert len(set(games[0][1])) > 1, "30 choices among 3 start moves were all the same"
    assert games[0] == games[1]


def test_seed_reapplies_at_each_new_game(bot: Bot) -> None:
    bot.send("setoption name Seed value 99")
    first = _self_play(bot, "pretwa")
    second = _self_play(bot, "pretwa")  # _self_play sends uginewgame again
    assert first == second


@pytest.mark.parametrize("name", ["python-greedy", "js"])
def test_greedy_bots_take_the_most_pieces(name: str) -> None:
    if name == "js" and NODE is None:
        pytest.skip("node is not installed; the JavaScript bot cannot run")
    checked = 0
    for game, fen, moves, _ in load_capture_positions():
        takes = {m: m.count("x") for m in moves if "x" in m}
        most = max(takes.values())
        best = {m for m, n in takes.items() if n == most}
        b = Bot(BOTS[name])
        try:
            b.variant(game)
            for seed in range(1, 9):
                b.send(f"setoption name Seed value {seed}")
                b.send(f"position fen {fen}")
                assert b.bestmove() in best, (game, fen)
        finally:
            b.close()
        checked += len(best) < len(moves)
    assert checked, "no reference position separates greedy from random play"


def test_random_bot_plays_more_than_the_biggest_capture() -> None:
    game, fen, moves, _ = next(c for c in load_capture_positions() if c[1].startswith("b/wb1b2"))
    b = Bot(BOTS["python-random"])
    try:
        b.send("setoption name Seed value 3")  # reproducible, so never flaky
        b.variant(game)
        b.send(f"position fen {fen}")
        played = {b.bestmove() for _ in range(40)}
    finally:
        b.close()
    assert played == moves
