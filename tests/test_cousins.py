"""The five cousins (Lau kata kati, Dash-guti, Gol-skuish, Alquerque, Butterfly), end to end.

Why: the cousins are nothing but entries of the rules core's game table, so these tests check
that the entries say what protocol.md says (perft and divides against the reference figures,
the board's edges, the end rules on hand-built positions, FEN, the picture, the worked
capture examples of protocol.md) and that every program that names games plays them: the
Python bots (their own rules code, against the same reference figures) and a real
``guti match`` of the reference engine against each Python bot in every cousin.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from guti.referee.game.reasons import Reason
from guti.referee.tools import check_cases
from guti.rules import GAMES, Board, RulesError, divide, perft
from tests.conftest import GUTI, UgiProgram, parse_pdn
from tests.perft_reference import (
    ALL_GAMES,
    load_divides,
    load_perft_tables,
    load_start_fens,
)
from tests.test_bots_vs_engine import _engine_args, _replay

ROOT = Path(__file__).resolve().parent.parent
COUSINS = ("lau-kata-kati", "dash-guti", "gol-skuish", "alquerque", "butterfly")
TABLES = load_perft_tables(COUSINS)
FAST_LIMIT = 60_000  # nodes; deeper figures run under -m slow
BOT_BUDGET = 20_000  # the bots' perft is slower: depths under this by default
PYTHON_BOTS = {
    "python-random": [sys.executable, str(ROOT / "bots" / "python" / "random_bot.py")],
    "python-greedy": [sys.executable, str(ROOT / "bots" / "python" / "greedy_bot.py")],
}


def _perft_cases(fast: bool):
    for game, table in TABLES.items():
        for depth, nodes in table.items():
            if (nodes <= FAST_LIMIT) == fast:
                yield pytest.param(game, depth, nodes, id=f"{game}-{depth}")


# --- the game table ---------------------------------------------------------------------------


def test_the_rules_core_plays_every_game_of_the_reference():
    assert set(GAMES) == set(ALL_GAMES) and len(GAMES) == 7


@pytest.mark.parametrize("game,depth,nodes", list(_perft_cases(True)))
def test_perft_start(game, depth, nodes):
    assert perft(Board(game), depth) == nodes


@pytest.mark.slow
@pytest.mark.parametrize("game,depth,nodes", list(_perft_cases(False)))
def test_perft_start_deep(game, depth, nodes):
    assert perft(Board(game), depth) == nodes


@pytest.mark.parametrize("game", COUSINS)
def test_divide_and_start(game):
    depth, expected, total = load_divides(COUSINS)[game]
    assert depth == 4
    board = Board(game)
    assert board.fen() == load_start_fens(COUSINS)[game]
    rows = divide(board, depth)
    assert [m for m, _ in rows] == sorted(expected, key=str.encode)
    assert dict(rows) == expected and sum(n for _, n in rows) == total


#: protocol.md's counts: adjacent pairs, and jump triples (each usable both ways).
BOARD_FACTS = {
    "lau-kata-kati": (19, 30, 42), "butterfly": (19, 30, 42), "dash-guti": (21, 36, 48),
    "gol-skuish": (43, 84, 162), "alquerque": (25, 56, 80),
}


@pytest.mark.parametrize("game", COUSINS)
def test_board_points_edges_and_jumps(game):
    geo = GAMES[game].geometry
    points, edges, jumps = BOARD_FACTS[game]
    assert geo.size == points and len(GAMES[game].coordinates) == points
    assert sum(mask.bit_count() for mask in geo.adjacent) // 2 == edges  # each edge twice
    assert sum(len(j) for j in geo.jumps_from) == jumps


def test_lines_through_the_apex_and_dash_guti_side_lines():
    # protocol.md: a jump may pass over the apex of a two-triangle board
    assert [str(m) for m in Board("lau-kata-kati", "3/3/3/b/2w/3/3 w").legal_moves] == ["13x7"]
    # Dash-guti's side line 1-10-19: a jump from 19 over 10 lands on 1
    assert [str(m) for m in Board("dash-guti", "3/3/3/b2/3/3/w2 w").legal_moves] == ["19x1"]
    # Lau kata kati has no such line: the same two pieces just step
    assert all(not m.is_capture for m in Board("lau-kata-kati", "3/3/3/b/3/3/w2 w").legal_moves)


def test_gol_skuish_outer_circle_uses_the_high_bits():
    """Points 38..43 are bits 37..42: a jump round the closed outer circle, 43 over 38 to 39."""
    board = Board("gol-skuish", "1/6/6/6/6/6/6/b4w w 0 1")
    assert [str(m) for m in board.legal_moves] == ["43x39"]
    board.push_str("43x39")
    assert board.fen() == "1/6/6/6/6/6/6/1w4 b 0 1"
    assert board.outcome() is not None and board.outcome().reason == "no legal move"


# --- end rules on hand-built positions ----------------------------------------------------------

#: game -> (FEN with 4 White against 3 Black, Black to move; the same with 3 against 3)
FOUR_AGAINST_THREE = {
    "lau-kata-kati": ("bbb/3/3/1/3/w2/www b 0 1", "bbb/3/3/1/3/3/www b 0 1"),
    "butterfly": ("bbb/3/3/1/3/w2/www b 0 1", "bbb/3/3/1/3/3/www b 0 1"),
    "dash-guti": ("bbb/3/3/3/3/w2/www b 0 1", "bbb/3/3/3/3/3/www b 0 1"),
    "gol-skuish": ("1/bbb3/6/6/6/6/6/wwww2 b 0 1", "1/bbb3/6/6/6/6/6/www3 b 0 1"),
    "alquerque": ("bbb2/5/5/5/wwww1 b 0 1", "bbb2/5/5/5/www2 b 0 1"),
}


@pytest.mark.parametrize("game", COUSINS)
def test_three_or_fewer_only_in_gol_skuish(game):
    four, three = FOUR_AGAINST_THREE[game]
    outcome = Board(game, four).outcome()
    if game == "gol-skuish":
        assert outcome is not None and (outcome.result, outcome.reason) == ("1-0", "three or fewer")
        assert Board(game, four).legal_moves == []
    else:
        assert outcome is None and Board(game, four).legal_moves
    assert Board(game, three).outcome() is None  # three against three plays on everywhere


def test_gol_skuish_rule_one_comes_before_no_legal_move():
    board = Board("gol-skuish", "1/6/6/6/6/6/6/bbbb2 w 0 1")  # White has no piece, Black four
    assert board.outcome().reason == "three or fewer" and board.outcome().result == "0-1"
    board = Board("gol-skuish", "1/bb4/6/6/6/6/6/6 w 0 1")  # none against two: rule 2
    assert board.outcome().reason == "no legal move" and board.outcome().result == "0-1"


#: game -> a position where White, to move, has no legal move
BLOCKED = {
    "lau-kata-kati": "3/3/3/1/bbb/bbb/www w 0 1",
    "butterfly": "3/3/3/1/bbb/bbb/www w 0 1",
    "dash-guti": "b1b/3/3/b1b/bbb/bbb/www w 0 1",
    "gol-skuish": "1/bb4/6/6/6/6/6/6 w 0 1",
    "alquerque": "5/5/b1b2/bb3/wbb2 w 0 1",
}


@pytest.mark.parametrize("game", COUSINS)
def test_no_legal_move_loses(game):
    board = Board(game, BLOCKED[game])
    assert board.legal_moves == []
    assert (board.outcome().result, board.outcome().reason) == ("0-1", "no legal move")
    # the same with the clock at 50: rule 2 comes before rule 3
    assert Board(game, BLOCKED[game].replace(" 0 1", " 50 1")).outcome().reason == "no legal move"


#: game -> (FEN with two White pieces against one Black and the clock at 49, a quiet step)
FIFTY = {
    "lau-kata-kati": ("b2/3/3/1/3/3/ww1 w 49 30", "17-14"),
    "butterfly": ("b2/3/3/1/3/3/ww1 w 49 30", "17-14"),
    "dash-guti": ("b2/3/3/3/3/3/ww1 w 49 30", "20-17"),
    "gol-skuish": ("1/6/6/6/6/6/6/ww2b1 w 49 30", "38-32"),
    "alquerque": ("b4/5/5/5/ww3 w 49 30", "21-16"),
}


@pytest.mark.parametrize("game", COUSINS)
def test_fifty_plies_scored_by_material(game):
    fen, step = FIFTY[game]
    board = Board(game, fen)
    assert board.outcome() is None
    board.push_str(step)
    assert board.clock == 50
    assert (board.outcome().result, board.outcome().reason) == ("1-0", "fifty plies")
    assert board.legal_moves == []


#: game -> (FEN with one piece each, four quiet plies back to it)
SHUFFLE = {
    "lau-kata-kati": ("b2/3/3/1/3/3/w2 w 0 1", ("17-18", "1-2", "18-17", "2-1")),
    "butterfly": ("b2/3/3/1/3/3/w2 w 0 1", ("17-18", "1-2", "18-17", "2-1")),
    "dash-guti": ("b2/3/3/3/3/3/w2 w 0 1", ("19-20", "1-2", "20-19", "2-1")),
    "gol-skuish": ("1/6/6/6/6/6/6/w2b2 w 0 1", ("38-39", "41-42", "39-38", "42-41")),
    "alquerque": ("b4/5/5/5/w4 w 0 1", ("21-22", "1-2", "22-21", "2-1")),
}


@pytest.mark.parametrize("game", COUSINS)
def test_third_occurrence_is_a_draw(game):
    fen, cycle = SHUFFLE[game]
    board = Board(game, fen)
    for move in cycle * 2:
        assert board.outcome() is None
        board.push_str(move)
    assert board.repetition_count() == 3
    assert (board.outcome().result, board.outcome().reason) == ("1/2-1/2", "repetition")


# --- FEN and picture ------------------------------------------------------------------------------

#: game -> (FEN rows, a FEN with one row too short, a FEN with a row too long)
BAD_FENS = {
    "lau-kata-kati": ("3/3/3/1/3/3/3", "bbb/bbb/bbb/1/www/www/ww w", "bbb/bbb/bbb/2/www/www/www w"),
    "dash-guti": ("3/3/3/3/3/3/3", "bbb/bbb/bbb/w1/www/www/www w", "bbb/bbb/bbb/w1bb/www/www/www w"),
    "gol-skuish": ("1/6/6/6/6/6/6/6", "1/bbwwwb/bbwwwb/bbwwwb w", "1/6/6/6/6/6/6/7 w"),
    "alquerque": ("5/5/5/5/5", "bbbbb/bbbbb/bb1ww/wwwww w", "bbbbb/bbbbb/bb2ww/wwwww/wwwww w"),
    "butterfly": ("3/3/3/1/3/3/3", "bbb/bbb/bbb/1/www/www/ww w", "bbb/bbb/bbb/2/www/www/www w"),
}


@pytest.mark.parametrize("game", COUSINS)
def test_fen_rows_and_bad_fens(game):
    rows, short, long = BAD_FENS[game]
    assert tuple(map(int, rows.split("/"))) == GAMES[game].geometry.rows
    empty = Board(game, f"{rows} b 7 12")
    assert empty.fen() == f"{rows} b 7 12" and empty.count("w") == empty.count("b") == 0
    for bad in (short, long):
        with pytest.raises(RulesError) as caught:
            Board(game, bad)
        message = str(caught.value)
        assert "\n" not in message and "row" in message, message


@pytest.mark.parametrize("game", list(GAMES))
def test_picture_shows_every_point_once_where_it_stands(game):
    board = Board(game)
    lines = board.board_string().splitlines()
    picture = "\n".join(lines[:-2])
    labels = re.findall(r"([WB.])(\d+)", picture)
    assert sorted(int(n) for _, n in labels) == list(range(1, GAMES[game].geometry.size + 1))
    for piece, number in labels:
        assert piece == {"w": "W", "b": "B", None: "."}[board.piece_at(int(number))]
    # higher points (larger y) are drawn on earlier text rows
    row_of = {int(n): i for i, line in enumerate(lines[:-2]) for _, n in re.findall(r"([WB.])(\d+)", line)}
    coords = GAMES[game].coordinates
    for p in row_of:
        for q in row_of:
            if coords[p - 1][1] > coords[q - 1][1] + 1e-9:
                assert row_of[p] < row_of[q]
    assert lines[-1] == f"fen {board.fen()}"


# --- guti check's positions ----------------------------------------------------------------------


@pytest.mark.parametrize("game", list(GAMES))
def test_check_has_verified_cases_for_every_game(game):
    cases = check_cases.cases_for(game)  # raises if a case does not show what it says
    assert cases is not None and cases.game == game
    reasons = {case.reason for case in cases.queries}
    wanted = {None, "no legal move", "fifty plies", "repetition"}
    if game in ("pretwa", "gol-skuish"):
        wanted.add("three or fewer")
    assert wanted <= reasons
    multi = dict((case.label, case) for case, _ in cases.perft)["multi-jump captures"]
    assert any(len(m.path) > 2 for m in multi.board(game).legal_moves)


# --- the rules pages' worked capture chains ---------------------------------------------------------

_EXAMPLE = re.compile(
    r"<!-- capture-example (?P<game>[a-z-]+) -->\s*```\s*\n"
    r"position fen (?P<fen>[^\n]+?) moves (?P<move>\S+)\n"
    r"fen after: (?P<after>[^\n]+)\n```"
)


def test_rules_pages_capture_examples_are_right():
    text = "\n".join(page.read_text() for page in sorted((ROOT / "docs" / "rules").glob("*.md")))
    examples = list(_EXAMPLE.finditer(text))
    assert {e["game"] for e in examples} >= set(COUSINS)
    for example in examples:
        board = Board(example["game"], example["fen"])
        move = board.parse_move(example["move"])
        assert move.is_capture and len(move.path) >= 3, example["move"]  # a chain of jumps
        board.push(move)
        assert board.fen() == example["after"], example.group(0)


# --- the Python bots: their own rules against the reference figures --------------------------------


@pytest.fixture(params=list(PYTHON_BOTS))
def bot(request: pytest.FixtureRequest):
    b = UgiProgram(PYTHON_BOTS[request.param])
    yield b
    b.close()


def test_python_bots_declare_all_seven_games(bot: UgiProgram):
    bot.send("ugi")
    lines = bot.read_until("ugiok")
    variant = next(line for line in lines if line.startswith("option name UGI_Variant "))
    assert variant.split(" var ")[1:] == list(GAMES)


@pytest.mark.parametrize("game", COUSINS)
def test_python_bot_perft_and_divide(bot: UgiProgram, game: str):
    bot.variant(game)
    bot.send("position startpos")
    assert bot.fen() == load_start_fens(COUSINS)[game]
    for depth, nodes in TABLES[game].items():
        if nodes > BOT_BUDGET:
            break
        assert bot.perft(depth)[1] == nodes, f"{game} perft {depth}"
    depth, expected, total = load_divides(COUSINS)[game]
    moves, nodes, order = bot.perft(depth)
    assert moves == expected and nodes == total and order == sorted(order, key=str.encode)


@pytest.mark.parametrize("game", COUSINS)
def test_python_bot_end_rules(bot: UgiProgram, game: str):
    bot.variant(game)
    four, three = FOUR_AGAINST_THREE[game]
    bot.send(f"position fen {four}")
    assert bot.query("result") == ("p1win" if game == "gol-skuish" else "none")
    bot.send(f"position fen {three}")
    assert bot.query("result") == "none"
    bot.send(f"position fen {BLOCKED[game]}")
    assert bot.query("result") == "p2win"
    fen, step = FIFTY[game]
    bot.send(f"position fen {fen} moves {step}")
    assert bot.query("result") == "p1win"
    fen, cycle = SHUFFLE[game]
    bot.send(f"position fen {fen} moves {' '.join(cycle * 2)}")
    assert bot.query("result") == "draw"


# --- guti match: the reference engine against each Python bot in every cousin ----------------------

MATCH_TIMEOUT = 180.0


def _match(bot: str, game: str, seed: int, folder: Path,
           games: int) -> tuple[subprocess.CompletedProcess | None, str]:
    pdn = folder / f"{bot}-{game}.pdn"
    cmd = [
        *GUTI, "match",
        *_engine_args(bot, PYTHON_BOTS[bot], seed),
        *_engine_args("Ref", [sys.executable, "-m", "guti.engine"], seed), "option.Level=3", f"dir={ROOT}",
        "-each", "tc=5+0.05",
        "-game", game, "-games", str(games),
        "-openings", "plies=2", "order=random", "-srand", str(seed),
        "-pdnout", f"file={pdn}",
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MATCH_TIMEOUT, cwd=folder)
    except subprocess.TimeoutExpired:
        return None, shlex.join(cmd)
    return proc, pdn.read_text() if pdn.exists() else ""


@pytest.fixture(scope="module", params=[pytest.param(2, id="2-games", marks=pytest.mark.slow)])
def games_per_match(request: pytest.FixtureRequest) -> int:
    """Games of each match, each colour once: ten matches of real games, so in the slow
    tier (the fast tier plays the cousins through their rules, perft and the bots' own
    tests)."""
    return int(request.param)


@pytest.fixture(scope="module")
def cousin_matches(tmp_path_factory: pytest.TempPathFactory, games_per_match: int):
    folder = tmp_path_factory.mktemp("cousin_matches")
    jobs = [(bot, game) for bot in PYTHON_BOTS for game in COUSINS]
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {job: pool.submit(_match, *job, seed, folder, games_per_match)
                   for seed, job in enumerate(jobs, 1)}
    return {job: future.result() for job, future in futures.items()}


@pytest.mark.xdist_group("cousin_matches")  # one worker: the matches are played once
@pytest.mark.parametrize("game", COUSINS)
@pytest.mark.parametrize("bot", list(PYTHON_BOTS))
def test_reference_engine_plays_python_bot_without_a_fault(cousin_matches, games_per_match: int,
                                                          bot: str, game: str):
    proc, pdn = cousin_matches[(bot, game)]
    assert proc is not None, f"match timed out: {pdn}"
    assert proc.returncode == 0, proc.stderr
    records = parse_pdn(pdn)
    assert len(records) == games_per_match
    for record in records:
        assert record.tags["GameType"] == game and record.tags["Variant"] == game
        reason = Reason.parse(record.tags["Termination"])
        assert reason.is_rule and record.notes == [], (reason, record.notes)
        _replay(game, record)


# --- search on boards over 24 points -----------------------------------------------------------


def test_zobrist_tells_apart_every_bit_of_the_largest_board():
    from guti.engine.search.zobrist import BYTE_TABLES, zobrist_high

    def zobrist(key: int) -> int:  # as the search's tree computes it
        low = 0
        for byte, table in enumerate(BYTE_TABLES):
            low ^= table[(key >> (8 * byte)) & 255]
        return low ^ zobrist_high(key)

    bits = 2 * GAMES["gol-skuish"].geometry.size + 1  # white, black and the side to move
    assert len({zobrist(1 << bit) for bit in range(bits)}) == bits


def test_search_sees_a_win_on_the_outer_circles():
    from guti.engine.search import Searcher, SearchLimits, describe_score

    # White 40 41 42 43 against Black 20 26 32 38: 43x39 takes 38 round circle 7, leaving
    # Black three pieces against four, a win by rule 1 at once
    board = Board("gol-skuish", "1/6/6/6/b5/b5/b5/b1wwww w 0 1")
    result = Searcher(hash_mb=1).search(board, SearchLimits(depth=3))
    assert result.bestmove in {str(m) for m in board.legal_moves}
    assert describe_score(result.score).kind == "win"
