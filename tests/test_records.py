"""Richer game records through the real programs: what each engine reported with its
moves, in the PDN (``-pdnout`` and its fastchess switches), the database and its JSON
export, the final positions (``-epdout``) and the latency lines (``-show-latency``).

Every expectation is derived independently of the referee's own code: the engines'
``info`` lines are read from the traffic log (``-log``) with a parser of this file, the
PDN with guti's PDN reader (:mod:`guti.referee.game.pdn_reader`, which shares no code
with the writer), and the final positions by replaying the PDN moves with the rules core.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from guti.referee.game.pdn_reader import PdnGame
from guti.rules import Board
from tests.conftest import GUTI, ROOT, parse_pdn

TIMEOUT = 180.0
#: ``TIME [NAME] DIR TEXT``; a tournament numbers the processes (``[#1 NAME]``).
LOG_LINE = re.compile(r"^\S+ \[(?:#\d+ )?([^\]]+)\] ([<>!#]) (.*)$")
#: cutechess's head, then fastchess's fields, then the PGN clock commands.
COMMENT = re.compile(
    r"^(?P<score>[+-](?:\d+\.\d\d|W\d+|L\d+)|\?)/(?P<depth>\d+|\?) (?P<secs>\d+\.\d{3})s"
    r"(?P<fields>(?:, [a-z]+=[-\d.]+s?)*) "
    r"\[%emt (?P<emt>\d+\.\d{3})\] \[%clk (?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d)\.(?P<ms>\d{3})\]$"
)
LATENCY = re.compile(
    r"^Latency of (\S+): mean (-?\d+\.\d) ms, max (-?\d+\.\d) ms \(ply (\d+)\) over (\d+) moves$"
)


def run(command: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, command, *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd)


def reference(name: str, seed: int) -> list[str]:
    return ["-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}",
            f"name={name}", f"option.Seed={seed}"]


@dataclass
class Reported:
    """One ``bestmove`` of the traffic log and the last info fields before it."""

    engine: str
    move: str
    fields: dict[str, str]


def _info_fields(text: str) -> dict[str, str]:
    """The search fields of one ``info`` line ({} for ``info string`` or none)."""
    words = text.split()
    fields: dict[str, str] = {}
    i = 1
    while i < len(words) and words[i] not in ("pv", "string"):
        if words[i] == "score" and i + 2 < len(words):
            fields["score"] = f"{words[i + 1]} {words[i + 2]}"
            i += 3
        elif words[i] in ("depth", "seldepth", "nodes", "nps", "time") and i + 1 < len(words):
            fields[words[i]] = words[i + 1]
            i += 2
        else:
            i += 1
    return fields


def reported_moves(log: str) -> list[Reported]:
    """Every ``bestmove`` in the log, in order, with the fields of the last ``info`` line
    that had any since that engine's ``go``."""
    last: dict[str, dict[str, str]] = {}
    found = []
    for line in log.splitlines():
        m = LOG_LINE.match(line)
        if not m or m.group(1) == "referee":
            continue
        name, direction, text = m.groups()
        if direction == ">" and text.startswith("go"):
            last[name] = {}
        elif direction == "<" and text.startswith("info "):
            fields = _info_fields(text)
            if fields:
                last[name] = fields
        elif direction == "<" and text.startswith("bestmove "):
            found.append(Reported(name, text.split()[1], last.pop(name, {})))
    return found


def expected_score(score: str) -> str:
    kind, value = score.split()
    if kind == "cp":
        return f"{int(value) / 100:+.2f}"
    return f"+W{value}" if kind == "win" else f"-L{value}"


def check_comment(comment: str, said: Reported) -> dict[str, str]:
    """The comment of one engine move against what the log says the engine reported;
    returns the comment's fastchess fields."""
    m = COMMENT.match(comment)
    assert m, comment
    assert m.group("score") == expected_score(said.fields["score"]), (comment, said)
    assert m.group("depth") == said.fields["depth"], (comment, said)
    assert m.group("secs") == m.group("emt"), comment
    fields = dict(item.split("=", 1) for item in m.group("fields").split(", ")[1:])
    assert fields["n"] == said.fields["nodes"] and fields["sd"] == said.fields["seldepth"]
    assert fields["nps"] == said.fields["nps"], (comment, said)
    clock = (int(m.group("h")) * 3600 + int(m.group("m")) * 60 + int(m.group("s"))
             + int(m.group("ms")) / 1000)
    assert abs(float(fields["tl"].rstrip("s")) - clock) < 0.0015, comment
    latency = float(m.group("emt")) - int(said.fields["time"]) / 1000
    assert abs(float(fields["latency"].rstrip("s")) - latency) < 0.0015, (comment, said)
    return fields


def check_games_against_log(games: list[PdnGame], log: str) -> list[list[float]]:
    """Every move of ``games`` (in order, one game at a time) is the next ``bestmove`` of
    the log, and its comment carries what the engine reported; the latencies per game."""
    said = reported_moves(log)
    assert len(said) == sum(len(g.moves) for g in games)
    latencies = []
    for game in games:
        plies, said = said[: len(game.moves)], said[len(game.moves):]
        movers = [game.tags["White"], game.tags["Black"]]
        per_game = []
        for ply, (move, report) in enumerate(zip(game.moves, plies, strict=True)):
            assert (report.engine, report.move) == (movers[ply % 2], move.text)
            assert report.fields, f"the reference engine reports with every move: {report}"
            fields = check_comment(move.comments[0], report)
            per_game.append(float(fields["latency"].rstrip("s")) * 1000)
        latencies.append(per_game)
    return latencies


def check_epd(lines: list[str], games: list[PdnGame]) -> None:
    """Each line is the final position of its game (replayed here) and says how it ended."""
    assert len(lines) == len(games)
    for line, game in zip(lines, games, strict=True):
        fen, *ops = line.split("; ")
        board = Board(game.tags["GameType"])
        for move in game.move_texts:
            board.push_str(move)
        assert fen == board.fen()
        tags = game.tags
        assert ops == [f'variant "{tags["GameType"]}"', f'white "{tags["White"]}"',
                       f'black "{tags["Black"]}"', f'result "{tags["Result"]}"',
                       f'termination "{tags["Termination"]}"', f"plies {tags['PlyCount']}",
                       f"game {tags['Game']}"]


def test_a_match_records_every_report_as_the_traffic_log_shows_it(tmp_path: Path) -> None:
    done = run("match", *reference("RefA", 1), *reference("RefB", 2),
               "-each", "tc=1+0.02", "depth=3",
               "-games", "2", "-log", "t.log", "-epdout", "m.epd", "-show-latency",
               "-pdnout", "file=m.pdn", "nodes=true", "seldepth=true", "nps=true",
               "timeleft=true", "latency=true", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = parse_pdn((tmp_path / "m.pdn").read_text())
    assert len(games) == 2
    latencies = check_games_against_log(games, (tmp_path / "t.log").read_text())
    check_epd((tmp_path / "m.epd").read_text().splitlines(), games)
    # -show-latency: after each game's line, one line per engine (White first), whose
    # figures are those of the PDN's latency= fields of that engine's moves.
    out = done.stdout.splitlines()
    for number, (game, per_game) in enumerate(zip(games, latencies, strict=True), 1):
        at = next(i for i, line in enumerate(out) if line.startswith(f"Game {number}/2: "))
        for side, line in enumerate(out[at + 1: at + 3]):
            m = LATENCY.match(line)
            assert m, line
            name, mean, worst, ply, moves = m.groups()
            assert name == game.tags[("White", "Black")[side]]
            mine = per_game[side::2]
            assert int(moves) == len(mine)
            assert abs(float(mean) - sum(mine) / len(mine)) <= 0.6, (line, mine)
            assert abs(float(worst) - max(mine)) <= 0.6, (line, mine)
            assert abs(mine[(int(ply) - 1) // 2] - max(mine)) <= 1.0, (line, mine)


def test_a_tournament_keeps_the_reports_in_its_database_and_exports(tmp_path: Path) -> None:
    done = run("tournament", *reference("RefA", 1), *reference("RefB", 2), "-each",
               "tc=1+0.02", "depth=3", "-games", "2", "-concurrency", "1", "-db", "t.db",
               "-log", "t.log",
               "-pdnout", "file=t.pdn", "nodes=true", "seldepth=true", "nps=true",
               "timeleft=true", "latency=true", "-epdout", "t.epd", "-show-latency",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    for number in (1, 2):  # each game's line, then its latency lines (White's engine first)
        at = next(i for i, line in enumerate(out) if line.startswith(f"Finished game {number} "))
        shown = [LATENCY.match(line) for line in out[at + 1: at + 3]]
        assert all(shown), out[at: at + 3]
        white, black = re.search(r": (\S+) vs (\S+): ", out[at]).groups()  # type: ignore[union-attr]
        assert [m.group(1) for m in shown if m] == [white, black]
    live = (tmp_path / "t.pdn").read_text()
    games = parse_pdn(live)
    log = (tmp_path / "t.log").read_text()
    check_games_against_log(games, log)
    check_epd((tmp_path / "t.epd").read_text().splitlines(), games)
    # The JSON export carries the reports as the log shows them, ply by ply.
    exporting = run("export", "t.db", "-json", "g.json", "-pdn", "g.pdn", "-epd", "g.epd",
                    cwd=tmp_path)
    assert exporting.returncode == 0, exporting.stderr
    exported = json.loads((tmp_path / "g.json").read_text())
    said = reported_moves(log)
    assert [g["game_id"] for g in exported] == [int(g.tags["Game"]) for g in games]
    for game in exported:
        assert len(game["search"]) == len(game["moves"])
        for info, move in zip(game["search"], game["moves"], strict=True):
            report = said.pop(0)
            assert report.move == move
            want = {k: int(report.fields[k]) for k in ("depth", "seldepth", "nodes", "nps", "time")}
            kind, value = report.fields["score"].split()
            assert info == {**want, "score": {"kind": kind, "value": int(value)}}
    # The PDN exported from the database, with the switches the tournament was started
    # with, is the live file (same games, in game order here: one game at a time).
    assert (tmp_path / "g.pdn").read_text() == live
    assert (tmp_path / "g.epd").read_text() == (tmp_path / "t.epd").read_text()


def test_an_old_database_is_migrated_and_resumed(tmp_path: Path) -> None:
    """A database without the ``search`` and ``worker`` columns (as guti wrote it before):
    read-only commands read it, and ``-resume`` adds the columns and stores the reports of
    the games it plays (no worker: played here), while the old games keep their old PDN
    comments."""
    command = [*reference("RefA", 1), *reference("RefB", 2), "-each", "tc=1+0.02", "depth=3",
               "-games", "4", "-concurrency", "1", "-db", "t.db"]
    assert run("tournament", *command, cwd=tmp_path).returncode == 0
    with sqlite3.connect(tmp_path / "t.db") as db:  # make it a database of before
        db.execute("DELETE FROM games WHERE game_id >= 2")
        db.execute("ALTER TABLE games DROP COLUMN search")
        db.execute("ALTER TABLE games DROP COLUMN worker")
    db.close()
    old = run("export", "t.db", "-json", "old.json", "-pdn", "old.pdn", cwd=tmp_path)
    assert old.returncode == 0, old.stderr
    assert [g["search"] for g in json.loads((tmp_path / "old.json").read_text())] == [[], []]
    old_games = parse_pdn((tmp_path / "old.pdn").read_text())
    assert all(re.fullmatch(r"\[%emt \d+\.\d{3}\] \[%clk [\d:.]+\]", move.comments[0])
               for game in old_games for move in game.moves)
    resumed = run("tournament", *command, "-resume", "-pdnout", "t.pdn", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 2/4 games already played" in resumed.stdout
    with sqlite3.connect(tmp_path / "t.db") as db:
        stored = db.execute("SELECT game_id, search FROM games ORDER BY game_id").fetchall()
        workers = db.execute("SELECT worker FROM games").fetchall()
    db.close()
    assert [(gid, search is None) for gid, search in stored] == [
        (0, True), (1, True), (2, False), (3, False)]
    assert workers == [(None,)] * 4
    games = parse_pdn((tmp_path / "t.pdn").read_text())
    assert [g.tags["Game"] for g in games] == ["1", "2", "3", "4"]
    assert [g.moves for g in games[:2]] == [g.moves for g in old_games]
    new_comment = re.compile(r"[+-](\d+\.\d\d|W\d+|L\d+)/\d+ (\d+\.\d{3})s "
                             r"\[%emt (\d+\.\d{3})\] \[%clk [\d:.]+\]")
    assert all(new_comment.fullmatch(move.comments[0]) for game in games[2:]
               for move in game.moves)


def test_an_export_and_a_report_hold_one_set_of_games_while_games_are_stored(
        tmp_path: Path) -> None:
    """Several reads of one export or report (the PDN, the JSON, the report's table and
    its PDN) see the database as it was when the first began, though a running
    tournament stores (here: another writer removes) games meanwhile."""
    from guti.referee.storage.export import export_epd, export_json, export_pdn
    from guti.referee.storage.store import TournamentStore
    from guti.referee.web.report import embedded_pdn, report_data

    faulty = str(ROOT / "tests" / "engines" / "faulty.py")
    engines = [w for n in ("A", "B") for w in
               ("-engine", f"cmd={sys.executable}", f"args={faulty} --mode good", f"name={n}")]
    done = run("tournament", *engines, "-each", "tc=60+1", "-games", "4", "-db", "g.db",
               "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = str(tmp_path / "g.db")

    def remove_a_game() -> None:
        with sqlite3.connect(db) as writer:
            writer.execute("DELETE FROM games WHERE game_id = (SELECT MAX(game_id) FROM games)")

    with TournamentStore.checked(db) as store, store.snapshot():
        pdn = export_pdn(store, str(tmp_path / "g.pdn"))
        remove_a_game()
        json_games = export_json(store, str(tmp_path / "g.json"))
        remove_a_game()
        epd = export_epd(store, str(tmp_path / "g.epd"))
        data = report_data(store, None)
        _, index = embedded_pdn(store)
    assert pdn == json_games == epd == len(data["games"]) == len(index) == 4
    with TournamentStore.checked(db) as store:  # after the snapshot: as it is now
        assert export_json(store, str(tmp_path / "now.json")) == 2
