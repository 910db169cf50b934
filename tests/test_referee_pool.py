"""Tournaments whose game slots are refereed by guti's own referee processes (``-referees N``).

Every test runs the real ``guti tournament`` as a subprocess and checks what it wrote with
the tests' own readers: the database (every scheduled game stored once, each replayed move
by move by the rules core to the end its result and reason name), the PDN file and the
traffic log (each game's block comes back from the referee process that played it:
``on referee K``). The fault outcomes are those of
:mod:`guti.referee.execution.referee_pool`'s docstring, as ``tests/test_cluster.py`` checks them
for ``-cluster``:

- a referee process killed mid-game (SIGKILL): the game is played again, one line says so;
- SIGTERM to guti: the running games are aborted, none is stored, exit 130;
- SIGKILL of guti: the kernel ends the referee processes and their engines;
- one Ctrl-C (SIGINT to guti alone): the running games finish and are stored, exit 130;
- an engine that cannot start: the same line and exit status as without ``-referees``.

Processes are found in ``/proc``: a referee process is a child of guti named
``guti-referee`` (``/proc/PID/comm``: forked from guti before its loop starts, or started
again as ``python -m guti.referee.execution.referee_child`` after a death, it names itself);
what is "left over" is any process whose
working directory is the test's folder (guti's children and their engines inherit it).
A game is caught in progress by an event, never by a sleep: the engine ``A`` is started
through ``sh -c 'exec ... --mark DIR/mark.$$'``, so the mark of its N-th ``go`` names the
engine's own pid, and so the referee process playing that game (its parent).
"""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from guti.rules import Board
from tests.conftest import GUTI, ROOT, games_stored, parse_pdn, rows, survivors, wait_for

FAULTY = ROOT / "tests" / "engines" / "faulty.py"
PROBE = ROOT / "tests" / "engines" / "cpu_probe.py"
GREEDY = ROOT / "bots" / "python" / "greedy_bot.py"
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
#: What tells a referee process among guti's children: its name.
CHILD = "guti-referee"
#: Seconds from an abort signal to guti's exit, at most (guti's own bound is 8 s).
EXIT_BOUND = 15.0
#: Seconds for every process of a run to be gone once guti has exited (or was killed).
GONE_BOUND = 10.0
TWO_CPUS = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two usable CPUs")


# --------------------------------------------------------------------------- engines


def engine(name: str, pids: Path, *extra: str, mode: str = "good") -> list[str]:
    """The test engine (a legal random mover) that records its pid in ``pids``."""
    args = shlex.join([str(FAULTY), "--mode", mode, "--pidfile", str(pids), *extra])
    return ["-engine", f"cmd={PY}", f"args={args}", f"name={name}"]


def marking(name: str, folder: Path, pids: Path, at: int, *extra: str) -> list[str]:
    """The test engine, which at its ``at``-th ``go`` writes ``folder/mark.PID`` (PID: its
    own; ``sh`` expands ``$$`` and ``exec`` keeps the pid)."""
    command = shlex.join([PY, str(FAULTY), "--mode", "good", "--pidfile", str(pids),
                          "--at", str(at), *extra])
    script = f"exec {command} --mark {shlex.quote(str(folder))}/mark.$$"
    return ["-engine", f"cmd={shutil.which('sh')}", f"args={shlex.join(['-c', script])}",
            f"name={name}"]


def wait_for_mark(folder: Path, run: Run) -> int:
    """The pid of the first engine process to write its mark (it is in a game now)."""
    found: list[Path] = []

    def marked() -> bool:
        assert run.proc.poll() is None, f"guti ended before the mark: {run.err}"
        found.extend(folder.glob("mark.*"))
        return bool(found)

    wait_for(marked, "an engine's marked go", 60)
    return int(found[0].name.split(".")[1])


# --------------------------------------------------------------------------- processes


def stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat`` after the command name: state, ppid, ... (empty if gone)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return data[data.rfind(")") + 2 :].split()


def parent_of(pid: int) -> int:
    fields = stat_fields(pid)
    return int(fields[1]) if fields else 0


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and parent_of(int(entry.name)) == pid:
            found.append(int(entry.name))
    return found


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def referees_of(guti: int) -> list[int]:
    """guti's referee processes."""
    return [pid for pid in children_of(guti) if process_name(pid) == CHILD]


def engines_of(referee: int, program: Path) -> list[int]:
    """The referee process's engines running ``program``: its children but its lifeline
    watcher (forked from it, so with guti's command line, which names the engines too)."""
    return [pid for pid in children_of(referee)
            if str(program) in command_line(pid) and process_name(pid) != "guti-lifeline"]


def cpus_of(pid: int) -> str:
    """The ``Cpus_allowed_list`` the kernel holds for ``pid`` ("" if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next(line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("Cpus_allowed_list"))
    except (OSError, StopIteration):
        return ""


def processes_in(folder: Path) -> list[str]:
    """Live processes whose working directory is ``folder`` (a zombie has none), named."""
    where = os.path.realpath(folder)
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == where:
                    found.append(f"{entry.name}: {command_line(int(entry.name))[:100]}")
            except OSError:
                continue
    return found


def nothing_left(folder: Path, pids: Path) -> None:
    """No referee process nor engine (nor an engine's grandchild) of the run remains
    (an ended one may stay a zombie a moment, until its new parent, init, reaps it)."""
    wait_for(lambda: not processes_in(folder), "every process of the run gone", GONE_BOUND)
    wait_for(lambda: not survivors(pids), "every engine process reaped", GONE_BOUND)


# --------------------------------------------------------------------------- guti


def guti(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


@dataclass
class Run:
    """A running guti; threads collect its output lines, so waits have deadlines."""

    proc: subprocess.Popen[str]
    out_lines: list[str] = field(default_factory=list)
    err_lines: list[str] = field(default_factory=list)
    pumps: list[threading.Thread] = field(default_factory=list)

    @classmethod
    def start(cls, argv: list[str], cwd: Path) -> Run:
        proc = subprocess.Popen([*GUTI, *argv], cwd=cwd, text=True, env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        run = cls(proc)
        for stream, lines in ((proc.stdout, run.out_lines), (proc.stderr, run.err_lines)):
            pump = threading.Thread(target=run._pump, args=(stream, lines), daemon=True)
            pump.start()
            run.pumps.append(pump)
        return run

    @staticmethod
    def _pump(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    @property
    def out(self) -> str:
        return "\n".join(self.out_lines)

    @property
    def err(self) -> str:
        return "\n".join(self.err_lines)

    def wait_line(self, text: str, timeout: float = 30.0) -> int:
        """Index in stdout of the first line holding ``text``, once it is printed."""
        found: list[int] = []

        def printed() -> bool:
            found.extend(i for i, line in enumerate(list(self.out_lines)) if text in line)
            assert found or self.proc.poll() is None, f"guti ended without {text!r}: {self.err}"
            return bool(found)

        wait_for(printed, f"{text!r} printed", timeout)
        return found[0]

    def finish(self, timeout: float) -> int:
        """The exit status, which must come within ``timeout`` s; all output read."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"guti still running after {timeout:g} s: {self.err}") from None
        for pump in self.pumps:
            pump.join(10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- what is stored


def check_games(db: Path, pdn: Path | None = None) -> dict[int, str]:
    """Every stored game replayed with the rules core: legal move by move, to the final
    position stored, which the rules end with the stored result and reason (the engines
    here never fault, so a game ended otherwise, or half played, fails). No game twice,
    none that was not scheduled; the PDN file holds the same games. game_id -> result."""
    games = rows(db, "SELECT game_id, game, start_fen, moves, final_fen, result, reason, "
                     "fault FROM games ORDER BY seq")
    ids = [g[0] for g in games]
    assert len(ids) == len(set(ids)), f"a game stored twice: {sorted(ids)}"
    assert set(ids) <= {r[0] for r in rows(db, "SELECT game_id FROM schedule")}
    for game_id, game, start, moves, final, result, reason, fault in games:
        board = Board(game) if start is None else Board.from_fen(game, start)
        for move in moves.split():
            board.push_str(move)  # raises on an illegal move
        assert board.fen() == final, f"game {game_id + 1}: the moves do not lead to its end"
        ended = board.outcome()
        assert fault is None and ended is not None, f"game {game_id + 1}: {result} {reason}"
        assert (str(ended.result), str(ended.reason)) == (result, reason), game_id + 1
    if pdn is not None:
        written = parse_pdn(pdn.read_text()) if pdn.exists() else []
        assert [g.tags["Result"] for g in written] == [g[5] for g in games]
        assert [" ".join(g.move_texts) for g in written] == [g[3] for g in games]
    return {g[0]: g[5] for g in games}


def scheduled(db: Path) -> list[int]:
    return sorted(r[0] for r in rows(db, "SELECT game_id FROM schedule"))


_BLOCK = re.compile(r"^\S+ \[referee\] # game (\d+): .+ \(white\) vs .+ \(black\) on (referee \d+)$")
_RESULT = re.compile(r"^\S+ \[referee\] # game (\d+): (1-0|0-1|1/2-1/2) \(")


def log_blocks(log: Path) -> tuple[dict[int, str], dict[int, str]]:
    """From a ``-log`` file: game number -> the referee that played it, and -> its result;
    each game's block must be there once."""
    referee_of: dict[int, str] = {}
    result_of: dict[int, str] = {}
    for line in log.read_text().splitlines():
        if found := _BLOCK.match(line):
            number = int(found.group(1))
            assert number not in referee_of, f"game {number}'s traffic is in the log twice"
            referee_of[number] = found.group(2)
        elif found := _RESULT.match(line):
            result_of[int(found.group(1))] = found.group(2)
    return referee_of, result_of


# --------------------------------------------------------------------------- a full run


def test_round_robin_on_two_referees_stores_each_game_once_and_logs_where(tmp_path):
    pids = tmp_path / "pids"
    greedy = ["-engine", f"cmd={PY}", f"args={shlex.quote(str(GREEDY))}", "name=G"]
    done = guti("tournament", *engine("A", pids), *engine("B", pids), *greedy,
                "-each", "tc=10+0.1", "-games", "2", "-rounds", "2", "-concurrency", "2",
                "-referees", "2", "-pdnout", "t.pdn", "-log", "t.log", "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "12/12 games stored" in done.stdout
    db = tmp_path / "guti.db"
    results = check_games(db, tmp_path / "t.pdn")
    assert sorted(results) == scheduled(db) == list(range(12))
    assert Counter(frozenset(r) for r in rows(db, "SELECT white, black FROM games")) == {
        frozenset(p): 4 for p in (("A", "B"), ("A", "G"), ("B", "G"))}
    # Each game's traffic came back from the referee process that played it, once, with
    # the result stored; both processes played; every ply asked for was logged.
    referee_of, result_of = log_blocks(tmp_path / "t.log")
    assert sorted(referee_of) == list(range(1, 13))
    assert set(referee_of.values()) == {"referee 1", "referee 2"}
    assert result_of == {gid + 1: result for gid, result in results.items()}
    log = (tmp_path / "t.log").read_text()
    plies = sum(len(m.split()) for (m,) in rows(db, "SELECT moves FROM games"))
    assert log.count("> go ") == plies
    nothing_left(tmp_path, pids)


# --------------------------------------------------------------------------- usage mistakes

TWO = ["-each", "tc=1"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-referees", "0"], "-referees: 0 is less than 1"),
        (["-referees", "two"], "-referees: 'two' is not a whole number"),
        (["-referees", "3", "-concurrency", "2"],
         "-referees 3: more referee processes than -concurrency 2"),
        (["-referees", "2", "-concurrency", "2", "-cluster", "local:2"],
         "-referees cannot be used with -cluster"),
    ],
)
def test_referees_mistakes_exit_2_with_one_line(tmp_path, argv, needle):
    pids = tmp_path / "pids"
    done = guti("tournament", *engine("A", pids), *engine("B", pids), *TWO, *argv,
                cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().split("\n")
    assert len(lines) == 1 and needle in lines[0], done.stderr
    assert not (tmp_path / "guti.db").exists() and not pids.exists()


def _toml(tmp_path: Path, head: str) -> Path:
    engines = "".join(
        f'[[engine]]\nname = "{name}"\ncmd = "{{python}}"\nargs = ["{FAULTY}"]\n\n'
        for name in ("A", "B"))
    path = tmp_path / "t.toml"
    path.write_text(f'{head}\ngames = 2\nlog = "t.log"\nquiet = true\n[each]\ntc = "10+0.1"\n'
                    f"\n{engines}")
    return path


def test_referees_in_a_toml_file_is_the_flag(tmp_path):
    """``referees = N`` is ``-referees N``: refused in the same words, played the same way."""
    _toml(tmp_path, "referees = 3\nconcurrency = 2")
    refused = guti("tournament", "t.toml", cwd=tmp_path, timeout=60)
    assert refused.returncode == 2
    lines = refused.stderr.strip().split("\n")
    assert len(lines) == 1, refused.stderr
    assert "-referees 3: more referee processes than -concurrency 2" in lines[0]
    assert not (tmp_path / "guti.db").exists()
    _toml(tmp_path, "referees = 2\nconcurrency = 2")
    done = guti("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    referee_of, _ = log_blocks(tmp_path / "t.log")
    assert sorted(referee_of) == [1, 2] and set(referee_of.values()) == {"referee 1",
                                                                          "referee 2"}
    assert len(check_games(tmp_path / "guti.db")) == 2


def test_a_referee_process_runs_guti_s_code_not_a_package_of_the_working_folder(tmp_path):
    """A referee process imports guti from where guti itself was imported (the compiled
    build, say), never a ``referee`` folder that happens to be in the working folder
    (``python -m`` would put the working folder first on the module path)."""
    fake = tmp_path / "referee"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise SystemExit('the working folder referee')\n")
    _toml(tmp_path, "referees = 2\nconcurrency = 2")
    done = guti("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(check_games(tmp_path / "guti.db")) == 2


# --------------------------------------------------------------------------- -use-affinity


def _observe_pinning(run: Run, seen: dict[int, tuple[str, set[str]]]) -> None:
    """While guti runs: each referee process's CPU list, and its engines' (cpu_probe)."""
    while run.proc.poll() is None:
        for referee in referees_of(run.proc.pid):
            engines = {cpus_of(p) for p in engines_of(referee, PROBE)} - {""}
            mine = cpus_of(referee)
            if mine:
                before = seen.get(referee, (mine, set()))[1]
                seen[referee] = (mine, before | engines)
        time.sleep(0.02)


@TWO_CPUS
@pytest.mark.slow
def test_use_affinity_pins_each_referee_and_its_engines_to_its_own_cpu(tmp_path):
    first, second = sorted(os.sched_getaffinity(0))[:2]
    probe = ["-engine", f"cmd={PY}", f"args={shlex.join([str(PROBE), '--think', '0.01'])}"]
    run = Run.start(["tournament", *probe, "name=P", *probe, "name=Q", "-each", "tc=20+0.2",
                     "-games", "4", "-concurrency", "2", "-referees", "2", "-use-affinity",
                     f"{first},{second}", "-log", "t.log", "-quiet"], tmp_path)
    seen: dict[int, tuple[str, set[str]]] = {}
    try:
        _observe_pinning(run, seen)
        code = run.finish(120)
    finally:
        run.kill()
    assert code == 0, run.err
    # Seen in /proc while games ran: two referee processes, each on one CPU of its own,
    # every engine it started on that same CPU.
    assert len(seen) == 2, seen
    assert sorted(cpus for cpus, _ in seen.values()) == sorted([str(first), str(second)])
    for referee, (cpus, engines) in seen.items():
        assert engines == {cpus}, (referee, cpus, engines)
    # Reported by the engines themselves at every move: referee 1 (game slot 1) on the
    # first CPU, referee 2 on the second.
    reports: dict[str, set[str]] = {}
    where = ""  # the referee of the game whose block the log is in
    for line in (tmp_path / "t.log").read_text().splitlines():
        if found := _BLOCK.match(line):
            where = found.group(2)
        elif " < info string cpus " in line:
            reports.setdefault(where, set()).add(line.rsplit(" ", 1)[1])
    assert reports == {"referee 1": {str(first)}, "referee 2": {str(second)}}


# --------------------------------------------------------------------------- faults


def referee_kill_trial(folder: Path, at: int, games: int = 2) -> None:
    """SIGKILL of the referee process whose engine A is at its ``at``-th ``go``: it is
    started again and the game is played again from its start; the tournament completes,
    each game stored once, its traffic logged once."""
    pids = folder / "pids"
    think = ["--think", "0.01"]
    total = 3 * games
    run = Run.start(["tournament", *marking("A", folder, pids, at, *think),
                     *engine("B", pids, *think), *engine("C", pids, *think),
                     "-each", "tc=60+1", "-games", str(games), "-concurrency", "2",
                     "-referees", "2", "-pdnout", "t.pdn", "-log", "t.log", "-quiet"], folder)
    try:
        marked = wait_for_mark(folder, run)
        victim = parent_of(marked)  # the referee process playing A's game, mid-game
        assert victim in referees_of(run.proc.pid), command_line(victim)
        os.kill(victim, signal.SIGKILL)
        killed_at = games_stored(folder / "guti.db")
        code = run.finish(120)
    finally:
        run.kill()
    assert code == 0, run.err
    assert killed_at < total, "the tournament ended before the kill"
    assert f"{total}/{total} games stored" in run.out
    again = [line for line in run.err_lines if "played again" in line]
    # One game was in play on the victim (A's): it is played again. (Only if A's move
    # at that go ended its game could the kill fall between two games: never so early.)
    assert len(again) <= 1, run.err
    if at <= 4:
        assert len(again) == 1, run.err
    assert len(run.err_lines) == len(again), run.err  # nothing else went wrong
    db = folder / "guti.db"
    assert sorted(check_games(db, folder / "t.pdn")) == scheduled(db) == list(range(total))
    referee_of, _ = log_blocks(folder / "t.log")  # the game lost mid-way: one block
    assert sorted(referee_of) == list(range(1, total + 1))
    for line in again:
        said = re.fullmatch(rf"guti: (referee [12]) \(pid {victim}\) killed by signal 9 "
                            rf"\(SIGKILL\); game (\d+) is played again", line)
        assert said, line
        # played again from its start by the same game slot's referee, started anew
        assert referee_of[int(said.group(2))] == said.group(1)
    nothing_left(folder, pids)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                    reason="referee processes are forked on Linux only")
def test_the_referee_processes_are_forked_from_guti_and_named(tmp_path):
    """They are guti forked before its loop (the same command line: no new interpreter
    that imports guti again), named ``guti-referee``, and play the games."""
    pids = tmp_path / "pids"
    think = ["--think", "0.01"]
    run = Run.start(["tournament", *marking("A", tmp_path, pids, 2, *think),
                     *engine("B", pids, *think), "-each", "tc=60+1", "-games", "2",
                     "-concurrency", "2", "-referees", "2", "-quiet"], tmp_path)
    try:
        marked = wait_for_mark(tmp_path, run)
        referees = referees_of(run.proc.pid)
        assert len(referees) == 2 and parent_of(marked) in referees
        assert {command_line(pid) for pid in referees} == {command_line(run.proc.pid)}
        code = run.finish(120)
    finally:
        run.kill()
    assert code == 0, run.err
    assert "2/2 games stored" in run.out
    nothing_left(tmp_path, pids)


def test_a_killed_referee_process_loses_no_game(tmp_path):
    referee_kill_trial(tmp_path, at=4)


def _abort_engines(folder: Path, pids: Path, at: int) -> list[str]:
    """A marking engine, one that ignores quit, EOF and SIGTERM, and one whose forked
    grandchild holds its pipes and ignores SIGTERM (as tests/test_abort_trials.py)."""
    think = ["--think", "0.01"]
    return [*marking("A", folder, pids, at, *think),
            *engine("deaf", pids, *think, mode="ignore-quit"),
            *engine("forker", pids, *think, mode="fork"),
            "-each", "tc=60+1", "-games", "2", "-rounds", "10", "-concurrency", "2",
            "-referees", "2"]


def sigterm_trial(folder: Path, at: int) -> None:
    """SIGTERM to guti while games are in play: exit 130 at once, the running games
    aborted and not stored, nothing left running."""
    pids = folder / "pids"
    run = Run.start(["tournament", *_abort_engines(folder, pids, at), "-pdnout", "t.pdn"],
                    folder)
    try:
        wait_for_mark(folder, run)
        assert len(referees_of(run.proc.pid)) == 2
        at_signal = games_stored(folder / "guti.db")
        run.proc.send_signal(signal.SIGTERM)
        code = run.finish(EXIT_BOUND)
    finally:
        run.kill()
    assert code == 130, run.out + run.err
    assert "aborting: running games are not stored" in run.out
    assert "interrupted; continue with the same command and -resume" in run.err
    # Only games that ended by the rules are stored (an aborted one would be a loss by
    # disconnect or by signal 9), none started after the signal.
    played = check_games(folder / "guti.db", folder / "t.pdn")
    assert len(played) <= at_signal + 2
    nothing_left(folder, pids)


@pytest.mark.signals
def test_sigterm_aborts_the_referee_processes_games_and_stores_none(tmp_path):
    sigterm_trial(tmp_path, at=3)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["referee-kill", "sigterm"])
@pytest.mark.signals
def test_faults_at_random_moments_10_trials(tmp_path, fault):
    """A referee process killed, or guti sent SIGTERM, at ten random ``go``s."""
    rng = random.Random(fault)
    for n in range(10):
        folder = tmp_path / f"trial{n}"
        folder.mkdir()
        if fault == "referee-kill":
            referee_kill_trial(folder, at=rng.randint(2, 30), games=4)
        else:
            sigterm_trial(folder, at=rng.randint(2, 60))


def test_sigkill_of_guti_leaves_no_referee_process_nor_engine(tmp_path):
    pids = tmp_path / "pids"
    run = Run.start(["tournament", *_abort_engines(tmp_path, pids, 3)], tmp_path)
    try:
        wait_for_mark(tmp_path, run)
        found: list[list[int]] = [[], []]

        def both_referees_playing() -> bool:  # the other one may still start its engines
            found[0] = referees_of(run.proc.pid)
            found[1] = [p for r in found[0] for p in engines_of(r, FAULTY)]
            return len(found[0]) == 2 and len(found[1]) >= 4

        wait_for(both_referees_playing, "two referee processes with their engines", 30)
    finally:
        run.proc.send_signal(signal.SIGKILL)
        run.finish(30)
    # guti had no chance to clean up: the kernel ended its referee processes (their
    # parent-death signal), and theirs and their lifelines ended the engines.
    nothing_left(tmp_path, pids)


@pytest.mark.signals
def test_one_ctrl_c_lets_the_running_games_finish_and_stores_them(tmp_path):
    pids = tmp_path / "pids"
    think = ["--think", "0.01"]
    argv = ["tournament", *marking("A", tmp_path, pids, 4, *think), *engine("B", pids, *think),
            *engine("C", pids, *think), "-each", "tc=60+1", "-games", "2", "-concurrency",
            "2", "-referees", "2", "-pdnout", "t.pdn"]
    db = tmp_path / "guti.db"
    run = Run.start(argv, tmp_path)
    try:
        wait_for_mark(tmp_path, run)  # a game is in progress
        before = games_stored(db)
        run.proc.send_signal(signal.SIGINT)  # to guti alone, not to its process group
        said = run.wait_line("stopping: no new games")
        finished_before = sum(line.startswith("Finished game") for line in run.out_lines[:said])
        code = run.finish(60)
    finally:
        run.kill()
    assert code == 130, run.out + run.err
    running = int(re.search(r"finishing (\d+) running game", run.out_lines[said]).group(1))
    assert 1 <= running <= 2
    finished = [line for line in run.out_lines if line.startswith("Finished game")]
    assert all(" vs " in line for line in finished)
    # The games running at the Ctrl-C were played to their end and stored; none began after.
    # A slot goes on while its last game is stored, so at most one finished game per slot
    # (two) may be counted neither before the Ctrl-C nor as running.
    assert before + running <= len(finished) <= finished_before + running + 2, run.out
    assert len(check_games(db, tmp_path / "t.pdn")) == len(finished) < 6
    assert "interrupted; continue with the same command and -resume" in run.err
    nothing_left(tmp_path, pids)
    resumed = guti(*argv, "-resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {len(finished)}/6" in resumed.stdout and "6/6 games stored" in resumed.stdout
    assert sorted(check_games(db, tmp_path / "t.pdn")) == scheduled(db) == list(range(6))
    nothing_left(tmp_path, pids)


@pytest.mark.parametrize("bad", [["-engine", "cmd=/nonexistent/engine", "name=X"],
                                 "startup-crash"], ids=["not-found", "startup-crash"])
def test_an_engine_that_cannot_start_is_the_same_line_as_without_referees(tmp_path, bad):
    pids = tmp_path / "pids"
    bad_engine = bad if isinstance(bad, list) else engine("X", pids, mode=bad)
    answers = []
    for referees in ("1", "2"):
        folder = tmp_path / f"referees-{referees}"
        folder.mkdir()
        done = guti("tournament", *bad_engine, *engine("B", pids), "-each", "tc=10+0.1",
                    "-concurrency", "2", "-referees", referees, cwd=folder, timeout=60)
        lines = done.stderr.strip().split("\n")
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith("guti tournament: engine X")
        assert games_stored(folder / "guti.db") == 0
        nothing_left(folder, pids)
        answers.append((done.returncode, done.stderr))
    assert answers[0] == answers[1]


def _killer(folder: Path, pids: Path) -> list[str]:
    """An engine started through ``sh``, which SIGKILLs its parent (the referee process
    starting it) once ``folder/FLAG`` exists; a fresh process for every game."""
    command = shlex.join([PY, str(FAULTY), "--mode", "good", "--pidfile", str(pids),
                          "--think", "0.01"])
    flag = shlex.quote(str(folder / "FLAG"))
    script = f"if [ -e {flag} ]; then kill -9 $PPID; fi; exec {command}"
    return ["-engine", f"cmd={shutil.which('sh')}", f"args={shlex.join(['-c', script])}",
            "name=K", "restart=on"]


def test_a_game_that_keeps_killing_its_referee_ends_the_run_in_one_line(tmp_path):
    """The same game loses its referee process three times: the run ends with one line
    (as -cluster's "game N failed on the cluster"), exit 2, nothing left running."""
    pids = tmp_path / "pids"
    run = Run.start(["tournament", *_killer(tmp_path, pids), *engine("B", pids, "--think",
                     "0.01"), "-each", "tc=60+1", "-games", "20", "-concurrency", "2",
                     "-referees", "2", "-quiet"], tmp_path)
    try:
        wait_for(lambda: games_stored(tmp_path / "guti.db") >= 1 or run.proc.poll() is not None,
                 "a game stored", 60)
        (tmp_path / "FLAG").touch()  # from now on each new game kills its referee
        code = run.finish(60)
    finally:
        run.kill()
    assert code == 2, run.err
    *again, last = run.err_lines
    lost = [re.fullmatch(r"guti: referee \d \(pid \d+\) killed by signal 9 \(SIGKILL\); "
                         r"game (\d+) is played again", line) for line in again]
    assert all(lost), run.err
    failed = re.fullmatch(r"guti tournament: game (\d+): its referee process died 3 times "
                          r"\(last: referee \d \(pid \d+\) killed by signal 9 \(SIGKILL\)\)",
                          last)
    assert failed, run.err
    # it was played again twice before the third loss ended the run
    assert [m.group(1) for m in lost if m].count(failed.group(1)) == 2, run.err
    assert len(check_games(tmp_path / "guti.db")) < 20
    nothing_left(tmp_path, pids)


def test_a_referee_that_dies_while_its_engines_start_is_one_line(tmp_path):
    pids = tmp_path / "pids"
    (tmp_path / "FLAG").touch()
    done = guti("tournament", *_killer(tmp_path, pids), *engine("B", pids), "-each",
                "tc=10+0.1", "-concurrency", "2", "-referees", "2", cwd=tmp_path, timeout=60)
    lines = done.stderr.strip().split("\n")
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert re.fullmatch(r"guti tournament: referee \d \(pid \d+\) killed by signal 9 "
                        r"\(SIGKILL\) while starting the engines", lines[0]), lines[0]
    assert games_stored(tmp_path / "guti.db") == 0
    nothing_left(tmp_path, pids)


class _DeadProcess:
    """A referee process that has died: its output at its end, its exit status known."""

    def __init__(self, pid: int) -> None:
        import asyncio

        self.pid = pid
        self.returncode = -signal.SIGKILL
        self.stdout = asyncio.StreamReader()
        self.stdout.feed_eof()

    async def wait(self) -> int:
        return self.returncode


def test_a_dead_referee_process_fails_its_own_games_not_its_successors():
    """A process's death is known (its exit status) before its output's end is read; a
    game begun meanwhile on the process started in its place must not be failed when
    the old one's reading ends (it was played twice, and the second copy could not be
    cancelled)."""
    import asyncio

    from guti.referee.execution.referee_pool import RefereeLink, RefereeLost

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        link = RefereeLink(1, None, None)  # type: ignore[arg-type]
        old, new = _DeadProcess(101), _DeadProcess(102)
        new.returncode = None  # type: ignore[assignment]
        link.process = new  # type: ignore[assignment]
        on_old, on_new = loop.create_future(), loop.create_future()
        link.games = {1: (old, on_old), 2: (new, on_new)}
        await link._read(old)  # type: ignore[arg-type]
        assert isinstance(on_old.exception(), RefereeLost)
        assert not on_new.done()

    asyncio.run(scenario())
