"""No engine outlives a SIGKILL of guti (README, reliability).

Why: guti cannot clean up after ``kill -9``, so the kernel must: each engine's leader
has a parent-death signal, and the lifeline process kills the engines' whole process
groups (grandchildren included) when guti's end of its pipe closes. The engines here
ignore EOF, ``quit`` and SIGTERM, and one forks a grandchild that does the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import GUTI, ROOT, survivors, wait_for

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")


def engine(name: str, mode: str, pids, *extra: str) -> list[str]:
    args = f"{FAULTY} --mode {mode} --pidfile {pids} {' '.join(extra)}"
    return ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]


def kill_guti_mid_game(tmp_path, command: list[str], mark) -> None:
    proc = subprocess.Popen([*GUTI, *command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: mark.exists() or proc.poll() is not None, "the engines playing", 60)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)


@pytest.mark.parametrize("trial", range(3))
def test_sigkill_of_match_leaves_no_engine_nor_grandchild(tmp_path, trial):
    pids, mark = tmp_path / "pids", tmp_path / "mark"
    kill_guti_mid_game(tmp_path, [
        "match", *engine("forker", "fork", pids, "--at", str(3 + 7 * trial), "--mark", str(mark)),
        *engine("deaf", "ignore-quit", pids), "-each", "tc=60+1", "-games", "50"], mark)
    assert len(pids.read_text().split("\n")) >= 4  # leader + grandchild + deaf engine
    wait_for(lambda: not survivors(pids), "every engine process ended by the kernel", 10)


def test_sigkill_of_tournament_leaves_no_engine_nor_grandchild(tmp_path):
    pids, mark = tmp_path / "pids", tmp_path / "mark"
    kill_guti_mid_game(tmp_path, [
        "tournament", *engine("forker", "fork", pids, "--at", "5", "--mark", str(mark)),
        *engine("deaf", "ignore-quit", pids), *engine("forker2", "fork", pids),
        "-each", "tc=60+1", "-games", "20", "-concurrency", "2"], mark)
    wait_for(lambda: not survivors(pids), "every engine process ended by the kernel", 10)


def test_a_group_is_listed_with_its_zombies_and_a_gone_one_without_reading_proc(monkeypatch):
    # group_members decides what an engine's quit still has to kill and reap: a member that
    # has exited but is not reaped (a zombie) is still listed; once nothing of the group
    # is left it answers at once, without reading every process's /proc entry (an engine's
    # quit asks three times, and each read of /proc took milliseconds)
    from guti.referee.process import group

    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    wait_for(lambda: (group._proc_stat(child.pid) or ("?",))[0] == "Z", "the child a zombie", 10)
    assert group.group_members(child.pid) == [(child.pid, "Z", os.getpid())]
    child.wait()

    def no_scan(path):
        raise AssertionError(f"listed {path} for a group that is gone")

    monkeypatch.setattr(group.os, "listdir", no_scan)
    assert group.group_members(child.pid) == []
    assert group.live_members(child.pid) == []


def _children_named(name: str) -> list[int]:
    """Our child processes (living or zombies) whose name is ``name``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        comm, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        if comm == name and int(fields.split()[1]) == os.getpid():
            found.append(int(entry))
    return found


@pytest.mark.parametrize("referees", ["1", "2"])
def test_a_run_that_ends_well_leaves_no_watcher_to_whoever_adopts_it(tmp_path, referees):
    """guti's lifeline watcher (and each referee process's) is ended and reaped before the
    process ends: left to end by itself, it was adopted by the nearest subreaper (this
    test process, as a supervisor would) and stayed its zombie."""
    before = set(_children_named("guti-lifeline"))
    bot = [f"cmd={sys.executable}", f"args={ROOT / 'bots' / 'python' / 'random_bot.py'}"]
    done = subprocess.run([*GUTI, "tournament", "-engine", *bot, "name=a", "-engine", *bot,
                           "name=b", "-each", "tc=10+0.1", "-games", "2", "-concurrency", "2",
                           "-referees", referees, "-db", str(tmp_path / "t.db")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(_children_named("guti-lifeline")) - before == set()
