"""The C bot in all seven games and its alpha-beta mode (option ``Search``).

Why: the C bot's ``Search = alphabeta`` mode is the compiled material alpha-beta engine
the reference engine is measured against (docs/benchmarks.md), so it must know every
game's board (start perft against the reference figures), see material won or lost a
few plies ahead (positions where exactly one move keeps the material, found with the
rules core), and play whole games legally through the real ``guti``. Its greedy mode,
the default, is covered with the other bots in test_bots.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, UgiProgram
from tests.perft_reference import ALL_GAMES, load_perft_tables, load_start_fens

#: Positions (game, FEN, the one move at ``go depth 2`` that does not lose material):
#: every other step lets the opponent capture more than it gives back.
ONLY_MOVE = [
    ("egara-guti", "b1w2/1w1/1wb/1/bbw/3/b2w1 w 0 1", "10-12"),
    ("egara-guti", "1b1wb/bb1/2w/1/1ww/b2/2w2 w 0 1", "4-8"),
    ("gol-skuish", "1/2w3/6/3b1b/w5/3ww1/1b2bb/4w1 w 0 1", "42-43"),
    ("gol-skuish", "1/2b2w/b2w2/3b2/w2b2/5w/3b2/w5 w 0 1", "11-12"),
]
#: The end rules' names as ``guti match`` prints them after a game (protocol.md 3).
RULE_ENDS = {"three or fewer", "no legal move", "fifty plies", "repetition"}


@pytest.fixture
def bot(c_bot: list[str]) -> Iterator[UgiProgram]:
    b = UgiProgram(c_bot, cwd="/")
    yield b
    b.close()


def test_every_game_is_declared_and_starts_right(bot: UgiProgram) -> None:
    lines = bot.handshake()
    variant = next(x for x in lines if x.startswith("option name UGI_Variant ")).split()
    assert {variant[i + 1] for i, w in enumerate(variant) if w == "var"} == set(ALL_GAMES)
    assert "option name Search type combo default greedy var greedy var alphabeta" in lines
    for game in ALL_GAMES:
        bot.variant(game)
        assert bot.fen() == load_start_fens(ALL_GAMES)[game]


@pytest.mark.parametrize("game", ALL_GAMES)
def test_start_perft_of_every_game_matches_reference(bot: UgiProgram, game: str) -> None:
    table = load_perft_tables(ALL_GAMES)[game]
    depth = max(d for d, n in table.items() if n <= 300_000)
    bot.variant(game)
    bot.send("position startpos")
    for d in range(1, depth + 1):
        assert bot.perft(d)[1] == table[d], (game, d)


def test_bad_search_value_is_one_error_line(bot: UgiProgram) -> None:
    assert bot.ask("setoption name Search value minimax") == [
        "info string error Search must be greedy or alphabeta, got 'minimax'"]
    lines = bot.ask("setoption name UGI_Variant value chess")
    assert len(lines) == 1 and "gol-skuish" in lines[0], lines


@pytest.mark.parametrize(("game", "fen", "move"), ONLY_MOVE)
def test_alphabeta_keeps_the_material(bot: UgiProgram, game: str, fen: str, move: str) -> None:
    bot.variant(game)
    bot.send("setoption name Search value alphabeta")
    bot.send(f"position fen {fen}")
    bot.send("go depth 2")
    lines = bot.read_until(lambda line: line.startswith("bestmove "))
    assert lines[-1] == f"bestmove {move}"
    infos = [line for line in lines if line.startswith("info depth ")]
    assert [int(line.split()[2]) for line in infos] == [1, 2]
    assert infos[-1].endswith(f" pv {move}")


def test_alphabeta_is_deterministic_and_answers_every_go_form(bot: UgiProgram) -> None:
    bot.variant("pretwa")
    bot.send("setoption name Search value alphabeta")
    bot.send("position startpos moves 4-1")
    legal = set(bot.perft(1)[0])
    answers = {bot.bestmove(go) for go in ("go depth 4", "go depth 4", "go nodes 3000",
                                           "go movetime 30", "go p1time 500 p2time 500")}
    assert answers <= legal and len(answers) >= 1
    assert bot.bestmove("go depth 5") == bot.bestmove("go depth 5")
    bot.send("go infinite")
    assert bot.sync() == []  # held until stop, like the greedy mode
    bot.send("stop")
    assert bot.read().removeprefix("bestmove ") in legal


@pytest.mark.slow
@pytest.mark.parametrize("game", ALL_GAMES)
def test_alphabeta_plays_whole_games_legally_through_guti(c_bot: list[str], game: str,
                                                          tmp_path: Path) -> None:
    """Two games against the greedy mode at a short clock: every game ends by a rule of
    the game (no illegal move, no time forfeit, no crash) and the search wins on balance."""
    bot = c_bot[0]
    done = subprocess.run(
        [sys.executable, "-m", "guti.cli", "match",
         "-engine", f"cmd={bot}", "name=ab", "option.Search=alphabeta",
         "-engine", f"cmd={bot}", "name=greedy",
         "-each", "tc=2+0.02", "-game", game, "-games", "2", "-openings", "plies=2",
         "-srand", "3"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    ends = re.findall(r"^Game \d+/2: .*\((.+), \d+ plies\)$", done.stdout, re.M)
    assert len(ends) == 2 and set(ends) <= RULE_ENDS, done.stdout
    score = re.search(r"^Score of ab vs greedy: .* points ([\d.]+)-", done.stdout, re.M)
    assert score is not None and float(score.group(1)) >= 1.5, done.stdout
