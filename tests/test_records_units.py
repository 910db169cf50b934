"""Richer records without processes: the PDN move comments and their switches, the
latency lines, the EPD line, the ``search`` column (round trip, and a database of the
released schema 1 read and migrated), and the command-line mistakes of the new options."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.epd import EpdWriter, format_epd
from guti.referee.game.latency import latency_lines
from guti.referee.game.pdn import PdnFields, PdnWriter, format_game, move_comment
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.scheduler import schedule
from guti.referee.ugi.search_info import Score, SearchInfo
from guti.rules import Board
from tests.conftest import GUTI, parse_pdn

ALL = PdnFields(nodes=True, seldepth=True, nps=True, timeleft=True, latency=True)
FULL = SearchInfo(Score("cp", 25), depth=12, seldepth=20, nodes=34567, nps=123456, time=1190)


def _record(search: list[SearchInfo | None], **extra) -> GameRecord:
    """A game of len(search) plies from the start (the first is a book ply)."""
    board = Board("egara-guti")
    moves = []
    for _ in search:
        move = board.legal_moves[0]
        moves.append(str(move))
        board.push(move)
    plies = len(search)
    fields = dict(game="egara-guti", white="W", black="B", moves=moves,
                  elapsed_ms=[None] + [1200.4] * (plies - 1),
                  clock_ms=[None] + [4988.0] * (plies - 1), search=search, opening_plies=1,
                  result="1/2-1/2", reason=Reason.REPETITION, final_fen=board.fen())
    return GameRecord(**{**fields, **extra})


def test_a_move_comment_has_score_depth_time_then_the_clock_commands() -> None:
    record = _record([None, FULL])
    assert move_comment(record, 1) == "+0.25/12 1.200s [%emt 1.200] [%clk 0:00:04.988]"
    assert move_comment(record, 1, ALL) == (
        "+0.25/12 1.200s, n=34567, sd=20, nps=123456, tl=4.988s, latency=0.010s"
        " [%emt 1.200] [%clk 0:00:04.988]")
    for name, text in (("nodes", "n=34567"), ("seldepth", "sd=20"), ("nps", "nps=123456"),
                       ("timeleft", "tl=4.988s"), ("latency", "latency=0.010s")):
        assert move_comment(record, 1, PdnFields(**{name: True})) == (
            f"+0.25/12 1.200s, {text} [%emt 1.200] [%clk 0:00:04.988]")


def test_forced_results_missing_halves_and_silent_engines() -> None:
    record = _record([None, SearchInfo(Score("win", 7), depth=3),
                      SearchInfo(Score("loss", 4)), SearchInfo(depth=5, nodes=9), None,
                      SearchInfo(nodes=3, time=1300)])
    comments = [move_comment(record, ply, ALL) for ply in range(1, 6)]
    assert comments == [
        "+W7/3 1.200s, tl=4.988s [%emt 1.200] [%clk 0:00:04.988]",
        "-L4/? 1.200s, tl=4.988s [%emt 1.200] [%clk 0:00:04.988]",
        "?/5 1.200s, n=9, tl=4.988s [%emt 1.200] [%clk 0:00:04.988]",
        "tl=4.988s [%emt 1.200] [%clk 0:00:04.988]",
        # the engine said it used more time than was measured: a negative latency
        "n=3, tl=4.988s, latency=-0.100s [%emt 1.200] [%clk 0:00:04.988]",
    ]
    # Without switches an engine that reported nothing has the comment of before.
    assert move_comment(record, 4) == "[%emt 1.200] [%clk 0:00:04.988]"
    game = parse_pdn(format_game(record, ALL))[0]
    assert [m.comments for m in game.moves][:2] == [["book"], [comments[0]]]


def test_the_writer_appends_with_its_switches(tmp_path: Path) -> None:
    record = _record([None, FULL, FULL])
    path = tmp_path / "g.pdn"
    with PdnWriter(str(path), PdnFields(nodes=True)) as writer:
        writer.write(record)
        writer.write(record)
    games = parse_pdn(path.read_text())
    assert [len(g.moves) for g in games] == [3, 3]
    assert all(", n=34567 [%emt" in m.comments[0] for g in games for m in g.moves[1:])


def test_latency_lines_per_engine() -> None:
    record = _record([None, FULL, FULL, SearchInfo(Score("cp", 0), time=1200), FULL, None])
    # plies 2, 4 (index 1, 3) are Black's, 3, 5 White's; the last one reported nothing
    assert latency_lines(record) == [
        "Latency of W: mean 10.4 ms, max 10.4 ms (ply 3) over 2 moves",
        "Latency of B: mean 5.4 ms, max 10.4 ms (ply 2) over 2 moves",
    ]
    silent = _record([None, None, None])
    assert latency_lines(silent) == ["Latency of W: no time reported (0 of 1 moves)",
                                     "Latency of B: no time reported (0 of 1 moves)"]


def test_an_epd_line_quotes_names_safely(tmp_path: Path) -> None:
    record = _record([None, FULL], white='Al "x"; y', number=3)
    line = format_epd(record)
    assert line == (f'{record.final_fen}; variant "egara-guti"; white "Al \'x\', y"; black "B"; '
                    'result "1/2-1/2"; termination "repetition"; plies 2; game 3\n')
    path = tmp_path / "g.epd"
    with EpdWriter(str(path)) as writer:
        writer.write(record)
    with EpdWriter(str(path)) as writer:
        writer.write(record)
    assert path.read_text() == line + line


# -- the database ---------------------------------------------------------------------------

#: The ``games`` table as guti released it with schema 1, before the ``search`` column.
SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE engines (idx INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, config TEXT NOT NULL);
CREATE TABLE schedule (
    game_id INTEGER PRIMARY KEY, pair_id INTEGER NOT NULL, round INTEGER NOT NULL,
    white INTEGER NOT NULL, black INTEGER NOT NULL,
    opening_fen TEXT, opening_moves TEXT NOT NULL DEFAULT '', opening_source TEXT NOT NULL DEFAULT '');
CREATE TABLE games (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL UNIQUE REFERENCES schedule(game_id),
    pair_id INTEGER NOT NULL, round INTEGER NOT NULL,
    white_idx INTEGER NOT NULL, black_idx INTEGER NOT NULL,
    white TEXT NOT NULL, black TEXT NOT NULL,
    result TEXT NOT NULL, reason TEXT, detail TEXT NOT NULL, fault TEXT,
    game TEXT NOT NULL, start_fen TEXT, first_side TEXT NOT NULL, final_fen TEXT NOT NULL,
    moves TEXT NOT NULL, opening_plies INTEGER NOT NULL,
    elapsed_ms TEXT NOT NULL, clock_ms TEXT NOT NULL,
    date TEXT NOT NULL, start_time TEXT NOT NULL, time_control TEXT NOT NULL,
    event TEXT NOT NULL, site TEXT NOT NULL, round_tag TEXT NOT NULL,
    finished_at REAL NOT NULL);
INSERT INTO meta VALUES ('schema', '1'), ('settings', '{"format": "roundrobin"}');
INSERT INTO engines VALUES (0, 'W', '{}'), (1, 'B', '{}');
INSERT INTO schedule VALUES (0, 0, 1, 0, 1, NULL, '', ''), (1, 0, 1, 1, 0, NULL, '', '');
INSERT INTO games (game_id, pair_id, round, white_idx, black_idx, white, black, result,
    reason, detail, fault, game, start_fen, first_side, final_fen, moves, opening_plies,
    elapsed_ms, clock_ms, date, start_time, time_control, event, site, round_tag, finished_at)
VALUES (0, 0, 1, 0, 1, 'W', 'B', '1-0', 'no legal move', '', NULL, 'egara-guti', NULL, 'w',
    'x', '13-12 11x13', 0, '[1.5, 2.5]', '[100.0, 99.0]', '2024.01.01', '10:00:00', '1+0',
    '?', '?', '1', 0);
"""


def test_the_search_column_round_trips(tmp_path: Path) -> None:
    path = str(tmp_path / "t.db")
    jobs = list(schedule("roundrobin", 2, 1, 2))
    search = [None, FULL, SearchInfo(Score("loss", 3), depth=1), SearchInfo(nodes=5)]
    record = _record(search)
    with TournamentStore(path) as store:
        store.create({}, "fp", [EngineConfig("W", ["w"]), EngineConfig("B", ["b"])], iter(jobs))
        store.record_game(jobs[0], record)
    with TournamentStore(path, create=False) as again:
        (_info, back), = list(again.records())
    assert back.search == search
    with sqlite3.connect(path) as conn:  # stored as plain JSON, readable without guti
        text, = conn.execute("SELECT search FROM games").fetchone()
    conn.close()
    # [kind, value, depth, seldepth, nodes, nps, time] per ply (storage/rows.py search_json)
    assert json.loads(text) == [None, ["cp", 25, 12, 20, 34567, 123456, 1190],
                                ["loss", 3, 1, None, None, None, None],
                                [None, None, None, None, 5, None, None]]


def test_the_database_file_alone_holds_the_games_when_a_reader_outlived_the_run(
        tmp_path: Path) -> None:
    """A reader open across the run's end (as the live page's server and ``guti serve``
    are) opens the file read-only, so it cannot fold the write-ahead log in when it closes
    last: the run does that as it closes, so that the file copied alone (no ``-wal``)
    holds every game."""
    path = str(tmp_path / "t.db")
    jobs = list(schedule("roundrobin", 2, 1, 2))
    store = TournamentStore(path)
    store.create({}, "fp", [EngineConfig("W", ["w"]), EngineConfig("B", ["b"])], iter(jobs))
    with TournamentStore(path, create=False) as reader:
        assert list(reader.records()) == []
        for job in jobs:
            store.record_game(job, _record([None, FULL]))
        store.close()
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (len(jobs),)
    conn.close()


@pytest.mark.parametrize("damaged", ['[["cp"]]', '{"a": 1}', '[["cp", "x", 1, 1, 1, 1, 1]]',
                                     "not json"])
def test_a_damaged_search_entry_names_the_game(tmp_path: Path, damaged: str) -> None:
    path = str(tmp_path / "t.db")
    jobs = list(schedule("roundrobin", 2, 1, 2))
    with TournamentStore(path) as store:
        store.create({}, "fp", [EngineConfig("W", ["w"]), EngineConfig("B", ["b"])], iter(jobs))
        store.record_game(jobs[1], _record([None, FULL]))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE games SET search = ?", (damaged,))
    conn.close()
    with TournamentStore(path, create=False) as store, \
            pytest.raises(StoreError, match="game 2 is stored damaged"):
        list(store.records())


def test_a_schema_1_database_is_read_and_migrated(tmp_path: Path) -> None:
    path = str(tmp_path / "old.db")
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_1)
    conn.close()
    with TournamentStore(path, create=False) as read_only:  # read as it is: not migrated
        (_info, old), = list(read_only.records())
    assert old.moves == ["13-12", "11x13"] and old.search == [] and old.elapsed_ms == [1.5, 2.5]
    assert old.cpu_ms == [] and old.resources == {}  # columns added later: read as none
    with sqlite3.connect(path) as conn:
        assert "search" not in {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    conn.close()
    job = list(schedule("roundrobin", 2, 1, 2))[1]
    with TournamentStore(path) as store:  # a run opens it: the column is added
        store.record_game(job, _record([None, FULL], white="B", black="W"))
        games = [record for _info, record in store.records()]
    assert [g.search for g in games] == [[], [None, FULL]]
    assert parse_pdn(format_game(games[0]))[0].moves[0].comments == ["[%emt 0.002]"
                                                                      " [%clk 0:00:00.100]"]
    with TournamentStore(path) as twice:  # opening it again changes nothing
        assert len(list(twice.records())) == 2


# -- the command line -----------------------------------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["-pdnout", "file=g.pdn", "nodes=yes"], "-pdnout nodes=yes: expected true or false"),
    (["-pdnout", "nodes=true"], "-pdnout: nodes without file=F"),
    (["-pdnout", "file=g.pdn", "depth=true"], "unknown key 'depth'"),
    (["-pdnout", "g.pdn", "-epdout", "g.pdn"], "are the same file"),
    # a book the run would rewrite as it plays: its resume could never check it again
    (["-openings", "file=book.pdn", "-pdnout", "./book.pdn"],
     "-pdnout ./book.pdn and -openings file=book.pdn are the same file"),
    (["-epdout", "x", "-epdout", "y"], "given more than once"),
])
def test_mistakes_in_the_record_options_are_one_line(tmp_path: Path, args: list[str],
                                                      needle: str) -> None:
    engines = ["-engine", "cmd=true", "name=A", "-engine", "cmd=true", "name=B", "-each", "tc=1"]
    for command in ("match", "tournament"):
        done = subprocess.run([*GUTI, command, *engines, *args], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert needle in done.stderr and done.stderr.count("\n") == 1, (command, done.stderr)


def test_a_toml_file_gives_the_record_options(tmp_path: Path) -> None:
    from guti.referee.config.tournament import settings_from_argv

    (tmp_path / "t.toml").write_text(
        'show-latency = true\nepdout = "out/t.epd"\n'
        'pdnout = { file = "t.pdn", nodes = true, latency = false }\n'
        '[each]\ntc = "1"\n[[engine]]\ncmd = "true"\nname = "A"\n[[engine]]\ncmd = "true"\n'
        'name = "B"\n')
    settings = settings_from_argv([str(tmp_path / "t.toml"), "-db", str(tmp_path / "t.db")],
                                  lambda _line: None)
    assert settings.records.show_latency
    assert settings.records.epd_path == "out/t.epd"
    assert settings.records.pdn_fields == PdnFields(nodes=True)
    assert settings.describe()["pdnfields"] == ["nodes"]
