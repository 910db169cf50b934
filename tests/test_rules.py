"""Rules core against the reference figures (tests/data) and protocol.md: perft, captures, end rules, FEN, bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guti.rules import Board, Result, RulesError, divide, perft
from tests.perft_reference import (
    ALL_GAMES,
    load_capture_positions,
    load_divides,
    load_perft_tables,
    load_start_fens,
)

TABLES = load_perft_tables()
FAST_LIMIT = 60_000  # nodes; deeper figures run under -m slow


def _cases(fast: bool):
    for game, table in TABLES.items():
        for depth, nodes in table.items():
            if (nodes <= FAST_LIMIT) == fast:
                yield pytest.param(game, depth, nodes, id=f"{game}-{depth}")


@pytest.mark.parametrize("game,depth,nodes", list(_cases(True)))
def test_perft_start(game, depth, nodes):
    assert perft(Board(game), depth) == nodes


@pytest.mark.slow
@pytest.mark.parametrize("game,depth,nodes", list(_cases(False)))
def test_perft_start_deep(game, depth, nodes):
    assert perft(Board(game), depth) == nodes


def test_start_fens_match_reference():
    for game, fen in load_start_fens().items():
        assert Board(game).fen() == fen


def test_divides():
    for game, (depth, expected, total) in load_divides().items():
        rows = divide(Board(game), depth)
        assert dict(rows) == expected and sum(expected.values()) == total


@pytest.mark.parametrize("game,fen,moves,after", load_capture_positions())
def test_capture_positions(game, fen, moves, after):
    board = Board.from_fen(game, fen)
    assert {str(m) for m in board.legal_moves} == moves
    for move, fen_after in after.items():
        board.push_str(move)
        assert board.fen() == fen_after
        board.pop()
        assert board.fen() == Board.from_fen(game, fen).fen()


def test_three_or_fewer_pretwa():
    board = Board.from_fen("pretwa", "1/www3/w5/6 b 0 1")  # 4 white v 0 black? no: black has none
    assert board.outcome().winner == "w"
    board = Board.from_fen("pretwa", "1/wwww2/6/bbb3 w 0 1")
    out = board.outcome()
    assert (out.reason, out.result) == ("three or fewer", "1-0") and board.legal_moves == []
    board = Board.from_fen("pretwa", "1/www3/6/bbb3 w 0 1")  # 3 v 3: play goes on
    assert board.outcome() is None


def test_no_legal_move_loses():
    board = Board.from_fen("egara-guti", "bbbbb/bbb/bbb/1/3/3/5 w 0 1")
    out = board.outcome()
    assert (out.reason, out.winner, out.result) == ("no legal move", "b", Result.BLACK_WINS)


def test_fifty_plies_scored_by_material():
    board = Board.from_fen("egara-guti", "b4/3/3/1/3/3/ww3 w 50 30")
    out = board.outcome()
    assert (out.reason, out.result) == ("fifty plies", "1-0") and board.legal_moves == []
    board = Board.from_fen("egara-guti", "b4/3/3/1/3/3/w4 w 49 30")
    board.push_str("19-20")
    assert board.outcome().reason == "fifty plies" and board.outcome().result == "1/2-1/2"


def test_repetition_third_occurrence():
    board = Board.from_fen("egara-guti", "b4/3/3/1/3/3/w4 w 0 1")
    for _ in range(2):
        for move in ("19-20", "1-2", "20-19", "2-1"):
            assert board.outcome() is None
            board.push_str(move)
    out = board.outcome()
    assert (out.reason, out.result) == ("repetition", "1/2-1/2")
    board.pop()
    assert board.outcome() is None


@pytest.mark.parametrize(
    "fen",
    [
        "", "bbbbb/bbb/bbb/1/www/www/wwwww", "bbbbb/bbb/bbb/1/www/www/wwwww x 0 1",
        "bbbbb/bbb/bbb/1/www/www w 0 1", "bbbbb/bbb/bbb/1/www/www/wwwwww w 0 1",
        "bbbbb/bbb/bbb/0/www/www/wwwww w 0 1", "bbbbb/bbb/bbb/01/www/www/wwwww w 0 1",
        "bbbbb/bb2/bbb/1/www/www/wwwww w 0 1", "bbbbb/bbb/bbq/1/www/www/wwwww w 0 1",
        "bbbbb/bbb/bbb/1/www/www/wwwww w -1 1", "bbbbb/bbb/bbb/1/www/www/wwwww w 0 0",
        "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1 9", "bbbbb/bbb/bbb/1/www/www/wwwww/ w 0 1",
        "bbbbb/bbb/bbb/" + "1" * 5000 + "/www/www/wwwww w 0 1", "bbbbb/bbb/bbb/10001/www/www/wwwww w",
    ],
)
def test_bad_fen_is_one_line_error(fen):
    with pytest.raises(RulesError) as info:
        Board.from_fen("egara-guti", fen)
    assert "\n" not in str(info.value) and "FEN" in str(info.value)


@pytest.mark.parametrize("move", ["", "13", "13-", "013-12", "13 -12", "13-12-11", "13x", "a-b", "99-12", "13-11", "12-13",
                                  "\u00b2-1", "13-\u00b2", "\u0661\u0663-12"])
def test_bad_move_leaves_board_unchanged(move):
    board = Board("egara-guti")
    before = board.fen()
    with pytest.raises(RulesError):
        board.push_str(move)
    assert board.fen() == before and board.move_stack == []


@pytest.mark.parametrize("move", ["\u00b2-1", "1-\u00b2", "\u0661\u0663-12", "\u00b2x3"])
def test_digits_int_refuses_or_reads_are_no_move(move):
    """An engine's move in digits other than ASCII (``str.isdigit`` passes ``"\u00b2"``,
    which ``int`` refuses) is no legal move, never an exception."""
    board = Board("egara-guti")
    assert board.legal_move(move) is None
    board = Board("pretwa", "1/b2b2/bb2w1/w2ww1 w 0 7")
    assert board.legal_move(move) is None


def test_capture_is_compulsory_message():
    board = Board.from_fen("egara-guti", "1w3/b2/b2/1/b2/1b1/2w2 w 0 1")
    with pytest.raises(RulesError, match="compulsory"):
        board.push_str("21-20")


def _random_walk(game: str, seed: int, plies: int) -> Board:
    import random

    rng = random.Random(seed)
    board = Board(game)
    for _ in range(plies):
        moves = board.legal_moves
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


@settings(max_examples=120, deadline=None)
@given(game=st.sampled_from(ALL_GAMES), seed=st.integers(0, 10**6), plies=st.integers(0, 80))
def test_properties_of_random_positions(game, seed, plies):
    board = _random_walk(game, seed, plies)
    fen = board.fen()
    assert Board.from_fen(game, fen).fen() == fen
    moves = board.legal_moves
    if moves and any(m.is_capture for m in moves):
        assert all(m.is_capture for m in moves)
    for move in moves:
        assert board.parse_move(str(move)) == move
        reps = board.repetition_count()
        board.push(move)
        if move.is_capture:  # the piece may not stop while it can still jump
            probe = Board.from_fen(game, board.fen().replace(f" {board.turn} ", f" {'wb'[board.turn == 'w']} ", 1))
            assert not any(m.path[0] == move.path[-1] and m.is_capture for m in probe._generate())
        board.pop()
        assert board.fen() == fen and board.repetition_count() == reps


def _candidate_texts(board: Board) -> set[str]:
    """Every legal move's text, and near misses: steps from each piece to anywhere, each
    single jump of the board, reversed and cut-short sequences, leading zeros, points off
    the board, the other separator."""
    geo = board.game.geometry
    texts = {str(m) for m in board.legal_moves}
    for src in range(geo.size):
        if board.piece_at(src + 1) == board.turn:  # any point, next to it or not
            texts |= {f"{src + 1}-{dst + 1}" for dst in range(geo.size)}
        for _, land, _ in geo.jumps_from[src]:
            texts.add(f"{src + 1}x{land + 1}")
    for move in board.legal_moves:
        sep = "x" if move.is_capture else "-"
        path = [str(p) for p in move.path]
        texts |= {sep.join(reversed(path)), sep.join(path[:-1]), "0" + sep.join(path),
                  sep.join(path) + f"{sep}{geo.size + 1}", ("-" if move.is_capture else "x").join(path)}
    return texts | {"none", "", "1-", "x1", f"{geo.size + 1}-1", "\u0661-2", "1 -2", "1-2 "}


@settings(max_examples=60, deadline=None)
@given(game=st.sampled_from(ALL_GAMES), seed=st.integers(0, 10**6), plies=st.integers(0, 80))
def test_move_checked_alone_is_the_listed_move(game, seed, plies):
    """``legal_move`` before the moves are listed (the referee's path: each move checked by
    itself, the game's end by ``is_game_over``) answers exactly as the full list does."""
    walked = _random_walk(game, seed, plies)
    board = Board(game)
    for move in walked.move_stack:
        assert not board.is_game_over()
        checked = board.legal_move(str(move))
        assert checked is not None and board._legal is None  # nothing listed on the way
        board.push(checked)
    listed = board.copy()
    assert board.is_game_over() == (listed.outcome() is not None) == (not listed.legal_moves)
    for text in _candidate_texts(listed):
        alone, expected = board.copy().legal_move(text), listed.legal_move(text)
        assert (alone is None) == (expected is None), text
        if expected is not None:
            assert alone is not None
            assert (alone.path, alone.capture_mask, alone.is_capture, str(alone)) == (
                expected.path, expected.capture_mask, expected.is_capture, str(expected))


def test_perft_cli():
    out = subprocess.run([sys.executable, "-m", "guti.cli", "perft", "pretwa", "6", "--divide"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    expected_depth, expected, total = load_divides()["pretwa"]
    assert expected_depth == 6
    assert out == [f"{m}: {n}" for m, n in sorted(expected.items())] + [f"nodes {total}"]
    bad = subprocess.run([sys.executable, "-m", "guti.cli", "perft", "pretwa", "3", "--fen", "1/2/3 w"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    for depth in ("-1", "1_0", "\u0663", "1001", "x"):  # int() reads the second and third
        bad = subprocess.run([sys.executable, "-m", "guti.cli", "perft", "pretwa", depth],
                             capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stdout == "", depth
        assert bad.stderr == (f"guti perft: argument depth: {depth!r}: expected a whole number "
                              "from 0 to 1000\n"), bad.stderr  # go perft's largest


@pytest.mark.parametrize("text, why", [
    ("6x16", "not a complete capture sequence"),  # stops while the piece can still jump
    ("6x16x18x16", "the capture ends at 18: no jump goes on from there"),
    ("6x18", "6x18 is no jump over an opposing piece to an empty point"),  # not a jump
    ("6x11", "6x11 is no jump over an opposing piece to an empty point"),  # onto a piece
    ("6x16x17", "16x17 is no jump over an opposing piece to an empty point"),
    ("1x3", "the piece on 1 has no capture"),
])
def test_a_wrong_capture_is_told_where_it_leaves_the_legal_ones(text: str, why: str) -> None:
    board = Board.from_fen("alquerque", "bb1bb/b1b1b/w2ww/1w2w/w1w1w b 2 11")
    assert [m.text for m in board.legal_moves] == ["6x16x18"]
    with pytest.raises(RulesError) as caught:
        board.parse_move(text)
    assert why in str(caught.value), str(caught.value)


def test_a_capture_written_as_a_step_is_told_how_captures_are_written() -> None:
    board = Board("egara-guti")
    board.push_str("13-12")
    with pytest.raises(RulesError, match=r"a capture is compulsory \(a capture is written "
                                         r"with x: 11x13\)"):
        board.parse_move("11-13")
