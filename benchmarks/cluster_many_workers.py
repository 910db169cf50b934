"""Many workers on one scheduler: every game stored once, and what each game costs the client.

A real ``dask scheduler`` and one ``dask worker`` with ``--workers`` worker processes (one
thread each) on 127.0.0.1; a tournament of ``--games`` games between two engines that
sleep ``--think`` seconds on every move (engines that think, so that the workers, not the
client, set the pace); the client is the ordinary ``guti tournament -cluster ADDRESS``.
It prints the games stored (and whether any game is there twice), the wall time, and the
client's CPU per game: user + system time of the ``guti`` process and its threads (not
the workers'), over the games.

    python benchmarks/cluster_many_workers.py [--workers 32] [--games 128] [--think 0.02]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def workers_joined(address: str, count: int, limit: float = 300.0) -> None:
    """Return once ``count`` workers are in the cluster (SystemExit after ``limit`` s)."""
    from distributed import Client

    deadline = time.monotonic() + limit
    with Client(address, timeout=60) as client:
        while len(client.scheduler_info(n_workers=-1)["workers"]) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(client.scheduler_info()['workers'])} of {count} "
                                 "workers joined")
            time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--games", type=int, default=128)
    parser.add_argument("--think", type=float, default=0.02)
    args = parser.parse_args()
    dask = [sys.executable, "-m", "dask"]
    address = f"tcp://127.0.0.1:{free_port()}"
    folder = tempfile.mkdtemp(prefix="guti-many-workers-")
    started: list[subprocess.Popen[bytes]] = []
    try:
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                 "start_new_session": True}
        started.append(subprocess.Popen(
            [*dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
             "--no-dashboard"], **quiet))  # type: ignore[call-overload]
        started.append(subprocess.Popen(
            [*dask, "worker", address, "--nworkers",
             str(args.workers), "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
            **quiet))  # type: ignore[call-overload]
        workers_joined(address, args.workers)
        engine = f"args={FAULTY} --mode good --think {args.think}"
        db = os.path.join(folder, "t.db")
        command = [os.path.join(os.path.dirname(sys.executable), "guti"), "tournament", "-cluster", address,
                   "-engine", f"cmd={sys.executable}", engine, "name=A",
                   "-engine", f"cmd={sys.executable}", engine, "name=B",
                   "-each", "st=1", "-games", str(args.games), "-db", db, "-quiet"]
        begin = time.monotonic()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - begin
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"guti tournament exited {os.waitstatus_to_exitcode(status)}")
        with sqlite3.connect(db) as conn:
            stored, distinct = conn.execute(
                "SELECT count(*), count(DISTINCT game_id) FROM games").fetchone()
        cpu = usage.ru_utime + usage.ru_stime
        print(f"{args.workers} workers, {args.games} games, engines thinking {args.think} s a"
              f" move: {stored} stored ({distinct} distinct) in {wall:.1f} s;"
              f" client CPU {cpu:.2f} s = {cpu / max(stored, 1) * 1000:.1f} ms a game;"
              f" peak client memory {usage.ru_maxrss / 1024:.0f} MB")
        return 0 if stored == distinct == args.games else 1
    finally:
        for proc in reversed(started):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
