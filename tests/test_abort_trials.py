"""Signals to ``guti match`` and ``guti tournament`` at random moments, many times over.

Why trials: the abort used to be lost about half the time (a cancellation swallowed by
``asyncio.wait_for`` when a read completed in the same step), so one signal per test
proves nothing. Each trial runs the real CLI, waits for a random moment chosen by an
*event* (an engine's K-th ``go``, K random, marked in a file by the test engine), sends
the signal, and checks the contract of the README's reliability section:

- SIGTERM, SIGHUP, or a second Ctrl-C: exit 130 within a bound, every engine process
  gone (also those that ignore quit, EOF and SIGTERM, and their grandchildren), no game
  stored or written to the PDN that guti aborted (the engines here never fault, so any
  stored fault is guti's own doing), no new game started after the signal;
- one Ctrl-C: the running games finish and are stored, nothing new starts, exit 130.

The default run makes a few trials per kind; ``-m slow`` makes 20 per kind and command.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, parse_pdn, survivors, wait_for

#: The signals tier: signal storms and abort trials against real runs.
pytestmark = pytest.mark.signals

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
#: Seconds from the abort signal to the exit of guti, at most (guti's own bound is 8 s).
EXIT_BOUND = 15.0
KINDS = ("SIGTERM", "SIGHUP", "SIGINT-twice")
FAST, SLOW = 2, 20


def engine(name: str, mode: str, tmp: Path, *extra: str) -> list[str]:
    args = f"{FAULTY} --mode {mode} --seed {len(name)} --pidfile {tmp / 'pids'} {' '.join(extra)}"
    return ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]


@dataclass
class Run:
    """A running guti whose output lines are collected by a thread (so waits have deadlines)."""

    proc: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, argv: list[str], cwd: Path) -> Run:
        proc = subprocess.Popen([*GUTI, *argv], cwd=cwd, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        run = cls(proc)
        threading.Thread(target=run._pump, daemon=True).start()
        return run

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_line(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.seen):
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{text!r} not printed within {timeout:g} s: "
                                     f"{self.seen[-5:]}") from None
            if line is None:
                raise AssertionError(f"guti ended before printing {text!r}: {self.seen[-5:]}")
            self.seen.append(line)

    def finish(self, timeout: float) -> tuple[int, float, str]:
        """Exit status, seconds it took to exit, all output."""
        began = time.monotonic()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"guti still running {timeout:g} s after the signal") from None
        took = time.monotonic() - began
        while (line := self.lines.get(timeout=10)) is not None:
            self.seen.append(line)
        return code, took, "\n".join(self.seen)


def signal_at_random_moment(run: Run, mark: Path, kind: str) -> None:
    """Wait for the marked event (an engine's K-th go), then send ``kind``."""
    wait_for(lambda: mark.exists() or run.proc.poll() is not None, "the marked go", 60)
    assert run.proc.poll() is None, "guti ended before the signal"
    if kind == "SIGINT-twice":
        run.proc.send_signal(signal.SIGINT)
        run.wait_line("stopping: no new games")
        # the second Ctrl-C aborts the running games; when the first came between two
        # games (the marked go was a game's last move), none runs and the run ends alone
        if any("Ctrl-C again" in line for line in run.seen):
            run.proc.send_signal(signal.SIGINT)
    else:
        run.proc.send_signal(getattr(signal, kind))


def games_in(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT game_id, result, reason, detail FROM games ORDER BY seq").fetchall()


def tournament_trial(tmp: Path, kind: str, rng: random.Random) -> None:
    at = rng.randint(1, 150)
    mark = tmp / "mark"
    argv = ["tournament", *engine("good", "good", tmp, "--at", str(at), "--mark", str(mark)),
            *engine("deaf", "ignore-quit", tmp), *engine("forker", "fork", tmp),
            "-each", "tc=60+1", "-rounds", "40", "-games", "2", "-concurrency", "2",
            "-pdnout", "t.pdn", "-db", "t.db"]
    run = Run.start(argv, tmp)
    signal_at_random_moment(run, mark, kind)
    at_signal = len(games_in(tmp / "t.db")) if (tmp / "t.db").exists() else 0
    code, took, out = run.finish(EXIT_BOUND)
    assert code == 130, out
    stored = games_in(tmp / "t.db")
    assert all(reason not in ("disconnect", "stalled", "protocol error") for _, _, reason, _
               in stored), [g for g in stored if g[2] not in (None,)]
    assert all("signal 9" not in detail for *_, detail in stored)
    # Stored after the signal, at most two a slot: the game its slot had finished and was
    # still storing (a round-robin slot starts its next game meanwhile, and a store once
    # begun is never cut short), and the game in play, if it ended before the abort did.
    assert len(stored) <= at_signal + 2 * 2, "games were started after the abort"
    pdn = parse_pdn((tmp / "t.pdn").read_text()) if (tmp / "t.pdn").exists() else []
    assert [g.tags["Result"] for g in pdn] == [g[1] for g in stored]
    wait_for(lambda: not survivors(tmp / "pids"), "every engine process gone", 10)


def match_trial(tmp: Path, kind: str, rng: random.Random) -> None:
    at = rng.randint(1, 150)
    mark = tmp / "mark"
    argv = ["match", *engine("good", "good", tmp, "--at", str(at), "--mark", str(mark)),
            *engine("forker", "fork", tmp), "-each", "tc=60+1", "-games", "500",
            "-pdnout", "m.pdn"]
    run = Run.start(argv, tmp)
    signal_at_random_moment(run, mark, kind)
    code, took, out = run.finish(EXIT_BOUND)
    assert code == 130, out
    shown = [line for line in out.splitlines() if line.startswith("Game ")]
    assert all("disconnect" not in line and "signal 9" not in line for line in shown), shown
    pdn = parse_pdn((tmp / "m.pdn").read_text()) if (tmp / "m.pdn").exists() else []
    assert len(pdn) == len(shown), "the PDN holds a game that was not reported, or lacks one"
    assert all("signal 9" not in " ".join(g.notes) for g in pdn)
    wait_for(lambda: not survivors(tmp / "pids"), "every engine process gone", 10)


def _trials(tmp_path: Path, trial, kind: str, count: int) -> None:
    rng = random.Random(f"{kind}-{count}-{trial.__name__}")
    for n in range(count):
        where = tmp_path / f"trial{n}"
        where.mkdir()
        trial(where, kind, rng)


@pytest.mark.parametrize("kind", KINDS)
def test_tournament_abort_always_wins(tmp_path, kind):
    _trials(tmp_path, tournament_trial, kind, FAST)


@pytest.mark.parametrize("kind", KINDS)
def test_match_abort_always_wins(tmp_path, kind):
    _trials(tmp_path, match_trial, kind, FAST)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_tournament_abort_always_wins_20_trials(tmp_path, kind):
    _trials(tmp_path, tournament_trial, kind, SLOW)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_match_abort_always_wins_20_trials(tmp_path, kind):
    _trials(tmp_path, match_trial, kind, SLOW)


def graceful_trial(tmp: Path, command: str, rng: random.Random) -> None:
    """One Ctrl-C: the running games end by the rules and are stored; nothing new starts."""
    at = rng.randint(1, 150)
    mark = tmp / "mark"
    pair = [*engine("good", "good", tmp, "--at", str(at), "--mark", str(mark)),
            *engine("deaf", "ignore-quit", tmp)]
    if command == "tournament":
        argv = ["tournament", *pair, *engine("third", "good", tmp), "-each", "tc=60+1",
                "-rounds", "40", "-games", "2", "-concurrency", "2", "-db", "t.db",
                "-pdnout", "t.pdn"]
    else:
        argv = ["match", *pair, "-each", "tc=60+1", "-games", "500", "-pdnout", "t.pdn"]
    run = Run.start(argv, tmp)
    wait_for(lambda: mark.exists() or run.proc.poll() is not None, "the marked go", 60)
    run.proc.send_signal(signal.SIGINT)
    run.wait_line("stopping: no new games")
    finished_before = sum(line.startswith(("Finished game", "Game ")) for line in run.seen)
    code, _took, out = run.finish(60)
    assert code == 130, out
    finished = [line for line in out.splitlines() if line.startswith(("Finished game", "Game "))]
    # after the Ctrl-C: the running games (one per slot), and in a tournament, whose slots
    # go on while a finished game is stored, the finished games not yet stored (one per
    # slot at most)
    allowed = 4 if command == "tournament" else 2
    assert len(finished) <= finished_before + allowed, "a game started after the Ctrl-C"
    assert all("disconnect" not in line and "stalled" not in line for line in finished), finished
    pdn = parse_pdn((tmp / "t.pdn").read_text())
    assert len(pdn) == len(finished)
    if command == "tournament":
        assert len(games_in(tmp / "t.db")) == len(finished)
    wait_for(lambda: not survivors(tmp / "pids"), "every engine process gone", 10)


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_one_ctrl_c_finishes_running_games_and_starts_none(tmp_path, command):
    rng = random.Random(command)
    for n in range(FAST):
        where = tmp_path / f"trial{n}"
        where.mkdir()
        graceful_trial(where, command, rng)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["match", "tournament"])
def test_one_ctrl_c_finishes_running_games_20_trials(tmp_path, command):
    rng = random.Random(f"slow-{command}")
    for n in range(SLOW):
        where = tmp_path / f"trial{n}"
        where.mkdir()
        graceful_trial(where, command, rng)
