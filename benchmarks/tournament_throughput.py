"""Tournament throughput and memory: games/s at concurrency 1 and 2, RSS over a long run.

Engines are instant-reply movers (``tests/engines/faulty.py --mode good``: a random
legal move the moment ``go`` arrives), so the figures are the tournament host's own
cost: scheduling, refereeing every move, one SQLite transaction per game, the PDN
append and the standings. The tournament runs in this process (``run_tournament``)
so its resident memory can be sampled while it plays.

    python benchmarks/tournament_throughput.py [--games 400] [--memory-games 2000]

Prints games/s for each concurrency, then RSS (from /proc/self/status) at 10 %,
50 % and 100 % of the memory run and the peak (VmHWM): flat memory means the last
three are close.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shlex
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rich.console import Console  # noqa: E402

from guti.referee.cli.progress import TournamentDisplay  # noqa: E402
from guti.referee.config.tournament import settings_from_argv  # noqa: E402
from guti.referee.tournament.run import run_tournament  # noqa: E402

FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")


def _rss_kb(field: str = "VmRSS") -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def argv(folder: str, games: int, concurrency: int, tag: str) -> list[str]:
    engines = []
    for name in ("a", "b"):
        args = shlex.join([FAULTY, "--mode", "good", "--seed", "1" if name == "a" else "2"])
        engines += ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]
    return [*engines, "-each", "tc=60+1", "-games", str(games), "-concurrency",
            str(concurrency), "-db", os.path.join(folder, f"{tag}.db"), "-pdnout",
            os.path.join(folder, f"{tag}.pdn"), "-openings", "random:2", "-srand", "1",
            "-quiet"]


def run(folder: str, games: int, concurrency: int, tag: str) -> float:
    settings = settings_from_argv(argv(folder, games, concurrency, tag), print)
    quiet = Console(file=io.StringIO())
    began = time.perf_counter()
    asyncio.run(run_tournament(settings, TournamentDisplay(quiet, settings)))
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--memory-games", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for concurrency in (1, 2):
            seconds = run(folder, args.games, concurrency, f"c{concurrency}")
            print(f"concurrency {concurrency}: {args.games} games in {seconds:.1f} s = "
                  f"{args.games / seconds:.1f} games/s", flush=True)
        samples: list[tuple[float, int]] = []
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                samples.append((time.perf_counter(), _rss_kb()))
                time.sleep(0.25)

        thread = threading.Thread(target=sample, daemon=True)
        began = time.perf_counter()
        thread.start()
        seconds = run(folder, args.memory_games, 2, "memory")
        done.set()
        thread.join()
        size = os.path.getsize(os.path.join(folder, "memory.db")) // 1024

        def at(fraction: float) -> int:
            moment = began + fraction * seconds
            return min(samples, key=lambda s: abs(s[0] - moment))[1]

        print(f"memory run: {args.memory_games} games in {seconds:.1f} s "
              f"({args.memory_games / seconds:.1f} games/s), database {size} KiB", flush=True)
        print(f"RSS at 10 %: {at(0.1) / 1024:.1f} MiB, 50 %: {at(0.5) / 1024:.1f} MiB, "
              f"100 %: {at(1.0) / 1024:.1f} MiB; peak {_rss_kb('VmHWM') / 1024:.1f} MiB",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
