"""Tournaments played by Dask workers (``-cluster``), stored by the guti that started them.

The engines are the instant-reply test engine, so the time goes to Dask, not to play.
One group of tests starts a local cluster (``-cluster local:2``); the other starts real
``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, as a user would on
several machines, kills a worker mid-run and adds a worker that lacks an engine.
Every check reads what guti wrote (database, PDN, traffic log) with the tests' own
readers, and every game is replayed move by move by the rules core.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

import pytest

from guti.rules import Board
from tests.conftest import GUTI, ROOT, games_stored, parse_pdn, rows, survivors, wait_for

#: The cluster tier: every test here starts Dask schedulers and workers.
pytestmark = pytest.mark.cluster

pytest.importorskip("distributed", reason="-cluster needs the cluster extra (distributed)")

from guti.referee.execution.cluster import BATCH_MOST  # noqa: E402

FAULTY = ROOT / "tests" / "engines" / "faulty.py"
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def instant(name: str, pidfile: Path, more: Sequence[str] = ()) -> list[str]:
    args = shlex.join([str(FAULTY), "--mode", "good", "--pidfile", str(pidfile), *more])
    return ["-engine", f"cmd={PY}", f"args={args}", f"name={name}"]


def guti(*args: str, cwd: Path, timeout: float = 180,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env or ENV)


def replay_all(pdn: Path) -> int:
    """Replay every game of a PDN file with the rules core; the number of games."""
    games = parse_pdn(pdn.read_text())
    for game in games:
        fen = game.tags.get("FEN")
        board = Board("egara-guti") if fen is None else Board.from_fen("egara-guti", fen)
        for move in game.move_texts:
            board.push_str(move)  # raises on an illegal move
        if game.result in ("1-0", "0-1", "1/2-1/2") and not game.notes:
            assert board.outcome() is not None, "a game ended by the rules must be over"
    return len(games)


def check_tournament(tmp_path: Path, games: int) -> None:
    """Exactly the scheduled games are stored, once each, and agree with the PDN file."""
    db = tmp_path / "guti.db"
    scheduled = sorted(r[0] for r in rows(db, "SELECT game_id FROM schedule"))
    ids = [r[0] for r in rows(db, "SELECT game_id FROM games")]
    assert len(scheduled) == games
    assert sorted(ids) == scheduled  # every scheduled game, none twice
    assert replay_all(tmp_path / "t.pdn") == games


# --------------------------------------------------------------------- a local cluster


def test_local_cluster_from_toml_builds_per_worker_plays_stores_logs(tmp_path):
    pids = tmp_path / "pids"

    def engine(name: str) -> str:
        return f"""
[[engine]]
name = "{name}"
cmd = "{{python}}"
args = [{str(FAULTY)!r}, "--mode", "good", "--pidfile", {str(pids)!r}]
build = ["sh", "-c", "echo {name}:$PPID >> builds.txt"]
requires = ["sh"]
"""
    (tmp_path / "t.toml").write_text(f"""
cluster = "local:2"
games = 12
pdnout = "t.pdn"
log = "t.log"
quiet = true
[each]
tc = "10+0.1"
{engine("A")}
{engine("B")}
""")
    done = guti("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "12/12 games stored" in done.stdout
    check_tournament(tmp_path, 12)
    # Each engine's build ran once on each of the two workers, never in the client.
    builds = (tmp_path / "builds.txt").read_text().split()
    workers = {b.split(":")[1] for b in builds}
    assert len(builds) == len(set(builds)) == 4 and len(workers) == 2
    log = (tmp_path / "t.log").read_text()
    workers = {line.split(" on ")[-1] for line in log.splitlines() if "(black) on tcp://" in line}
    assert len(workers) == 2  # both workers played, each game's traffic came back with it
    assert log.count("> go ") == sum(len(g.moves) for g in parse_pdn((tmp_path / "t.pdn")
                                                                       .read_text()))
    # Warm engines: each worker started each engine once (4 processes), not once per game.
    assert len(pids.read_text().split()) // 2 == 4
    assert survivors(pids) == []


def test_ctrl_c_at_the_terminal_stops_a_local_cluster_run_gracefully_and_it_resumes(tmp_path):
    pids = tmp_path / "pids"
    argv = [*GUTI, "tournament", *instant("A", pids), *instant("B", pids), "-each", "tc=60+1",
            "-games", "60", "-cluster", "local:2", "-pdnout", "t.pdn", "-quiet"]
    # Its own session, so Ctrl-C can be sent as a terminal sends it: to the whole
    # foreground group, guti and its local workers alike.
    proc = subprocess.Popen(argv, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: games_stored(tmp_path / "guti.db") >= 3, "3 games stored", 90)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "stopping: no new games" in out
    first = games_stored(tmp_path / "guti.db")
    assert 3 <= first < 60 and replay_all(tmp_path / "t.pdn") == first
    again = guti(*argv[len(GUTI):], "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"resuming: {first}/60" in again.stdout
    check_tournament(tmp_path, 60)
    assert survivors(pids) == []


def game_spans(log: str) -> list[tuple[float, float]]:
    """Each game's first and last traffic line on the worker that played it (a ``-log``
    block: the note that opens it, the engines' lines, the note with the result)."""
    spans: list[tuple[float, float]] = []
    stamps: list[float] = []
    for line in log.splitlines():
        stamp = datetime.fromisoformat(line.split(" ", 1)[0]).timestamp()
        if "] # game " in line and " vs " in line:
            stamps = [stamp]
        elif "] # game " in line:
            spans.append((stamps[0], stamps[-1]))
            stamps = []
        elif stamps:
            stamps.append(stamp)
    return spans


def most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    at_once = most = 0
    for _, step in events:
        at_once += step
        most = max(most, at_once)
    return most


def test_concurrency_with_a_cluster_is_games_at_once_on_each_worker(tmp_path):
    pids = tmp_path / "pids"
    thinking = ["--think", "0.02"]  # games of a second or so, long enough to overlap
    done = guti("tournament", *instant("A", pids, thinking), *instant("B", pids, thinking),
                "-each", "tc=10+0.1", "-games", "4", "-cluster", "local:1", "-concurrency",
                "2", "-pdnout", "t.pdn", "-log", "t.log", "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check_tournament(tmp_path, 4)
    # The one worker has one thread, yet it played two games at once, never three; and
    # so each engine's warm pool there has at most two processes.
    spans = game_spans((tmp_path / "t.log").read_text())
    assert len(spans) == 4 and most_at_once(spans) == 2
    assert len(pids.read_text().split()) // 2 <= 4
    assert survivors(pids) == []


def test_an_sprt_decision_on_a_local_cluster_starts_no_more_games(tmp_path):
    pids = tmp_path / "pids"
    loser = ["-engine", f"cmd={PY}", "name=B",
             f"args={shlex.join([str(FAULTY), '--mode', 'illegal', '--pidfile', str(pids)])}"]
    done = guti("tournament", *instant("A", pids), *loser, "-each", "tc=10+0.1",
                "-games", "200", "-cluster", "local:2", "-sprt", "elo0=0", "elo1=50",
                "-pdnout", "t.pdn", "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SPRT: H1 accepted" in done.stdout
    ids = [r[0] for r in rows(tmp_path / "guti.db", "SELECT game_id FROM games")]
    # B loses every game (an illegal first move), so H1 is accepted after the same number
    # of games every time (34, as the local executor at -concurrency 1 shows). Then no
    # game is handed out: at most the batches in flight (two per worker thread) are
    # played, each as far as the workers' stop lets it (how far depends on the machine's
    # speed; tests/test_worker_stop.py shows the stop itself).
    in_flight = 2 * 2 * BATCH_MOST
    assert 34 <= len(ids) < 34 + in_flight and len(set(ids)) == len(ids)
    assert replay_all(tmp_path / "t.pdn") == len(ids)
    assert survivors(pids) == []


def test_match_on_a_local_cluster(tmp_path):
    pids = tmp_path / "pids"
    done = guti("match", *instant("A", pids), *instant("B", pids), "-each", "tc=10+0.1",
                "-games", "4", "-cluster", "local:1", "-pdnout", "t.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Game 4/4" in done.stdout and "4 games" in done.stdout
    assert replay_all(tmp_path / "t.pdn") == 4
    assert survivors(pids) == []


def test_without_cluster_dask_is_never_imported(tmp_path):
    pids = tmp_path / "pids"
    code = ("import sys; from guti.cli import main; rc = main(sys.argv[1:]); "
            "print('DASK', sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'distributed'))); sys.exit(rc)")
    done = subprocess.run(
        [PY, "-c", code, "tournament", *instant("A", pids), *instant("B", pids),
         "-each", "tc=10+0.1", "-games", "2", "-quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=ENV)
    assert done.returncode == 0, done.stderr
    assert "DASK []" in done.stdout


@pytest.mark.parametrize("value", ["local:0", "local:65", "tcp://nowhere", "cluster9",
                                   "ucx://127.0.0.1:1", "inproc://x:1", "tcp://127.0.0.1:0",
                                   "tcp://127.0.0.1:99999"])
def test_a_bad_cluster_address_is_one_line(tmp_path, value):
    pids = tmp_path / "pids"
    done = guti("tournament", *instant("A", pids), *instant("B", pids), "-each", "tc=1+0.1",
                "-cluster", value, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "-cluster" in done.stderr


def test_a_local_cluster_takes_no_fixed_port_and_says_nothing_of_one_in_use(tmp_path):
    """Dask's default port for its scheduler's HTTP server, 8787, held by someone else
    (another run, another program): the run plays, and stderr stays empty."""
    pids = tmp_path / "pids"
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            held.bind(("127.0.0.1", 8787))
        except OSError:
            pytest.skip("port 8787 is taken here already")
        held.listen()
        done = guti("tournament", *instant("A", pids), *instant("B", pids), "-each",
                    "tc=1+0.1", "-games", "2", "-cluster", "local:1", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_scheduler_that_never_answers_is_one_line_within_the_connect_timeout(tmp_path):
    """A socket that listens and never speaks: Dask's client would wait for its handshake
    for ever; guti gives up after its connect timeout, in one line, with no warning of a
    half-made client after it."""
    from guti.referee.execution.cluster_connect import CONNECT_TIMEOUT

    pids = tmp_path / "pids"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        done = guti("tournament", *instant("A", pids), *instant("B", pids), "-each",
                    "tc=1+0.1", "-cluster", address, cwd=tmp_path,
                    timeout=CONNECT_TIMEOUT + 60)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"guti tournament: cannot reach the Dask scheduler at {address}: "
                           f"no answer within {CONNECT_TIMEOUT:g} s\n")


def test_a_scheduler_address_where_another_program_answers_is_one_line(tmp_path):
    """What listens there greets with its own protocol (an SSH banner): Dask reads it as a
    frame's length and fails (a MemoryError); guti says so in one line, exit 2 (it was a
    traceback)."""
    import threading

    pids = tmp_path / "pids"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        conns: list[socket.socket] = []

        def greet() -> None:
            with contextlib.suppress(OSError):
                while True:
                    conn, _ = server.accept()
                    conns.append(conn)
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n" * 4)

        threading.Thread(target=greet, daemon=True).start()
        done = guti("tournament", *instant("A", pids), *instant("B", pids), "-each",
                    "tc=1+0.1", "-cluster", address, cwd=tmp_path)
        for conn in conns:
            conn.close()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"guti tournament: -cluster {address}: what answers there "
                                  "is not a Dask scheduler"), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


# --------------------------------------------------------------------- real dask processes


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections while the block runs: bound by a
    socket that does not listen, so no other process can take it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def dask_command() -> list[str]:
    script = Path(PY).parent / "dask"
    return [str(script)] if script.exists() else [PY, "-m", "dask"]


def start_scheduler(folder: Path, env: dict[str, str] = ENV,
                    protocol: str = "tcp") -> tuple[str, subprocess.Popen]:
    """A ``dask scheduler`` on 127.0.0.1 in its own session, on a port the system picks:
    its address and process, returned once it listens. It writes its address to a
    scheduler file in ``folder`` only when it listens, so a run started after this never
    meets a scheduler not there yet, nor a port another process took meanwhile."""
    file = folder / f"scheduler-{protocol}.json"
    file.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [*dask_command(), "scheduler", "--protocol", protocol, "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    address = ""

    def listening() -> bool:
        nonlocal address
        if proc.poll() is not None:
            raise AssertionError(f"dask scheduler exited with {proc.returncode}")
        try:
            address = json.loads(file.read_text())["address"]
        except (OSError, ValueError, KeyError):  # not written yet, or half written
            return False
        return True

    try:
        wait_for(listening, "dask scheduler listening (its scheduler file)", 60)
    except BaseException:
        stop(proc)
        raise
    return address, proc


def start_worker(address: str, nworkers: int, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*dask_command(), "worker", address, "--nworkers", str(nworkers), "--nthreads", "1",
         "--host", "127.0.0.1", "--no-dashboard"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """End a dask process and everything it started (its own session)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def worker_pids(address: str) -> dict[str, int]:
    from distributed import Client

    with Client(address, timeout=30) as client:
        return client.run(os.getpid)


def wait_for_workers(address: str, count: int) -> None:
    wait_for(lambda: len(worker_pids(address)) >= count, f"{count} dask workers", 90)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real ``dask scheduler`` and ``dask worker --nworkers 2`` on 127.0.0.1; the
    worker's PATH holds ``guti-test-engine`` (the instant engine), guti's does not."""
    folder = tmp_path_factory.mktemp("dask")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    engine = bin_dir / "guti-test-engine"
    engine.write_text(f'#!/bin/sh\nexec {shlex.quote(PY)} {shlex.quote(str(FAULTY))} '
                      f'--mode good --pidfile {shlex.quote(str(folder / "pids"))} "$@"\n')
    engine.chmod(0o755)
    address, scheduler = start_scheduler(folder)
    worker = start_worker(address, 2, {**ENV, "PATH": f"{bin_dir}:{ENV['PATH']}"})
    try:
        wait_for_workers(address, 2)
        yield address, folder
    finally:
        stop(worker)
        stop(scheduler)


def engine_on_path(name: str) -> list[str]:
    return ["-engine", "cmd=guti-test-engine", f"name={name}"]


def test_real_workers_play_40_games_and_a_killed_worker_loses_none(tmp_path, dask_cluster):
    address, folder = dask_cluster
    pids = folder / "pids"
    proc = subprocess.Popen(
        [*GUTI, "tournament", *engine_on_path("A"), *engine_on_path("B"), "-each", "tc=10+0.1",
         "-games", "40", "-cluster", address, "-pdnout", "t.pdn", "-quiet"],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        db = tmp_path / "guti.db"
        wait_for(lambda: games_stored(db) >= 1, "the first game stored", 90)
        victim = sorted(worker_pids(address).values())[0]
        os.kill(victim, signal.SIGKILL)  # a worker process dies mid-run (mid-game)
        killed_at = games_stored(db)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert killed_at < 40, "the tournament ended before a worker could be killed"
    assert "40/40 games stored" in out
    check_tournament(tmp_path, 40)
    # The killed worker's engines saw their stdin close and left; the others were quit.
    try:
        wait_for(lambda: survivors(pids) == [], "every engine process gone", 30)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {survivors(pids)}") from None
    wait_for_workers(address, 2)  # the nanny has started a new worker in its place


def test_a_worker_without_an_engine_is_named_and_left_out_of_the_run(tmp_path, dask_cluster):
    address, _folder = dask_cluster
    lacking = start_worker(address, 1, ENV)  # no guti-test-engine on this worker's PATH
    try:
        wait_for_workers(address, 3)
        done = guti("tournament", *engine_on_path("A"), *engine_on_path("B"), "-each",
                    "tc=10+0.1", "-games", "4", "-cluster", address, "-pdnout", "t.pdn",
                    cwd=tmp_path)
        # it is left out of this run only: guti shut no worker down
        wait_for_workers(address, 3)
    finally:
        stop(lacking)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "worker tcp://127.0.0.1:" in lines[0] and "guti-test-engine" in lines[0]
    assert "No such file" in lines[0] and "left out of this run" in lines[0]
    check_tournament(tmp_path, 4)  # the other workers played every game


def two_games_on(address: str) -> str:
    """A TOML file's start: two games at 10+0.1 on the cluster at ``address``."""
    return f'cluster = "{address}"\ngames = 2\n[each]\ntc = "10+0.1"\n'


def test_a_worker_builds_an_engine_again_for_each_run(tmp_path, dask_cluster):
    """As a machine does: a build's result is the run's, not the worker's for life (a
    fixed source would otherwise keep its old failure, a deleted program its success)."""
    address, _folder = dask_cluster
    (tmp_path / "t.toml").write_text(two_games_on(address) + f"""
[[engine]]
name = "A"
cmd = "{{python}}"
args = [{str(FAULTY)!r}, "--mode", "good"]
build = ["sh", "-c", "echo built >> {tmp_path / 'builds.txt'}"]
[[engine]]
name = "B"
cmd = "{{python}}"
args = [{str(FAULTY)!r}, "--mode", "good"]
""")
    counts = []
    for db in ("a.db", "b.db"):
        done = guti("tournament", "t.toml", "-db", db, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        counts.append(len((tmp_path / "builds.txt").read_text().split()))
    workers = counts[0]
    assert workers >= 1 and counts[1] == 2 * workers  # once per worker, in each run


def test_a_requirement_missing_on_the_workers_is_named_and_refused(tmp_path, dask_cluster):
    address, _folder = dask_cluster
    here = tmp_path / "bin"  # on this guti's PATH only, not on the workers'
    here.mkdir()
    (here / "guti-client-only-tool").write_text("#!/bin/sh\n")
    (here / "guti-client-only-tool").chmod(0o755)
    (tmp_path / "t.toml").write_text(two_games_on(address) + """
[[engine]]
name = "A"
cmd = "guti-test-engine"
requires = ["sh"]
[[engine]]
name = "B"
cmd = "guti-test-engine"
requires = ["sh", "guti-client-only-tool"]
""")
    done = guti("tournament", "t.toml", cwd=tmp_path,
                env={**ENV, "PATH": f"{here}:{ENV['PATH']}"})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "worker tcp://127.0.0.1:" in lines[0]
    assert "engine B requires guti-client-only-tool" in lines[0]
    assert games_stored(tmp_path / "guti.db") == 0


def test_a_requirement_only_the_workers_have_is_theirs_to_see_to(tmp_path, dask_cluster):
    address, _folder = dask_cluster
    # guti-test-engine is on the workers' PATH, not on this guti's: the engines run there
    (tmp_path / "t.toml").write_text(f"""
cluster = "{address}"
games = 2
pdnout = "t.pdn"
[each]
tc = "10+0.1"
[[engine]]
name = "A"
cmd = "guti-test-engine"
requires = ["guti-test-engine"]
[[engine]]
name = "B"
cmd = "guti-test-engine"
requires = ["guti-test-engine"]
""")
    done = guti("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skipping" not in done.stdout
    check_tournament(tmp_path, 2)


def test_cmd_is_looked_up_on_the_workers_path_not_the_clients(tmp_path, dask_cluster):
    address, _folder = dask_cluster
    here = tmp_path / "bin"  # this guti's guti-test-engine is broken; the workers' plays
    here.mkdir()
    (here / "guti-test-engine").write_text("#!/bin/sh\nexit 1\n")
    (here / "guti-test-engine").chmod(0o755)
    done = guti("tournament", *engine_on_path("A"), *engine_on_path("B"), "-each",
                "tc=10+0.1", "-games", "2", "-cluster", address, "-pdnout", "t.pdn",
                cwd=tmp_path, env={**ENV, "PATH": f"{here}:{ENV['PATH']}"})
    assert done.returncode == 0, done.stderr
    check_tournament(tmp_path, 2)


def test_a_killed_client_leaves_no_game_running_on_the_workers(tmp_path, dask_cluster):
    address, _folder = dask_cluster
    pids, mark = tmp_path / "pids", tmp_path / "mark"
    hang = ["-engine", "cmd=guti-test-engine", "name=H",
            f"args=--mode hang --at 3 --mark {mark} --pidfile {pids}"]
    proc = subprocess.Popen(
        [*GUTI, "tournament", *engine_on_path("A"), *hang, "-each", "tc=60+1", "-games", "2",
         "-cluster", address, "-quiet"],
        cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(mark.exists, "a game in progress (the engine hangs on its 3rd go)", 90)
        os.kill(proc.pid, signal.SIGKILL)  # the client goes; its game would run 61 s more
    finally:
        proc.wait(30)
    # The scheduler drops the client's tasks and the workers cancel the game (its
    # engines are killed), long before the time control would have ended it.
    wait_for(lambda: survivors(pids) == [], "the hanging engine killed", 30)
    assert games_stored(tmp_path / "guti.db") == 0
