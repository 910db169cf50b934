"""A tampered or damaged tournament database is one line, exit 2, for every command.

A real tournament is played and stored once; each case copies its database, changes it
with sqlite3 (or overwrites the file) as someone with the file in hand could, and runs
every command that reads a database through the real ``guti`` program: ``standings``,
``report -html``, ``export -pdn``, ``export -json``, ``serve`` and ``tournament -resume``.
Each must end with exit 2 and one line on stderr naming the database (and where in it),
never a traceback, and ``serve`` must not start serving.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, rows

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable
TOURNAMENT = ["tournament", "-engine", f"cmd={PY}", f"args={FAULTY} --seed 1", "name=a",
              "-engine", f"cmd={PY}", f"args={FAULTY} --seed 2", "name=b", "-each", "tc=30+0.5",
              "-games", "4", "-db", "t.db", "-pdnout", "t.pdn"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

COMMANDS = {
    "standings": ["standings", "t.db"],
    "report": ["report", "t.db", "-html", "r.html"],
    "export-pdn": ["export", "t.db", "-pdn", "x.pdn"],
    "export-json": ["export", "t.db", "-json", "x.json"],
    "serve": ["serve", "t.db", "-port", "0"],
    "resume": [*TOURNAMENT, "-resume"],
}

#: name -> (SQL run on the database, or a way to overwrite the file; a word of the line)
PENDING = "DELETE FROM games WHERE game_id = 3; "  # so -resume has a game to play
CASES: dict[str, tuple[str, str]] = {
    "elapsed_ms not a list": ("UPDATE games SET elapsed_ms = '5' WHERE game_id = 1",
                              "elapsed_ms"),
    "elapsed_ms of text": ("UPDATE games SET elapsed_ms = '[\"x\"]' WHERE game_id = 1",
                           "elapsed_ms"),
    "settings not JSON": ("UPDATE meta SET value = '{' WHERE key = 'settings'", "settings"),
    "settings game chess": ("UPDATE meta SET value = json_set(value, '$.game', 'chess')"
                            " WHERE key = 'settings'", "chess"),
    "engine config not JSON": ("UPDATE engines SET config = 'nope' WHERE idx = 1", "engine 2"),
    "engine config without argv": ("UPDATE engines SET config = '{\"name\": \"b\"}'"
                                   " WHERE idx = 1", "argv"),
    "unknown reason": ("UPDATE games SET reason = 'eaten by a grue' WHERE game_id = 1",
                       "reason"),
    "games dropped": ("DROP TABLE games", "games"),
    "schedule dropped": ("DROP TABLE schedule", "schedule"),
    "engines dropped": ("DROP TABLE engines", "engines"),
    "game chess": ("UPDATE games SET game = 'chess' WHERE game_id = 1", "chess"),
    "engine 99 scheduled": (PENDING + "UPDATE schedule SET white = 99 WHERE game_id = 3", "99"),
    "garbage opening FEN": (PENDING + "UPDATE schedule SET opening_fen = 'garbage'"
                                      " WHERE game_id = 3", "opening"),
    "garbage opening moves": (PENDING + "UPDATE schedule SET opening_moves = 'zz-99 1-2'"
                                        " WHERE game_id = 3", "opening"),
    "garbage moves stored": ("UPDATE games SET moves = 'zz-99 \a' WHERE game_id = 1", "moves"),
    "opening plies past the moves": ("UPDATE games SET opening_plies = 99999 WHERE game_id = 1",
                                     "opening_plies 99999"),
    "colours swapped": ("UPDATE games SET white_idx = black_idx, black_idx = white_idx,"
                        " white = black, black = white WHERE game_id = 1", "schedule"),
    "engine index off its name": ("UPDATE games SET white_idx = 1 WHERE game_id = 0",
                                  "engine names"),
    "a game of pretwa": ("UPDATE games SET game = 'pretwa' WHERE game_id = 1", "pretwa"),
    "negative round": ("UPDATE games SET round = -5 WHERE game_id = 1", "negative"),
    "not a database": ("random bytes", "not a database"),
    "damaged pages": ("every page but the first overwritten", "malformed"),
}


@pytest.fixture(scope="module")
def stored_tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stored")
    done = subprocess.run([*GUTI, *TOURNAMENT], cwd=folder, env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return folder


def tamper(db: Path, how: str) -> None:
    if how == "random bytes":
        db.write_bytes(os.urandom(20_000))
    elif how.startswith("every page"):
        data = bytearray(db.read_bytes())
        data[4096:] = b"\xa5" * (len(data) - 4096)
        db.write_bytes(bytes(data))
    else:
        conn = sqlite3.connect(db)
        try:
            conn.executescript(how)
            conn.commit()
        finally:
            conn.close()  # now: a close later (checkpointing the WAL) would change the file


#: Cases beyond the hostile tester's list: the slow tier runs them too.
MORE = ("elapsed_ms of text", "engine config without argv", "schedule dropped",
        "engines dropped", "garbage moves stored")


def _cases() -> list:
    """Each case of the hostile tester's list against one command in the fast tier (the
    commands taken in turn, so that each meets several cases); every case against every
    command in the slow tier."""
    names = list(COMMANDS)
    cases = []
    for i, case in enumerate(CASES):
        if case not in MORE:
            one = names[i % len(names)]
            cases.append(pytest.param(case, (one,), id=f"{case}-{one}"))
        cases.append(pytest.param(case, tuple(names), marks=pytest.mark.slow,
                                  id=f"{case}-every-command"))
    return cases


@pytest.mark.parametrize(("case", "commands"), _cases())
def test_every_command_gives_one_line_for_a_tampered_database(
        stored_tournament: Path, tmp_path: Path, case: str, commands: tuple[str, ...]) -> None:
    how, word = CASES[case]
    folder = tmp_path / "t"
    shutil.copytree(stored_tournament, folder)
    tamper(folder / "t.db", how)
    before = (folder / "t.db").read_bytes()
    for command in commands:
        args = COMMANDS[command]
        done = subprocess.run([*GUTI, *args], cwd=folder, env=ENV, capture_output=True,
                              text=True, timeout=120)
        said = f"{command}: exit {done.returncode}\n{done.stdout}{done.stderr}"
        assert done.returncode == 2, said
        assert "Traceback" not in done.stderr, said
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, said
        assert "t.db" in lines[0] and word.lower() in lines[0].lower(), said
        assert "serving" not in done.stdout and "Finished game" not in done.stdout, said
        if command != "resume":  # a run notes when it opened the database; these only read
            assert (folder / "t.db").read_bytes() == before, f"{command} changed the database"
    assert not (folder / "x.pdn").exists() and not (folder / "r.html").exists()


@pytest.mark.parametrize(("how", "held"), [
    ("DELETE FROM schedule WHERE game_id = 3", 3),
    ("INSERT INTO schedule (game_id, pair_id, round, white, black) VALUES (4, 2, 0, 0, 1)", 5)])
def test_a_resume_refuses_a_schedule_rows_were_taken_from_or_added_to(
        stored_tournament: Path, tmp_path: Path, how: str, held: int) -> None:
    folder = tmp_path / "t"
    shutil.copytree(stored_tournament, folder)
    tamper(folder / "t.db", PENDING + how)
    pdn = (folder / "t.pdn").read_bytes()
    done = subprocess.run([*GUTI, *COMMANDS["resume"]], cwd=folder, env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"guti tournament: t.db: its schedule holds {held} games where this tournament has "
        "4: the database was changed outside guti"]
    assert rows(folder / "t.db", "SELECT COUNT(*) FROM games") == [(3,)]  # nothing played
    assert (folder / "t.pdn").read_bytes() == pdn  # not made to agree with the database
    assert not (folder / "t.pdn.bak").exists()


#: Numbers guti never writes in a game's JSON columns (SQL, a word of the line): only the
#: commands that read the games' columns meet them (``standings`` reads results alone).
HUGE_NUMBERS = {
    "clock_ms infinite": ("UPDATE games SET clock_ms = '[1e400]' WHERE game_id = 1", "finite"),
    "search past 64 bits": ("UPDATE games SET search = '[[\"cp\", 1, 1, 1,"
                            " 100000000000000000000, 1, 1]]' WHERE game_id = 1", "past any number"),
    "resources infinite": ("UPDATE games SET resources = json_set(resources, '$.w.cpu_ms',"
                           " json('1e400')) WHERE game_id = 1", "finite"),
}


@pytest.mark.parametrize(("case", "command"), [
    (case, command) for case, command in zip(HUGE_NUMBERS, ("report", "export-pdn", "serve"),
                                             strict=True)] + [
    pytest.param(case, command, marks=pytest.mark.slow)
    for case in HUGE_NUMBERS for command in ("report", "export-pdn", "export-json", "serve")])
def test_a_number_guti_never_writes_is_one_line_not_a_crash(
        stored_tournament: Path, tmp_path: Path, case: str, command: str) -> None:
    how, word = HUGE_NUMBERS[case]
    folder = tmp_path / "t"
    shutil.copytree(stored_tournament, folder)
    tamper(folder / "t.db", how)
    done = subprocess.run([*GUTI, *COMMANDS[command]], cwd=folder, env=ENV,
                          capture_output=True, text=True, timeout=120)
    said = f"exit {done.returncode}\n{done.stdout}{done.stderr}"
    assert done.returncode == 2 and "Traceback" not in done.stderr, said
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "t.db" in lines[0] and word in lines[0], said
    assert not (folder / "x.pdn").exists() and not (folder / "r.html").exists()



#: Stored SPRTs of the right types that no test can run (JSON of the ``sprt`` setting, a
#: word of the line): the commands that show a tournament's SPRT read them.
STORED_SPRTS = {
    "elo0 above elo1": ('{"elo0": 20, "elo1": 10}', "elo0 < elo1"),
    "alpha past 1": ('{"alpha": 2}', "alpha"),
    "unknown model": ('{"model": "foo"}', "model=foo"),
    "elo0 true": ('{"elo0": true}', "elo0=True: not a number"),
}


@pytest.mark.parametrize(("case", "command"), list(zip(
    STORED_SPRTS, ("standings", "report", "serve", "standings"), strict=True)))
def test_a_stored_sprt_no_test_can_run_is_one_line(
        stored_tournament: Path, tmp_path: Path, case: str, command: str) -> None:
    sprt, word = STORED_SPRTS[case]
    folder = tmp_path / "t"
    shutil.copytree(stored_tournament, folder)
    tamper(folder / "t.db", "UPDATE meta SET value = json_set(value, '$.sprt', "
                            f"json('{sprt}')) WHERE key = 'settings'")
    done = subprocess.run([*GUTI, *COMMANDS[command]], cwd=folder, env=ENV,
                          capture_output=True, text=True, timeout=120)
    said = f"exit {done.returncode}\n{done.stdout}{done.stderr}"
    assert done.returncode == 2 and "Traceback" not in done.stderr, said
    [line] = done.stderr.strip().splitlines()
    assert "t.db" in line and "sprt" in line and word in line, said
    assert "serving" not in done.stdout and not (folder / "r.html").exists(), said


def test_a_row_changed_after_the_check_is_a_damaged_game_when_read(
        stored_tournament: Path, tmp_path: Path) -> None:
    """What a live page reads as games come (after its one check at the start): a row
    whose id is not a number names the game, instead of failing where it is used."""
    from guti.referee.storage.store import StoreError, TournamentStore

    folder = tmp_path / "t"
    shutil.copytree(stored_tournament, folder)
    with TournamentStore(str(folder / "t.db"), create=False) as store:
        store.check()
        tamper(folder / "t.db", "UPDATE games SET game_id = 'abc' WHERE seq = 3")
        with pytest.raises(StoreError, match="game_id 'abc' is not a whole number"):
            list(store.records_after(0))
