"""Perft speed of the rules core, against a baseline commit measured in the same run.

The machine is shared, so absolute figures move with the load; what this script
reports is the same work done by two source trees (this checkout and ``--baseline
REV``, extracted with ``git archive`` into a temporary directory) in alternating
fresh subprocesses, several repetitions each, and the median of each. It prints
``uptime`` before and after, and a markdown table. Rates
are given by wall clock (what ``guti perft`` prints) and by the process's CPU time,
which moves less when other jobs compete for the cores.

Four measurements, each counting the same tree in both source trees (the node counts
must agree, or the script stops): three per game, and the engine's bench.

- ``perft``: :func:`guti.rules.perft` as ``guti perft`` runs it; leaves are
  bulk-counted (the last ply's moves are counted, not made).
- ``plain``: the same walk written here on :func:`guti.rules.movegen.successors`,
  which makes every move of the last ply too (child positions built, repetition
  counts updated): the generator's speed without the bulk-count shortcut.
- ``board``: the referee's path, ``Board.legal_moves`` / ``push`` / ``pop`` on
  every node (move objects, legality check, repetition history), at a lower depth.
- ``bench``: the reference engine's ``guti bench`` (its positions of every game, depth
  8), whose node
  count must be the same in both trees: search orders moves by the generator's order.

    python benchmarks/perft_speed.py [--baseline COMMIT] [--reps 5] [--only KIND]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from source_trees import extract, uptime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (kind, game, depth) measured by default.
CASES: tuple[tuple[str, str, int], ...] = (
    ("perft", "egara-guti", 13),
    ("perft", "pretwa", 13),
    ("plain", "egara-guti", 13),
    ("plain", "pretwa", 13),
    ("board", "egara-guti", 10),
    ("board", "pretwa", 10),
    ("bench", "both", 8),
)

# Runs in a fresh interpreter inside one source tree: prints {"nodes": N, "seconds": S}.
# It uses only API that both trees have (Board, perft, movegen.successors).
_WORKER = r'''
import json, sys, time
from guti.rules import Board, perft
from guti.rules.movegen import successors

kind, game, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])

def plain(board, depth):
    g = board.game
    geo, size, few = g.geometry, g.geometry.size, g.few_pieces_limit
    fifty, reps = g.no_capture_plies, g.repetitions
    counts = {}
    get = counts.get
    turn_bit = 1 << (2 * size)

    def node(own, enemy, turn, clock, depth, key):
        if depth == 0:
            return 1
        if few is not None and (own.bit_count() <= few) != (enemy.bit_count() <= few):
            return 0
        if clock >= fifty or get(key, 0) >= reps:
            return 0
        total = 0
        for own_after, enemy_after, captured in successors(geo, own, enemy):
            if turn == 0:
                child = own_after | (enemy_after << size) | turn_bit
            else:
                child = enemy_after | (own_after << size)
            counts[child] = get(child, 0) + 1
            total += node(enemy_after, own_after, turn ^ 1, 0 if captured else clock + 1,
                          depth - 1, child)
            counts[child] -= 1
        return total

    white, black = board.white, board.black
    turn = 0 if board.turn == "w" else 1
    key = white | (black << size) | (turn << (2 * size))
    counts[key] = 1
    own, enemy = (white, black) if turn == 0 else (black, white)
    return node(own, enemy, turn, board.clock, depth, key)

def walk(board, depth):
    if depth == 0:
        return 1
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += walk(board, depth - 1)
        board.pop()
    return total

def bench(board, depth):
    from guti.engine.bench import run_bench
    return run_bench(lambda line: None, depth)[0]

board = None if kind == "bench" else Board(game)
run = {"perft": perft, "plain": plain, "board": walk, "bench": bench}[kind]
start, cpu = time.perf_counter(), time.process_time()
nodes = run(board, depth)
print(json.dumps({"nodes": nodes, "seconds": time.perf_counter() - start,
                  "cpu": time.process_time() - cpu}))
'''


def measure(tree: str, kind: str, game: str, depth: int) -> tuple[int, float, float]:
    """One run of one case in a fresh interpreter rooted at ``tree``: (nodes, wall s, CPU s)."""
    done = subprocess.run([sys.executable, "-c", _WORKER, kind, game, str(depth)], cwd=tree,
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": tree})
    result = json.loads(done.stdout)
    return int(result["nodes"]), float(result["seconds"]), float(result["cpu"])


def run_cases(trees: dict[str, str], cases: tuple[tuple[str, str, int], ...],
              reps: int) -> list[str]:
    """Markdown rows, one per case: nodes, then median nodes/s per tree (wall clock and CPU
    time) and the current/baseline ratios."""
    rows = []
    for kind, game, depth in cases:
        wall: dict[str, list[float]] = {name: [] for name in trees}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        nodes_seen: set[int] = set()
        for _ in range(reps):
            for name, tree in trees.items():  # alternate, so both see the same load
                nodes, seconds, cpu_seconds = measure(tree, kind, game, depth)
                nodes_seen.add(nodes)
                wall[name].append(nodes / seconds)
                cpu[name].append(nodes / cpu_seconds)
        if len(nodes_seen) != 1:
            raise SystemExit(f"perft_speed: {kind} {game} {depth}: node counts differ {nodes_seen}")
        cells = [f"{nodes_seen.pop():,}"]
        first = next(iter(trees))  # every other tree's speed-up is against the first
        for rates in (wall, cpu):
            medians = {name: statistics.median(values) for name, values in rates.items()}
            cells += [f"{medians[name]:,.0f}" for name in trees]
            cells += [f"{medians[name] / medians[first]:.2f}x" for name in trees if name != first]
        rows.append(f"| {kind} | {game} | {depth} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="commit to compare with (measured in the same run)")
    parser.add_argument("--reps", type=int, default=5, help="runs per case and tree (median)")
    parser.add_argument("--only", choices=("perft", "plain", "board", "bench"),
                        help="one kind of case")
    args = parser.parse_args()
    cases = tuple(c for c in CASES if args.only is None or c[0] == args.only)
    print(f"load before: {uptime()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="perft-trees-") as scratch:
        trees = {"current": ROOT}
        if args.baseline:
            extract(args.baseline, os.path.join(scratch, "baseline"))
            trees = {"baseline": os.path.join(scratch, "baseline"), "current": ROOT}
        first = next(iter(trees))
        names = []  # as run_cases writes its cells: per clock, the rates, then the ratios
        for clock in ("wall", "CPU"):
            names += [f"{name} nodes/s ({clock})" for name in trees]
            names += [f"{name}/{first} ({clock})" for name in trees if name != first]
        header = "| kind | game | depth | nodes | " + " | ".join(names) + " |"
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
        run_cases(trees, cases, args.reps)
    print(f"load after: {uptime()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
