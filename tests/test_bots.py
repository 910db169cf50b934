"""Every bundled bot (Python random and greedy, JavaScript, C, Java), driven as a real
process over UGI pipes, against the same behaviours.

Why: the bots are independent, from-scratch implementations of protocol.md; the only way
to trust them as tournament entrants (and as a cross-check of the rules core) is to talk
to the running executables exactly as the referee does and compare their answers with
the reference figures in tests/data/perft_reference.toml. Each behaviour is one test,
parametrised by bot; what only some bots promise (greedy capture choice, random spread)
has tests of its own at the end. The compiled bots are built once per session into a
temporary directory (conftest ``c_bot``/``java_bot``); a missing toolchain skips them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import BOT_NAMES, UgiProgram
from tests.perft_reference import (
    ALL_GAMES,
    GAMES,
    load_capture_positions,
    load_divides,
    load_perft_tables,
    load_start_fens,
)

#: Start-position perft: each bot checks the depths whose reference node count stays
#: under its budget (default run, then ``-m slow``), so each bot does what it does fast.
PERFT_BUDGET = {
    "python-random": (20_000, 250_000),
    "python-greedy": (20_000, 250_000),
    "js": (20_000, 250_000),
    "java": (1_100_000, 6_000_000),
    "c": (6_000_000, 32_000_000),
}
START_MOVES = {"13-12", "14-12", "15-12"}  # Egara-guti: White's three first moves
#: ``go`` lines that end with a bestmove of their own (a bare ``go`` waits for ``stop``).
GO_FORMS = [
    "go p1time 60000 p2time 60000 movestogo 40",
    "go p1time 60000 p2time 60000 p1inc 1000 p2inc 1000",
    "go movetime 50",
    "go depth 3",
    "go nodes 1000",
    "go depth 3 nodes 1000",
]


#: The bots every behaviour is checked on in the fast tier: one interpreted, one compiled.
#: The others (the same behaviours, slower to start: a JVM, Node) are checked in the slow tier.
FAST_TIER_BOTS = ("python-random", "c")


@pytest.fixture(params=[name if name in FAST_TIER_BOTS else pytest.param(name, marks=pytest.mark.slow)
                        for name in BOT_NAMES])
def bot_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def argv(bot_argv: Callable[[str], list[str]], bot_name: str) -> list[str]:
    return bot_argv(bot_name)


def start(argv: list[str]) -> UgiProgram:
    # Run from an unrelated cwd: the bots must find their own files.
    return UgiProgram(argv, cwd="/")


@pytest.fixture
def bot(argv: list[str]) -> Iterator[UgiProgram]:
    b = start(argv)
    yield b
    b.close()


def test_reference_figures_are_there() -> None:
    """Guard: the reference file holds what these tests need (else they would test nothing)."""
    tables = load_perft_tables()
    assert set(tables) == set(GAMES)
    for game in GAMES:
        assert len(tables[game]) >= 10
    assert set(load_divides()) == set(GAMES)
    captures = load_capture_positions()
    assert len(captures) >= 4 and all(all(after.values()) for *_, after in captures)


# ----------------------------------------------------------------- handshake, exit


def test_handshake_declares_options_and_quits(bot: UgiProgram, bot_name: str) -> None:
    bot.send("ugi")
    lines = bot.read_until(lambda line: line == "ugiok", timeout=10)
    assert any(line.startswith("id name ") for line in lines)
    assert any(line.startswith("id author ") for line in lines)
    variant = [line for line in lines if line.startswith("option name UGI_Variant ")]
    assert len(variant) == 1
    words = variant[0].split()
    assert words[3:6] == ["type", "combo", "default"] and words[6] == "egara-guti"
    # the Python and C bots play all seven games, the Java and JS bots the first two
    declared = ALL_GAMES if bot_name.startswith("python") or bot_name == "c" else GAMES
    assert {words[i + 1] for i, w in enumerate(words) if w == "var"} == set(declared)
    assert any(line.startswith("option name Seed type spin") for line in lines)
    assert bot.sync() == []
    assert bot.close() == 0


@pytest.mark.parametrize("final", ["quit\n", ""], ids=["quit", "eof"])
def test_quit_and_eof_end_the_bot(argv: list[str], final: str) -> None:
    proc = subprocess.run(argv, input="isready\n" + final, capture_output=True, text=True,
                          timeout=30, cwd="/")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["readyok"]


# ----------------------------------------------------------------- perft


def _check_start_perft(bot: UgiProgram, game: str, budget: int) -> None:
    table = load_perft_tables()[game]
    depths = [d for d, n in sorted(table.items()) if n <= budget]
    assert len(depths) >= 5, "reference table unexpectedly small"
    bot.variant(game)
    bot.send("position startpos")
    assert bot.fen() == load_start_fens()[game]
    for depth in depths:
        divide, total, order = bot.perft(depth)
        assert total == table[depth], f"{game} perft {depth}"
        assert sum(divide.values()) == total
        assert order == sorted(order, key=lambda s: s.encode()), "divide not in byte order"
    # A position given by FEN perfts the same as startpos.
    bot.send(f"position fen {load_start_fens()[game]}")
    assert bot.perft(5)[1] == table[5]


@pytest.mark.parametrize("game", GAMES)
def test_start_perft_matches_reference(bot: UgiProgram, bot_name: str, game: str) -> None:
    _check_start_perft(bot, game, PERFT_BUDGET[bot_name][0])


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_start_perft_matches_reference_deeper(bot: UgiProgram, bot_name: str, game: str) -> None:
    _check_start_perft(bot, game, PERFT_BUDGET[bot_name][1])


@pytest.mark.parametrize("game", GAMES)
def test_divide_matches_reference(bot: UgiProgram, game: str) -> None:
    depth, expected, total = load_divides()[game]
    bot.variant(game)
    divide, nodes, _ = bot.perft(depth)
    assert divide == expected
    assert nodes == total


@pytest.mark.parametrize(
    "case", load_capture_positions(), ids=lambda c: f"{c[0]}:{c[1].split()[0]}"
)
def test_capture_sequences_match_reference(bot: UgiProgram, case: tuple) -> None:
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
        assert bot.fen() == fen_after, move


# ----------------------------------------------------------------- end rules


def _setup(bot: UgiProgram, game: str, position: str) -> list[str]:
    bot.variant(game)
    bot.send(f"position {position}")
    return bot.sync()


def _assert_over(bot: UgiProgram, result: str) -> None:
    assert bot.query("gameover") == "true"
    assert bot.query("result") == result
    divide, total, _ = bot.perft(1)
    assert divide == {} and total == 0
    assert bot.bestmove("go") == "none"
    assert bot.bestmove("go movetime 100") == "none"
    assert bot.bestmove("go infinite") == "none"


def _assert_running(bot: UgiProgram) -> None:
    assert bot.query("gameover") == "false"
    assert bot.query("result") == "none"


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("1/www3/bbbb2/6 w 0 1", "p2win"),  # White 3, Black 4
        ("1/bbb3/wwwww1/6 b 0 1", "p1win"),  # Black 3, White 5, Black to move
        ("1/www3/w5/bbb3 w 0 1", "p1win"),  # Black 3, White 4: White wins on White's turn
        ("1/www3/w5/bbb3 b 0 1", "p1win"),
        ("1/bbb3/b5/ww4 w 0 1", "p2win"),
        ("1/w1w1w1/w5/2wb2 b 0 1", "p1win"),
    ],
)
def test_pretwa_three_or_fewer(bot: UgiProgram, fen: str, result: str) -> None:
    assert _setup(bot, "pretwa", f"fen {fen}") == []
    _assert_over(bot, result)


@pytest.mark.parametrize("fen", ["1/www3/6/bbb3 w 0 1", "1/ww4/b5/b5 w 0 1"])
def test_pretwa_three_or_fewer_each_plays_on(bot: UgiProgram, fen: str) -> None:
    # Rule 1 needs the other side to have more than three.
    assert _setup(bot, "pretwa", f"fen {fen}") == []
    _assert_running(bot)
    assert bot.perft(1)[1] > 0


@pytest.mark.parametrize("fen", ["www2/3/3/1/3/3/bbbbb w 0 1", "bbbb1/3/3/1/3/3/2w2 w 0 1"])
def test_three_or_fewer_is_pretwa_only(bot: UgiProgram, fen: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_running(bot)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("wbb2/b2/b2/1/3/3/5 w 0 1", "p2win"),  # White on 1 boxed in by 2 3 6 9
        ("bww2/w2/w2/1/3/3/5 b 0 1", "p1win"),  # the mirror, Black to move
        ("bbbbb/3/3/1/3/3/5 w 0 1", "p2win"),  # White has no pieces at all
        ("5/3/3/1/2b/2b/2bbw w 0 1", "p2win"),  # White's only piece is blocked
        ("5/3/3/w/3/3/5 b 0 1", "p1win"),  # Black has no pieces
    ],
)
def test_no_legal_move_loses(bot: UgiProgram, fen: str, result: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_over(bot, result)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("bbbbb/bbb/bbb/1/www/www/wwwww w 50 30", "draw"),
        ("bbbbb/bbb/bb1/1/www/www/wwwww b 57 30", "p1win"),
        ("bbbbb/bbb/bbb/1/www/www/wwwww w 50 1", "draw"),
        ("bbbb1/bbb/bbb/1/www/www/wwwww w 50 1", "p1win"),
        ("bbbbb/bbb/bbb/1/www/www/wwww1 b 77 9", "p2win"),
    ],
)
def test_fen_clock_fifty_is_finished(bot: UgiProgram, fen: str, result: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_over(bot, result)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("bbbbb/bbb/bb1/1/www/www/wwwww w 49 30", "p1win"),
        # Black could capture after 13-12, but the clock has reached 50.
        ("bbbbb/bbb/bbb/1/www/www/wwwww w 49 1", "draw"),
    ],
)
def test_fiftieth_quiet_ply_ends_the_game(bot: UgiProgram, fen: str, result: str) -> None:
    assert _setup(bot, "egara-guti", f"fen {fen}") == []
    _assert_running(bot)
    bot.send(f"position fen {fen} moves 13-12")
    assert bot.sync() == []
    assert bot.fen().split()[2] == "50"
    _assert_over(bot, result)


@pytest.mark.parametrize(
    ("fen", "result"),
    [
        ("w4/3/3/1/3/3/4b w 0 1", "draw"),  # White on 1, Black on 23
        ("w4/3/3/1/3/3/w3b w 0 1", "p1win"),  # plus a White piece on 19
    ],
)
def test_third_repetition_ends_the_game(bot: UgiProgram, fen: str, result: str) -> None:
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


def test_repetition_with_black_to_move_first(bot: UgiProgram) -> None:
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


def test_repetition_scored_by_pieces(bot: UgiProgram) -> None:
    bot.variant("egara-guti")
    base = "bb3/3/3/1/3/3/4w w 0 1"  # Black 2 pieces, White 1: no capture is possible
    moves = ["23-22", "1-6", "22-23", "6-1"] * 2
    bot.send(f"position fen {base} moves {' '.join(moves[:-1])}")
    _assert_running(bot)
    bot.send(f"position fen {base} moves {' '.join(moves)}")
    _assert_over(bot, "p2win")


# ----------------------------------------------------------------- bad input


BAD_POSITIONS = [
    "fen bbbbb/bbb/bbb/1/www/www/wwwwww w 0 1",  # row too long
    "fen bbbbb/bbb/bbb/1/www/www/wwww w 0 1",  # row too short
    "fen bbbbb/bbb/bbb/1/www/www/wwwww/1 w 0 1",  # extra row
    "fen bbbbb/bbb/bbb/www/www/wwwww w 0 1",  # missing row
    "fen bbbbb/bbb/bbb/0/www/www/wwwww w 0 1",  # empty count 0
    "fen bbbbb/bbb/bbb/01/www/www/wwwww w 0 1",  # leading zero
    "fen bbbbb/bbb/bbb/1/www/www/ww03 w 0 1",  # leading zero
    "fen bbbbb/bbb/4/1/www/www/wwwww w 0 1",  # count runs past the row
    "fen bbbbb/bbb/bbb/1/www/www/ww4 w 0 1",  # count past the end of row
    "fen bbbbb/bbb/bbb/1/www/www/wwwww/ w 0 1",  # trailing slash
    "fen bbbbb/bbb/bbb/1/www/www w 0 1",  # too few rows
    "fen bbbbb/bbb/bbx/1/www/www/wwwww w 0 1",  # bad character
    "fen bbbbb/bbb/bbb/1/wxw/www/wwwww w 0 1",  # bad letter
    "fen bbbbb/bbb/bbb/1/www/www/wwwww x 0 1",  # bad side
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w -1 1",  # negative clock
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w a 1",  # non-numeric clock
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 0",  # move number 0
    "fen bbbbb/bbb/bbb/1/www/www/wwwww",  # no side
    "fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 1 9",  # five fields
    "fen 1/bbwwwb/bbwwwb/bbwwwb w 0 1",  # a Pretwa FEN in Egara-guti
    "fen",  # no FEN at all
    "fen ",  # an empty FEN
    "startpos moves 12-13",  # illegal (12 is empty)
    "startpos moves 13-12 1-2",  # Black must capture
    "startpos moves 13-12 11-13",  # capture 11x13 is compulsory
    "startpos moves 13-13",
    "startpos moves 13--12",
    "startpos moves 013-12",
    "startpos moves 13x12",
    "startpos moves 13-12 11x13 99-1",  # no point 99
    "startpos moves 13-12 11x13 banana",  # malformed
    "startpos moves 13-12 11x13 zz",
    "startpos moves 13-12 11x13 14x12",  # 12 is empty
    "startpos moves 13-12 11x13 18x8",  # not maximal / not a jump
    "startpos 13-12",  # missing 'moves'
    "somewhere",
    "",
]


@pytest.mark.parametrize("kept", ["5/3/1b1/w/b1b/1b1/5 w 0 1", "bbbbb/bbb/bbb/1/www/w1w/wwwww b 3 7"])
def test_bad_position_is_rejected_and_old_position_kept(bot: UgiProgram, kept: str) -> None:
    bot.variant("egara-guti")
    bot.send(f"position fen {kept}")
    assert bot.sync() == []
    assert bot.fen() == kept
    for bad in BAD_POSITIONS:
        lines = bot.ask(f"position {bad}".rstrip() if bad != "fen " else "position fen ")
        assert len(lines) == 1 and lines[0].startswith("info string error "), (bad, lines)
        assert bot.fen() == kept, bad
    valid = "bbbbb/bbb/b2/1/www/www/wwwww w 0 1"  # control: close to the bad ones, but valid
    assert bot.ask(f"position fen {valid}") == [], "a valid FEN was rejected"
    assert bot.fen() == valid
    assert bot.ask("position startpos moves 13-12 11x13") == []  # a legal sequence
    assert bot.fen() == "bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2"


def test_unknown_and_malformed_commands_are_reported(bot: UgiProgram) -> None:
    for unknown in ("frobnicate now", "hello world"):
        assert bot.ask(unknown) == [f"info string unknown command {unknown}"]
    for line in (
        "go perft",
        "go perft x",
        "query",
        "query colour",
        "setoption name Seed value -3",
        "setoption name Seed value x",
        "setoption name UGI_Variant value chess",
        "setoption name Nope value 1",
        "setoption Seed 3",
        "setoption UGI_Variant pretwa",
    ):
        lines = bot.ask(line)
        assert len(lines) == 1 and lines[0].startswith("info string error "), (line, lines)
    assert bot.fen() == load_start_fens()["egara-guti"]
    bot.send("setoption name ugi_variant value pretwa")  # option names are case-insensitive
    assert bot.fen() == load_start_fens()["pretwa"]


#: ``go`` lines with a bad argument (protocol.md 5.4, 5.6): each is rejected whole.
BAD_GO = [
    "go p1time",  # missing value
    "go p1time abc",  # not a number
    "go sideways",  # unknown word
    "go ponder",  # not a `go` argument of protocol.md
    "go depth 3 frobnicate 2",  # good arguments do not save a bad one
    "go infinite depth",  # missing value after a flag
    "go depth -1",  # only times may be below 0
    "go movestogo -2",
    "go nodes 1.5",
    "go p1time 1000000000000000",  # 16 digits: one more than the 15 allowed
    "go depth 9999999999999999",
    "go perft 1001",  # perft goes up to 1000
    "go perft -1",
    "go perft 3 sideways",
]


def test_bad_go_is_rejected_whole(bot: UgiProgram) -> None:
    """protocol.md 5.4: a bad argument to ``go`` rejects the whole command: one error line,
    no search (``stop`` then has nothing to end), no ``bestmove``, the position unchanged."""
    bot.send("position startpos moves 13-12")
    for line in BAD_GO:
        lines = bot.ask(line)
        assert len(lines) == 1 and lines[0].startswith("info string error "), (line, lines)
        assert bot.ask("stop") == [], (line, "a search was started")
    assert bot.fen() == "bbbbb/bbb/bbb/w/1ww/www/wwwww b 1 1"
    assert bot.bestmove("go depth 1") == "11x13"  # the only move: the bot is still playable


def test_bad_go_during_go_infinite_leaves_it_running(bot: UgiProgram) -> None:
    """A rejected line leaves the engine as it was (5.4): the held search goes on, and the
    next ``stop`` ends it with one bestmove."""
    bot.send("position startpos")
    bot.send("go infinite")
    for line in ("go sideways", "go depth x", "position startpos moves 99-12"):
        lines = bot.ask(line)
        assert len(lines) == 1 and lines[0].startswith("info string error "), (line, lines)
    bot.send("stop")
    assert bot.read() in {f"bestmove {m}" for m in START_MOVES}
    assert bot.sync() == []


def test_megabyte_lines_do_not_crash(bot: UgiProgram) -> None:
    mib = 1 << 20
    lines = bot.ask("x" * mib)
    assert len(lines) == 1 and lines[0].startswith("info string unknown command x")
    assert len(lines[0]) < 10_000
    for huge in (
        "position startpos moves " + "13-12 11x13 " * 90_000,
        "position startpos moves " + "13-12 " * (mib // 6),
        "position fen " + "b" * mib + " w 0 1",
    ):
        lines = bot.ask(huge)
        assert len(lines) == 1 and lines[0].startswith("info string error "), lines
    bot.send("go " + "infinite " * (mib // 9))
    bot.send("stop")
    assert bot.read().startswith("bestmove ")
    assert bot.fen() == load_start_fens()["egara-guti"]
    assert bot.query("p1turn") == "true"


def test_variant_switch_resets_to_that_start(bot: UgiProgram) -> None:
    bot.send("position startpos moves 13-12 11x13")
    assert bot.query("p1turn") == "true"
    bot.send("position startpos moves 13-12")
    assert bot.query("p1turn") == "false"
    bot.send("setoption name ugi_variant value pretwa")
    assert bot.fen() == load_start_fens()["pretwa"]
    assert bot.query("p1turn") == "true"


# ----------------------------------------------------------------- playing


def test_go_forms_infinite_and_stop(bot: UgiProgram) -> None:
    assert bot.query("p1turn") == "true"
    assert set(bot.perft(1)[0]) == START_MOVES
    for go in GO_FORMS:
        assert bot.bestmove(go) in START_MOVES, go
    for go in WAITING_GO_FORMS:
        bot.send(go)
        assert bot.sync() == [], go  # no bestmove before stop, isready answered at once
        bot.send("stop")
        assert bot.read() in {f"bestmove {m}" for m in START_MOVES}  # the answer to stop, next
        assert bot.sync() == []  # nothing else pending
    bot.send("stop")
    assert bot.sync() == []  # stop without a search is ignored
    bot.send("position startpos moves 13-12")
    assert bot.query("p1turn") == "false"


#: ``go`` lines whose bestmove waits for ``stop`` (protocol.md 5.2 ``go``, 5.6): a bare
#: ``go`` means ``go infinite``, and ``infinite`` wins over every limit given with it.
WAITING_GO_FORMS = [
    "go infinite",
    "go",
    "go infinite depth 1",
    "go depth 1 infinite",
    "go infinite movetime 1 nodes 1",
    "go p1time 10 p2time 10 movestogo 1 infinite",
]


def _self_play(bot: UgiProgram, game: str, seed: int) -> tuple[list[str], str]:
    """The bot plays both sides from the start until ``query gameover`` says true,
    checking every answer; (moves, result). The game must end: the 50-ply clock and
    the finite number of captures bound its length."""
    bot.send(f"setoption name Seed value {seed}")
    bot.variant(game)
    moves: list[str] = []
    for ply in range(3000):
        bot.send(f"position startpos moves {' '.join(moves)}".rstrip())
        legal, total, _ = bot.perft(1)
        assert total == len(legal)
        if bot.query("gameover") == "true":
            assert legal == {}
            result = bot.query("result")
            assert result in ("p1win", "p2win", "draw")
            assert bot.bestmove("go") == "none"  # at once, even for a bare go
            return moves, result
        assert legal
        assert bot.query("result") == "none"
        assert bot.query("p1turn") == ("true" if ply % 2 == 0 else "false")
        move = bot.bestmove(GO_FORMS[ply % len(GO_FORMS)])
        assert move in legal, (moves, move)
        moves.append(move)
    raise AssertionError("game not over after 3000 plies")


@pytest.mark.parametrize("game", GAMES)
def test_self_play_to_the_end_is_reproducible(bot: UgiProgram, argv: list[str],
                                               game: str) -> None:
    moves, result = _self_play(bot, game, seed=7)
    assert moves
    # Deterministic given Seed: a fresh process with the same seed plays the same game.
    other = start(argv)
    try:
        assert _self_play(other, game, seed=7) == (moves, result)
    finally:
        other.close()


@pytest.mark.parametrize("game", GAMES)
def test_seed_reproduces_the_choices(argv: list[str], game: str) -> None:
    choices = []
    for _ in range(2):
        b = start(argv)
        try:
            b.send("setoption name Seed value 12345")
            b.variant(game)
            b.send("position startpos")
            choices.append([b.bestmove("go movetime 10") for _ in range(30)])
        finally:
            b.close()
    assert len(set(choices[0])) > 1, "30 choices among 3 start moves were all the same"
    assert choices[0] == choices[1]


def test_seed_reapplies_at_each_new_game(bot: UgiProgram) -> None:
    first = _self_play(bot, "pretwa", seed=99)
    second = _self_play(bot, "pretwa", seed=99)  # sends Seed and uginewgame again
    assert first == second


# ----------------------------------------------------------------- protocol.md 5.6, decided


def test_bare_go_waits_for_stop(bot: UgiProgram) -> None:
    bot.send("position startpos moves 13-12 11x13")
    bot.send("go")
    assert bot.sync() == []  # isready is answered at once; no bestmove yet
    bot.send("stop")
    assert bot.read() in {"bestmove 14x12", "bestmove 16x12"}  # the two recaptures


def test_go_infinite_with_no_move_answers_none_at_once(bot: UgiProgram) -> None:
    bot.send("position fen bbbbb/3/3/1/3/3/5 w 0 1")  # White has no pieces
    for go in WAITING_GO_FORMS:
        assert bot.ask(go) == ["bestmove none"], go


@pytest.mark.parametrize(
    "go",
    [
        "go p1time 2000 p2time 2000 movestogo 1",
        "go movestogo 40 p1time 60000 p2time 60000 p1inc 0 p2inc 0",
        "go movestogo 999999999999999",
    ],
)
def test_movestogo_is_accepted(bot: UgiProgram, go: str) -> None:
    bot.send("position startpos")
    lines = bot.ask(go)
    assert len(lines) == 1 and lines[0].split()[:1] == ["bestmove"], lines
    assert lines[0].split()[1] in START_MOVES


@pytest.mark.parametrize(
    "go",
    [
        "go p1time -5 p2time -1000",  # times below 0 read as 0
        "go p1time 0 p2time 0 p1inc -1 p2inc -1",
        "go p1time 999999999999999 p2time 999999999999999 p1inc 999999999999999",
        "go movetime 999999999999999",
        "go depth 999999999999999 nodes 999999999999999",
        "go depth 000000000000001",  # 15 digits, leading zeros included
    ],
)
def test_largest_and_negative_go_numbers_are_accepted(bot: UgiProgram, go: str) -> None:
    lines = bot.ask(go)
    assert len(lines) == 1 and lines[0].split()[:1] == ["bestmove"], lines
    assert lines[0].split()[1] in START_MOVES


def test_perft_depth_goes_up_to_1000(bot: UgiProgram) -> None:
    # A finished position has no moves, so even perft 1000 answers at once.
    bot.send("position fen bbbbb/3/3/1/3/3/5 w 0 1")
    assert bot.ask("go perft 1000") == ["nodes 0"]
    lines = bot.ask("go perft 1001")
    assert len(lines) == 1 and lines[0].startswith("info string error "), lines


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        ("egara-guti", ["99-12", "24-12", "12-24", "13-12 11x13 99x1"]),
        ("pretwa", ["99-1", "20-1", "5-20"]),
    ],
)
def test_move_naming_a_point_the_board_lacks_is_rejected_whole(
    bot: UgiProgram, game: str, moves: list[str]
) -> None:
    bot.variant(game)
    bot.send("position startpos")
    legal = sorted(bot.perft(1)[0])
    bot.send(f"position startpos moves {legal[0]}")
    kept = bot.fen()
    assert kept != load_start_fens()[game]
    for bad in moves:
        lines = bot.ask(f"position startpos moves {bad}")
        assert len(lines) == 1 and lines[0].startswith("info string error "), (bad, lines)
        assert bot.fen() == kept, bad  # all or nothing: the old position is kept


@pytest.mark.parametrize(
    "numbers",
    ["00 1", "07 1", "0 00", "0 07", "0 0001", "1000000000 1", "0 1000000000",
     "99999999999999999999 1", "+1 1", "0 -1"],
)
def test_fen_clock_and_move_are_bounded_without_leading_zeros(bot: UgiProgram,
                                                               numbers: str) -> None:
    kept = bot.fen()
    lines = bot.ask(f"position fen bbbbb/bbb/bbb/1/www/www/wwwww w {numbers}")
    assert len(lines) == 1 and lines[0].startswith("info string error "), lines
    assert bot.fen() == kept


@pytest.mark.parametrize("numbers", ["0 999999999", "999999999 999999999", "49 10"])
def test_largest_fen_clock_and_move_are_accepted(bot: UgiProgram, numbers: str) -> None:
    fen = f"bbbbb/bbb/bbb/1/www/www/wwwww w {numbers}"
    assert bot.ask(f"position fen {fen}") == []
    assert bot.fen() == fen


def test_every_declared_variant_is_accepted_lower_case_and_resets(bot: UgiProgram) -> None:
    bot.send("ugi")
    lines = bot.read_until(lambda line: line == "ugiok")
    words = next(x for x in lines if x.startswith("option name UGI_Variant ")).split()
    declared = [words[i + 1] for i, w in enumerate(words) if w == "var"]
    assert "egara-guti" in declared and "pretwa" in declared
    for game in declared:
        assert bot.ask(f"setoption name UGI_Variant value {game}") == [], game
        start = bot.fen()
        if game in load_start_fens():
            assert start == load_start_fens()[game]
        first = sorted(bot.perft(1)[0])[0]
        assert bot.ask(f"position startpos moves {first}") == []
        assert bot.fen() != start
        # Setting the same game again resets to its start position.
        assert bot.ask(f"setoption name UGI_Variant value {game}") == [], game
        assert bot.fen() == start, game


@pytest.mark.parametrize("game", GAMES)
def test_isready_after_go_perft_follows_its_lines(bot: UgiProgram, bot_name: str,
                                                  game: str) -> None:
    """``go perft`` is not a search: ``isready`` sent right after it is answered after the
    ``nodes`` line (everything before readyok is the whole perft answer)."""
    table = load_perft_tables()[game]
    depth = max(d for d, n in table.items() if n <= PERFT_BUDGET[bot_name][0])
    bot.variant(game)
    bot.send("position startpos")
    lines = bot.ask(f"go perft {depth}", timeout=120)
    assert lines[-1] == f"nodes {table[depth]}", lines[-3:]
    assert all(": " in line for line in lines[:-1])
    assert sum(int(line.split(": ")[1]) for line in lines[:-1]) == table[depth]


def test_isready_during_go_infinite_comes_at_once(bot: UgiProgram) -> None:
    bot.send("go infinite")
    for _ in range(3):
        assert bot.sync() == []  # readyok at once; the search goes on
    bot.send("stop")
    assert bot.read() in {f"bestmove {m}" for m in START_MOVES}


# ----------------------------------------------------------------- what only some bots do


@pytest.mark.parametrize("bot_name", ["python-greedy", "js", "c"])
def test_greedy_bots_take_the_most_pieces(bot: UgiProgram) -> None:
    checked = 0
    for game, fen, moves, _ in load_capture_positions():
        takes = {m: m.count("x") for m in moves if "x" in m}
        most = max(takes.values())
        best = {m for m, n in takes.items() if n == most}
        bot.variant(game)
        for seed in range(9):
            bot.send(f"setoption name Seed value {seed}")
            bot.send(f"position fen {fen}")
            assert bot.bestmove("go depth 1") in best, (game, fen)
        checked += len(best) < len(moves)
    assert checked, "no reference position separates greedy from random play"


@pytest.mark.parametrize("bot_name", ["python-random", "java"])
def test_random_bots_play_more_than_the_biggest_capture(bot: UgiProgram) -> None:
    game, fen, moves, _ = next(c for c in load_capture_positions() if c[1].startswith("b/wb1b2"))
    bot.send("setoption name Seed value 3")  # reproducible, so never flaky
    bot.variant(game)
    bot.send(f"position fen {fen}")
    played = {bot.bestmove("go movetime 10") for _ in range(40)}
    assert played == moves
