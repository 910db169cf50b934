"""``-referees auto``, the default: how many referee processes guti chooses, and that a run
refereed by the processes it chose keeps every guarantee of ``-referees N``.

The rule (:func:`guti.referee.execution.referee_choice.referee_count`) is checked as a
function; the runs are the real ``guti tournament`` with the helpers of
``tests/test_referee_pool.py``: a small run plays in guti's own process (its traffic is
logged live, never as a referee process's block), a run of many games at once is spread
over referee processes (each game's block names its process), and one aborted by SIGTERM
stores nothing half-played, leaves no process behind and resumes to the end.
"""

from __future__ import annotations

import re
import signal
import sys

import pytest

from guti.referee.config.args import CliError
from guti.referee.config.toml_types import OPTION_TYPES, check_type
from guti.referee.config.tournament import settings_from_argv
from guti.referee.execution.executor import ExecutionPlan
from guti.referee.execution.referee_choice import (
    AUTO_REFEREES,
    GAMES_PER_REFEREE,
    referee_count,
)
from tests.test_referee_pool import (
    TWO_CPUS,
    Run,
    check_games,
    engine,
    guti,
    log_blocks,
    marking,
    nothing_left,
    referees_of,
    scheduled,
    wait_for_mark,
)

PY = sys.executable


# --------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    ("concurrency", "games", "cpus", "expected"),
    [
        (1, None, (0, 1), 1),
        (GAMES_PER_REFEREE, None, (0, 1), 1),  # up to the threshold: this process alone
        (GAMES_PER_REFEREE + 1, None, (0, 1), 2),
        (128, None, (0, 1), 2),  # never more than the cores
        (128, None, tuple(range(16)), 8),  # one per GAMES_PER_REFEREE games at once
        (64, None, tuple(range(16)), 4),
        (128, 2, (0, 1), 1),  # a 2-game run has 2 games at once, whatever -concurrency
        (128, 40, tuple(range(8)), 3),
    ],
)
def test_auto_gives_one_process_per_threshold_of_games_at_once_at_most_one_per_core(
        concurrency, games, cpus, expected):
    assert referee_count(AUTO_REFEREES, concurrency, games, cpus) == expected


def test_a_number_asked_for_is_kept_at_most_one_per_game_slot():
    assert referee_count(2, 4, games=2, cpus=(0,)) == 2  # asked for: not the rule's
    assert referee_count(3, 2) == 2


def _plan(**kw) -> ExecutionPlan:
    return ExecutionPlan([], None, **kw)  # type: ignore[arg-type]


def test_the_plan_starts_referee_processes_only_when_they_help():
    many = {"concurrency": 64, "games": 200, "cpus": (0, 1)}
    assert _plan(referees=AUTO_REFEREES, **many).referee_processes() == 2
    # few games, one referee chosen, the live page (which sees moves refereed here only),
    # or a cluster (whose workers referee): guti's own process
    assert _plan(referees=AUTO_REFEREES, concurrency=64, games=2).referee_processes() == 0
    assert _plan(referees=AUTO_REFEREES, concurrency=8, games=200).referee_processes() == 0
    assert _plan(referees=AUTO_REFEREES, live=True, **many).referee_processes() == 0
    assert _plan(referees=1, **many).referee_processes() == 0
    assert _plan(referees=2, live=True, **many).referee_processes() == 2


def _settings(*extra: str):
    return settings_from_argv(["-engine", f"cmd={PY}", "name=A", "-engine", f"cmd={PY}",
                               "name=B", "-each", "tc=1", *extra], print)


def test_auto_is_the_default_and_can_be_asked_for_on_the_command_line_and_in_a_file():
    assert _settings().referees == AUTO_REFEREES
    assert _settings("-referees", "auto").referees == AUTO_REFEREES
    assert _settings("-referees", "2", "-concurrency", "2").referees == 2
    check_type("auto", OPTION_TYPES["referees"], "t.toml: referees")
    check_type(3, OPTION_TYPES["referees"], "t.toml: referees")
    with pytest.raises(CliError, match='referees: expected a whole number or "auto"'):
        check_type("many", OPTION_TYPES["referees"], "t.toml: referees")


# --------------------------------------------------------------------------- real runs


def test_a_small_run_starts_no_referee_process(tmp_path):
    """Two games at ``-concurrency 32``: refereed in guti's own process, whose log lines
    are written as the games go (a referee process's come back as one block per game,
    naming it), so no process was started for them."""
    pids = tmp_path / "pids"
    done = guti("tournament", *engine("A", pids), *engine("B", pids), "-each", "tc=10+0.1",
                "-games", "2", "-concurrency", "32", "-log", "t.log", "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2/2 games stored" in done.stdout
    assert "concurrency 32, db" in done.stdout.splitlines()[0]
    referee_of, _ = log_blocks(tmp_path / "t.log")
    assert referee_of == {}
    log = (tmp_path / "t.log").read_text()
    assert "game 1:" in log and "game 2:" in log and " on referee " not in log
    assert len(check_games(tmp_path / "guti.db")) == 2
    nothing_left(tmp_path, pids)


MANY = 2 * GAMES_PER_REFEREE  # games at once that auto spreads over two processes


@TWO_CPUS
@pytest.mark.slow
def test_many_games_at_once_are_spread_over_referee_processes(tmp_path):
    pids = tmp_path / "pids"
    done = guti("tournament", *engine("A", pids), *engine("B", pids), "-each", "tc=20+0.2",
                "-games", str(MANY), "-concurrency", str(MANY), "-log", "t.log", "-quiet",
                cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{MANY}/{MANY} games stored" in done.stdout
    assert f"concurrency {MANY} on 2 referee processes, db" in done.stdout.splitlines()[0]
    db = tmp_path / "guti.db"
    assert sorted(check_games(db)) == scheduled(db) == list(range(MANY))
    referee_of, _ = log_blocks(tmp_path / "t.log")
    assert sorted(referee_of) == list(range(1, MANY + 1))
    assert set(referee_of.values()) == {"referee 1", "referee 2"}
    nothing_left(tmp_path, pids)


@TWO_CPUS
def test_a_resume_chooses_referee_processes_for_the_games_it_has_left(tmp_path):
    """A tournament of MANY games played to the end, resumed at MANY games at once: with
    no game left, the resume starts no referee process (the whole tournament at once
    would have had two)."""
    pids = tmp_path / "pids"
    common = (*engine("A", pids), *engine("B", pids), "-each", "tc=10+0.1", "-games",
              str(MANY), "-maxmoves", "1", "-quiet")
    first = guti("tournament", *common, "-concurrency", "2", cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stderr
    again = guti("tournament", *common, "-concurrency", str(MANY), "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"concurrency {MANY}, db" in again.stdout.splitlines()[0]
    assert f"{MANY}/{MANY} games stored" in again.stdout
    nothing_left(tmp_path, pids)


@TWO_CPUS
@pytest.mark.slow
@pytest.mark.signals
def test_sigterm_under_auto_referees_stores_nothing_half_played_and_resumes(tmp_path):
    """The abort, orphan and resume guarantees of ``-referees N`` with the processes
    ``auto`` chose: SIGTERM while games are in play exits 130, stores only whole games,
    leaves no process; the same command with ``-resume`` plays the rest, each game once."""
    pids = tmp_path / "pids"
    think = ["--think", "0.01"]
    argv = ["tournament", *marking("A", tmp_path, pids, 3, *think), *engine("B", pids, *think),
            "-each", "tc=60+1", "-games", str(MANY), "-concurrency", str(MANY), "-quiet"]
    run = Run.start(argv, tmp_path)
    try:
        wait_for_mark(tmp_path, run)
        assert len(referees_of(run.proc.pid)) == 2
        run.proc.send_signal(signal.SIGTERM)
        code = run.finish(15.0)
    finally:
        run.kill()
    assert code == 130, run.out + run.err
    assert "aborting: running games are not stored" in run.out
    check_games(tmp_path / "guti.db")
    nothing_left(tmp_path, pids)
    for mark in tmp_path.glob("mark.*"):
        mark.unlink()
    done = guti(*argv, "-resume", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "guti.db"
    assert sorted(check_games(db)) == scheduled(db) == list(range(MANY))
    nothing_left(tmp_path, pids)


def test_referees_auto_in_the_help(tmp_path):
    done = guti("tournament", "--help", cwd=tmp_path, timeout=60)
    assert done.returncode == 0
    assert "auto (default) or N" in done.stdout


@TWO_CPUS
@pytest.mark.slow
@pytest.mark.signals
def test_one_ctrl_c_under_auto_referees_finishes_the_running_games_and_resumes(tmp_path):
    """One Ctrl-C with the processes ``auto`` chose: no new game starts, the running ones
    are played to their end and stored, exit 130; ``-resume`` plays exactly the rest."""
    pids = tmp_path / "pids"
    think = ["--think", "0.01"]
    total = 2 * MANY
    argv = ["tournament", *marking("A", tmp_path, pids, 3, *think), *engine("B", pids, *think),
            "-each", "tc=60+1", "-games", str(total), "-concurrency", str(MANY)]
    db = tmp_path / "guti.db"
    run = Run.start(argv, tmp_path)
    try:
        wait_for_mark(tmp_path, run)
        assert len(referees_of(run.proc.pid)) == 2
        run.proc.send_signal(signal.SIGINT)  # to guti alone, not to its process group
        said = run.wait_line("stopping: no new games")
        code = run.finish(120)
    finally:
        run.kill()
    assert code == 130, run.out + run.err
    running = int(re.search(r"finishing (\d+) running game", run.out_lines[said]).group(1))
    assert 1 <= running <= MANY
    finished = [line for line in run.out_lines if line.startswith("Finished game")]
    assert len(check_games(db)) == len(finished) < total
    nothing_left(tmp_path, pids)
    for mark in tmp_path.glob("mark.*"):
        mark.unlink()
    resumed = guti(*argv, "-resume", "-quiet", cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(check_games(db)) == scheduled(db) == list(range(total))
    nothing_left(tmp_path, pids)
