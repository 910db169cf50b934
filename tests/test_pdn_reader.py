"""guti's PDN reader without processes: what the writer makes reads back to the same
game, any layout of the same games reads the same, every mistake is one line naming the
file and line, and ``-openings`` files in PDN become openings (cut at ``plies``, from the
``FEN`` tag, games that are over reported and skipped).

The real programs' round trip (a tournament's PDN, ``-openings file=games.pdn``) is in
``tests/test_pdn_openings.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from guti.referee.game.openings import Opening, OpeningsError, load_openings
from guti.referee.game.pdn import format_game
from guti.referee.game.pdn_reader import (
    PdnError,
    PdnGame,
    iter_pdn,
)
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.rules import Board
from guti.rules.result import Side
from tests.conftest import parse_pdn, read_pdn_file


def _play(board: Board, plies: int) -> list[str]:
    """``plies`` moves played on ``board`` (always its first legal move)."""
    moves = []
    for _ in range(plies):
        move = board.legal_moves[0]
        moves.append(str(move))
        board.push(move)
    return moves


def _faulted_record() -> GameRecord:
    """A game from a FEN with Black to move: two book plies, three engine plies, lost by
    White's illegal move (so a fault note follows the last move)."""
    start = Board("egara-guti")
    _play(start, 3)
    fen = start.fen()
    board = Board.from_fen("egara-guti", fen)
    moves = _play(board, 5)
    return GameRecord(
        game="egara-guti", white='A "quoted" \\ name', black="B", start_fen=fen, moves=moves,
        elapsed_ms=[None, None, 12.0, 8.0, 9.5], clock_ms=[None, None, 4988.0, 4992.0, 4978.5],
        opening_plies=2, result="1-0", reason=Reason.ILLEGAL_MOVE, fault=Side.BLACK,
        detail="engine B played illegal 1-2 in the position", round="3", number=7,
        time_control="5+0.05", final_fen=board.fen(), first_side=Side.BLACK)


def test_a_written_game_reads_back_to_the_same_game() -> None:
    record = _faulted_record()
    [game] = parse_pdn(format_game(record))
    assert game.move_texts == record.moves
    assert [m.comments for m in game.moves[:2]] == [["book"], ["book"]]
    assert game.moves[2].comments == ["[%emt 0.012] [%clk 0:00:04.988]"]
    assert game.notes == [record.detail]
    assert (game.result, game.tags["Result"], game.tags["Termination"]) == (
        "1-0", "1-0", "illegal move")
    assert (game.tags["White"], game.tags["Round"], game.tags["Game"]) == (
        'A "quoted" \\ name', "3", "7")
    assert (game.game, game.start_fen, game.final_fen) == ("egara-guti", record.start_fen,
                                                           record.final_fen)
    assert game.movetext.startswith("2... ") and game.movetext.endswith("1-0")
    assert game.line == 1


def _second_game_line(text: str) -> int:
    """The line the second game of ``text`` starts on (its ``[Event`` tag)."""
    return text.split("\n").index('[Event "?"]', 1) + 1


def _loosened(text: str) -> str:
    """The same games with every movetext word on a line of its own, CRLF line ends and
    no blank line between games."""
    blocks = text.strip().split("\n\n")
    return "\r\n".join(block.replace("\n", "\r\n") if block.startswith("[")
                        else "\r\n".join(block.split()) for block in blocks)


def _as_read(game: PdnGame) -> tuple[object, ...]:
    """What a game is, apart from how its movetext was laid out."""
    return (game.tags, game.moves, game.result, game.notes, game.game, game.start_fen,
            game.final_fen)


def test_several_games_any_layout_read_the_same() -> None:
    record = _faulted_record()
    plain = GameRecord(game="pretwa", white="P", black="Q", moves=_play(Board("pretwa"), 4),
                       result="*", number=8)
    text = format_game(record) + "\n" + format_game(plain)
    games = parse_pdn(text)
    assert [g.game for g in games] == ["egara-guti", "pretwa"]
    assert games[1].start_fen is None and games[1].result == "*"
    assert [g.line for g in games] == [1, _second_game_line(text)]
    loose = parse_pdn(_loosened(text))
    assert [_as_read(g) for g in loose] == [_as_read(g) for g in games]
    # Numbers glued to moves, annotations, a variation, a comment over two lines.
    moves = games[1].move_texts
    odd = (f'[GameType "pretwa"]\n1.{moves[0]}! $3 ({moves[1]} {{a line\n  not played}})'
           f" {moves[1]}?\n2. {moves[2]} {{two\nlines}} {moves[3]} *\n")
    [again] = parse_pdn(odd)
    assert again.move_texts == moves and again.moves[2].comments == ["two lines"]
    assert again.final_fen == games[1].final_fen
    assert parse_pdn("") == [] and parse_pdn(" \n\n") == []


def _one_game(movetext: str, tags: str = '[GameType "egara-guti"]') -> str:
    return f"{tags}\n\n{movetext}\n"


FIRST = [str(m) for m in Board("egara-guti").legal_moves]


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (_one_game(f"1. {FIRST[0]} {{never closed\n*"), 3, "comment { is never closed"),
        ('[GameType "egara-guti"\n\n*\n', 1, 'bad tag: expected [Name "value"]'),
        (_one_game(f"1. {FIRST[0]}\n17-1 *"), 4, "game 1: ply 2: illegal move '17-1'"),
        (_one_game("1. 99-98 *"), 3, "ply 1: illegal move '99-98'"),
        (_one_game(f"1. {FIRST[0]}"), 1, "game 1: no result (1-0, 0-1, 1/2-1/2 or *)"),
        (_one_game(f"1. {FIRST[0]}\n") + '[GameType "pretwa"]\n\n*\n', 5,
         "tag [GameType] after the moves"),
        (_one_game("*", '[Event "?"]'), 3, "game 1: no GameType tag says which game"),
        (_one_game("*", '[GameType "20"]'), 3, "unknown game '20'"),
        (_one_game("*", '[GameType "egara-guti"]\n[FEN "zzz w"]'), 4, "FEN tag: bad FEN"),
        (_one_game("1-0", '[GameType "egara-guti"]\n[Result "0-1"]'), 4,
         "the result 1-0 is not the Result tag's 0-1"),
        (_one_game(f"1. {FIRST[0]} ) *"), 3, ") without its opening bracket"),
        (_one_game(f"1. {FIRST[0]} ({FIRST[1]} *"), 3, "variation ( is never closed"),
        (_one_game("*") + _one_game("1. 99-98 *"), 6, "game 2: ply 1: illegal move"),
    ],
)
def test_a_mistake_is_one_line_naming_the_file_and_line(text: str, line: int, needle: str):
    with pytest.raises(PdnError) as caught:
        parse_pdn(text, "book.pdn")
    message = str(caught.value)
    assert message.startswith(f"book.pdn:{line}: ") and needle in message, message
    assert "\n" not in message


def test_games_are_read_one_at_a_time_up_to_a_mistake() -> None:
    """A reader that keeps little of each game (an openings book) holds one game at a
    time: each game is made when it is asked for, so the games before a mistake come out
    before the mistake is raised, and those after it are never made."""
    good = _one_game(f"1. {FIRST[0]} *")
    games = iter_pdn(good + good + _one_game("1. 99-98 *") + good, "book.pdn")
    first, second = next(games), next(games)
    assert first.move_texts == second.move_texts == [FIRST[0]]
    assert second.line == 4
    with pytest.raises(PdnError, match=r"^book\.pdn:9: game 3: ply 1: illegal move"):
        next(games)


def test_with_plies_the_moves_after_them_are_skipped_unplayed() -> None:
    """An openings book is read as far as it is played: past ``plies`` a game's moves and
    their comments are skipped, neither played nor checked; its layout still is."""
    text = _one_game(f"1. {FIRST[0]} {{kept}} 99-98 {{dropped}} 2. 98-97 *")
    [game] = iter_pdn(text, "book.pdn", plies=1)
    assert game.move_texts == [FIRST[0]] and game.moves[0].comments == ["kept"]
    assert game.notes == [] and game.result == "*"
    with pytest.raises(PdnError, match="illegal move '99-98'"):
        parse_pdn(text, "book.pdn")
    with pytest.raises(PdnError, match="comment { is never closed"):
        list(iter_pdn(_one_game(f"1. {FIRST[0]} 99-98 {{open *"), "book.pdn", plies=1))


def test_a_game_of_another_game_than_the_one_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "p.pdn"
    path.write_text(_one_game("*", '[GameType "pretwa"]'))
    assert read_pdn_file(str(path))[0].game == "pretwa"
    with pytest.raises(PdnError, match=r"p\.pdn:3: game 1: a game of pretwa, not of egara"):
        read_pdn_file(str(path), "egara-guti")
    path.write_bytes(b'[Event "?"]\n[White "\xff"]\n')
    with pytest.raises(PdnError, match=r"p\.pdn:2: not UTF-8 text"):
        read_pdn_file(str(path))
    with pytest.raises(PdnError, match=r"PDN file .*missing\.pdn: No such file"):
        read_pdn_file(str(tmp_path / "missing.pdn"))


def test_pdn_openings_cut_at_plies_start_from_the_fen_and_skip_finished_games(tmp_path):
    record = _faulted_record()
    finished_board = Board("egara-guti")
    finished = GameRecord(game="egara-guti", white="W", black="B", result="0-1",
                          moves=_play(finished_board, 2))
    path = tmp_path / "games.pdn"
    text = format_game(record) + "\n" + format_game(finished)
    path.write_text(text)
    found = load_openings(str(path), "egara-guti", plies=3)
    assert found == [
        Opening(record.start_fen, tuple(record.moves[:3]), f"{path}:1"),
        Opening(None, tuple(finished.moves), f"{path}:{_second_game_line(text)}")]
    # A whole game is an opening unless the game is over at its end: here it is not.
    assert [o.moves for o in load_openings(str(path), "egara-guti")] == [
        tuple(record.moves), tuple(finished.moves)]
    # The same text under another name is PDN with format=pdn (pgn: the same) ...
    other = tmp_path / "games.txt"
    other.write_text(text)
    assert [(o.fen, o.moves) for o in load_openings(str(other), "egara-guti", 3, fmt="pgn")
            ] == [(o.fen, o.moves) for o in found]
    # ... and a .pdn file is read as lines with format=epd (where PDN is no opening).
    errors: list[str] = []
    with pytest.raises(OpeningsError, match="no usable opening"):
        load_openings(str(path), "egara-guti", fmt="epd", on_error=errors.append)
    assert errors and all(": skipped opening: " in error for error in errors)
    with pytest.raises(OpeningsError, match="openings format xml: expected epd or pdn"):
        load_openings(str(path), "egara-guti", fmt="xml")
    with pytest.raises(OpeningsError, match=r"openings file .*no\.pdn: No such file"):
        load_openings(str(tmp_path / "no.pdn"), "egara-guti")


def test_a_pdn_game_that_ends_is_reported_and_skipped(tmp_path: Path) -> None:
    board = Board("egara-guti")
    moves: list[str] = []
    while not board.is_game_over():  # the first legal move each time, to the end
        moves += _play(board, 1)
    outcome = board.outcome()
    assert outcome is not None
    ended = GameRecord(game="egara-guti", white="W", black="B", moves=moves,
                       result=outcome.result, final_fen=board.fen())
    path = tmp_path / "g.pdn"
    text = format_game(ended) + "\n" + format_game(_faulted_record())
    path.write_text(text)
    errors: list[str] = []
    found = load_openings(str(path), "egara-guti", on_error=errors.append)
    assert [o.source for o in found] == [f"{path}:{_second_game_line(text)}"]
    assert errors == [f"{path}:1: skipped opening: game 1 is over after {len(moves)} plies "
                      "(plies=N takes only the first N)"]
    path.write_text(format_game(ended))
    with pytest.raises(OpeningsError, match="no usable opening for egara-guti"):
        load_openings(str(path), "egara-guti", on_error=errors.append)
    path.write_text(_one_game(f"1. {FIRST[0]}\n17-1 *"))
    with pytest.raises(OpeningsError, match=r"g\.pdn:4: game 1: ply 2: illegal move"):
        load_openings(str(path), "egara-guti")


def test_rest_of_line_comments_and_escape_lines_are_skipped() -> None:
    """PGN's other two kinds of comment: ``;`` to the end of the line (in a variation too,
    where it may hide a bracket) and a line starting with ``%``."""
    text = ('% an escape line: [not a tag]\n[GameType "egara-guti"]\n\n'
            "1. 14-12 10x14 ; a comment {not one} (nor a variation\n"
            "2. 17x12; glued to the move\n(2. 13-12 ; inside ) the variation\n) *\n")
    game = parse_pdn(text)[0]
    assert [m.text for m in game.moves] == ["14-12", "10x14", "17x12"]
    assert game.notes == []
