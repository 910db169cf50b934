"""The live page under load, on 127.0.0.1 only: does a browser crowd change a game?

``tournament``: plays ``--games`` games between two random bots that answer 20 ms into a
45 ms move (``st=0.045 timemargin=0``), once with no page and once with ``-serve`` under
``--clients`` threads fetching the page in a loop and ``--idle`` connections left open
without a request; reports the time losses of each run (target: none beyond the first).

``follow``: a database filling at ``--rate`` games a second up to ``--total`` games, with
``guti serve`` on it and one browser-like event stream: reports how far the stream
lags behind the database (seconds from a game stored to its ``end`` event), and how long
the full page takes to fetch at the end.

    python benchmarks/live_page_load.py tournament [--games 16] [--clients 20] [--idle 1050]
    python benchmarks/live_page_load.py follow [--total 10000] [--rate 50]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUTI = [sys.executable, "-c", "import sys; from guti.cli import main; sys.exit(main())"]
RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"

#: A bot that plays like random_bot but waits 20 ms before each answer.
SLOW_BOT = f"""
import subprocess, sys, time
bot = subprocess.Popen([sys.executable, {str(RANDOM_BOT)!r}], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True, bufsize=1)
def out():
    for line in bot.stdout:
        if line.startswith("bestmove"):
            time.sleep(0.020)
        sys.stdout.write(line); sys.stdout.flush()
import threading; threading.Thread(target=out, daemon=True).start()
for line in sys.stdin:
    bot.stdin.write(line); bot.stdin.flush()
bot.stdin.close(); bot.wait()
"""


def _tournament(folder: Path, games: int, serve: bool) -> subprocess.Popen[str]:
    bot = folder / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    argv = [*GUTI, "tournament", "-engine", f"cmd={sys.executable}", f"args={bot}", "name=a",
            "-engine", f"cmd={sys.executable}", f"args={bot}", "name=b",
            "-each", "st=0.045", "timemargin=0", "-games", str(games), "-concurrency", "1",
            "-db", str(folder / "t.db"), "-quiet"]
    if serve:
        argv += ["-serve", "0"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _time_losses(db: Path) -> tuple[int, int]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT reason FROM games").fetchall()
    return sum(1 for (r,) in rows if r and "time" in r), len(rows)


def _load(url: str, clients: int, idle: int, stop: threading.Event) -> list[int]:
    """``clients`` threads fetching the page until ``stop``; ``idle`` sockets held open."""
    host, port = re.match(r"http://([\d.]+):(\d+)/", url).groups()  # type: ignore[union-attr]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, idle + 256)), hard))
    sockets = []
    for _ in range(idle):
        try:
            sockets.append(socket.create_connection((host, int(port)), timeout=5))
        except OSError:
            break
    fetched = [0] * clients

    def loop(n: int) -> None:
        while not stop.is_set():
            try:
                with urllib.request.urlopen(url, timeout=10) as page:
                    page.read()
                fetched[n] += 1
            except OSError:
                if stop.is_set():
                    return
    threads = [threading.Thread(target=loop, args=(n,), daemon=True) for n in range(clients)]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join(timeout=15)
    for s in sockets:
        s.close()
    return [len(sockets), sum(fetched)]


def _load_into(result: list[int], url: str, clients: int, idle: int,
               stop: threading.Event) -> None:
    result[:] = _load(url, clients, idle, stop)


def tournament(args: argparse.Namespace) -> int:
    for serve in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            began = time.perf_counter()
            proc = _tournament(folder, args.games, serve)
            assert proc.stdout is not None
            stop = threading.Event()
            result: list[int] = [0, 0]
            loader = None
            for line in proc.stdout:
                found = re.search(r"live page: (http://\S+/)", line)
                if found:
                    loader = threading.Thread(target=_load_into, args=(
                        result, found.group(1), args.clients, args.idle, stop))
                    loader.start()
            code = proc.wait()
            stop.set()
            if loader is not None:
                loader.join()
            losses, played = _time_losses(folder / "t.db")
            what = (f"-serve, {args.clients} looping clients ({result[1]} pages), "
                    f"{result[0]} idle connections" if serve else "no page")
            print(f"{what}: {losses} time losses in {played} games (exit {code}, "
                  f"{time.perf_counter() - began:.0f} s)", flush=True)
    return 0


def follow(args: argparse.Namespace) -> int:
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.storage.store import TournamentStore

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        template = folder / "template"
        template.mkdir()
        done = subprocess.run([*GUTI, "tournament", "-engine", f"cmd={sys.executable}",
                               f"args={RANDOM_BOT}", "name=a", "-engine",
                               f"cmd={sys.executable}", f"args={RANDOM_BOT}", "name=b",
                               "-each", "tc=5", "-games", "2", "-db", str(template / "t.db"),
                               "-quiet"], capture_output=True, text=True, cwd=template,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        db = folder / "t.db"
        shutil.copyfile(template / "t.db", db)
        with TournamentStore(str(db)) as store:
            records = [r for _, r in store.records()]
            first = 1 + max(i["game_id"] for i, _ in store.records())
            jobs = [ScheduledGame(first + n, first + n, 1, n % 2, 1 - n % 2, None)
                    for n in range(args.total)]
            store.add_jobs(jobs)
        serve = subprocess.Popen([*GUTI, "serve", str(db), "-port", "0"], text=True,
                                 stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert serve.stdout is not None
        url = re.search(r"at (http://\S+/)", serve.stdout.readline()).group(1)  # type: ignore[union-attr]
        stored_at: dict[int, float] = {}
        lags: list[float] = []
        received = threading.Event()

        def listen() -> None:
            with urllib.request.urlopen(url + "events", timeout=120) as stream:
                for raw in stream:
                    line = raw.decode()
                    if line.startswith("data: {\"seq\""):
                        seq = json.loads(line[6:])["seq"]
                        if seq in stored_at:
                            lags.append(time.monotonic() - stored_at[seq])
                        if len(lags) >= args.total:
                            received.set()
                            return
        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        began = time.monotonic()
        with TournamentStore(str(db)) as store:
            for n, job in enumerate(jobs):
                record = records[n % len(records)]
                record.white, record.black = ("a", "b") if job.white == 0 else ("b", "a")
                seq = store.record_game(job, record)
                stored_at[seq] = time.monotonic()
                pause = began + (n + 1) / args.rate - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
        filled = time.monotonic() - began
        received.wait(timeout=120)
        fetch = time.perf_counter()
        with urllib.request.urlopen(url, timeout=120) as page:
            size = len(page.read())
        fetch = time.perf_counter() - fetch
        with open(f"/proc/{serve.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        serve.terminate()
        serve.wait()
        lags.sort()
        print(f"{args.total} games stored in {filled:.1f} s ({args.total / filled:.0f} games/s); "
              f"{len(lags)} end events received", flush=True)
        if lags:
            print(f"lag from stored to pushed: median {lags[len(lags) // 2]:.2f} s, "
                  f"p99 {lags[int(len(lags) * 0.99)]:.2f} s, max {lags[-1]:.2f} s", flush=True)
        print(f"guti serve CPU: {cpu:.1f} s; full page at the end: {size / 1e6:.1f} MB "
              f"in {fetch:.2f} s", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("tournament")
    one.add_argument("--games", type=int, default=16)
    one.add_argument("--clients", type=int, default=20)
    one.add_argument("--idle", type=int, default=1050)
    two = sub.add_parser("follow")
    two.add_argument("--total", type=int, default=10_000)
    two.add_argument("--rate", type=float, default=50.0)
    args = parser.parse_args()
    return tournament(args) if args.what == "tournament" else follow(args)


if __name__ == "__main__":
    sys.exit(main())
