"""A full disk or a limit of the machine under a command: one line that names the file (or
the limit), exit status 1 (the machine's fault: the same command works once it is fixed),
never a traceback, never exit status 2 (which says the user made a mistake)."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, survivors

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def engine(name: str, tmp: Path) -> list[str]:
    args = f"{FAULTY} --mode good --seed {len(name)} --pidfile {tmp / 'pids'}"
    return ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]


def guti(*argv: str, cwd: Path, limit: tuple[int, int] | None = None
         ) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        if limit is not None:
            resource.setrlimit(limit[0], (limit[1], limit[1]))

    # Under a limit, Python's bytecode cache is read, never written: a file size limit
    # would leave a cut-short .pyc there (Python does not check the write), which every
    # later test that imports that module would then fail on.
    env = ENV if limit is None else {**ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*GUTI, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env, preexec_fn=limited)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("played")
    done = guti("tournament", *engine("A", folder), *engine("B", folder), "-each", "tc=60+1",
                "-games", "2", "-db", "g.db", "-quiet", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "g.db"


@pytest.mark.parametrize("command", [
    ["report", "DB", "-html", "/dev/full"],
    ["export", "DB", "-pdn", "/dev/full"],
    ["board", "-svg", "/dev/full"],
])
def test_an_output_on_a_full_disk_is_named_with_status_1(
        played: Path, command: list[str]) -> None:
    """They said ``guti report: : No space left on device`` with status 2."""
    done = guti(*(str(played) if word == "DB" else word for word in command),
                cwd=played.parent)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"guti {command[0]}: /dev/full: No space left on device\n"


def test_a_tournament_report_on_a_full_disk_is_named_with_status_1(tmp_path: Path) -> None:
    done = guti("tournament", *engine("A", tmp_path), *engine("B", tmp_path), "-each",
                "tc=60+1", "-games", "2", "-db", "g.db", "-report", "/dev/full", "-quiet",
                cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "guti tournament: report not written: /dev/full: No space left on device")


@pytest.mark.parametrize("command", ["tournament", "tune"])
def test_a_database_the_disk_cannot_hold_is_status_1(tmp_path: Path, command: str) -> None:
    """The database cannot grow past a few KiB (``ulimit -f``, as a full disk): one line
    naming it, status 1; it said so with status 2."""
    run = ([*engine("A", tmp_path), *engine("B", tmp_path), "-games", "2"]
           if command == "tournament"
           else ["-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}",
                 "-param", "EvalMobility=4,0,40,2,0.05", "-iterations", "1"])
    done = guti(command, *run, "-each", "tc=60+1", "-db", "g.db", "-quiet", cwd=tmp_path,
                limit=(resource.RLIMIT_FSIZE, 8192))
    assert done.returncode == 1, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"guti {command}: g.db: ") and "Traceback" not in done.stderr
    assert survivors(tmp_path / "pids") == []


def test_a_run_out_of_open_files_is_one_line_with_status_1(tmp_path: Path) -> None:
    """The machine's limit of open files reached mid-run (``ulimit -n 36``, four games at
    once): one line naming the limit and what to do, exit status 1 (a fault of the
    machine, not a usage mistake; it said "cannot write its output", status 2), no engine
    left behind, and the database still resumable."""
    argv = [*GUTI, "tournament", *engine("A", tmp_path), *engine("B", tmp_path),
            *engine("C", tmp_path), "-each", "tc=60+1", "-games", "2", "-concurrency", "4",
            "-db", "g.db", "-quiet"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**ENV, "PYTHONDONTWRITEBYTECODE": "1"},
                          preexec_fn=lambda: resource.setrlimit(
                              resource.RLIMIT_NOFILE, (36, 36)))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "guti tournament: Too many open files: the machine's limit of open files was "
        "reached (raise it, ulimit -n, or lower -concurrency)"), done.stderr
    assert "Traceback" not in done.stderr
    assert survivors(tmp_path / "pids") == []
    resumed = subprocess.run([*argv[:-5], "-concurrency", "1", "-db", "g.db", "-resume",
                              "-quiet"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert resumed.returncode == 0, resumed.stderr
    assert sqlite3.connect(tmp_path / "g.db").execute(
        "SELECT COUNT(*) FROM games").fetchone() == (6,)


@pytest.mark.parametrize("files", range(12, 25))
def test_every_low_limit_of_open_files_is_named_with_status_1(tmp_path: Path,
                                                              files: int) -> None:
    """Whatever guti was opening when the limit was met (the event loop's own pipe, a
    lock, the database or its log, the PDN), the line names the limit, with status 1:
    below about 20 files it was three tracebacks, or SQLite's "unable to open database
    file" with status 2."""
    done = guti("tournament", *engine("A", tmp_path), *engine("B", tmp_path), "-each",
                "tc=60+1", "-games", "2", "-db", "g.db", "-pdnout", "file=g.pdn", "-quiet",
                cwd=tmp_path, limit=(resource.RLIMIT_NOFILE, files))
    if done.returncode == 0:  # enough for this run after all
        return
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.rstrip().endswith("the machine's limit of open files was reached "
                                         "(raise it, ulimit -n, or lower -concurrency)")


def test_a_thread_the_system_will_not_start_is_named_with_status_1(tmp_path: Path) -> None:
    """Memory limited (``ulimit -v``) so that the interpreter starts but no thread can: one
    line saying so, status 1 (it was a traceback)."""
    done = guti("tournament", *engine("A", tmp_path), *engine("B", tmp_path), "-each",
                "tc=60+1", "-games", "2", "-db", "g.db", "-quiet", cwd=tmp_path,
                limit=(resource.RLIMIT_AS, 50_000 * 1024))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "guti tournament: cannot start a thread: the machine's limit of memory or processes "
        "was reached (ulimit -v, ulimit -u)"), done.stderr
    assert not (tmp_path / "g.db").exists()  # made by this run, nothing stored: removed
