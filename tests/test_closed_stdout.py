"""``guti match ... | head -1``: stdout closed by its reader mid-run.

The defined outcome (README, reliability): the run stops as on a signal, quietly (no
traceback, exit status 141 = 128 + SIGPIPE), with every game stored before that intact
in the PDN or database, no aborted game stored, and no engine process left behind.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, parse_pdn, survivors, wait_for

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
EXIT_BROKEN_PIPE = 141


def engine(name: str, tmp: Path) -> list[str]:
    args = f"{FAULTY} --mode good --seed {len(name)} --pidfile {tmp / 'pids'}"
    return ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]


def run_reading_one_line(argv: list[str], tmp: Path) -> tuple[int, str, str]:
    """Run guti, read its first stdout line, close the pipe (as ``head -1`` does)."""
    proc = subprocess.Popen([*GUTI, *argv], cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    try:
        # bounded: a guti that hangs on its way out fails here instead of hanging the suite
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("guti did not exit within 60 s of its stdout being closed")
    finally:
        proc.kill()
    return proc.returncode, first, err


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_closed_stdout_stops_the_run_quietly_and_loses_nothing(command: str, tmp_path: Path) -> None:
    argv = [command, *engine("A", tmp_path), *engine("B", tmp_path), "-each", "tc=60+1",
            "-games", "400", "-pdnout", "g.pdn"]
    if command == "tournament":
        argv += ["-db", "g.db", "-concurrency", "2"]
    code, first, err = run_reading_one_line(argv, tmp_path)
    assert code == EXIT_BROKEN_PIPE, err
    assert first.strip() and "Traceback" not in err and "Broken pipe" not in err, err
    games = parse_pdn((tmp_path / "g.pdn").read_text()) if (tmp_path / "g.pdn").exists() else []
    assert len(games) < 400, "the run went on after its output was closed"
    assert all(g.tags["Result"] != "*" for g in games)
    if command == "tournament":
        with sqlite3.connect(tmp_path / "g.db") as conn:
            stored = conn.execute("SELECT result FROM games ORDER BY seq").fetchall()
        assert [r for (r,) in stored] == [g.tags["Result"] for g in games]
    wait_for(lambda: not survivors(tmp_path / "pids"), "every engine process gone", 10)


@pytest.mark.parametrize("output", [["export", "g.db", "-json", "/dev/stdout"],
                                    ["report", "g.db", "-html", "/dev/stdout"],
                                    ["board", "-svg", "/dev/stdout"]])
def test_an_output_written_into_a_closed_pipe_ends_quietly_with_141(
        output: list[str], tmp_path: Path) -> None:
    """``guti export DB -json /dev/stdout | head -c 10``: the file is the pipe, whose
    reader is gone (here before the first write), as for stdout itself."""
    if output[0] != "board":
        tournament = subprocess.run([*GUTI, "tournament", *engine("A", tmp_path),
                                     *engine("B", tmp_path), "-each", "tc=60+1", "-games", "2",
                                     "-db", "g.db"], cwd=tmp_path, capture_output=True,
                                    text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert tournament.returncode == 0, tournament.stderr
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([*GUTI, *output], cwd=tmp_path, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    assert done.returncode == EXIT_BROKEN_PIPE, done.stderr
    assert done.stderr == "", done.stderr


@pytest.mark.parametrize("redirect", ["pipe", "file"])
def test_an_output_that_is_stdout_gets_the_data_alone(redirect: str, tmp_path: Path) -> None:
    """``guti export DB -json /dev/stdout | jq`` and ``guti export DB -pdn f > f``, and
    the same for ``report``: the file holds the data alone, the "written to" lines go to
    stderr."""
    tournament = subprocess.run([*GUTI, "tournament", *engine("A", tmp_path),
                                 *engine("B", tmp_path), "-each", "tc=60+1", "-games", "2",
                                 "-db", "g.db"], cwd=tmp_path, capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert tournament.returncode == 0, tournament.stderr
    for command, flag, name in (("export", "-json", "out.json"), ("export", "-pdn", "out.pdn"),
                                ("report", "-html", "out.html")):
        target = "/dev/stdout" if redirect == "pipe" else name
        with open(tmp_path / name, "w") as sink:
            done = subprocess.run(
                [*GUTI, command, "g.db", flag, target], cwd=tmp_path, text=True, timeout=120,
                stdout=subprocess.PIPE if redirect == "pipe" else sink, stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        data = done.stdout if redirect == "pipe" else (tmp_path / name).read_text()
        if flag == "-json":
            assert len(json.loads(data)) == 2
        elif flag == "-pdn":
            assert [g.tags["Result"] for g in parse_pdn(data)] and "written" not in data
        else:
            assert data.rstrip().endswith("</html>")
        assert target in done.stderr, done.stderr


@pytest.mark.parametrize("command", [
    ["check", "--", sys.executable, "-m", "guti.engine"],
    ["tune", "-engine", f"cmd={sys.executable}", "args=-m guti.engine", "-each", "depth=1",
     "-iterations", "2", "-param", "EvalMobility=4,0,40,2,0.05", "-db", "t.db", "-quiet"],
    ["perft", "egara-guti", "2"],
    # argparse drops a help text it cannot write: these exited 0 having written nothing
    *(([command, "--help"]) for command in ("check", "console", "perft", "match")),
])
def test_a_stdout_that_cannot_be_written_is_one_line_not_a_traceback(
        command: list[str], tmp_path: Path) -> None:
    """Stdout on ``/dev/full`` (a full disk): one line naming the fault, exit status 1."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([*GUTI, *command], cwd=tmp_path, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"guti {command[0]}: cannot write its output: "
                           "No space left on device\n"), done.stderr


def test_an_export_into_a_full_stdout_is_one_line_with_status_1(tmp_path: Path) -> None:
    """``guti export DB -pdn x.pdn`` with stdout full: the PDN is written, the count line
    cannot be, and that is said in one line (it said ``guti export: : ...``, status 2)."""
    tournament = subprocess.run([*GUTI, "tournament", *engine("A", tmp_path),
                                 *engine("B", tmp_path), "-each", "tc=60+1", "-games", "2",
                                 "-db", "g.db"], cwd=tmp_path, capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert tournament.returncode == 0, tournament.stderr
    with open("/dev/full", "w") as full:
        for argv, prog in ((["export", "g.db", "-pdn", "x.pdn"], "export"), (["--help"], None)):
            done = subprocess.run([*GUTI, *argv], cwd=tmp_path, stdout=full, text=True,
                                  stderr=subprocess.PIPE, timeout=120,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert done.returncode == 1, done.stderr
            said = f"{prog or 'guti'}: cannot write its output: No space left on device\n"
            assert done.stderr == (f"guti {said}" if prog else said), done.stderr
    assert len(parse_pdn((tmp_path / "x.pdn").read_text())) == 2

