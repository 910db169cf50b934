"""PDN in both directions through the real ``guti`` command: a tournament's PDN reads back
to the games its database stored (exported with ``guti export -json``), ``-openings
file=games.pdn`` plays those games' openings (seen in the PDN of the match that used
them), a bad PDN openings file is one line on stderr and exit status 2, and ``guti match
--help`` says how an openings file is read.

The source tournament: three instant random movers, one of which plays an illegal move
at the seventh ``go`` of each of its processes (games with a fault note), two pairs per
encounter on a book of two openings, one from a FEN with Black to move (games with a
``FEN`` tag) and one from the start."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.game.pdn_reader import PdnGame
from guti.referee.game.reasons import Reason
from guti.rules import Board
from tests.conftest import GUTI, ROOT, parse_pdn, rows

FAULTY = ROOT / "tests" / "engines" / "faulty.py"
PLIES = 4  # the opening plies taken from each PDN game


def engine(name: str, *extra: str) -> list[str]:
    args = shlex.join([str(FAULTY), *extra])
    return ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]


def guti(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the source tournament: its database, PDN and JSON export."""
    folder = tmp_path_factory.mktemp("source")
    board = Board("egara-guti")
    board.push(board.legal_moves[0])
    book = folder / "book.txt"
    book.write_text(f"{board.fen()} moves {board.legal_moves[-1]}\n"
                    f"{' '.join(str(m) for m in Board('egara-guti').legal_moves[:1])}\n")
    done = guti("tournament", *engine("A"), *engine("B"),
                *engine("C", "--mode", "illegal", "--at", "7"), "-each", "tc=5+0.05",
                "-games", "4", "-openings", f"file={book}", "-db", "t.db",
                "-pdnout", "t.pdn", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    exported = guti("export", "t.db", "-json", "t.json", cwd=folder)
    assert exported.returncode == 0, exported.stderr
    return folder


def test_a_tournament_pdn_reads_back_to_the_stored_games(tournament: Path) -> None:
    games = parse_pdn((tournament / "t.pdn").read_text(), "t.pdn", "egara-guti")
    stored = json.loads((tournament / "t.json").read_text())
    assert len(games) == len(stored) == 12
    by_number = {int(game.tags["Game"]): game for game in games}
    for want in stored:
        game = by_number[want["game_id"]]
        assert game.move_texts == want["moves"]
        assert (game.tags["White"], game.tags["Black"]) == (want["white"], want["black"])
        assert game.result == game.tags["Result"] == want["result"]
        assert game.tags["Termination"] == want["reason"]
        assert (game.start_fen or Board("egara-guti").fen()) == want["start_fen"]
        assert game.final_fen == want["final_fen"]
        books = [m for m in game.moves if m.comments == ["book"]]
        assert game.moves[: len(books)] == books and len(books) == want["opening_plies"]
        rule = Reason(want["reason"]).is_rule
        assert game.notes == ([] if rule else [want["detail"]]), game.notes
    assert {game.start_fen is None for game in games} == {True, False}
    assert any(game.notes for game in games), "no game with a fault note"


def _match_games(folder: Path, *openings: str, games: int) -> list[PdnGame]:
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games",
                str(games), "-openings", *openings, "-pdnout", "m.pdn", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    played = parse_pdn((folder / "m.pdn").read_text(), "m.pdn")
    assert [int(game.tags["Round"]) for game in played] == list(range(1, games + 1))
    return played


def test_openings_from_a_pdn_file_start_every_game(tournament: Path, tmp_path: Path) -> None:
    """One opening per pair, in the file's order; a game that repeats the opening of the
    one before it with the players' colours reversed (the second game of a pair) is read
    once."""
    source = parse_pdn((tournament / "t.pdn").read_text(), "t.pdn")

    def second_of_pair(before: PdnGame, game: PdnGame) -> bool:
        return ((game.tags["White"], game.tags["Black"]) == (before.tags["Black"],
                                                              before.tags["White"])
                and (game.start_fen, game.move_texts[:PLIES]) == (
                    before.start_fen, before.move_texts[:PLIES]))

    distinct: list[PdnGame] = []
    before: PdnGame | None = None
    for game in source:
        if before is not None and second_of_pair(before, game):
            before = None  # a pair is two games
        else:
            distinct.append(game)
            before = game
    played = _match_games(tmp_path, f"file={tournament / 't.pdn'}", f"plies={PLIES}",
                          games=2 * len(distinct))
    for number, game in enumerate(played):
        opening = distinct[number // 2]
        assert game.tags.get("FEN") == opening.tags.get("FEN"), number
        assert game.start_fen == opening.start_fen
        assert game.move_texts[:PLIES] == opening.move_texts[:PLIES], number
        assert [m.comments for m in game.moves[:PLIES]] == [["book"]] * PLIES
        assert game.moves[PLIES].comments != ["book"]


def test_a_tournament_s_pdn_read_back_plays_its_openings_in_its_order(tmp_path: Path) -> None:
    """Each opening of a tournament is in its PDN twice (a pair); read back, it is one
    opening again, so the same schedule of openings comes out."""
    common = [*engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "4",
              "-concurrency", "1"]
    first = guti("tournament", *common, "-openings", "file=random:4", "-srand", "5",
                 "-db", "a.db", "-pdnout", "a.pdn", cwd=tmp_path)
    again = guti("tournament", *common, "-openings", "file=a.pdn", "plies=4", "-db", "b.db",
                 cwd=tmp_path)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    schedules = [rows(tmp_path / db, "SELECT opening_moves FROM schedule ORDER BY game_id")
                 for db in ("a.db", "b.db")]
    assert schedules[0] == schedules[1]
    assert len(set(schedules[0])) == 2  # two openings, each played as a pair


def test_an_opening_played_by_two_pairs_in_a_row_is_read_twice(tmp_path: Path) -> None:
    from guti.referee.game.openings import load_openings
    from guti.referee.game.pdn import format_game
    from guti.referee.game.record import GameRecord

    def game(white: str, black: str, *moves: str) -> str:
        return format_game(GameRecord(game="egara-guti", white=white, black=black,
                                      moves=list(moves), result="*"))

    x, y = ("13-12", "11x13"), ("14-12", "10x14")
    book = tmp_path / "book.pdn"
    book.write_text("\n".join([game("A", "B", *x), game("B", "A", *x), game("A", "B", *x),
                               game("B", "A", *x), game("A", "B", *y), game("B", "A", *y),
                               game("A", "A", *y), game("A", "A", *y)]))
    read = [o.moves for o in load_openings(str(book), "egara-guti", plies=2)]
    assert read == [x, x, y, y, y]  # the last two: no pair (one player), both kept


def test_whole_pdn_games_are_openings_unless_they_are_over(tournament: Path,
                                                           tmp_path: Path) -> None:
    """Without plies=N an opening is a whole game: the games the rules ended are skipped
    (one line each); one an illegal move ended is played on from where it stopped."""
    pdn = tmp_path / "games.txt"  # not .pdn: format=pdn says what it is
    pdn.write_text((tournament / "t.pdn").read_text())
    source = parse_pdn(pdn.read_text(), "games.txt")
    usable = [g for g in source if not Reason(g.tags["Termination"]).is_rule]
    assert usable, "no game of the source ended by a fault"
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "2",
                "-openings", f"file={pdn}", "format=pdn", "-pdnout", "m.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stderr.splitlines() if ": skipped opening: " in line]
    assert len(skipped) == len(source) - len(usable), done.stderr
    for game in parse_pdn((tmp_path / "m.pdn").read_text(), "m.pdn"):
        plies = len(usable[0].moves)
        assert game.move_texts[:plies] == usable[0].move_texts
        assert [m.comments for m in game.moves[:plies]] == [["book"]] * plies


FIRST = str(Board("egara-guti").legal_moves[0])


@pytest.mark.parametrize(
    ("name", "text", "keys", "needle"),
    [
        ("bad.pdn", f'[GameType "egara-guti"]\n\n1. {FIRST} {{clock}}\n17-1 *\n', [],
         "bad.pdn:4: game 1: ply 2: illegal move '17-1'"),
        ("bad.pdn", f'[GameType "egara-guti"]\n\n1. {FIRST} {{never closed\n*\n', [],
         "bad.pdn:3: comment { is never closed"),
        ("bad.pdn", '[GameType "pretwa"]\n\n*\n', [],
         "bad.pdn:3: game 1: a game of pretwa, not of egara-guti"),
        ("bad.txt", f'[GameType "egara-guti"]\n\n1. {FIRST}\n', ["format=pdn"],
         "bad.txt:1: game 1: no result"),
        ("bad.pdn", "*\n", ["format=xml"], "openings format xml: expected epd or pdn"),
    ],
)
def test_a_bad_pdn_openings_file_is_one_line_and_exit_2(tmp_path: Path, name: str, text: str,
                                                         keys: list[str], needle: str) -> None:
    (tmp_path / name).write_text(text)
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05",
                "-openings", f"file={name}", *keys, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and needle in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_help_says_how_openings_files_are_read(tmp_path: Path) -> None:
    shown = guti("match", "--help", cwd=tmp_path)
    assert shown.returncode == 0
    lines = [line.strip() for line in shown.stdout.splitlines()]
    assert any(line.startswith("format=epd|pdn") and ".pdn or .pgn" in line for line in lines)
    assert any(line.startswith("plies=N") for line in lines)
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05",
                "-openings", "plies=2", "format=pdn", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "-openings format=pdn: needs file=F" in done.stderr


def test_a_large_pdn_book_in_order_is_read_only_as_far_as_needed(tmp_path: Path) -> None:
    """A PDN book larger than what is read whole, in file order, is read as far as the run
    needs, as a book of lines is: the first games, even with a broken game at its end
    (which a book read whole, or drawn from at random, reports)."""
    from guti.referee.game.openings import CHECKED_WHOLE_BYTES, OpeningsError, load_openings
    from guti.referee.game.pdn import format_game
    from guti.referee.game.random_openings import random_openings
    from guti.referee.game.record import GameRecord

    starts = random_openings("egara-guti", 4, 200, seed=5)
    text = "\n".join(format_game(GameRecord(game="egara-guti", white="A", black="B",
                                            moves=list(o.moves), result="*"))
                     for o in starts)
    book = tmp_path / "large.pdn"
    broken = f'\n[GameType "egara-guti"]\n\n1. {FIRST} 17-1 *\n'
    book.write_text(text * (CHECKED_WHOLE_BYTES // len(text) + 2) + broken)
    found = load_openings(str(book), "egara-guti", plies=4, wanted=3)
    assert [o.moves for o in found] == [o.moves for o in starts[:3]]
    with pytest.raises(OpeningsError, match="illegal move '17-1'"):
        load_openings(str(book), "egara-guti", plies=4, wanted=3, order="random", seed=1)
