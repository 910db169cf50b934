"""``guti tune``: the SPSA algorithm (pure), its state rebuilt from stored results, and the
command through the real program with a test engine whose strength peaks at ``X = 70``
(``tests/engines/peaked.py``).

The engine's games are deterministic (its random choices are seeded by its option value
and the position), and a run's values are a function of its seed and its results
(:mod:`guti.referee.tournament.tuning.state`), so every run here is repeatable: the
tuning test cannot be flaky, and a resumed run can be compared with an uninterrupted one
value for value.
"""

from __future__ import annotations

import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.tournament.tuning.run import option_text
from guti.referee.tournament.tuning.spsa import (
    ALPHA,
    GAMMA,
    Param,
    ParamSpecError,
    Spsa,
    parse_param,
)
from guti.referee.tournament.tuning.state import TuneState, plus_score
from tests.conftest import GUTI, ROOT, games_stored, rows

PEAKED = [sys.executable, str(ROOT / "tests" / "engines" / "peaked.py")]
ENGINE = f"cmd={PEAKED[0]}", f"args={PEAKED[1]}", "name=peaked"
#: Every game of the runs here: depth 1 (the engine ignores it and answers at once), drawn
#: after 60 moves.
GAME = ["-each", "depth=1", "-maxmoves", "60"]


# --------------------------------------------------------------------------- the algorithm


def test_gains_are_fishtests() -> None:
    """c_k and a_k as fishtest derives them from C_END and R_END: the perturbation at the
    last iteration is C_END, the learning rate a_k / c_k**2 there is R_END."""
    p = Param("X", 20, 0, 200, 10, 0.002)
    spsa = Spsa((p,), iterations=100, seed=1)
    assert spsa.big_a == pytest.approx(10)
    assert spsa.c_k(99)[0] == pytest.approx(10)
    assert spsa.a_k(99)[0] / spsa.c_k(99)[0] ** 2 == pytest.approx(0.002)
    assert spsa.c_k(0)[0] == pytest.approx(10 * 100 ** GAMMA)
    assert spsa.a_k(0)[0] == pytest.approx(0.002 * 100 * (10 + 100) ** ALPHA / 11 ** ALPHA)


def test_step_moves_towards_the_winner_and_stays_in_range() -> None:
    p = Param("X", 20, 0, 30, 10, 0.5)
    spsa = Spsa((p,), iterations=10, seed=3)
    flip = spsa.flips(0)[0]
    trial = spsa.trial(0, (20.0,))
    c = spsa.c_k(0)[0]
    assert c > 10  # so one side is clamped to the range
    assert trial.plus == (min(30.0, max(0.0, 20 + c * flip)),)
    assert trial.minus == (min(30.0, max(0.0, 20 - c * flip)),)
    moved = spsa.step((20.0,), 0, result=2)[0]
    assert (moved - 20) * flip > 0  # towards the plus side, which won
    assert spsa.step((20.0,), 0, result=1000 * flip)[0] == 30  # clamped to MAX
    assert spsa.step((20.0,), 0, result=-1000 * flip)[0] == 0  # and to MIN
    assert spsa.flips(7) == Spsa((p,), 10, seed=3).flips(7)  # from the seed and k alone


@pytest.mark.parametrize("text, message", [
    ("X=20,0,200,10", "is not of the form NAME=START,MIN,MAX,C_END,R_END"),
    ("=20,0,200,10,0.1", "is not of the form"),
    ("X=20,0,abc,10,0.1", "X: MAX 'abc' is not a number"),
    ("X=20,200,0,10,0.1", "X: MIN 200 is above MAX 0"),
    ("X=300,0,200,10,0.1", "X: START 300 is outside MIN..MAX (0..200)"),
    ("X=20,0,200,0,0.1", "X: C_END and R_END must be above 0"),
])
def test_bad_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ParamSpecError, match=re.escape(message)):
        parse_param(text)
    assert parse_param("X=20,0,200,10,0.1") == Param("X", 20, 0, 200, 10, 0.1)
    assert parse_param("a=b=20,0,200,10,0.1").name == "a=b"  # an option name may hold '='


def test_state_is_a_function_of_the_results_not_their_order() -> None:
    """Games of several iterations stored in any order give the same history: updates are
    applied in iteration order, each as soon as every earlier one is."""
    spsa = Spsa((Param("X", 20, 0, 200, 10, 0.1), Param("Y", 5, 0, 10, 1, 0.1)), 4, seed=9)
    games = [(k, score) for k in range(4) for score in (1, -1, 1, 1)]
    histories = set()
    for seed in range(20):
        order = random.Random(seed).sample(range(len(games)), len(games))
        state = TuneState(spsa, games_per_iteration=4, lag=1)
        for i in order:
            state.add(*games[i])
        histories.add(tuple(state.history))
    assert len(histories) == 1 and len(next(iter(histories))) == 5


def test_an_iteration_waits_for_the_ones_its_values_come_from() -> None:
    spsa = Spsa((Param("X", 20, 0, 200, 10, 0.1),), 5, seed=2)
    state = TuneState(spsa, games_per_iteration=2, lag=1)
    assert state.ready(0) and state.ready(1) and not state.ready(2)
    assert state.add(1, 1) == [] and state.add(1, 1) == []  # iteration 2 done, 1 not yet
    assert not state.ready(2)
    assert state.add(0, 0) == [] and state.add(0, -1) == [0, 1]  # both applied, in order
    assert state.ready(3) and state.trial(3) == spsa.trial(3, state.history[2])
    assert plus_score("1-0", True) == 1 and plus_score("1-0", False) == -1
    assert plus_score("1/2-1/2", True) == 0


# --------------------------------------------------------------------------- the command


def tune(*args: str, db: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, "tune", "-engine", *ENGINE, *GAME, "-db", str(db), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def final_values(out: str) -> str:
    """The line with the values at the end."""
    return next(line for line in out.splitlines() if "values after" in line)


@pytest.mark.parametrize("param, message", [
    ("X=20,200,0,10,0.1", "X: MIN 200 is above MAX 0"),
    ("X=250,0,200,10,0.1", "X: START 250 is outside MIN..MAX (0..200)"),
    ("Depth=3,1,9,1,0.1", "peaked declares no option 'Depth'"),
    ("Narrow=5,0,20,2,0.1", "Narrow: range 0..20 is wider than the 0..10 peaked declares"),
    ("Upside=5,5,5,1,0.1", "Upside: peaked declares an empty range, min 10 above max 0"),
    ("Style=1,0,2,1,0.1", "declares it as a combo option"),
    # a whole-number option perturbed by less than a half: both sides mostly play one value
    ("X=20,0,200,0.5,0.1", "X: C_END 0.5 is not above 0.5, and peaked takes whole numbers "
                           "for it: both sides of a game pair could play the same value"),
])
def test_bad_parameter_specs_are_one_line_and_exit_2(tmp_path: Path, param: str,
                                                      message: str) -> None:
    done = tune("-param", param, "-iterations", "2", db=tmp_path / "t.db", timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "t.db").exists()  # checked before any run is created


def test_a_parameter_is_kept_and_sent_exactly() -> None:
    """Seven digits and more, or far below 1: a run's spec (its fingerprint) and the
    values sent to a string option keep every digit, never in exponent form."""
    assert parse_param("Wide=1234567,0,2000000,1000,0.01").spec() == \
        "Wide=1234567,0,2000000,1000,0.01"
    assert parse_param("Wide=0.00001,0,0.001,0.0001,0.5").spec() == \
        "Wide=0.00001,0,0.001,0.0001,0.5"
    assert option_text(1234564.8234, rounded=False) == "1234564.8234"
    assert option_text(0.00001, rounded=False) == "0.00001"
    assert option_text(1234564.8234, rounded=True) == "1234565"


def test_a_resume_with_other_parameters_is_refused(tmp_path: Path) -> None:
    """Parameters that differ in their seventh digit are another run: ``-resume`` refuses."""
    db = tmp_path / "t.db"
    first = tune("-param", "Wide=1234567,0,2000000,1000,0.01", "-iterations", "2",
                 "-pairs", "1", "-concurrency", "1", db=db, timeout=120)
    assert first.returncode == 0, first.stderr
    again = tune("-param", "Wide=1234571,0,2000000,1000,0.01", "-iterations", "2",
                 "-pairs", "1", "-concurrency", "1", "-resume", db=db, timeout=120)
    assert again.returncode == 2, again.stderr
    assert "holds a different run (other params)" in again.stderr, again.stderr
    other = tune("-param", "Wide=1234567,0,2000000,1000,0.01", "-iterations", "3",
                 "-pairs", "1", "-concurrency", "1", "-resume", db=db, timeout=120)
    assert "holds a different run (other iterations)" in other.stderr, other.stderr


def test_a_parameter_given_twice_in_other_case_is_refused(tmp_path: Path) -> None:
    """Option names compare without case, so ``X`` and ``x`` would set one option twice."""
    done = tune("-param", "X=20,0,200,10,0.1", "x=30,0,200,10,0.1", db=tmp_path / "t.db",
                timeout=120)
    assert done.returncode == 2 and "x is given twice" in done.stderr, done.stderr
    both = subprocess.run([*GUTI, "tune", "-engine", *ENGINE, "option.x=5", *GAME, "-param",
                           "X=20,0,200,10,0.1", "-db", str(tmp_path / "t.db")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert both.returncode == 2 and "also set by option.x=" in both.stderr, both.stderr


def test_a_run_whose_every_game_is_an_engine_fault_is_no_result(tmp_path: Path) -> None:
    """An engine that crashes in every game: each game's fault is said, and the run ends
    as a failure (exit 1), not with values that no game decided."""
    crashing = [f"cmd={sys.executable}",
                f"args={ROOT / 'tests' / 'engines' / 'faulty.py'} --mode crash --at 1",
                "name=crashy"]
    done = subprocess.run([*GUTI, "tune", "-engine", *crashing, *GAME, "-param",
                           "Hash=8,1,64,4,0.1", "-iterations", "2", "-pairs", "1",
                           "-db", str(tmp_path / "t.db")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crashy" in done.stdout and "lost by disconnect" in done.stdout, done.stdout
    assert "every game of this run ended by an engine fault" in done.stderr, done.stderr
    assert "values after" not in done.stdout
    # a -resume with nothing left to play says the same, and still gives no values
    again = subprocess.run([*GUTI, "tune", "-engine", *crashing, *GAME, "-param",
                            "Hash=8,1,64,4,0.1", "-iterations", "2", "-pairs", "1",
                            "-db", str(tmp_path / "t.db"), "-resume"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "every game of this run ended by an engine fault (the first: disconnect" \
        in again.stderr, again.stderr
    assert "values after" not in again.stdout


def test_a_resume_on_a_tournaments_database_says_what_it_holds(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    played = subprocess.run([*GUTI, "tournament", "-engine", *ENGINE, "-engine", *ENGINE[:2],
                             "name=other", *GAME, "-games", "2", "-db", str(db)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert played.returncode == 0, played.stderr
    for resume in (["-resume"], []):  # said first: -resume would not help
        done = tune("-param", "X=20,0,200,10,0.1", "-iterations", "1", *resume, db=db,
                    timeout=120)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
        assert "holds a tournament, not a tuning run" in done.stderr, done.stderr


def test_a_tournament_on_a_tuning_runs_database_says_what_it_holds(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    assert tune("-param", "X=20,0,200,10,0.1", "-iterations", "1", db=db,
                timeout=120).returncode == 0
    for resume in (["-resume"], []):  # said first: -resume would not help
        done = subprocess.run([*GUTI, "tournament", "-engine", *ENGINE, "-engine", *ENGINE[:2],
                               "name=other", *GAME, "-games", "2", "-db", str(db), *resume],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "holds a tuning run (guti tune), not a tournament" in done.stderr
    standings = subprocess.run([*GUTI, "standings", str(tmp_path)], capture_output=True,
                               text=True, timeout=60, cwd=ROOT)
    assert standings.returncode == 2 and "is a directory" in standings.stderr, standings.stderr


@pytest.mark.parametrize("field", ["pairs", "iterations"])
def test_a_report_of_a_tampered_run_is_one_line(tmp_path: Path, field: str) -> None:
    """Counts no run has (0 pairs, 0 iterations) in a run's stored settings: ``guti
    report`` says the database is damaged, in one line, exit 2."""
    db = tmp_path / "t.db"
    assert tune("-param", "X=20,0,200,10,0.1", "-iterations", "1", db=db,
                timeout=120).returncode == 0
    with sqlite3.connect(db) as conn:
        settings = json.loads(conn.execute(
            "SELECT value FROM meta WHERE key = 'settings'").fetchone()[0])
        settings["tune"][field] = 0
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    conn.close()
    done = subprocess.run([*GUTI, "report", str(db), "-html", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "tuning run's settings are damaged" in done.stderr


@pytest.mark.parametrize("settings", ['{"tune": 5}', '{"tune": {"lag": "x"}, "seed": 1}',
                                      '{"tune": {"lag": 1}, "seed": [1]}'])
def test_a_resume_of_a_damaged_run_is_one_line(tmp_path: Path, settings: str) -> None:
    """A run's stored settings that are not a run's (a damaged or tampered database):
    ``-resume`` says so in one line, exit 2, and plays nothing."""
    db = tmp_path / "t.db"
    args = ["-param", "X=20,0,200,10,0.1", "-iterations", "1", "-pairs", "1"]
    assert tune(*args, db=db, timeout=120).returncode == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (settings,))
    conn.close()
    done = tune(*args, "-resume", "-srand", "9" if "seed" in settings else "1", db=db,
                timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "t.db is damaged" in done.stderr, done.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone() == (
            settings,)
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (2,)
    conn.close()


def test_a_toml_file_gives_the_run(tmp_path: Path) -> None:
    """The same run from a TOML file: ``[param]`` holds the specs, a bad one is named by
    the file and key."""
    config = tmp_path / "tune.toml"
    config.write_text(f"""
iterations = 1
srand = 3
maxmoves = 20
[[engine]]
cmd = "{PEAKED[0]}"
args = "{PEAKED[1]}"
name = "peaked"
[each]
depth = 1
[param]
X = "20,0,200,10,0.1"
""")
    db = tmp_path / "t.db"
    done = subprocess.run([*GUTI, "tune", str(config), "-db", str(db), "-concurrency", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "values after 1/1 iterations: X=" in done.stdout and games_stored(db) == 2
    config.write_text(config.read_text().replace('"20,0,200,10,0.1"', '"20,0,200,10"'))
    done = subprocess.run([*GUTI, "tune", str(config), "-db", str(tmp_path / "u.db")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == (f"guti tune: {config}: param: 'X=20,0,200,10' is not of the form "
                           "NAME=START,MIN,MAX,C_END,R_END\n")


@pytest.mark.slow
def test_tunes_the_peaked_engine_from_20_to_near_70(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    done = tune("-param", "X=20,0,200,10,0.1", "-iterations", "30", "-pairs", "2",
                "-concurrency", "2", "-srand", "1", db=db)
    assert done.returncode == 0, done.stderr
    value = float(re.search(r"values after 30/30 iterations: X=([\d.]+)", done.stdout)[1])
    assert abs(value - 70) <= 10, done.stdout
    assert games_stored(db) == 120
    assert f"option.X={round(value)}" in done.stdout
    assert f"options = {{ X = {round(value)} }}" in done.stdout
    assert len(re.findall(r"^iteration \d+/30 ", done.stdout, re.M)) == 30
    # the report charts every parameter's values, from the start to the tuned value
    report = subprocess.run([*GUTI, "report", str(db), "-html", str(tmp_path / "r.html")],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    data = json.loads(re.search(r'<script id="guti-data" type="application/json">(.*?)</script>',
                                page, re.S)[1])
    history = data["tuning"]["history"]
    assert len(history) == 31 and history[0] == [20.0]
    assert history[-1][0] == pytest.approx(value, abs=0.01)
    assert data["tuning"]["params"] == [{"name": "X", "min": 0.0, "max": 200.0}]


@pytest.mark.cluster
def test_tunes_the_peaked_engine_on_a_local_cluster(tmp_path: Path) -> None:
    """The same run on ``-cluster local:2`` (two Dask workers, each iteration's engines
    started on them): it ends within 10 of 70 too, every game stored."""
    pytest.importorskip("distributed", reason="-cluster needs the cluster extra (distributed)")
    db = tmp_path / "t.db"
    done = tune("-param", "X=20,0,200,10,0.1", "-iterations", "30", "-pairs", "2",
                "-cluster", "local:2", "-srand", "1", db=db)
    assert done.returncode == 0, done.stderr
    value = float(re.search(r"values after 30/30 iterations: X=([\d.]+)", done.stdout)[1])
    assert abs(value - 70) <= 10, done.stdout
    assert rows(db, "SELECT COUNT(DISTINCT game_id), COUNT(*) FROM games") == [(120, 120)]


@pytest.mark.signals
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_stopped_and_resumed_ends_where_an_uninterrupted_run_does(tmp_path: Path,
                                                                   sig: signal.Signals) -> None:
    """Killed (SIGKILL: nothing more stored) or stopped (Ctrl-C: the running games finish
    and are stored, exit 130) after the third iteration, then ``-resume``: the same values
    as a run never interrupted, every game stored once."""
    args = ["-param", "X=20,0,200,10,0.1", "Narrow=2,0,10,2,0.2", "-iterations", "8",
            "-concurrency", "2", "-srand", "5"]
    whole = tune(*args, db=tmp_path / "whole.db")
    assert whole.returncode == 0, whole.stderr

    db = tmp_path / "stopped.db"
    proc = subprocess.Popen([*GUTI, "tune", "-engine", *ENGINE, *GAME, "-db", str(db), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None
    for line in proc.stdout:  # stopped in the middle: after the third iteration is applied
        if line.startswith("iteration 3/8"):
            break
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    if sig == signal.SIGINT:  # the stop is told on stderr, as a tournament's is
        assert err.startswith("stopping: no new games") and "stopping" not in out, (out, err)
    stored = games_stored(db)
    assert 6 <= stored < 16

    resumed = tune(*args, "-resume", db=db)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {stored}/16 games already played" in resumed.stdout
    assert final_values(resumed.stdout) == final_values(whole.stdout).replace(
        "whole.db", "stopped.db")
    assert rows(db, "SELECT COUNT(DISTINCT game_id), COUNT(*) FROM games") == [(16, 16)]


# --------------------------------------------------------------------------- the reference engine


def test_reference_engine_exposes_its_eval_weights_with_unchanged_defaults() -> None:
    """The weights are UGI options whose defaults are the evaluator's own constants, and a
    weight set by ``setoption`` changes what the evaluation says."""
    from guti.engine.search import evaluate
    from guti.engine.search.searcher import Searcher
    from guti.engine.ugi_options import EVAL_OPTIONS, OPTIONS
    from guti.rules import Board

    declared = {o.name: o for o in OPTIONS}
    assert set(evaluate.DEFAULT_WEIGHTS) == EVAL_OPTIONS <= set(declared)
    for name, default in evaluate.DEFAULT_WEIGHTS.items():
        assert declared[name].default == default
        assert declared[name].minimum <= default <= declared[name].maximum
    assert evaluate.DEFAULT_WEIGHTS["EvalMobility"] == evaluate.MOBILITY == 4
    board = Board("pretwa")
    board.push(board.legal_moves[0])  # off the symmetric start, where every term is 0
    searcher = Searcher()
    own, enemy = board.black, board.white
    plain = searcher._evaluator(board)(own, enemy)
    assert plain == evaluate.build_evaluator(board.game)(own, enemy)
    searcher.set_weight("EvalPlacement", 40)
    assert searcher._evaluator(board)(own, enemy) != plain
