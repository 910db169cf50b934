"""Resource limits per engine: settings, how they are enforced, hostile engines contained.

The hostile engines (tests/engines/hostile.py) play real tournaments through ``guti``: a
memory hog filling 2 GB under ``limits.memory=256M``, a fork bomb under
``limits.processes=16``, an engine connecting to a local port under ``limits.network=off``,
an engine writing outside its folder under ``limits.files=private``, an engine leaving a
thread spinning after its ``bestmove`` under ``limits.ponder=off``.
Each must lose (or fail at its attack) alone, with the reason ``resource limit`` and the
limit named, while the game between two other engines, played at the same time, ends
normally, and nothing of it may be left: no process, no cgroup.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.game.engine_config import EngineConfigError, engine_config_from_tokens
from guti.referee.process import sandbox
from guti.referee.process.sandbox import Sandbox, SandboxError, parse_sandbox, report_lines
from guti.rules import Side
from tests.conftest import GUTI, ROOT, parse_pdn, rows, survivors

HOSTILE = str(ROOT / "tests" / "engines" / "hostile.py")
LIMITED = str(ROOT / "guti" / "referee" / "process" / "limited.py")


# --------------------------------------------------------------------------- settings


def test_limits_are_engine_settings_merged_with_each():
    cfg = engine_config_from_tokens(
        [("cmd", "x"), ("limits.memory", "1G"), ("limits.network", "off")],
        each=[("limits.memory", "256M"), ("limits.processes", "16")])
    assert cfg.sandbox == Sandbox(memory=2**30, processes=16, network_off=True)
    assert engine_config_from_tokens([("cmd", "x")]).sandbox is None


@pytest.mark.parametrize(("key", "value", "message"), [
    ("limits.memory", "lots", "limits.memory=lots: expected a size such as 512M or 2G"),
    ("limits.memory", "512", "limits.memory=512: at least 16 MiB (give a unit: 512M)"),
    ("limits.processes", "0", "limits.processes=0: expected a whole number from 1 to 4194304 "
                              "(the most processes Linux can have)"),
    ("limits.network", "maybe", "limits.network=maybe: expected on or off"),
    ("limits.required", "1", "limits.required=1: expected true or false"),
])
def test_a_bad_limit_is_one_line_naming_it(key, value, message):
    with pytest.raises(SandboxError, match=f"^{re.escape(message)}$"):
        parse_sandbox({key: value})
    with pytest.raises(EngineConfigError, match=f"^engine e: {re.escape(message)}$"):
        engine_config_from_tokens([("cmd", "x"), ("name", "e"), (key, value)])


def test_an_unknown_limit_key_is_refused():
    with pytest.raises(EngineConfigError, match="unknown engine setting 'limits.disk'"):
        engine_config_from_tokens([("cmd", "x"), ("limits.disk", "1G")])


def test_a_bad_limit_on_the_command_line_exits_2_with_one_line(tmp_path):
    done = subprocess.run(
        [*GUTI, "tournament", "-engine", f"cmd={sys.executable}", "limits.memory=huge",
         "-engine", f"cmd={sys.executable}", "-each", "tc=1+0.1", "-db", str(tmp_path / "t.db")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "limits.memory=huge" in done.stderr
    assert "Traceback" not in done.stderr


def _nothing_enforced() -> sandbox.Enforcement:
    return sandbox.Enforcement(None, None, None, None, "no cgroup (test)",
                               "no cgroup (test)", "no namespaces (test)")


def test_a_limit_not_enforced_is_said_once_or_refused_when_required(monkeypatch):
    monkeypatch.setattr(sandbox, "enforcement", _nothing_enforced)
    lines = report_lines([("a", Sandbox(memory=2**28)), ("b", Sandbox())])
    assert lines == ["limits: engine a: limits.memory is not enforced on this machine: "
                     "no cgroup (test)"]
    with pytest.raises(SandboxError, match=r"^engine a: limits.network is not enforced .*"
                                           r"\(and limits.required=true\)$"):
        report_lines([("a", Sandbox(network_off=True, required=True))])
    assert report_lines([("b", Sandbox())]) == []


def test_cpu_judged_limits_say_off_linux_that_they_are_not_enforced(monkeypatch):
    box = parse_sandbox({"limits.cpus": "1", "limits.ponder": "off"})
    assert report_lines([("x", box)]) == [
        "limits: cpus by the CPU time of each move; ponder off by the CPU time "
        "between bestmove and go"]
    monkeypatch.setattr(sandbox.sys, "platform", "darwin")
    assert sandbox.unenforced("x", box, _nothing_enforced()) == [
        f"engine x: {key} is not enforced on this machine: CPU times are read from Linux's /proc"
        for key in ("limits.cpus", "limits.ponder")]
    with pytest.raises(SandboxError, match="limits.cpus is not enforced"):
        report_lines([("x", Sandbox(cpus=1.0, required=True))])


def test_cpu_judged_limits_under_bubblewrap_without_a_cgroup_say_they_are_not_enforced():
    """There guti can read only bubblewrap's own process, not the engine inside it."""
    box = parse_sandbox({"limits.cpus": "1", "limits.ponder": "off", "limits.files": "private"})
    no_cgroup = dataclasses.replace(_nothing_enforced(), bubblewrap="/usr/bin/bwrap")
    why = "with limits.files=private and no cgroup, the process guti can read is bubblewrap's"
    assert [line.split(": ", 2)[1:] for line in sandbox.unenforced("x", box, no_cgroup)] == [
        [f"{key} is not enforced on this machine", f"{why}, not the engine's"]
        for key in ("limits.cpus", "limits.ponder")]


def test_a_process_limit_past_what_linux_can_have_is_refused():
    with pytest.raises(SandboxError, match="from 1 to 4194304"):
        parse_sandbox({"limits.processes": "4194305"})
    assert parse_sandbox({"limits.processes": "4194304"}).processes == 4194304


def test_the_rlimit_fallback_refuses_memory_past_the_limit():
    # no cgroup: RLIMIT_AS set by the wrapper before the exec holds the program
    hog = "b = b'x' * (512 << 20)"
    done = subprocess.run([sys.executable, "-I", "-S", LIMITED, "--address-space",
                           str(256 << 20), "--", sys.executable, "-c", hog],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "MemoryError" in done.stderr
    ok = subprocess.run([sys.executable, "-I", "-S", LIMITED, "--address-space",
                         str(256 << 20), "--", sys.executable, "-c", "b = b'x' * (8 << 20)"],
                        timeout=60)
    assert ok.returncode == 0


def test_the_wrapper_says_in_one_line_what_it_cannot_start():
    done = subprocess.run([sys.executable, "-I", "-S", LIMITED, "--", "/no/such/engine"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert done.stderr == "guti limits: cannot start /no/such/engine: No such file or directory\n"


# --------------------------------------------------------------------------- hostile engines


def _needs(what: str) -> None:
    how = sandbox.enforcement()
    if what == "memory" and (how.place is None or how.place.memory is None):
        pytest.skip("no writable memory cgroup on this machine")
    if what == "pids" and (how.place is None or how.place.pids is None):
        pytest.skip("no writable pids cgroup on this machine (a fork bomb is not run then)")
    if what == "network" and how.network is None:
        pytest.skip(f"no network namespace here: {how.network_why}")
    if what == "files" and how.bubblewrap is None:
        pytest.skip(f"files cannot be made private here: {how.files_why}")


def _engine(name: str, mode: str, tmp_path: Path, *settings: str, extra: str = "") -> list[str]:
    args = f"{HOSTILE} --mode {mode} --pidfile {tmp_path / name}.pids --mark {tmp_path / 'mark'}"
    return ["-engine", f"cmd={sys.executable}", f"args={args} {extra}", f"name={name}", *settings]


def _tournament(tmp_path: Path, *engines: list[str], flags: tuple[str, ...] = ()
                ) -> tuple[str, list[tuple]]:
    """Play the tournament; its output, its games, and check that it left no cgroup."""
    db = tmp_path / "t.db"
    proc = subprocess.Popen(
        [*GUTI, "tournament", *[word for engine in engines for word in engine],
         "-each", "tc=30+0.1", "-concurrency", "2", "-maxmoves", "30", "-db", str(db), *flags],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    place = sandbox.enforcement().place
    for parent in {place.memory, place.pids, place.cpu} - {None} if place else set():
        assert not [n for n in os.listdir(str(parent)) if n.startswith(f"guti-{proc.pid}-")]
    return out, rows(db, "select white, black, reason, detail, fault from games")


def _check_contained(tmp_path: Path, games: list[tuple], culprit: str, named: str) -> None:
    charged = [g for g in games if culprit in (g[0], g[1])]
    assert charged and all(g[2] == "resource limit" for g in charged), charged
    for white, _black, _reason, detail, fault in charged:
        assert detail.startswith(f"engine {culprit}: {named}"), detail
        assert fault == ("w" if white == culprit else "b")
    others = [g for g in games if culprit not in (g[0], g[1])]
    assert others and all(g[4] is None for g in others), others  # ended normally
    assert not [left for pids in tmp_path.glob("*.pids") for left in survivors(pids)]


def test_a_memory_hog_is_killed_at_its_limit_and_charged_alone(tmp_path):
    _needs("memory")
    done, games = _tournament(
        tmp_path, _engine("hog", "memory", tmp_path, "limits.memory=256M"),
        _engine("good1", "good", tmp_path), _engine("good2", "good", tmp_path))
    assert "limits: memory by cgroup" in done
    _check_contained(tmp_path, games, "hog", "memory limit 256 MiB reached")
    for game in games:
        if "peak" in game[3]:
            peak = float(game[3].split("(peak ")[1].split(" MiB")[0])
            assert peak <= 256  # the machine's memory untouched beyond the limit
    # the hog's peak, from its cgroup, is stored with each of its games
    for white, black, text in rows(tmp_path / "t.db", "select white, black, resources from games"):
        if "hog" in (white, black):
            hog = json.loads(text)["w" if white == "hog" else "b"]
            assert hog["memory_from"] == "cgroup" and 0 < hog["peak_memory"] <= 256 << 20, hog


def test_a_process_killed_for_memory_loses_the_game_though_the_engine_plays_on(tmp_path):
    """The kernel killed a child of the engine at its memory limit; the engine went on
    answering. It loses at that move all the same, as the limit says."""
    _needs("memory")
    _done, games = _tournament(
        tmp_path, _engine("hoarder", "child-memory", tmp_path, "limits.memory=128M"),
        _engine("good1", "good", tmp_path), _engine("good2", "good", tmp_path))
    _check_contained(tmp_path, games, "hoarder", "memory limit 128 MiB reached")


def test_a_fork_bomb_is_refused_at_its_limit_and_charged_alone(tmp_path):
    _needs("pids")
    _done, games = _tournament(
        tmp_path, _engine("bomb", "forkbomb", tmp_path, "limits.processes=16"),
        _engine("good1", "good", tmp_path), _engine("good2", "good", tmp_path))
    _check_contained(tmp_path, games, "bomb", "process limit 16 reached")
    started = len((tmp_path / "bomb.pids").read_text().split()) // 2  # a line per process
    bombs = sum("bomb" in (g[0], g[1]) for g in games)  # started afresh after each fault
    assert bombs * 2 <= started <= bombs * 16  # each held to 16, its starter included


def test_an_engine_without_network_cannot_connect_and_plays_on(tmp_path):
    _needs("network")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        _done, games = _tournament(
            tmp_path, _engine("net", "network", tmp_path, "limits.network=off",
                              extra=f"--port {port}"),
            _engine("good", "good", tmp_path))
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever came
    marks = (tmp_path / "mark").read_text().split("\n")
    assert marks[0].startswith("blocked: ") and "connected" not in marks
    assert all(g[2] != "resource limit" for g in games)
    assert not [left for pids in tmp_path.glob("*.pids") for left in survivors(pids)]



def test_limits_in_a_toml_file_dotted_or_quoted_and_in_each(tmp_path):
    from guti.referee.config.options import engine_configs
    from guti.referee.config.tournament import read_tournament_options

    path = tmp_path / "t.toml"
    path.write_text(f"""
[each]
tc = "1+0.1"
limits.network = "off"
[[engine]]
name = "a"
cmd = "{sys.executable}"
"limits.memory" = "256M"
[[engine]]
name = "b"
cmd = "{sys.executable}"
limits.processes = 16
limits.required = true
""")
    configs = engine_configs(read_tournament_options([str(path)]))
    assert [c.sandbox for c in configs] == [
        Sandbox(memory=256 << 20, network_off=True),
        Sandbox(processes=16, network_off=True, required=True)]


def test_with_files_private_only_its_folder_is_writable(tmp_path):
    _needs("files")
    home = tmp_path / "eng"
    home.mkdir()
    outside = Path("/var/tmp") / f"guti-limits-test-{os.getpid()}"
    script = ("import sys\n"
              "open('inside.txt', 'w').write('ok')\n"
              "try:\n"
              f"    open({str(outside)!r}, 'w')\n"
              "except OSError as exc:\n"
              "    sys.exit(exc.strerror)\n")
    box = sandbox.Confinement(Sandbox(files_private=True))
    try:
        done = subprocess.run(box.prepare([sys.executable, "-c", script], str(home)),
                              cwd=home, capture_output=True, text=True, timeout=60)
    finally:
        asyncio.run(box.close())  # its cgroup, when it got one, removed
    assert box.cgroup is None
    assert done.stderr.strip() == "Read-only file system" and done.returncode == 1
    assert (home / "inside.txt").read_text() == "ok" and not outside.exists()


def test_an_engine_with_private_files_writes_nothing_outside_and_plays_on(tmp_path):
    _needs("files")
    home = tmp_path / "eng"
    home.mkdir()
    outside = tmp_path / "outside.txt"
    _done, games = _tournament(
        tmp_path, _engine("files", "files", home, "limits.files=private", f"dir={home}",
                          extra=f"--target {outside}"),
        _engine("good", "good", tmp_path))
    assert (home / "mark").read_text().split("\n")[0] in ("written", "blocked: [Errno 30] "
                                                          f"Read-only file system: '{outside}'")
    assert not outside.exists()  # what it wrote went to its private /tmp, gone with it
    assert all(g[4] is None for g in games)  # nobody at fault
    assert not [left for pids in (tmp_path, home) for f in pids.glob("*.pids")
                for left in survivors(f)]


def test_only_empty_cgroups_of_gutis_gone_are_removed(tmp_path):
    from guti.referee.process.cgroups import remove_stale

    gone, alive, busy = (tmp_path / "guti-999999999-1", tmp_path / f"guti-{os.getpid()}-1",
                         tmp_path / "guti-999999999-2")
    for folder in (gone, alive, busy):
        folder.mkdir()
    (busy / "cgroup.procs").write_text("1\n")  # not empty: still in use
    remove_stale(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, busy.name])


@pytest.mark.slow  # moves of 50 ms of CPU each, by design
@pytest.mark.parametrize("limits", ["", "limits.processes=16", "limits.files=private"])
def test_each_move_s_cpu_time_is_stored_with_the_game(tmp_path, limits):
    # the burner spends 50 ms of CPU (by its own count) on every move; the kernel counts
    # in 10 ms ticks, so each of its moves is stored with at least 30 ms (also when it
    # runs under bubblewrap, which starts it as a child of its own)
    if limits == "limits.files=private":
        _needs("files")
    home = tmp_path / "eng"
    home.mkdir()
    settings = [limits, f"dir={home}"] if limits else []
    _tournament(tmp_path, _engine("burner", "burn", home, *settings, extra="--burn 0.05"),
                _engine("good", "good", tmp_path))
    db = tmp_path / "t.db"
    for white, cpu in rows(db, "select white, cpu_ms from games"):
        per_ply = json.loads(cpu)
        assert per_ply and None not in per_ply
        burner_first = white == "burner"
        burner = per_ply[0 if burner_first else 1::2]
        other = per_ply[1 if burner_first else 0::2]
        assert burner and min(burner) >= 30, burner
        assert all(ms >= 0 for ms in other)


@pytest.mark.slow  # about 30 moves of 50 ms of CPU each, and a helper process per move
def test_the_cpu_of_an_engine_s_helper_that_ended_is_counted_by_its_cgroup(tmp_path):
    # at every go the engine has a grandchild (not its child: its CPU never reaches the
    # engine's own count) spend 50 ms of CPU and end before the bestmove: read from the
    # engine's processes after the move it is gone, but its cgroup counted it. Each ended
    # grandchild comes back to guti, its subreaper: were it not reaped after the move, the
    # zombies would reach the limit of 16 processes within 15 moves and the engine's
    # helpers could no longer start
    _needs("pids")
    if sandbox.enforcement().place.cpu is None:
        pytest.skip("no cgroup here counts CPU (v1 without a writable cpuacct)")
    _tournament(tmp_path, _engine("helped", "helper", tmp_path, "limits.processes=16",
                                  extra="--burn 0.05"), _engine("good", "good", tmp_path))
    for white, cpu in rows(tmp_path / "t.db", "select white, cpu_ms from games"):
        per_ply = json.loads(cpu)
        helped = per_ply[0 if white == "helped" else 1::2]
        assert helped and min(helped) >= 30, f"{white} {helped}"


def test_a_stored_cpu_column_is_read_back_or_said_damaged():
    from guti.referee.storage.rows import cpu_from_json

    assert cpu_from_json(None) == [] and cpu_from_json("[null, 12.5, 30]") == [None, 12.5, 30]
    for bad in ('{"a": 1}', '["x"]', "[true]", "[1,"):
        with pytest.raises(ValueError):
            cpu_from_json(bad)


def test_the_cpu_limit_is_judged_on_each_move_with_the_kernel_s_rounding_forgiven():
    box = parse_sandbox({"limits.cpus": "0.5"})
    assert box.cpus == 0.5 and not box.active  # nothing to start it in: it is measured
    assert box.cpu_excess(None, 100.0) is None  # not known: not judged
    assert box.cpu_excess(70.0, 100.0) is None  # within 0.5 x 100 ms + 20 ms of ticks
    assert box.cpu_excess(200.0, 100.0) == (
        "CPU limit 0.5 cores exceeded: 200 ms of CPU in a move of 100 ms (2.0 cores)")
    for bad in ("0", "-1", "many", "inf"):
        with pytest.raises(SandboxError, match=f"^limits.cpus={bad}: expected a number"):
            parse_sandbox({"limits.cpus": bad})


@pytest.mark.parametrize(("cores", "charged"), [
    ("0.5", True), pytest.param("4", False, marks=pytest.mark.slow)])  # whole games of 0.2 s
def test_an_engine_over_its_cpu_limit_loses_and_one_within_it_plays_on(tmp_path, cores,
                                                                      charged):
    # the burner spends 0.2 s of CPU on every move on all the cores it gets: over half a
    # core even on a loaded machine, never four on this one
    _done, games = _tournament(
        tmp_path, _engine("burner", "burn", tmp_path, f"limits.cpus={cores}",
                          extra="--burn 0.2"), _engine("good", "good", tmp_path))
    for white, _black, reason, detail, fault in games:
        if charged:
            assert reason == "resource limit" and fault == ("w" if white == "burner" else "b")
            assert detail.startswith("engine burner: CPU limit 0.5 cores exceeded: "), detail
        else:
            assert fault is None, detail


def test_a_process_cpu_reader_counts_all_its_threads_and_reads_none_once_reaped():
    import subprocess as sp

    from guti.referee.process.cpu_time import ProcessCpu

    # the CPU is burnt by a second thread while the main thread waits for it
    burn = ("import sys, threading\n"
            "t = threading.Thread(target=lambda: sum(range(10_000_000)))\n"
            "t.start(); t.join()\nprint('burnt', flush=True)\nsys.stdin.read()")
    child = sp.Popen([sys.executable, "-c", burn], stdin=sp.PIPE, stdout=sp.PIPE)
    reader = ProcessCpu(child.pid, lambda: child.returncode is not None)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"burnt\n"
        seconds = reader.seconds()
        with open(f"/proc/{child.pid}/stat", "rb") as fh:  # the kernel's count in ticks
            fields = fh.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        with open(f"/proc/{child.pid}/task/{child.pid}/schedstat") as fh:
            main_thread = int(fh.read().split()[0]) / 1e9
        assert seconds is not None
        assert abs(seconds - ticks / os.sysconf("SC_CLK_TCK")) < 0.05
        assert seconds > main_thread + 0.05  # the second thread's CPU is counted
        assert reader.peak_memory()
        child.communicate(b"")  # it ends and is reaped: its pid may be another's now
        assert reader.seconds() is None and reader.peak_memory() is None
    finally:
        reader.close()
        if child.poll() is None:
            child.kill()
            child.wait()


_OFF_MOVE_BLAMED = re.compile(r"engine spinner: \d+\.\d\d s of CPU used off its move in this "
                              r"game \(limits\.ponder=off allows 0\.2 s\); \d+\.\d\d s of it "
                              r"between its bestmove at ply 1 and its opponent's time fault at "
                              r"ply 2")
_OFF_MOVE = re.compile(r"engine spinner: (\d+\.\d\d) s of CPU used off its move in this game "
                       r"\(limits\.ponder=off allows 0\.2 s\); (\d+\.\d\d) s of it between its "
                       r"(?:readyok|bestmove at ply \d+) and its go for ply \d+")


@pytest.mark.slow  # six games, a second of CPU burnt in each of the spinner's four
def test_a_thread_spinning_after_bestmove_is_charged_off_its_move_alone(tmp_path):
    # the spinner leaves a thread spinning after its first bestmove; its opponent waits
    # (an event: a file) until that thread has spent 1 s of CPU after each of the
    # spinner's bestmoves, so the spinner has used that much off its move by its next go
    # (less what it spent before the referee read its bestmove, on a loaded machine)
    sync = tmp_path / "sync"
    sync.mkdir()
    ponder = ("limits.ponder=off", "limits.offmove_cpu=0.2")
    done, games = _tournament(
        tmp_path, _engine("spinner", "spin", tmp_path, *ponder, extra=f"--sync {sync} --burn 1"),
        _engine("good1", "good", tmp_path, *ponder, extra=f"--sync {sync}"),
        _engine("good2", "good", tmp_path, *ponder, extra=f"--sync {sync}"),
        flags=("-show-resources",))
    assert "limits: ponder off by the CPU time between bestmove and go" in done
    _check_contained(tmp_path, games, "spinner", "")
    for game in games:
        if "spinner" in game[:2]:
            total, window = map(float, _OFF_MOVE.fullmatch(game[3]).groups())  # type: ignore[union-attr]
            assert total >= window > 0.2, game[3]
    used = rows(tmp_path / "t.db", "select white, black, resources from games")
    for white, black, text in used:
        uses = json.loads(text)
        for side, name in (("w", white), ("b", black)):
            off = uses[side]["off_move_cpu_ms"]
            assert off > 200 if name == "spinner" else off <= 200, (name, uses)
            assert uses[side]["peak_memory"] > 0 and uses[side]["memory_from"] == "VmHWM"
    table = done[done.index("Resources"):]
    assert all(name in table for name in ("spinner", "good1", "good2"))


def test_what_each_engine_used_is_stored_exported_and_read_back(tmp_path):
    from guti.referee.game.record import GameRecord
    from guti.referee.game.resources import EngineUse
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.storage.export import game_json
    from guti.referee.storage.rows import resources_from_json, resources_json
    from guti.referee.storage.store import TournamentStore
    from guti.rules import Side

    use = EngineUse(cpu_ms=120.0, move_cpu_ms=100.0, moves=3, off_move_cpu_ms=10.0,
                    peak_memory=50 << 20, memory_from="cgroup")
    record = GameRecord("egara-guti", "A", "B", resources={Side.WHITE: use})
    assert resources_from_json(resources_json(record)) == {Side.WHITE: use}
    assert resources_from_json(None) == {} and resources_json(GameRecord("pretwa", "A", "B")) is None
    for bad in ("[1]", '{"w": 3}', '{"w": {"cpu_ms": "x"}}', '{"x": {}}', '{"w": {"moves": -1}}'):
        with pytest.raises(ValueError):
            resources_from_json(bad)
    assert game_json({"game_id": 0, "round": 1, "pair_id": 0}, record)["resources"] == {
        "white": use.to_json()}
    # a newer guti's keys are ignored; the integrity check names a column that is no object
    assert EngineUse.from_json({**use.to_json(), "later": 1}) == use
    path = tmp_path / "t.db"
    from guti.referee.game.engine_config import EngineConfig

    with TournamentStore(str(path)) as store:
        store.create({}, "fp", [EngineConfig("A", ["a"]), EngineConfig("B", ["b"])],
                     iter([ScheduledGame(0, 0, 1, 0, 1, None)]))
        store.record_game(ScheduledGame(0, 0, 1, 0, 1, None), record)
        assert list(store.resource_uses()) == [("A", "B", {Side.WHITE: use})]
        from guti.referee.web.data import report_data

        assert report_data(store)["resources"] == [
            ["A", "1", "50.0 MiB", "33.3 ms", "10.0 ms", "10.0 ms"]]
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE games SET resources = '[1]'")
    conn.close()
    from guti.referee.storage.errors import StoreError

    with pytest.raises(StoreError, match="resources is not a JSON object"):
        TournamentStore.checked(str(path))


def test_pondering_is_judged_on_the_game_s_total_off_its_move():
    box = parse_sandbox({"limits.ponder": "off", "limits.offmove_cpu": "0.5"})
    assert box.ponder_off and box.offmove_cpu == 0.5 and not box.active
    assert box.offmove_excess(500.0) is None
    assert box.offmove_excess(620.0) == (
        "0.62 s of CPU used off its move in this game (limits.ponder=off allows 0.5 s)")
    assert parse_sandbox({"limits.ponder": "on"}).offmove_excess(10_000.0) is None
    assert parse_sandbox({"limits.ponder": "off"}).offmove_cpu == sandbox.DEFAULT_OFFMOVE_CPU
    for bad in ("-1", "x", "inf"):
        with pytest.raises(SandboxError, match=f"^limits.offmove_cpu={bad}: expected"):
            parse_sandbox({"limits.offmove_cpu": bad})
    with pytest.raises(SandboxError, match="^limits.ponder=maybe: expected on or off"):
        parse_sandbox({"limits.ponder": "maybe"})


@pytest.mark.slow  # two guti commands, one with engines
def test_a_match_and_the_standings_show_what_each_engine_used(tmp_path):
    engine = ["cmd=" + sys.executable, f"args={HOSTILE} --mode good"]
    done = subprocess.run(
        [*GUTI, "match", "-engine", *engine, "name=one", "-engine", *engine, "name=two",
         "-each", "tc=30+0.1", "-games", "2", "-maxmoves", "5", "-show-resources"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("Resources"):]
    for name in ("one", "two"):
        assert re.search(rf"│ {name} +│ +2 │ +[\d.]+ MiB \* │ +[\d.]+ ms │", table), table
    # a database: an engine with a game measured, one without
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.resources import EngineUse
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.storage.store import TournamentStore
    from guti.rules import Side

    use = EngineUse(cpu_ms=120.0, move_cpu_ms=100.0, moves=3, off_move_cpu_ms=10.0,
                    peak_memory=50 << 20, memory_from="cgroup")
    job = ScheduledGame(0, 0, 1, 0, 1, None)
    with TournamentStore(str(tmp_path / "t.db")) as store:
        store.create({}, "fp", [EngineConfig("A", ["a"]), EngineConfig("B", ["b"])], iter([job]))
        store.record_game(job, GameRecord("egara-guti", "A", "B", resources={Side.WHITE: use}))
    shown = subprocess.run([*GUTI, "standings", str(tmp_path / "t.db"), "-show-resources"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"│ A +│ +1 │ +50\.0 MiB │ +33\.3 ms │ +10\.0 ms │ +10\.0 ms │", shown.stdout)
    assert re.search(r"│ B +│ +0 │ +- │", shown.stdout), shown.stdout


def test_cpu_is_split_on_and_off_the_engine_s_moves():
    from guti.referee.game.resources import CpuReadings, split_cpu

    exact = CpuReadings(start=1.0, ready=1.01,
                        moves=[(1, 1.01, 1.01, 1.05), (3, 1.35, 1.35, 1.35)])
    exact.asking, exact.go, exact.asked = True, 1.36, 1.36  # asked for ply 5 when it ended
    split = split_cpu(exact, 1.40)
    assert split.move_ms == {1: pytest.approx(40.0), 3: 0.0} and split.moves == 2
    assert split.on_ms == pytest.approx(40.0)
    assert split.off_ms == pytest.approx(310.0)  # a thread left spinning: off its move
    assert split.last_off_ms == pytest.approx(10.0) and split.last_off_from == 3
    # a move voided and asked again counts from its last go; its first go ends the stretch
    again = CpuReadings(ready=0.0, moves=[(1, 0.02, 0.05, 0.10)])
    split = split_cpu(again, 0.10)
    assert split.move_ms == {1: pytest.approx(50.0)} and split.off_ms == pytest.approx(20.0)
    # nothing known (off Linux): nothing claimed
    blind = CpuReadings(moves=[(1, None, None, None)])
    split = split_cpu(blind, None)
    assert not split.known and split.move_ms == {} and split.moves == 0


def test_a_game_s_cpu_is_written_per_move_and_per_engine_at_its_end():
    from guti.referee.game.resources import EngineUse, GameResources

    class Engine:
        sandbox = None
        name = "e"

        def __init__(self, readings):
            self.readings = iter(readings)

        def cpu_clock(self):
            return lambda: next(self.readings)

        def peak_memory(self):
            return 64 << 20, "VmHWM"

    # white: start, ready, go 1, bestmove 1, go 3, bestmove 3, end
    white = Engine([1.0, 1.0, 1.0, 1.0, 1.02, 1.05, 1.05])
    black = Engine([5.0, 5.0, 5.0, 5.03, 5.04])  # start, ready, go 2, bestmove 2, end
    cpu_ms = [None, None, None]
    use = GameResources({Side.WHITE: white, Side.BLACK: black}, cpu_ms)
    use.game_starts()
    use.ready(Side.WHITE)
    use.ready(Side.BLACK)
    for ply, side in ((1, Side.WHITE), (2, Side.BLACK), (3, Side.WHITE)):
        assert use.before_go(side, ply) is None
        use.after_move(side, ply)
    assert use.last_move_ms(Side.BLACK) == 30.0
    used = use.game_ends()
    assert cpu_ms == [0.0, 30.0, 30.0]  # the 20 ms between ply 1 and 3 were off its move
    assert used[Side.WHITE] == EngineUse(cpu_ms=50.0, move_cpu_ms=30.0, moves=2,
                                         off_move_cpu_ms=20.0, peak_memory=64 << 20,
                                         memory_from="VmHWM")
    assert used[Side.BLACK].off_move_cpu_ms == 10.0 and used[Side.BLACK].cpu_ms == 40.0


def test_an_opponent_kept_from_its_move_by_a_spinner_is_not_charged(tmp_path):
    """The spinner (``limits.ponder=off``) leaves a thread spinning after its first
    bestmove; its opponent waits until that thread has spent 0.5 s of CPU, and so runs
    over its 0.2 s: the time fault was the spinner's doing, and the spinner loses."""
    sync = tmp_path / "sync"
    sync.mkdir()
    done = subprocess.run(
        [*GUTI, "match",
         *_engine("spinner", "spin", tmp_path, "limits.ponder=off", "limits.offmove_cpu=0.2",
                  extra=f"--sync {sync} --burn 0.5"),
         *_engine("good", "good", tmp_path, extra=f"--sync {sync}"),
         "-each", "st=0.2", "-games", "1", "-pdnout", "g.pdn"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    game = parse_pdn((tmp_path / "g.pdn").read_text())[0]
    assert (game.tags["Result"], game.tags["Termination"]) == ("0-1", "resource limit"), game.tags
    assert _OFF_MOVE_BLAMED.search(game.notes[0]), game.notes


def test_a_cpu_reader_of_a_judged_engine_counts_the_children_it_has_reaped():
    import subprocess as sp

    from guti.referee.process.cpu_time import ProcessCpu

    fork = ("import os, sys\npid = os.fork()\nif pid == 0:\n    sum(range(10_000_000))\n"
            "    os._exit(0)\nos.waitpid(pid, 0)\nprint('reaped', flush=True)\nsys.stdin.read()")
    parent = sp.Popen([sys.executable, "-c", fork], stdin=sp.PIPE, stdout=sp.PIPE)
    alone = ProcessCpu(parent.pid, lambda: parent.returncode is not None)
    whole = ProcessCpu(parent.pid, lambda: parent.returncode is not None, children=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline() == b"reaped\n"
        with open(f"/proc/{parent.pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
        own, both = alone.seconds(), whole.seconds()
        assert own is not None and both is not None and children > 0.05
        assert both == pytest.approx(own + children, abs=0.01)
        parent.communicate(b"")
        assert whole.seconds() is None
    finally:
        alone.close()
        whole.close()
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.mark.slow  # two stalls of 2.2 s each, and the processes started again
def test_an_engine_whose_stall_was_charged_to_its_opponent_is_not_reused(tmp_path):
    """``good`` waits, in its search, until the spinner's thread has spent 3 s of CPU
    off its move: it stalls, and the spinner (``limits.ponder=off``) is charged. ``good``
    never answered that ``go``: its process is not kept for the next game, where its
    late ``bestmove`` would answer another position (here it would never answer at all,
    its wait outliving the spinner's process)."""
    sync = tmp_path / "sync"
    sync.mkdir()
    done = subprocess.run(
        [*GUTI, "match",
         *_engine("spinner", "spin", tmp_path, "limits.ponder=off", "limits.offmove_cpu=0.2",
                  extra=f"--sync {sync} --burn 3"),
         *_engine("good", "good", tmp_path, extra=f"--sync {sync}"),
         # the spinner moves first in both games (the same position to wait on)
         "-each", "st=0.2", "-games", "2", "-noswap", "-pdnout", "g.pdn"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    games = parse_pdn((tmp_path / "g.pdn").read_text())
    assert len(games) == 2
    for game in games:  # the spinner lost both, by its off-move CPU
        assert (game.tags["Result"], game.tags["Termination"]) == (
            "0-1", "resource limit"), (game.tags, game.notes)
    assert len((tmp_path / "good.pids").read_text().split()) == 4  # a process a game
