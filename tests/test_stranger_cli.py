"""What a stranger met at guti's command line while bringing up an engine of their own.

Why: an engine author's first contact is ``guti check``, ``guti console`` and a first
``guti match``; every message there must name the real fault in the author's own terms.
An engine that cannot start is one "cannot start" line and exit 2 everywhere (a missing
execute bit says ``chmod +x``); game names are read in any case everywhere; a bad
``-each`` value is ``-each``'s error; a TOML key typo gets a "did you mean" as a mistyped
flag does; ``99-1`` is an illegal move (protocol.md 5.6), never "malformed".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.config.args import CliError
from guti.referee.config.engine_build import build_engines
from guti.referee.config.tournament import read_tournament_options, tournament_settings
from guti.rules import Board, RulesError
from tests.conftest import ENGINE_ARGV, GUTI, ROOT

PY = sys.executable
PAIR = ["-engine", "name=A", "cmd=true", "-engine", "name=B", "cmd=true"]


def guti(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True, input=stdin,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def settings_of(argv: list[str]):
    given = read_tournament_options(argv)
    engines, setups = build_engines(given.engines, lambda _line: None)
    return tournament_settings(given.with_engines(engines), setups)


# --- an engine that cannot start ---------------------------------------------------------


def test_a_tournament_whose_engine_cannot_start_leaves_nothing_in_the_way(tmp_path):
    """The mistake corrected, the same command runs: the failed run left no database
    (nor PDN) that would ask for ``-resume`` or call the new run a different tournament."""
    good = ["-engine", "name=B", f"cmd={PY}", "args=-m guti.engine"]
    rest = ["-each", "depth=1", "-games", "2", "-pdnout", "t.pdn"]
    bad = guti("tournament", "-engine", "name=A", "cmd=./no-such-engine", *good, *rest,
               cwd=tmp_path)
    one_line(bad, 2, "engine A", "cannot start")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    fixed = guti("tournament", "-engine", "name=A", f"cmd={PY}", "args=-m guti.engine", *good,
                 *rest, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "2/2 games stored" in fixed.stdout


def test_check_of_a_missing_engine_is_one_cannot_start_line(tmp_path):
    done = guti("check", "--", str(tmp_path / "no-such-engine"), cwd=tmp_path)
    one_line(done, 2, "guti check:", "cannot start", "no-such-engine", "No such file")
    assert done.stdout == ""  # no report of FAIL/SKIP items, no "does NOT conform"


@pytest.mark.parametrize("command", ["check", "match"])
@pytest.mark.parametrize("kind", ["without its execute bit", "a folder"])
def test_an_engine_that_is_no_program_is_said_to_be_what_it_is(tmp_path, command, kind):
    if kind == "a folder":
        program, said = tmp_path, f"{tmp_path} is a directory, not a program"
    else:
        program = tmp_path / "my-engine"
        program.write_text("#!/bin/sh\necho hello\n")
        program.chmod(0o644)
        said = f"{program} is not executable (chmod +x {program}?)"
    if command == "check":
        done = guti("check", "--", str(program), cwd=tmp_path)
    else:
        done = guti("match", "-engine", f"cmd={program}", "-engine", f"cmd={program}",
                    "-each", "tc=1+0.1", "-games", "1", cwd=tmp_path)
    one_line(done, 2, "cannot start", said)


# --- one rule for the case of game names ------------------------------------------------


@pytest.mark.parametrize("flag", ["-game", "-variant"])
def test_game_flags_accept_any_case(tmp_path, flag):
    settings = settings_of([*PAIR, "-each", "tc=1", flag, "PreTwa", "-db", str(tmp_path / "t.db")])
    assert settings.game.name == "pretwa"


def test_toml_game_accepts_any_case(tmp_path):
    (tmp_path / "t.toml").write_text('game = "Dash-Guti"\n[each]\ntc = "1"\n')
    settings = settings_of([str(tmp_path / "t.toml"), *PAIR, "-db", str(tmp_path / "t.db")])
    assert settings.game.name == "dash-guti"


def test_an_unknown_game_is_still_refused(tmp_path):
    with pytest.raises(CliError, match="-game: unknown game 'Chess'"):
        settings_of([*PAIR, "-each", "tc=1", "-game", "Chess", "-db", str(tmp_path / "t.db")])


def test_perft_and_console_and_check_read_game_names_in_any_case(tmp_path):
    done = guti("perft", "PRETWA", "2", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines() == ["nodes 5"], done.stderr
    console = guti("console", "--game", "Pretwa", "--", *ENGINE_ARGV, cwd=ROOT, stdin="/quit\n")
    assert console.returncode == 0, console.stdout + console.stderr
    assert "pretwa" in console.stdout
    refused = guti("console", "--game", "Chess", "--", *ENGINE_ARGV, cwd=ROOT)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("guti console: argument --game: unknown game 'Chess'")
    drawn = guti("board", "-game", "PRETWA", "-svg", str(tmp_path / "b.svg"), cwd=tmp_path)
    assert drawn.returncode == 0 and drawn.stdout.startswith("1/bbwwwb/bbwwwb/bbwwwb w 0 1")


# --- -each, tc=M:SS, TOML typos --------------------------------------------------------


def test_a_bad_each_value_is_reported_as_each(tmp_path):
    done = guti("match", *PAIR, "-each", "tc=5+", "-games", "1", cwd=tmp_path)
    line = one_line(done, 2, "-each", "tc=5+", "increment")
    assert "-engine" not in line


def test_minutes_and_seconds_time_control_is_documented_and_read(tmp_path):
    from guti.referee.config.option_specs import ENGINE_KEY_HELP

    assert "5:00" in dict(ENGINE_KEY_HELP)["tc=T"]
    settings = settings_of([*PAIR, "-each", "tc=5:00+1", "-db", str(tmp_path / "t.db")])
    limits = settings.engines[0].limits
    assert limits is not None and (limits.base_ms, limits.inc_ms) == (300_000, 1000)


def test_a_toml_key_typo_gets_did_you_mean(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text('gmaes = 4\n[each]\ntc = "1"\n')
    done = guti("tournament", str(toml), *PAIR, cwd=tmp_path)
    one_line(done, 2, "unknown setting 'gmaes' (did you mean games?)")


# --- 99-1 is illegal, not malformed -----------------------------------------------------


def test_a_point_the_board_lacks_is_an_illegal_move():
    with pytest.raises(RulesError, match=r"^illegal move '99-1' in .*: no point 99"):
        Board("egara-guti").parse_move("99-1")


def test_the_console_calls_99_1_illegal():
    done = guti("console", "--", *ENGINE_ARGV, cwd=ROOT, stdin="/move 99-1\n/quit\n")
    errors = [line for line in done.stdout.splitlines() + done.stderr.splitlines()
              if "99-1" in line and "error" in line]
    assert errors and "illegal move '99-1'" in errors[0], done.stdout + done.stderr
    assert "malformed" not in errors[0]
