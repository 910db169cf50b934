"""``-cluster`` on clusters that change under it, as a lab's real ones do.

Real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, started by each test:
every worker killed mid-run and replaced by one at new addresses, a time with no worker
at all (told, waited out, or stopped with one Ctrl-C), two tournaments on one scheduler,
a worker running other guti code, signals in the first instant of a local cluster run,
and addresses that cannot work. Every check reads what guti wrote with the tests' own
readers; every game is replayed by the rules core (``check_tournament``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, games_stored, parse_pdn, rows, survivors, wait_for
from tests.test_cluster import (
    ENV,
    FAULTY,
    PY,
    check_tournament,
    dask_command,
    instant,
    refusing_port,
    replay_all,
    start_scheduler,
    stop,
    worker_pids,
)

pytest.importorskip("distributed", reason="-cluster needs the cluster extra (distributed)")

pytestmark = pytest.mark.cluster

THINK = ["--think", "0.01"]  # games of about a second: a run lasts long enough to disturb


def start_worker(address: str, name: str, env: dict[str, str] = ENV,
                 nworkers: int = 2) -> subprocess.Popen:
    """A ``dask worker`` (its nanny and ``nworkers`` worker processes) in its own session."""
    return subprocess.Popen(
        [*dask_command(), "worker", address, "--nworkers", str(nworkers), "--nthreads", "1",
         "--host", "127.0.0.1", "--no-dashboard", "--name", name],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def kill_session(proc: subprocess.Popen) -> None:
    """SIGKILL a dask process and everything it started: the machine is gone."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def workers_named(address: str, prefix: str, count: int, security: object = None) -> None:
    """Wait until ``count`` workers whose name starts with ``prefix`` are in the cluster
    (``security``: Dask's ``Security`` of a TLS cluster)."""
    from distributed import Client

    def there() -> bool:
        with Client(address, timeout=30, security=security) as client:
            names = [w["name"] for w in client.scheduler_info(n_workers=-1)["workers"].values()]
        return sum(str(n).startswith(prefix) for n in names) >= count

    wait_for(there, f"{count} workers named {prefix}*", 90)


@pytest.fixture
def scheduler_process(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """A ``dask scheduler`` of its own for one test: its address and process."""
    address, proc = start_scheduler(tmp_path)
    try:
        yield address, proc
    finally:
        stop(proc)


@pytest.fixture
def scheduler(scheduler_process: tuple[str, subprocess.Popen]) -> str:
    """The address of a ``dask scheduler`` of the test's own."""
    return scheduler_process[0]


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen]]:
    """The worker processes a test starts; each stopped at the end."""
    started: list[subprocess.Popen] = []
    try:
        yield started
    finally:
        for proc in started:
            stop(proc)


def start_run(tmp_path: Path, address: str, games: int, *more: str) -> subprocess.Popen:
    """``guti tournament`` of ``games`` on the cluster, its stderr in ``err.txt``."""
    pids = tmp_path / "pids"
    err = (tmp_path / "err.txt").open("w")
    return subprocess.Popen(
        [*GUTI, "tournament", *instant("A", pids, THINK), *instant("B", pids, THINK),
         "-each", "tc=10+0.1", "-games", str(games), "-cluster", address, "-pdnout",
         "t.pdn", "-quiet", *more],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=err, text=True,
        start_new_session=True)


@contextlib.contextmanager
def killed_at_exit(run: subprocess.Popen) -> Iterator[None]:
    """The block; then the run's session SIGKILLed if it still runs (a test that failed
    midway leaves no guti behind)."""
    try:
        yield
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def said(tmp_path: Path) -> str:
    return (tmp_path / "err.txt").read_text()


def finish(proc: subprocess.Popen, timeout: float = 240) -> str:
    with killed_at_exit(proc):
        out, _ = proc.communicate(timeout=timeout)
    return out


def test_every_worker_replaced_mid_run_loses_no_game_and_the_wait_is_told(
        tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "first"))
    workers_named(scheduler, "first", 2)
    run = start_run(tmp_path, scheduler, 30, "-log", "t.log")
    with killed_at_exit(run):
        db = tmp_path / "guti.db"
        wait_for(lambda: games_stored(db) >= 3, "3 games stored", 120)
        kill_session(workers[0])  # the machine goes: no worker at all
        wait_for(lambda: "no worker for" in said(tmp_path), "the wait told", 60)
        assert games_stored(db) < 30
        workers.append(start_worker(scheduler, "second"))  # new addresses, new names
        out = finish(run)
    assert run.returncode == 0, said(tmp_path)
    assert "30/30 games stored" in out
    assert f"cluster {scheduler}, db" in out  # the header names the cluster
    assert "2 worker(s) playing, concurrency 2" in out  # the workers' threads
    check_tournament(tmp_path, 30)
    log = (tmp_path / "t.log").read_text()
    players = {line.split(" on ")[-1] for line in log.splitlines() if "(black) on " in line}
    # the database and the log name the workers by --name, not address
    stored = {r[0] for r in rows(tmp_path / "guti.db", "SELECT worker FROM games")}
    assert stored == players
    assert any(p.startswith("first-") for p in players)
    assert any(p.startswith("second-") for p in players)
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 30)


def test_one_ctrl_c_stops_a_run_waiting_for_a_worker_and_resume_finishes(
        tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "first"))
    workers_named(scheduler, "first", 2)
    run = start_run(tmp_path, scheduler, 30)
    db = tmp_path / "guti.db"
    with killed_at_exit(run):
        wait_for(lambda: games_stored(db) >= 2, "2 games stored", 120)
        kill_session(workers[0])
        wait_for(lambda: "no worker for" in said(tmp_path), "the wait told", 60)
        os.killpg(run.pid, signal.SIGINT)  # one Ctrl-C
        finish(run, timeout=60)
    assert run.returncode == 130, said(tmp_path)
    first = games_stored(db)
    assert 2 <= first < 30
    workers.append(start_worker(scheduler, "second"))
    workers_named(scheduler, "second", 2)
    again = start_run(tmp_path, scheduler, 30, "-resume")
    out = finish(again)
    assert again.returncode == 0, said(tmp_path)
    assert f"resuming: {first}/30" in out
    check_tournament(tmp_path, 30)


def test_two_tournaments_on_one_scheduler_both_finish(tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "shared"))
    workers_named(scheduler, "shared", 2)
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    runs = [start_run(one, scheduler, 16), start_run(two, scheduler, 16)]
    outs = [finish(run) for run in runs]
    for folder, run, out in zip((one, two), runs, outs, strict=True):
        assert run.returncode == 0, said(folder)
        assert "16/16 games stored" in out
        check_tournament(folder, 16)
        wait_for(lambda f=folder: survivors(f / "pids") == [], "engines gone", 30)
    # guti retired no worker: both are still there
    assert len(worker_pids(scheduler)) == 2


def other_guti(tmp_path: Path) -> dict[str, str]:
    """The environment of a worker that runs a copy of guti with one line changed."""
    copy = tmp_path / "other"
    shutil.copytree(ROOT / "guti", copy / "guti",
                    ignore=shutil.ignore_patterns("__pycache__"))
    rules = copy / "guti" / "rules" / "__init__.py"
    rules.write_text(rules.read_text() + "\n# another checkout\n")
    return {**ENV, "PYTHONPATH": str(copy)}


def test_a_worker_running_other_guti_code_is_refused_in_one_line(
        tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "stale", other_guti(tmp_path), nworkers=1))
    workers_named(scheduler, "stale", 1)
    run = start_run(tmp_path, scheduler, 4)
    finish(run)
    assert run.returncode == 2
    lines = said(tmp_path).strip().splitlines()
    assert len(lines) == 1, lines
    assert "worker stale" in lines[0] and "other guti code" in lines[0]
    assert games_stored(tmp_path / "guti.db") == 0


def test_a_worker_with_other_code_joining_mid_run_is_left_out(tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "good", nworkers=1))
    workers_named(scheduler, "good", 1)
    run = start_run(tmp_path, scheduler, 40)
    with killed_at_exit(run):
        wait_for(lambda: games_stored(tmp_path / "guti.db") >= 1, "a game stored", 120)
        workers.append(start_worker(scheduler, "stale", other_guti(tmp_path), nworkers=1))
        wait_for(lambda: "left out of this run" in said(tmp_path), "the worker refused", 90)
        out = finish(run)
    assert run.returncode == 0, said(tmp_path)
    assert "40/40 games stored" in out
    refusals = [line for line in said(tmp_path).splitlines() if "left out" in line]
    assert len(refusals) == 1 and "worker stale" in refusals[0]
    assert "other guti code" in refusals[0]
    check_tournament(tmp_path, 40)


def test_a_lost_scheduler_is_one_line_and_resume_continues(
        tmp_path, scheduler_process, workers):
    address, scheduler = scheduler_process
    workers.append(start_worker(address, "w"))
    workers_named(address, "w", 2)
    run = start_run(tmp_path, address, 30)
    with killed_at_exit(run):
        wait_for(lambda: games_stored(tmp_path / "guti.db") >= 2, "2 games stored", 120)
        kill_session(scheduler)  # the scheduler's machine goes
        finish(run, timeout=120)
    assert run.returncode == 2
    lines = said(tmp_path).strip().splitlines()
    assert len(lines) == 1, lines
    assert "lost the Dask scheduler" in lines[0] and "-resume continues" in lines[0]
    stored = games_stored(tmp_path / "guti.db")
    assert 2 <= stored < 30
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 60)


def spawning_workers(pid: int) -> bool:
    """Whether process ``pid`` has a child that is a Dask worker being spawned (a
    ``multiprocessing`` spawn child: the local cluster is starting)."""
    children: list[str] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):  # each thread's children
        try:
            children += (task / "children").read_text().split()
        except OSError:
            continue
    for child in children:
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


@pytest.mark.signals
@pytest.mark.parametrize("moment", ["begun", "spawning"])
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_first_instant_of_a_local_cluster_run_stops_it(tmp_path, signo,
                                                                        moment):
    pids = tmp_path / "pids"
    argv = [*GUTI, "tournament", *instant("A", pids), *instant("B", pids), "-each",
            "tc=10+0.1", "-games", "20", "-cluster", "local:2", "-pdnout", "t.pdn", "-quiet"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # the database exists: the run has begun, its local cluster is about to start;
        # or the cluster's worker processes are being spawned
        if moment == "begun":
            wait_for((tmp_path / "guti.db").exists, "the run begun", 60)
        else:
            wait_for(lambda: spawning_workers(proc.pid), "workers being spawned", 60)
        os.killpg(proc.pid, signo)  # as a terminal (SIGINT) or a batch system sends it
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    if moment == "begun":  # guti alone said what happened: one line, no traceback
        assert "Traceback" not in err and "Error" not in err, err
    # (while workers are spawned they share guti's stderr, and a signal to the whole
    # group reaches them mid-start, where Python itself may say so: not guti's words)
    stored = games_stored(tmp_path / "guti.db")
    assert stored < 20
    wait_for(lambda: survivors(pids) == [], "every engine process gone", 30)
    again = subprocess.run([*argv, "-resume"], cwd=tmp_path, env=ENV, capture_output=True,
                           text=True, timeout=240)
    assert again.returncode == 0, again.stderr
    check_tournament(tmp_path, 20)  # nothing stored twice


@pytest.mark.parametrize("address, expected", [
    ("tcp://127.0.0.1:{port}", "connection refused"),
    ("tls://127.0.0.1:{port}", "DASK_DISTRIBUTED__COMM__TLS__CA_FILE"),
])
def test_an_address_that_cannot_work_is_one_line(tmp_path, address, expected):
    pids = tmp_path / "pids"
    with refusing_port() as port:
        done = subprocess.run(
            [*GUTI, "tournament", *instant("A", pids), *instant("B", pids), "-each",
             "tc=1+0.1", "-cluster", address.format(port=port)],
            cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr


def self_signed(folder: Path) -> dict[str, str]:
    """A self-signed certificate for 127.0.0.1, and Dask's settings that use it for the
    scheduler, the workers and the client (what the clusters guide shows)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    tls = "DASK_DISTRIBUTED__COMM__TLS__"
    return {f"{tls}CA_FILE": str(cert), f"{tls}REQUIRE_ENCRYPTION": "True",
            **{f"{tls}{role}__{part.upper()}": str(path) for role in ("SCHEDULER", "WORKER",
               "CLIENT") for part, path in (("cert", cert), ("key", key))}}


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificate with openssl")
def test_a_tls_cluster_plays_with_dasks_own_settings(tmp_path, workers):
    env = {**ENV, **self_signed(tmp_path)}
    address, scheduler = start_scheduler(tmp_path, env, "tls")
    workers.append(scheduler)
    workers.append(start_worker(address, "secure", env, nworkers=1))
    from distributed.security import Security

    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    workers_named(address, "secure", 1, Security(tls_ca_file=cert, tls_client_cert=cert,
                                                 tls_client_key=key, require_encryption=True))
    pids = tmp_path / "pids"
    done = subprocess.run(
        [*GUTI, "tournament", *instant("A", pids), *instant("B", pids), "-each", "tc=10+0.1",
         "-games", "2", "-cluster", address, "-pdnout", "t.pdn"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    check_tournament(tmp_path, 2)


def test_an_engine_folder_is_sent_to_the_workers_and_built_there(tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "bare", nworkers=1))
    workers_named(scheduler, "bare", 1)
    folder = tmp_path / "eng"
    folder.mkdir()
    where, pids = tmp_path / "where.txt", tmp_path / "pids"
    script = folder / "run.sh"
    script.write_text(f"""#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
test -f "$here/built.txt" || exit 1
echo "$here" >> {where}
exec {shlex.quote(PY)} {shlex.quote(str(FAULTY))} --mode good --pidfile {pids}
""")
    script.chmod(0o755)
    engines = "".join(f"""
[[engine]]
name = "{name}"
upload = "eng"
dir = "eng"
cmd = "./run.sh"
build = ["sh", "-c", "echo built > built.txt"]
""" for name in "AB")
    (tmp_path / "t.toml").write_text(f"""
cluster = "{scheduler}"
games = 4
pdnout = "t.pdn"
[each]
tc = "10+0.1"
{engines}""")
    done = subprocess.run([*GUTI, "tournament", "t.toml"], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    check_tournament(tmp_path, 4)
    # the engines ran from the worker's copy, built there; the client's folder was not
    copies = set(where.read_text().split())
    assert len(copies) == 1 and "guti-uploads" in copies.pop()
    assert not (folder / "built.txt").exists()


def test_a_tuned_engines_folder_is_sent_to_the_workers(tmp_path, scheduler, workers):
    """``guti tune -cluster`` with ``upload=``: every iteration's engines (new values, a
    run of their own on the workers) start from the worker's copy of the folder."""
    workers.append(start_worker(scheduler, "bare", nworkers=1))
    workers_named(scheduler, "bare", 1)
    folder, where = tmp_path / "eng", tmp_path / "where.txt"
    folder.mkdir()
    script = folder / "run.sh"
    peaked = ROOT / "tests" / "engines" / "peaked.py"
    script.write_text(f"""#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
echo "$here" >> {where}
exec {shlex.quote(PY)} {shlex.quote(str(peaked))}
""")
    script.chmod(0o755)
    (tmp_path / "tune.toml").write_text(f"""
cluster = "{scheduler}"
iterations = 2
maxmoves = 20
[[engine]]
name = "peaked"
upload = "eng"
dir = "eng"
cmd = "./run.sh"
[each]
depth = 1
[param]
X = "20,0,200,10,0.1"
""")
    done = subprocess.run([*GUTI, "tune", "tune.toml", "-db", "t.db"], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "values after 2/2 iterations" in done.stdout, done.stdout
    # the header names where the games are played, not a concurrency the run does not use
    header = done.stdout.splitlines()[0]
    assert f"cluster {scheduler}" in header and "concurrency" not in header, header
    assert games_stored(tmp_path / "t.db") == 4
    # the client reads the engine's options from its own folder, once; every engine the
    # worker started (its check's and each iteration's) ran from its copy
    started = where.read_text().split()
    assert started.count(str(folder)) == 1, started
    copies = [path for path in started if path != str(folder)]
    assert len(copies) >= 3 and all("guti-uploads" in path for path in copies), started


def guti_plugins(address: str) -> list[str]:
    """The guti runs' worker plugins the scheduler holds (one per run)."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        return client.run_on_scheduler(
            lambda dask_scheduler: [n for n in dask_scheduler.worker_plugins
                                    if str(n).startswith("guti-")])


def test_a_killed_clients_run_starts_nothing_on_a_worker_that_joins_later(
        tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "early", nworkers=1))
    workers_named(scheduler, "early", 1)
    pids, mark = tmp_path / "pids", tmp_path / "mark"
    hang = instant("H", pids, ["--mode", "hang", "--at", "3", "--mark", str(mark)])
    proc = subprocess.Popen(
        [*GUTI, "tournament", *instant("A", pids), *hang, "-each", "tc=60+1", "-games", "2",
         "-cluster", scheduler, "-quiet"],
        cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(mark.exists, "a game in progress", 90)
        proc.kill()  # the client goes; its plugin stays registered on the scheduler
    finally:
        proc.wait(30)
    wait_for(lambda: survivors(pids) == [], "the run's engines gone", 60)
    started = len(pids.read_text().split())
    assert len(guti_plugins(scheduler)) == 1
    workers.append(start_worker(scheduler, "late", nworkers=1))
    # the late worker sees the run's client is gone: it takes the plugin off the
    # scheduler, and starts none of the dead run's engines
    wait_for(lambda: guti_plugins(scheduler) == [], "the dead run's plugin removed", 90)
    assert len(pids.read_text().split()) == started


def test_a_match_goes_on_when_its_only_worker_is_replaced(tmp_path, scheduler, workers):
    workers.append(start_worker(scheduler, "first", nworkers=1))
    workers_named(scheduler, "first", 1)
    pids, pdn = tmp_path / "pids", tmp_path / "t.pdn"
    proc = subprocess.Popen(
        [*GUTI, "match", *instant("A", pids, THINK), *instant("B", pids, THINK), "-each",
         "tc=10+0.1", "-games", "8", "-cluster", scheduler, "-pdnout", "t.pdn"],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        wait_for(lambda: pdn.exists() and len(parse_pdn(pdn.read_text())) >= 1,
                 "a game played", 120)
        kill_session(workers[0])
        workers.append(start_worker(scheduler, "second", nworkers=1))
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert "Game 8/8" in out
    assert replay_all(pdn) == 8


def test_a_result_lost_with_its_worker_goes_again_instead_of_being_waited_for(
        tmp_path, scheduler, workers):
    """A task that finished on a worker killed before its result reached guti: Dask resets
    it, and with no worker fit for the run it is parked for good. Its settling hands the
    task back to the run's book (where a parked task is submitted again) instead of
    waiting on it: the run's loop waited for ever there, and no result was stored
    again. Played in this process, to kill the worker between the two steps."""
    import asyncio

    from distributed import Future, as_completed

    from guti.referee.execution.cluster import ClusterExecutor
    from guti.referee.execution.cluster_address import parse_cluster
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.limits import parse_limits
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings

    workers.append(start_worker(scheduler, "first", nworkers=1))
    workers_named(scheduler, "first", 1)
    argv = [PY, str(FAULTY), "--mode", "good", "--pidfile", str(tmp_path / "pids")]
    engines = [EngineConfig("A", argv), EngineConfig("B", argv)]
    said: list[str] = []
    executor = ClusterExecutor(
        parse_cluster(scheduler), engines,
        GameSettings("egara-guti", limits=parse_limits({"tc": "10+0.1"})),
        say=said.append, tell=said.append)
    job = ScheduledGame(0, 0, 1, 0, 1, None)

    async def lose_a_result() -> object:
        await executor.check_engines()
        try:
            future = executor._submit([job])
            async for _ in as_completed([future], loop=executor.client.loop):
                pass  # until the task has finished
            assert future.status == "finished"
            kill_session(workers[0])  # the result dies with its worker, not yet gathered
            return await asyncio.wait_for(executor._settle(future, [job]), 120)
        finally:
            await executor.close()

    settled = asyncio.run(lose_a_result())
    assert isinstance(settled, Future), settled  # back to the book, not waited for
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 30)


def building_toml(tmp_path: Path, scheduler: str, games: int, seconds: int) -> Path:
    """A tournament of two instant engines whose ``build`` touches ``building`` (the
    event a test waits for), then sleeps ``seconds``: a start check that lasts."""
    pids = tmp_path / "pids"
    marker = tmp_path / "building"
    args = shlex.join([str(FAULTY), "--mode", "good", "--pidfile", str(pids), *THINK])
    engines = "".join(f"""
[[engine]]
name = "{name}"
cmd = "{PY}"
args = {args!r}
build = ["sh", "-c", "touch {marker}; sleep {seconds}"]
""" for name in "AB")
    toml = tmp_path / "t.toml"
    toml.write_text(f"""
cluster = "{scheduler}"
games = {games}
pdnout = "t.pdn"
[each]
tc = "10+0.1"
{engines}""")
    return toml


def start_toml_run(tmp_path: Path, toml: Path) -> subprocess.Popen:
    """``guti tournament TOML``, its stderr in ``err.txt`` (as :func:`start_run`)."""
    err = (tmp_path / "err.txt").open("w")
    return subprocess.Popen([*GUTI, "tournament", str(toml)], cwd=tmp_path, env=ENV,
                            stdout=subprocess.PIPE, stderr=err, text=True,
                            start_new_session=True)


def worker_processes(address: str, prefix: str) -> list[int]:
    """The pids of the worker processes (not their nannies) named ``prefix``*."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        info = client.scheduler_info(n_workers=-1)["workers"]
        mine = [a for a, w in info.items() if str(w["name"]).startswith(prefix)]
        return list(client.run(os.getpid, workers=mine).values())


def test_a_worker_that_dies_during_the_start_check_is_replaced_not_fatal(
        tmp_path, scheduler, workers):
    """The worker process dies while it builds the engines at the run's start; its nanny
    starts another, which the run checks and plays on. Before, the dead worker's
    connection error counted as a failed check, and, the only worker, ended the run."""
    workers.append(start_worker(scheduler, "first", nworkers=1))
    workers_named(scheduler, "first", 1)
    (dead,) = worker_processes(scheduler, "first")
    toml = building_toml(tmp_path, scheduler, 4, 3)
    run = start_toml_run(tmp_path, toml)
    with killed_at_exit(run):
        wait_for((tmp_path / "building").exists, "the build under way", 120)
        os.kill(dead, signal.SIGKILL)
        out = finish(run)
    assert run.returncode == 0, said(tmp_path)
    assert "4/4 games stored" in out
    check_tournament(tmp_path, 4)
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 30)


def test_one_ctrl_c_during_the_start_check_ends_the_run_and_its_builds(
        tmp_path, scheduler, workers):
    """No game runs while the engines are built and checked, so one Ctrl-C has nothing to
    wait for: the run ends at once (a ten-minute build under way), nothing is stored, and
    the build is killed on the worker."""
    workers.append(start_worker(scheduler, "only", nworkers=1))
    workers_named(scheduler, "only", 1)
    run = start_toml_run(tmp_path, building_toml(tmp_path, scheduler, 4, 600))
    with killed_at_exit(run):
        wait_for((tmp_path / "building").exists, "the build under way", 120)
        os.kill(run.pid, signal.SIGINT)  # guti alone: the worker is not in its session
        finish(run, timeout=60)
    assert run.returncode == 130, said(tmp_path)
    assert games_stored(tmp_path / "guti.db") == 0
    wait_for(lambda: not _processes_running("sleep 600"), "the build killed", 60)


def _processes_running(command: str) -> list[int]:
    """Pids of the processes whose command line is ``command``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if fh.read().replace(b"\0", b" ").strip() == command.encode():
                        found.append(int(entry))
    return found


def test_a_run_started_before_any_worker_waits_for_one(tmp_path, scheduler, workers):
    """No worker when the run starts (a batch system's jobs not started yet): the run
    says so, waits, and plays once a worker joins."""
    run = start_run(tmp_path, scheduler, 4)
    with killed_at_exit(run):
        wait_for(lambda: "no worker for" in said(tmp_path), "the wait told", 60)
        workers.append(start_worker(scheduler, "late", nworkers=1))
        out = finish(run)
    assert run.returncode == 0, said(tmp_path)
    assert "no worker yet; the run waits for one" in out
    assert "4/4 games stored" in out
    check_tournament(tmp_path, 4)


def test_a_frozen_worker_does_not_hold_the_start_up(tmp_path, scheduler, workers):
    """One of two workers is stopped (SIGSTOP) before the run: its check never answers.
    The run starts on the other once the grace after its check has passed, and plays."""
    workers.append(start_worker(scheduler, "good", nworkers=1))
    workers.append(start_worker(scheduler, "frozen", nworkers=1))
    workers_named(scheduler, "good", 1)
    workers_named(scheduler, "frozen", 1)
    (frozen,) = worker_processes(scheduler, "frozen")
    os.kill(frozen, signal.SIGSTOP)
    try:
        run = start_run(tmp_path, scheduler, 4)
        out = finish(run)
    finally:
        os.kill(frozen, signal.SIGCONT)
    assert run.returncode == 0, said(tmp_path)
    assert "1 worker(s) playing" in out and "4/4 games stored" in out
    check_tournament(tmp_path, 4)


def test_a_scheduler_lost_during_the_start_check_is_the_one_line_that_says_so(
        tmp_path, scheduler_process, workers):
    address, proc = scheduler_process
    workers.append(start_worker(address, "first", nworkers=1))
    workers_named(address, "first", 1)
    toml = building_toml(tmp_path, address, 4, 3)
    run = start_toml_run(tmp_path, toml)
    with killed_at_exit(run):
        wait_for((tmp_path / "building").exists, "the build under way", 120)
        kill_session(proc)
        finish(run, timeout=120)
    assert run.returncode == 2, said(tmp_path)
    lines = said(tmp_path).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"guti tournament: lost the Dask scheduler at {address}"), lines


def test_another_clients_restart_of_the_workers_is_not_a_lost_scheduler(
        tmp_path, scheduler, workers):
    """Another client of the shared scheduler restarts its workers mid-run: guti's tasks
    are cancelled under it, the scheduler is still there, and the games go again."""
    from distributed import Client

    workers.append(start_worker(scheduler, "first"))
    workers_named(scheduler, "first", 2)
    run = start_run(tmp_path, scheduler, 20)
    with killed_at_exit(run):
        wait_for(lambda: games_stored(tmp_path / "guti.db") >= 3, "3 games stored", 120)
        with Client(scheduler, timeout=30) as other:
            other.restart(wait_for_workers=False)
        out = finish(run)
    assert run.returncode == 0, said(tmp_path)
    assert "20/20 games stored" in out
    check_tournament(tmp_path, 20)


def test_a_result_held_by_a_frozen_worker_is_played_again_after_a_while(
        tmp_path, scheduler, workers, monkeypatch):
    """A task finished on a worker that is then stopped (SIGSTOP) before its result was
    fetched: the fetch is given up after ``FETCH_TIMEOUT`` and the game submitted again,
    instead of the run waiting for the worker (until Dask's own timeout, minutes)."""
    import asyncio

    from distributed import Future, as_completed

    from guti.referee.execution import cluster
    from guti.referee.execution.cluster_address import parse_cluster
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.limits import parse_limits
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings

    monkeypatch.setattr(cluster, "FETCH_TIMEOUT", 4.0)
    workers.append(start_worker(scheduler, "first", nworkers=1))
    workers_named(scheduler, "first", 1)
    (frozen,) = worker_processes(scheduler, "first")
    argv = [PY, str(FAULTY), "--mode", "good", "--pidfile", str(tmp_path / "pids")]
    said_lines: list[str] = []
    executor = cluster.ClusterExecutor(
        parse_cluster(scheduler), [EngineConfig("A", argv), EngineConfig("B", argv)],
        GameSettings("egara-guti", limits=parse_limits({"tc": "10+0.1"})),
        say=said_lines.append, tell=said_lines.append)
    job = ScheduledGame(0, 0, 1, 0, 1, None)

    async def freeze_a_result() -> tuple[Future, object]:
        await executor.check_engines()
        try:
            future = executor._submit([job])
            async for _ in as_completed([future], loop=executor.client.loop):
                pass  # until the task has finished
            os.kill(frozen, signal.SIGSTOP)
            try:
                return future, await asyncio.wait_for(executor._settle(future, [job]), 60)
            finally:
                os.kill(frozen, signal.SIGCONT)
        finally:
            await executor.close()

    first, settled = asyncio.run(freeze_a_result())
    assert isinstance(settled, Future) and settled.key != first.key, settled
    assert any("did not come from its worker within 4 s; playing it again" in line
               for line in said_lines), said_lines


def test_a_worker_frozen_mid_run_has_its_games_played_by_the_others(tmp_path, workers):
    """A worker stopped mid-run (SIGSTOP: its connections stay open, and this scheduler
    gives a worker an hour without heartbeats before it drops it, so Dask alone would wait
    that long) is said to be silent once WORKER_SILENCE s pass without its heartbeat: the
    games it held and all the rest go to the other worker, and the run ends with every
    game stored once. Once it runs again, no engine of the run is left on it."""
    from guti.referee.execution.cluster_roster import WORKER_SILENCE

    address, scheduler = start_scheduler(
        tmp_path, {**ENV, "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "1h"})
    frozen = 0
    try:
        workers.append(start_worker(address, "good", nworkers=1))
        workers.append(start_worker(address, "frozen", nworkers=1))
        workers_named(address, "good", 1)
        workers_named(address, "frozen", 1)
        (frozen,) = worker_processes(address, "frozen")
        run = start_run(tmp_path, address, 12)
        with killed_at_exit(run):
            wait_for(lambda: games_stored(tmp_path / "guti.db") >= 2, "2 games stored", 120)
            os.kill(frozen, signal.SIGSTOP)
            out = finish(run, timeout=WORKER_SILENCE + 180)
    finally:
        if frozen:
            os.kill(frozen, signal.SIGCONT)
        stop(scheduler)
    assert run.returncode == 0, said(tmp_path)
    assert "12/12 games stored" in out, out
    check_tournament(tmp_path, 12)
    [line] = [ln for ln in said(tmp_path).splitlines() if "no heartbeat" in ln]
    assert line.startswith("worker frozen") and "played on the other workers" in line, line
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 90)


def test_a_frozen_scheduler_is_lost_in_one_line_and_resume_continues(
        tmp_path, scheduler_process, workers):
    """The scheduler stopped (SIGSTOP: its connections stay open, so Dask would wait for
    it for ever): the run calls it lost once a reading of the workers goes unanswered for
    SCHEDULER_SILENCE s, in the same one line as a scheduler that died, exit 2; the games
    stored are kept (it waited until a second Ctrl-C). Once the scheduler runs again, it
    finds the client gone and the workers end the run's games: no engine is left."""
    from guti.referee.execution.cluster import SCHEDULER_SILENCE

    address, scheduler = scheduler_process
    workers.append(start_worker(address, "w"))
    workers_named(address, "w", 2)
    run = start_run(tmp_path, address, 30)
    try:
        with killed_at_exit(run):
            wait_for(lambda: games_stored(tmp_path / "guti.db") >= 2, "2 games stored", 120)
            os.kill(scheduler.pid, signal.SIGSTOP)
            finish(run, timeout=SCHEDULER_SILENCE + 120)
    finally:
        os.kill(scheduler.pid, signal.SIGCONT)
    assert run.returncode == 2
    lines = said(tmp_path).strip().splitlines()
    assert len(lines) == 1, lines
    assert "lost the Dask scheduler" in lines[0] and "-resume continues" in lines[0]
    assert 2 <= games_stored(tmp_path / "guti.db") < 30
    wait_for(lambda: survivors(tmp_path / "pids") == [], "every engine process gone", 90)
