"""Games/s of ``-cluster local:2`` against the local executor at ``-concurrency 2``,
and what one game costs the client that keeps the database.

Same engines, same games, same machine, in one run:

- instant-reply movers (``tests/engines/faulty.py --mode good``): the host's own cost;
- the reference engine (``python -m guti.engine``) at a fast time control: real play.

Games/s are counted *steady state*, from the first stored game to the last (the
``finished_at`` of the database), so the seconds a local cluster takes to start its
worker processes are shown apart (``start``). The client's cost per game is what
limits how many workers one guti can feed: its CPU per task through a real scheduler
(tasks that carry stored games' records back, four in flight, one game per task as for
games of a second or more, and 16 per task as ``-cluster`` batches games that last
milliseconds) plus storing the game (the SQLite transaction of
:meth:`TournamentStore.record_game`); and the latency of one task's round trip.

    python benchmarks/cluster_throughput.py [--games 300] [--ref-games 12] [--ref-tc 2+0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shlex
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rich.console import Console  # noqa: E402

from guti.referee.cli.progress import TournamentDisplay  # noqa: E402
from guti.referee.config.tournament import settings_from_argv  # noqa: E402
from guti.referee.storage.store import TournamentStore  # noqa: E402
from guti.referee.tournament.run import run_tournament  # noqa: E402
from guti.referee.tournament.scheduler import schedule  # noqa: E402

FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")


def instant_engines() -> list[str]:
    engines = []
    for name in ("a", "b"):
        args = shlex.join([FAULTY, "--mode", "good", "--seed", "1" if name == "a" else "2"])
        engines += ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]
    return [*engines, "-each", "tc=60+1"]


def reference_engines(tc: str) -> list[str]:
    engines = []
    for name in ("ref1", "ref2"):
        engines += ["-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}",
                    f"name={name}"]
    return [*engines, "-each", f"tc={tc}"]


class _Stamps:
    """Process CPU time at each stored game (``record_game`` wrapped), for steady state."""

    cpu: list[float] = []
    original = TournamentStore.record_game

    @classmethod
    def install(cls) -> None:
        def record_game(store: TournamentStore, job: object, record: object) -> int:
            seq = cls.original(store, job, record)  # type: ignore[arg-type]
            cls.cpu.append(time.process_time())
            return seq

        TournamentStore.record_game = record_game  # type: ignore[method-assign]


def run(folder: str, tag: str, engines: list[str], games: int, where: list[str]) -> dict:
    db = os.path.join(folder, f"{tag}.db")
    argv = [*engines, "-games", str(games), "-db", db, "-pdnout",
            os.path.join(folder, f"{tag}.pdn"), "-openings", "random:2", "-srand", "1",
            "-quiet", *where]
    settings = settings_from_argv(argv, print)
    _Stamps.cpu = []
    began = time.time()
    asyncio.run(run_tournament(settings, TournamentDisplay(Console(file=io.StringIO()), settings)))
    wall = time.time() - began
    with sqlite3.connect(db) as conn:
        stamps = [r[0] for r in conn.execute("SELECT finished_at FROM games ORDER BY finished_at")]
    assert len(stamps) == games, f"{tag}: {len(stamps)} of {games} games stored"
    steady = (len(stamps) - 1) / max(1e-9, stamps[-1] - stamps[0])
    cpu = (_Stamps.cpu[-1] - _Stamps.cpu[0]) / max(1, len(_Stamps.cpu) - 1)
    return {"wall": wall, "start": stamps[0] - began, "steady": steady, "cpu": cpu}


def _echo(payload: object) -> object:
    return payload


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def client_cost(folder: str, count: int, batches: tuple[int, ...] = (1, 16)
                ) -> tuple[float, dict[int, float]]:
    """(median ms of one round trip, {games per task: client CPU ms per game when 4 tasks
    are kept in flight}) through a real ``dask scheduler`` and ``dask worker`` (other
    processes, so the CPU is the client's own); each task carries stored games' records
    back, as many as the batch holds."""
    from distributed import Client, as_completed

    with TournamentStore(os.path.join(folder, "instant-local-0.db"), create=False) as store:
        record = next(store.records())[1]
    dask = [os.path.join(os.path.dirname(sys.executable), "dask")]
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":")[-1], "--no-dashboard"], **quiet)]
    try:
        procs.append(subprocess.Popen([*dask, "worker", address, "--nthreads", "1",
                                       "--no-dashboard"], **quiet))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
            times = []
            for _ in range(count):
                began = time.perf_counter()
                client.submit(_echo, record, pure=False).result()
                times.append((time.perf_counter() - began) * 1000)
            cpus = {}
            for batch in batches:
                records, tasks = [record] * batch, max(8, count // batch)
                cpu = time.process_time()
                futures = as_completed([client.submit(_echo, records, pure=False)
                                        for _ in range(4)])
                for done, future in enumerate(futures):
                    future.result()
                    if done < tasks - 4:
                        futures.add(client.submit(_echo, records, pure=False))
                cpus[batch] = (time.process_time() - cpu) * 1000 / (tasks * batch)
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)
    return statistics.median(times[count // 10:]), cpus


def store_ms(folder: str) -> float:
    """Median ms of storing one game (its own transaction): a finished tournament's games
    stored again into a fresh copy of its schedule."""
    source = TournamentStore(os.path.join(folder, "instant-local-0.db"), create=False)
    jobs = {job.game_id: job for job in schedule("roundrobin", 2, 1, source.count_scheduled())}
    records = [(jobs[info["game_id"]], record) for info, record in source.records()]
    engines = source.engines()
    source.close()
    target = TournamentStore(os.path.join(folder, "store-copy.db"))
    target.create({}, "bench", engines, jobs.values())
    times = []
    for job, record in records:
        began = time.perf_counter()
        target.record_game(job, record)
        times.append((time.perf_counter() - began) * 1000)
    target.close()
    return statistics.median(times)


def best_of(repeat: int, folder: str, tag: str, engines: list[str],
            games: int) -> tuple[dict, dict]:
    """Local and cluster runs alternated ``repeat`` times; the fastest of each."""
    runs: dict[str, list[dict]] = {"local": [], "cluster": []}
    for i in range(repeat):
        for kind, where in (("local", ["-concurrency", "2"]), ("cluster", ["-cluster", "local:2"])):
            runs[kind].append(run(folder, f"{tag}-{kind}-{i}", engines, games, where))
    return (max(runs["local"], key=lambda r: r["steady"]),
            max(runs["cluster"], key=lambda r: r["steady"]))


def show(name: str, local: dict, cluster: dict, games: int) -> None:
    ratio = cluster["steady"] / local["steady"]
    print(f"{name}, {games} games: local -concurrency 2: {local['steady']:.1f} games/s "
          f"(wall {local['wall']:.1f} s); -cluster local:2: {cluster['steady']:.1f} games/s "
          f"(wall {cluster['wall']:.1f} s, of which start {cluster['start']:.1f} s); "
          f"ratio {ratio:.2f}; CPU of this process per game: local {1000 * local['cpu']:.2f} ms, "
          f"cluster {1000 * cluster['cpu']:.2f} ms (local:N runs the scheduler here too)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--ref-games", type=int, default=12)
    parser.add_argument("--ref-tc", default="2+0.02")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs of each, alternated (the machine's load varies); best kept")
    args = parser.parse_args()
    _Stamps.install()
    with tempfile.TemporaryDirectory() as folder:
        local, cluster = best_of(args.repeat, folder, "instant", instant_engines(), args.games)
        show("instant-reply engines", local, cluster, args.games)
        ref = reference_engines(args.ref_tc)
        ref_local, ref_cluster = best_of(args.repeat, folder, "ref", ref, args.ref_games)
        show(f"reference engine tc={args.ref_tc}", ref_local, ref_cluster, args.ref_games)
        (trip, cpus), store = client_cost(folder, 300), store_ms(folder)
        print(f"client: a task's round trip {trip:.2f} ms (latency, hidden by the task each "
              f"worker holds in reserve); storing a game {store:.2f} ms", flush=True)
        for batch, cpu in cpus.items():
            print(f"client, per game at {batch} game(s) per task: CPU {cpu:.2f} ms + storing "
                  f"{store:.2f} ms = {cpu + store:.2f} ms: one client keeps up with about "
                  f"{1000 / (cpu + store):.0f} games/s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
