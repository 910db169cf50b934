"""Values out of range, empty or given twice, read through the real ``guti`` program:
each is one line on stderr naming what was wrong and where, exit status 2, never a
traceback, before any game is played or file written.

Why: numbers past what a float or a ``go`` line can carry (``tc=1e308``, ``depth`` of 17
digits), an empty value read as "not given" (``-db ''`` silently meaning ``guti.db``), a
key given twice of which the last silently won, a device read as a config file until
memory ran out: each used to crash, hang or do something other than what was asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BOTS_DIR, GUTI, ROOT

PY = sys.executable
RANDOM = ["-engine", f"cmd={PY}", f"args={BOTS_DIR / 'python' / 'random_bot.py'}", "name=R"]
GREEDY = ["-engine", f"cmd={PY}", f"args={BOTS_DIR / 'python' / 'greedy_bot.py'}", "name=G"]
PAIR = [*RANDOM, *GREEDY]


def guti(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_line_exit_2(done: subprocess.CompletedProcess, command: str, *words: str) -> None:
    """Exit status 2 and one stderr line, ``guti COMMAND: ...``, holding every word."""
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith(f"guti {command}: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]


def nothing_written(folder: Path) -> None:
    assert not any(p.suffix in (".db", ".pdn", ".epd", ".html", ".log")
                   for p in folder.iterdir()), list(folder.iterdir())


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A database of one game pair between the two Python bots."""
    folder = tmp_path_factory.mktemp("played")
    done = guti("tournament", *PAIR, "-games", "2", "-each", "tc=10", "-db", "t.db",
                "-quiet", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "t.db"


def first_fast(cases: list, keep: int = 3) -> list:
    """The first ``keep`` cases in the fast tier, the others (the same rule on other
    options) in the slow tier."""
    return [case if n < keep else pytest.param(*(case if isinstance(case, tuple) else (case,)),
                                               marks=pytest.mark.slow)
            for n, case in enumerate(cases)]


# ------------------------------------------------------------------ 1, 2: limits
@pytest.mark.parametrize("setting, words", first_fast([
    ("tc=1e308", ["tc=1e308", "base time", "999999999999.999 s"]),
    ("tc=1+1e308", ["tc=1+1e308", "increment", "largest allowed"]),
    ("st=1e308", ["st", "999999999999.999 s"]),
    ("tc=1e12", ["tc=1e12", "base time", "999999999999.999 s"]),
    ("st=1e13", ["st", "999999999999.999 s"]),
    ("depth=10000000000000000", ["depth", "999999999999999"]),
    ("nodes=10000000000000000", ["nodes", "999999999999999"]),
    ("tc=1+1e13", ["tc=1+1e13", "increment", "9999999.999 s"]),
    ("tc=10000000000000000/1", ["moves per period", "999999999999999"]),
    ("tc=1/1e10", ["tc=1/1e10", "base time", "9999900 s"]),
    ("timemargin=10000000000000000", ["timemargin", "999999999999999 ms"]),
]))
def test_a_limit_past_what_go_carries_is_refused(tmp_path, setting, words):
    done = guti("match", *PAIR, "-games", "2", "-each", setting, cwd=tmp_path)
    one_line_exit_2(done, "match", "-each", *words)


def test_the_largest_limits_allowed_are_accepted(tmp_path):
    """The bounds are where the docs say, not below: the largest values are played with
    (``st=`` keeps every move short)."""
    done = guti("match", *PAIR, "-games", "2", "-pdnout", "g.pdn",
                "-each", "tc=999999999999.999", "depth=999999999999999",
                "nodes=999999999999999", "st=0.05", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '[TimeControl "999999999999.999"]' in (tmp_path / "g.pdn").read_text()


@pytest.mark.parametrize("value", ["1e308", "1e13"])
def test_a_toml_st_past_the_limit_is_refused(tmp_path, value):
    (tmp_path / "t.toml").write_text(f"[each]\nst = {value}\n")
    one_line_exit_2(guti("tournament", "t.toml", cwd=tmp_path), "tournament",
                    "t.toml: each", "st", "largest allowed")
    nothing_written(tmp_path)


# ------------------------------------------------------------------ 3: tune parameters
@pytest.mark.parametrize("spec, label", [
    ("Level=5,0,20,1e308,0.002", "C_END"),
    ("Level=5,0,20,1,1e300", "R_END"),
    ("Level=5,-1e300,1e300,1,0.002", "MIN"),
])
def test_a_tune_parameter_past_the_range_is_refused(tmp_path, spec, label):
    done = guti("tune", *RANDOM, "-each", "tc=10", "-param", spec, "-iterations", "1",
                cwd=tmp_path)
    one_line_exit_2(done, "tune", "-param", "Level", label, "1e+15")
    nothing_written(tmp_path)


# -------------------------------------------- numbers only as people write them, in ASCII
@pytest.mark.parametrize("args, words", [
    (["tune", *RANDOM, "-each", "tc=10", "-param", "Level=4_0,0,60,1,0.002"],
     ["-param", "Level", "START", "'4_0' is not a number"]),
    (["tune", *RANDOM, "-each", "tc=10", "-param", "Level=\uff14,0,60,1,0.002"],
     ["-param", "Level", "START", "is not a number"]),
    (["match", *RANDOM, "-each", "tc=1_0"], ["tc=1_0", "base time", "not a number"]),
    (["match", *RANDOM, "-each", "tc=1:\u0663"], ["tc=1:\u0663", "not a number"]),
    (["tournament", *RANDOM, *RANDOM[:2], "name=S", "-each", "tc=10", "-sprt", "elo0=0",
      "elo1=1_0"],
     ["-sprt", "elo1=1_0", "not a number"]),
])
def test_a_number_with_underscores_or_other_digits_is_refused(tmp_path, args, words):
    """``float`` reads ``4_0`` as 40 and other scripts' digits as digits: a typo would run."""
    one_line_exit_2(guti(*args, cwd=tmp_path), args[0], *words)
    nothing_written(tmp_path)


# ------------------------------------------------------------------ 4, 5: config files
@pytest.mark.parametrize("path, kind", [("/dev/zero", "character device"),
                                        ("/dev/urandom", "character device"),
                                        (".", "directory")])
def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path, path, kind):
    one_line_exit_2(guti("tournament", path, cwd=tmp_path, timeout=30), "tournament",
                    path, kind)


def test_a_fifo_config_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "t.toml")
    one_line_exit_2(guti("tournament", "t.toml", cwd=tmp_path, timeout=30), "tournament",
                    "t.toml", "FIFO")


def test_a_config_larger_than_a_mebibyte_is_refused(tmp_path):
    (tmp_path / "t.toml").write_text("# padding\n" * 110_000)
    one_line_exit_2(guti("tournament", "t.toml", cwd=tmp_path), "tournament",
                    "t.toml", "1 MiB")


def test_a_build_with_an_unclosed_quote_names_the_key(tmp_path):
    (tmp_path / "t.toml").write_text('[[engine]]\ncmd = "{python}"\nbuild = "\\"unclosed"\n')
    one_line_exit_2(guti("tournament", "t.toml", cwd=tmp_path), "tournament",
                    "engine #1.build", "No closing quotation")


# ------------------------------------------------------------------ 6: SPRT bounds
@pytest.mark.parametrize("bounds, words", [
    (["elo0=0", "elo1=1000"], ["elo1=1000", "normalized", "200"]),
    (["elo0=-250", "elo1=0"], ["elo0=-250", "200"]),
    (["elo0=0", "elo1=5000", "model=logistic"], ["elo1=5000", "logistic", "1000"]),
])
def test_sprt_bounds_an_sprt_cannot_measure_are_refused(tmp_path, bounds, words):
    done = guti("tournament", *PAIR, "-games", "2", "-each", "tc=10", "-sprt", *bounds,
                cwd=tmp_path)
    one_line_exit_2(done, "tournament", "-sprt", *words)
    nothing_written(tmp_path)


@pytest.mark.parametrize("command", [["standings"], ["report", "-html", "r.html"]])
def test_reading_a_database_with_such_bounds_is_refused_too(played, tmp_path, command):
    done = guti(command[0], str(played), *command[1:], "-sprt", "elo0=0", "elo1=1000",
                cwd=tmp_path)
    one_line_exit_2(done, command[0], "-sprt elo1=1000", "200")
    assert not (tmp_path / "r.html").exists()


def test_an_sprt_at_the_largest_bounds_runs_to_its_end(tmp_path):
    done = guti("tournament", *PAIR, "-games", "2", "-each", "tc=10", "-quiet",
                "-sprt", "elo0=-200", "elo1=200", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SPRT R vs G" in done.stdout and "Traceback" not in done.stderr


# ------------------------------------------------------------------ 7: console
def test_console_with_an_engine_that_cannot_start_says_so_as_check_does(tmp_path):
    console = guti("console", "--", "/nonexistent", cwd=tmp_path, timeout=30)
    check = guti("check", "--", "/nonexistent", cwd=tmp_path, timeout=30)
    one_line_exit_2(console, "console", "cannot start /nonexistent")
    one_line_exit_2(check, "check", "cannot start /nonexistent")
    assert console.stdout == ""


# ------------------------------------------------------------------ 8: anchors
@pytest.mark.parametrize("elo", ["1e308", "1e20", "-100001"])
def test_an_anchor_past_any_rating_scale_is_refused(played, tmp_path, elo):
    one_line_exit_2(guti("standings", str(played), "-anchor", f"R={elo}", cwd=tmp_path),
                    "standings", "-anchor", elo, "100000")


def test_the_largest_anchor_is_accepted(played, tmp_path):
    done = guti("standings", str(played), "-anchor", "R=-100000", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "R = -100000" in done.stdout


# ------------------------------------------------------------------ 9: empty values
@pytest.mark.parametrize("option", first_fast([
    ["-pdnout", ""], ["-pdnout", "file="], ["-db", ""], ["-report", ""], ["-epdout", "file="],
    ["-log", "file="], ["-fen", ""], ["-game", ""], ["-tournament", ""], ["-cluster", ""],
    ["-db", "  "], ["-openings", "file="], ["-event", ""],
]))
def test_an_empty_value_is_a_usage_mistake_naming_the_option(tmp_path, option):
    done = guti("tournament", *PAIR, "-games", "2", "-each", "tc=10", *option, cwd=tmp_path)
    one_line_exit_2(done, "tournament", option[0], "empty value")
    nothing_written(tmp_path)
    assert not (tmp_path / "guti.db").exists()


def test_export_to_an_empty_file_name_is_refused(played, tmp_path):
    one_line_exit_2(guti("export", str(played), "-pdn", "", cwd=tmp_path), "export",
                    "-pdn", "empty value")


@pytest.mark.parametrize("text, words", [
    ('db = ""\n', ["t.toml: db", "empty string"]),
    ('[pdnout]\nfile = ""\n', ["t.toml: pdnout.file", "empty string"]),
    ('[[engine]]\ncmd = "{python}"\nname = ""\n', ["engine #1.name", "empty string"]),
])
def test_an_empty_string_in_a_config_is_refused(tmp_path, text, words):
    (tmp_path / "t.toml").write_text(text)
    one_line_exit_2(guti("tournament", "t.toml", cwd=tmp_path), "tournament", *words)
    nothing_written(tmp_path)


def test_an_empty_engine_option_value_reaches_the_engine(tmp_path):
    """A string option may be set to nothing: ``option.NAME=`` passes the option reader
    and is judged against what the engine declares."""
    done = guti("match", *RANDOM, "option.Foo=", *GREEDY, "-games", "2", "-each", "tc=10",
                cwd=tmp_path)
    one_line_exit_2(done, "match", "engine R: option.Foo=", "no option 'Foo'")


# ------------------------------------------------------------------ 10: a key given twice
@pytest.mark.parametrize("option, key", [
    (["-openings", "file=a", "file=b"], "file="),
    (["-openings", "a.epd", "file=b"], "file="),
    (["-pdnout", "file=a1.pdn", "file=a2.pdn"], "file="),
    (["-each", "tc=1", "tc=5+1"], "tc="),
    ([*RANDOM[:3], "name=X", "name=Y"], "name="),
])
def test_a_key_given_twice_in_one_option_is_refused(tmp_path, option, key):
    each = [] if option[0] == "-each" else ["-each", "tc=10"]
    done = guti("match", *PAIR, "-games", "2", *each, *option, cwd=tmp_path)
    one_line_exit_2(done, "match", option[0], key, "more than once")
    nothing_written(tmp_path)


# ---------------------------------------------------------- a schedule past what a run holds
@pytest.mark.parametrize("args", [
    ["tournament", *PAIR, "-each", "depth=1", "-games", "999999999"],
    ["tournament", *PAIR, *GREEDY[:-1], "name=G2", "-each", "depth=1", "-rounds", "400000"],
    ["tune", *RANDOM, "-each", "depth=1", "-param", "X=1,0,10,1,0.1", "-iterations",
     "99999999999"],
])
def test_a_schedule_past_a_million_games_is_refused_at_once(tmp_path: Path, args) -> None:
    """The whole schedule is written before the first game: a mistyped count would fill
    the disk for minutes before playing anything."""
    done = guti(*args, "-db", "t.db", cwd=tmp_path, timeout=60)
    one_line_exit_2(done, args[0], "more than", "1,000,000")
    nothing_written(tmp_path)


@pytest.mark.parametrize("extra, words", [
    ([*GREEDY[:-1], "name=G2"], ["tests one pair of engines", "got 3"]),
    (["-games", "1", "-rounds", "4"], ["-sprt: not with -games 1 (an SPRT counts game pairs "
                                       "with the colours reversed)"]),
])
def test_an_sprt_it_could_never_decide_is_refused(tmp_path: Path, extra, words) -> None:
    """The SPRT counts one pair of engines' game pairs: with a third engine, or single
    games, it would run every game and never decide."""
    done = guti("tournament", *PAIR, *extra, "-each", "depth=1", "-sprt", "elo0=0",
                "elo1=20", "-db", "t.db", cwd=tmp_path)
    one_line_exit_2(done, "tournament", "-sprt", *words)
    nothing_written(tmp_path)


def test_a_knockout_tiebreak_past_a_million_games_is_refused_at_once(tmp_path: Path) -> None:
    done = guti("tournament", "-tournament", "knockout", *PAIR, *GREEDY[:-1], "name=G2",
                "-each", "depth=1", "-tiebreak", "1000000000000", "-openings", "random:4",
                "-db", "t.db", cwd=tmp_path, timeout=60)
    one_line_exit_2(done, "tournament", "-tiebreak", "more than")
    nothing_written(tmp_path)


@pytest.mark.parametrize("option", [["-report", "r.html"], ["-serve", "0"]])
def test_a_database_in_memory_with_a_report_or_a_live_page_is_refused(
        tmp_path: Path, option: list[str]) -> None:
    """Both read the database apart from the run: a database in memory is the run's alone
    (the report was never written, after a whole run, with exit status 2)."""
    done = guti("tournament", *PAIR, "-each", "depth=1", "-games", "2", "-db", ":memory:",
                *option, cwd=tmp_path, timeout=60)
    one_line_exit_2(done, "tournament", option[0], "-db FILE", ":memory:")
    nothing_written(tmp_path)


@pytest.mark.parametrize("command", ["tournament", "match"])
def test_a_start_position_where_the_game_is_over_is_refused(tmp_path: Path, command) -> None:
    """Every game would end before its first move, and be scored."""
    over = "3ww/3/3/1/3/w2/w2w1 b 0 18"  # Black has no piece: nothing to move
    done = guti(command, *PAIR, "-each", "depth=1", "-fen", over, cwd=tmp_path)
    one_line_exit_2(done, command, "-fen", "already over")
    nothing_written(tmp_path)


def test_the_game_as_an_engine_option_is_refused(tmp_path):
    """``option.UGI_Variant=`` would be overridden by the game the referee sets: said."""
    done = guti("match", *RANDOM, "option.ugi_variant=pretwa", *RANDOM[:2], "name=S",
                cwd=tmp_path)
    one_line_exit_2(done, "match", "option.ugi_variant=pretwa", "chosen with -game")
    nothing_written(tmp_path)
