"""Mistakes in outputs, settings and engine names, and a second guti on a database:
each is one line and exit 2, found before anything is written (README, reliability).
"""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, wait_for

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable


def engine(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={PY}", f"args={FAULTY} {' '.join(extra)}", f"name={name}"]


PAIR = [*engine("a"), *engine("b"), "-each", "tc=30+0.5"]


def guti(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_line_exit_2(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]


# ------------------------------------------------------------------------------------ outputs
@pytest.mark.parametrize("command", ["tournament", "match"])
def test_pdnout_and_log_naming_the_same_file_are_refused(tmp_path, command):
    (tmp_path / "sub").mkdir()
    done = guti(command, *PAIR, "-pdnout", "x.out", "-log", "file=./sub/../x.out",
                cwd=tmp_path)
    one_line_exit_2(done, "same file")
    assert not (tmp_path / "x.out").exists()


@pytest.mark.slow
def test_pdnout_equal_to_db_leaves_the_database_alone(tmp_path):
    first = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    os.link(tmp_path / "t.db", tmp_path / "hard.db")
    for pdn in ("t.db", "hard.db"):
        done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-resume",
                    "-pdnout", pdn, cwd=tmp_path)
        one_line_exit_2(done, "same file")
    with sqlite3.connect(tmp_path / "t.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (2,)


@pytest.mark.parametrize("flag", ["-pdnout", "-log", "-db"])
def test_an_output_that_is_a_directory_is_refused_and_left_alone(tmp_path, flag):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep").write_text("x")
    value = "file=d" if flag == "-log" else "d"
    done = guti("tournament", *PAIR, flag, value, cwd=tmp_path)
    one_line_exit_2(done, "directory")
    assert (tmp_path / "d" / "keep").exists() and not (tmp_path / "d.bak").exists()


# ------------------------------------------------------------------------ concurrency, sizes
def test_absurd_concurrency_is_refused_and_a_large_one_is_capped(tmp_path):
    one_line_exit_2(guti("tournament", *PAIR, "-concurrency", "1000000", cwd=tmp_path),
                    "-concurrency", "1024")
    done = guti("tournament", *PAIR, "-games", "2", "-concurrency", "1024", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_duplicate_engine_names_are_numbered_apart_from_given_names(tmp_path):
    done = guti("tournament", *engine("a"), *engine("a"), *engine("a-2"),
                "-each", "tc=30+0.5", "-games", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "guti.db") as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM engines ORDER BY idx")]
    assert names == ["a", "a-3", "a-2"]


# --------------------------------------------------------------------------------------- TOML
@pytest.mark.parametrize("setting, key", [
    ("requires = 5", "requires"),
    ("build = 5", "build"),
])
def test_wrong_types_in_an_engine_table_are_one_line(tmp_path, setting, key):
    toml = tmp_path / "t.toml"
    toml.write_text(textwrap.dedent(f"""
        [[engine]]
        name = "a"
        cmd = "{PY}"
        args = ["{FAULTY}"]
        {setting}
        [[engine]]
        name = "b"
        cmd = "{PY}"
        args = ["{FAULTY}"]
        [each]
        tc = "30+0.5"
    """))
    one_line_exit_2(guti("tournament", str(toml), cwd=tmp_path), key)


@pytest.mark.parametrize("setting, key", [('resume = "yes"', "resume"), ("quiet = 1", "quiet"),
                                          ("rounds = [1]", "rounds")])
def test_wrong_types_of_top_level_settings_are_one_line(tmp_path, setting, key):
    toml = tmp_path / "t.toml"
    toml.write_text(f"{setting}\n")
    one_line_exit_2(guti("tournament", str(toml), *PAIR, cwd=tmp_path), key)


# ------------------------------------------------------------------------------------- schema
KILL_AT_STATEMENT = """
import os, sqlite3, sys
real = sqlite3.connect
def connect(*a, **k):
    conn = real(*a, **k)
    n = [0]
    def trace(sql):
        n[0] += 1
        if n[0] == int(sys.argv[2]):
            os._exit(9)
    conn.set_trace_callback(trace)
    return conn
sqlite3.connect = connect
from guti.referee.storage.store import TournamentStore
TournamentStore(sys.argv[1]).close()
"""


@pytest.mark.slow
def test_a_kill_while_creating_the_database_never_leaves_it_unusable(tmp_path):
    """Kill the creation after each SQL statement in turn, until the creation has fewer
    statements than that (it ends by itself): every result opens."""
    sys.path.insert(0, str(ROOT))
    from guti.referee.storage.store import TournamentStore

    killed = 0
    for n in range(1, 200):
        db = tmp_path / f"k{n}.db"
        done = subprocess.run([PY, "-c", KILL_AT_STATEMENT, str(db), str(n)], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
        assert done.returncode in (0, 9), done.returncode
        TournamentStore(str(db)).close()  # raised StoreError ("schema None") before
        if done.returncode == 0:  # the whole creation ran: every statement has been tried
            break
        killed += 1
    assert done.returncode == 0 and killed >= 5, (killed, done.returncode)


# --------------------------------------------------------------------------------------- lock
def test_a_second_guti_on_a_database_in_use_refuses_naming_the_first(tmp_path):
    argv = [*GUTI, "tournament", *PAIR, "-games", "200", "-db", "t.db", "-pdnout", "t.pdn"]
    first = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        def stored() -> bool:
            assert first.poll() is None
            try:
                with sqlite3.connect(tmp_path / "t.db") as conn:
                    return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] > 0
            except sqlite3.OperationalError:
                return False

        wait_for(stored, "a game stored by the first guti", 60)
        second = guti("tournament", *PAIR, "-games", "200", "-db", "t.db", "-pdnout", "t.pdn",
                      "-resume", cwd=tmp_path)
        one_line_exit_2(second, "in use", f"pid {first.pid}")
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(30) == 130
    # The lock is the database file's own (no lock file is made, so none is left behind
    # by a killed guti: test_outputs_and_locks.py); an older guti's lock file blocks nothing.
    assert not (tmp_path / "t.db.lock").exists()
    (tmp_path / "u.db.lock").write_text("999999999\n")
    again = guti("tournament", *PAIR, "-games", "2", "-db", "u.db", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    again = guti("tournament", *PAIR, "-games", "2", "-db", "u.db", "-resume", cwd=tmp_path)
    assert again.returncode == 0 and "2/2 games stored" in again.stdout, again.stderr


def ended(pid: int) -> bool:
    """Whether process ``pid`` ends within 30 s (a zombie until its reaper looks counts):
    waited for on its pidfd, which turns readable when it has ended."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # already ended and reaped
    try:
        readable, _, _ = select.select([pidfd], [], [], 30)
    finally:
        os.close(pidfd)
    return bool(readable)


def test_a_build_that_runs_too_long_is_killed_with_what_it_started(tmp_path, monkeypatch):
    """A build is a process group of its own: past its time, everything in it is killed
    (a ``make -j``'s compilers too), not only the command guti started."""
    from guti.referee.execution import builds

    monkeypatch.setattr(builds, "BUILD_TIMEOUT", 0.5)
    child = tmp_path / "child"
    why = builds.run_build(["sh", "-c", f"sleep 60 & echo $! > {child}; wait"], None)
    assert why is not None and "took more than 0.5 s" in why
    assert ended(int(child.read_text())), "what the build started outlived its kill"


def test_what_a_finished_build_left_running_is_killed(tmp_path):
    """A build that worked but left a process behind (a build tool's daemon): the build
    counts as done, and the process is killed with the build's group."""
    from guti.referee.execution import builds

    child = tmp_path / "child"
    why = builds.run_build(["sh", "-c", f"sleep 60 >/dev/null 2>&1 & echo $! > {child}"], None)
    assert why is None
    assert ended(int(child.read_text())), "the build's daemon outlived it"


def test_an_aborted_run_kills_its_build_and_no_other(tmp_path):
    """``kill_builds(run)`` (a cluster run aborted or closed on a worker) kills that run's
    build under way, with what it started; another run's build goes on."""
    import threading

    from guti.referee.execution import builds

    results: dict[str, str | None] = {}

    def build(run: str) -> None:
        script = f"sleep 60 & echo $! > {tmp_path / run}; wait"
        results[run] = builds.run_build(["sh", "-c", script], None, run=run)

    threads = {run: threading.Thread(target=build, args=(run,)) for run in ("r1", "r2")}
    for thread in threads.values():
        thread.start()
    wait_for(lambda: all((tmp_path / r).exists() and (tmp_path / r).read_text().strip()
                         for r in threads), "both builds under way")
    builds.kill_builds("r1")
    threads["r1"].join(30)
    assert results.get("r1") == "stopped: its run was aborted"
    assert ended(int((tmp_path / "r1").read_text()))
    assert threads["r2"].is_alive() and "r2" not in results  # the other run's build goes on
    builds.kill_builds("r2")
    threads["r2"].join(30)
    assert results.get("r2") == "stopped: its run was aborted"


def test_a_build_of_a_run_already_aborted_is_killed_as_it_starts(tmp_path):
    """The abort reached the worker before the build's process was registered (or before
    it began): the build is killed as it is registered, not left to run its course."""
    from guti.referee.execution import builds

    builds.kill_builds("aborted-early")
    script = f"sleep 60 & echo $! > {tmp_path / 'child'}; wait"
    said = builds.run_build(["sh", "-c", script], None, run="aborted-early")
    assert said == "stopped: its run was aborted"
    child = tmp_path / "child"
    assert not child.exists() or not child.read_text().strip() or ended(int(child.read_text()))


def test_a_build_dies_with_the_process_that_started_it_even_by_sigkill(tmp_path):
    """The process running a build is SIGKILLed (a worker gone): the lifeline kills the
    build's group, so nothing it started is left to init."""
    child = tmp_path / "child"
    code = ("from guti.referee.execution.builds import run_build; "
            f"run_build(['sh', '-c', 'sleep 60 & echo $! > {child}; wait'], None)")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: child.exists() and child.read_text().strip() != "",
                 "the build under way")
    finally:
        proc.kill()
        proc.wait(30)
    assert ended(int(child.read_text())), "the build outlived the process that started it"
