"""Fair clocks at any concurrency: time forfeits of engines that answer in time, guti and
cutegames side by side.

Each engine answers ``go movetime 50`` exactly S ms before its deadline, timed from when it
read ``go`` (``benchmarks/slack_engine.c``: the C bot with that delay, compiled here into a
temporary folder, once per slack). Both hosts play the same match of two such engines from
the start position under the same rule, a reply over 50 ms is a time forfeit:

- guti: ``-each st=0.05 timemargin=0`` (a reply measured over 50.0 ms forfeits), its
  referee processes left to ``-referees auto`` unless ``--guti-flags`` says otherwise;
- cutegames: ``movetime 50`` with ``timeoutbuffer 0``; it measures whole milliseconds
  rounded down, so "over 50 ms" is 51 ms or more there: up to 1 ms more lenient than guti
  (``--guti-margin 1`` gives guti the nearest rule, over 51.0 ms).

For every concurrency and slack of the grid, each round runs both, alternating which goes
first from round to round, so that both meet the same load on a shared machine. Printed: a
markdown table of time forfeits per 1,000 replies (the range over the rounds), how many of
them were a game's first reply, and guti's moves voided for its own lateness; then guti's
latency, the host's measured time minus the engine's own (``nodes``: its microseconds
from reading ``go`` to writing ``bestmove``), p50, p99 and max, at the concurrencies of
``--latency-at``. cutegames stores no per-move times, so its latency is not shown.

    nice python benchmarks/clock_fairness.py --cutegames PATH/TO/cutegames \\
        [--concurrency 2,8,32,128] [--slack 1,3,10] [--rounds 2] [--games-per-slot 4] \\
        [--min-games 32] [--guti-flags "-referees 1"]

The machine must be otherwise idle for the figures to mean anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import cutegames_match  # noqa: E402

from guti.referee.storage.rows import search_from_json  # noqa: E402

GUTI = [sys.executable, "-m", "guti.cli"]
MOVETIME_MS = 50


@dataclass
class RunResult:
    """One host's run: replies read, time forfeits, those of a game's first reply,
    moves voided for the referee's lateness (guti), latencies in ms (guti)."""

    replies: int = 0
    forfeits: int = 0
    first_reply_forfeits: int = 0
    voided: int = 0
    latencies: list[float] = field(default_factory=list)
    first_latencies: list[float] = field(default_factory=list)  # of each game's first reply
    games: int = 0
    wall: float = 0.0

    @property
    def per_thousand(self) -> float:
        return 1000 * self.forfeits / self.replies if self.replies else 0.0


def build_engine(folder: str, slack_ms: int) -> str:
    """The slack engine for ``slack_ms``, compiled into ``folder``."""
    out = os.path.join(folder, f"slack{slack_ms}")
    subprocess.run(["gcc", "-O2", f"-DSLACK_US={slack_ms * 1000}", "-o", out,
                    os.path.join(ROOT, "benchmarks", "slack_engine.c")], check=True)
    return out


def run_guti(folder: str, engine: str, games: int, concurrency: int,
             flags: list[str], margin_ms: int = 0) -> RunResult:
    """guti's run of the match; what its database and stderr say."""
    db = os.path.join(folder, f"guti-{time.monotonic_ns()}.db")
    argv = [*GUTI, "tournament",
            "-engine", f"cmd={engine}", "name=a", "option.Seed=1",
            "-engine", f"cmd={engine}", "name=b", "option.Seed=2",
            "-each", f"st={MOVETIME_MS / 1000}", f"timemargin={margin_ms}", "-game", "egara-guti",
            "-games", str(games), "-concurrency", str(concurrency), "-db", db, "-quiet",
            "-ratinginterval", "0", *flags]
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=folder, env=env)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"guti failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result = RunResult(wall=wall, voided=done.stderr.count("is void and asked again"))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT reason, elapsed_ms, search, opening_plies FROM games")
        for reason, elapsed_text, search_text, opening in rows:
            result.games += 1
            elapsed = json.loads(elapsed_text)[opening:]
            search = json.loads(search_text or "[]")[opening:]
            played = [ms for ms in elapsed if ms is not None]
            result.replies += len(played)
            if reason == "time forfeit":
                result.replies += 1
                result.forfeits += 1
                result.first_reply_forfeits += not played
            for ply, (ms, info) in enumerate(zip(elapsed, search, strict=False)):
                nodes = _nodes(info)
                if ms is not None and nodes is not None:
                    result.latencies.append(ms - nodes / 1000)
                    if ply == 0:
                        result.first_latencies.append(ms - nodes / 1000)
    os.remove(db)
    return result


def _nodes(info: object) -> int | None:
    """The ``nodes`` of a stored ply's search entry (see guti's storage rows)."""
    if not isinstance(info, list):
        return None
    parsed = search_from_json(json.dumps([info]))[0]
    return None if parsed is None else parsed.nodes


def run_cutegames(binary: str, folder: str, engine: str, games: int,
                  concurrency: int) -> RunResult:
    """cutegames' run of the match (:mod:`cutegames_match`); what its PGN says."""
    pgn = os.path.join(folder, f"cutegames-{time.monotonic_ns()}.pgn")
    wall = cutegames_match.play(
        binary, folder, engine, games, concurrency,
        {"type": "movetime", "time": MOVETIME_MS}, adjudication={"timeoutbuffer": 0},
        pgn={"enabled": True, "path": pgn, "override": True})
    result = RunResult(wall=wall)
    with open(pgn) as fh:
        text = fh.read()
    os.remove(pgn)
    for block in text.split("[Event ")[1:]:
        plies = int(re.search(r'\[PlyCount "(\d+)"\]', block).group(1))  # type: ignore[union-attr]
        result.games += 1
        result.replies += plies
        if '[Adjudicated "Out of time"]' in block:
            result.replies += 1
            result.forfeits += 1
            result.first_reply_forfeits += plies == 0
    return result


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def span(values: list[float]) -> str:
    """A range over rounds as the table shows it: ``0.2`` or ``0-3.8``."""
    low, high = (f"{x:.1f}".removesuffix(".0") for x in (min(values), max(values)))
    return low if low == high else f"{low}-{high}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cutegames", required=True, metavar="BINARY")
    parser.add_argument("--concurrency", default="2,8,32,128")
    parser.add_argument("--slack", default="1,3,10", help="ms before the deadline")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--games-per-slot", type=int, default=4,
                        help="games of a run per game slot (games = this x concurrency)")
    parser.add_argument("--min-games", type=int, default=32,
                        help="games of a run at least (at low concurrency)")
    parser.add_argument("--latency-at", default="32,128")
    parser.add_argument("--guti-flags", default="", help="more of guti's options, one string")
    parser.add_argument("--guti-margin", type=int, default=0, metavar="MS",
                        help="guti's timemargin (1: guti forfeits over 51.0 ms, the nearest "
                             "to cutegames' whole-millisecond rule)")
    args = parser.parse_args()
    if not os.access(args.cutegames, os.X_OK):
        print(f"--cutegames {args.cutegames}: not an executable file", file=sys.stderr)
        return 2
    grid = [int(c) for c in args.concurrency.split(",")]
    slacks = [int(s) for s in args.slack.split(",")]
    latency_at = {int(c) for c in args.latency_at.split(",")}
    flags = args.guti_flags.split()
    results: dict[tuple[int, int, str], list[RunResult]] = {}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="clock-fairness-") as folder:
        engines = {s: build_engine(folder, s) for s in slacks}
        for round_number in range(max(1, args.rounds)):
            for concurrency in grid:
                for slack in slacks:
                    games = max(args.min_games, args.games_per_slot * concurrency)
                    order = ["guti", "cutegames"]
                    if round_number % 2:
                        order.reverse()
                    for host in order:
                        if host == "guti":
                            one = run_guti(folder, engines[slack], games, concurrency, flags,
                                           args.guti_margin)
                        else:
                            one = run_cutegames(args.cutegames, folder, engines[slack],
                                                games, concurrency)
                        results.setdefault((concurrency, slack, host), []).append(one)
                        print(f"# round {round_number + 1}: concurrency {concurrency}, slack "
                              f"{slack} ms, {host}: {one.forfeits} forfeits in {one.replies} "
                              f"replies, {one.wall:.1f} s", file=sys.stderr, flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {args.rounds} round(s), "
          f"{args.games_per_slot} games per game slot, {time.perf_counter() - began:.0f} s "
          f"in all; guti timemargin {args.guti_margin} ms, flags: {' '.join(flags) or '(none)'}")
    print()
    print("| concurrency | slack | guti | cutegames | guti first replies | cutegames first "
          "replies | guti voided | replies (guti / cutegames) |")
    print("|---|---|---|---|---|---|---|---|")
    for concurrency in grid:
        for slack in slacks:
            g = results[(concurrency, slack, "guti")]
            c = results[(concurrency, slack, "cutegames")]
            print(f"| {concurrency} | {slack} ms | {span([r.per_thousand for r in g])} | "
                  f"{span([r.per_thousand for r in c])} | "
                  f"{sum(r.first_reply_forfeits for r in g)} | "
                  f"{sum(r.first_reply_forfeits for r in c)} | {sum(r.voided for r in g)} | "
                  f"{sum(r.replies for r in g)} / {sum(r.replies for r in c)} |")
    print()
    print("guti's latency, measured minus the engine's own time (ms):")
    print()
    print("| concurrency | slack | moves | p50 | p99 | max | games' first replies: p99 | max |")
    print("|---|---|---|---|---|---|---|---|")
    for concurrency in grid:
        if concurrency not in latency_at:
            continue
        for slack in slacks:
            runs = results[(concurrency, slack, "guti")]
            lat = [x for r in runs for x in r.latencies]
            first = [x for r in runs for x in r.first_latencies]
            if lat and first:
                print(f"| {concurrency} | {slack} ms | {len(lat)} | "
                      f"{statistics.median(lat):.2f} | {percentile(lat, 0.99):.2f} | "
                      f"{max(lat):.2f} | {percentile(first, 0.99):.2f} | {max(first):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
