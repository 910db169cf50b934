"""How fast the reference engine answers ``stop`` during ``go infinite``.

Starts the engine, and ``--rounds`` times (default 50): sets a position (both games,
a few different ones), sends ``go infinite``, waits a random 50..400 ms, sends ``stop``
and measures the time until the ``bestmove`` line is read. Target: median
under 20 ms. Also measures ``isready`` -> ``readyok`` during a search.

    nice python benchmarks/engine_stop_latency.py [--rounds 50]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POSITIONS = [
    ("egara-guti", "position startpos"),
    ("egara-guti", "position startpos moves 14-12 10x14 17x12"),
    ("pretwa", "position startpos"),
    ("pretwa", "position startpos moves 4-1 7x4 10x1"),
]


class Engine:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "guti.engine"], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1)

    def send(self, line: str) -> float:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def wait_for(self, prefix: str) -> float:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("engine closed its output")
            if line.startswith(prefix):
                return time.perf_counter()

    def close(self) -> None:
        self.send("quit")
        self.proc.wait(5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    eng = Engine()
    eng.send("ugi")
    eng.wait_for("ugiok")
    stops, readies = [], []
    for i in range(args.rounds):
        game, position = POSITIONS[i % len(POSITIONS)]
        eng.send(f"setoption name UGI_Variant value {game}")
        eng.send("uginewgame")
        eng.send(position)
        eng.send("isready")
        eng.wait_for("readyok")
        eng.send("go infinite")
        time.sleep(rng.uniform(0.05, 0.2))
        sent = eng.send("isready")
        readies.append((eng.wait_for("readyok") - sent) * 1000)
        time.sleep(rng.uniform(0.0, 0.2))
        sent = eng.send("stop")
        stops.append((eng.wait_for("bestmove") - sent) * 1000)
    eng.close()
    for name, values in (("stop -> bestmove", stops), ("isready -> readyok (searching)", readies)):
        values.sort()
        print(f"{name}: median {statistics.median(values):.1f} ms, "
              f"p90 {values[int(0.9 * (len(values) - 1))]:.1f} ms, max {values[-1]:.1f} ms "
              f"({len(values)} rounds)")
    return 0 if statistics.median(stops) < 20 else 1


if __name__ == "__main__":
    raise SystemExit(main())
