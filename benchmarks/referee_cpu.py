"""The referee's own cost: CPU per 1,000 plies, games/s at concurrency 1 and 2, CLI start-up.

At short time controls and high concurrency the referee's CPU competes with the engines
for the same cores, and what it spends turns into time losses. This measures that cost
alone: two instant-reply engines (the C bot, compiled here into a temporary folder, which
answers ``go`` the moment it arrives), 400 Egara-guti games at tc=10+0.1, the tournament
run inside the measuring process so that ``resource.getrusage(RUSAGE_SELF)`` counts the
referee's CPU and nothing of its children. Plies are counted from the stored games.

    python benchmarks/referee_cpu.py [--games 400] [--baseline COMMIT] [--rounds N] [--pinned]
    python benchmarks/referee_cpu.py --cutegames PATH/TO/cutegames [--games 400] [--rounds N]

``--baseline COMMIT`` extracts COMMIT into a temporary folder and measures it and this
checkout in turn, each in a fresh process (this script, run in each tree), ``--rounds``
times (which goes first alternates from round to round), and prints the medians side by
side: both are measured in the same run, on the same loaded machine. On a busy shared
machine the medians of two identical trees can still differ by some 10 %: use enough
rounds, and compare the CPU per ply rather than games/s, which moves more. ``--pinned`` adds the pinned shapes (``-use-affinity``, and
``-referees 2`` at concurrency 2) and the wall time of a 2-game run, which is little but
the run's fixed cost, and the CPU the whole machine spent per ply at concurrency 2 (the
referee processes, the engines and the kernel's work for them): with both cores
saturated, games/s follows it, and it moves far less than games/s from run to run. A few
games are played first and not counted, so that what a run
imports on its way is not counted either.

``--cutegames BINARY`` plays the same match with cutegames (a C++ host of the UGI
protocol, built outside this repository) and with guti, both from the start position,
alternating, and prints games/s at concurrency 1 and 2 for each, and guti's games/s at
concurrency 2 over cutegames' in the same round (median and range). cutegames runs the
engines' own game (its ``generic`` mode): it checks no move and asks the engines whether
the game is over, with ``isready`` and ``query gameover`` round trips each ply besides ``go``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import cutegames_match  # noqa: E402
from source_trees import extract, json_in, uptime  # noqa: E402


def _tournament_main():  # type: ignore[no-untyped-def]
    """``main_tournament(argv) -> int`` of the tree this script runs in."""
    return importlib.import_module("guti.referee.cli.tournament").main_tournament


def build_bot(folder: str) -> str:
    """The C bot compiled into ``folder`` (never into the source tree)."""
    out = os.path.join(folder, "cbot")
    subprocess.run(["gcc", "-O2", "-o", out, os.path.join(ROOT, "bots", "c", "bot.c")],
                   check=True)
    return out


def _plies(db: str) -> int:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT moves FROM games").fetchall()
    return sum(len(str(moves).split()) for (moves,) in rows)


#: ``--pinned``: guti's flags for each referee shape. At concurrency 1 the referee and the
#: engines share CPU 0; at concurrency 2 each of two referee processes shares one CPU with
#: the engines it starts.
PINNED = {1: ["-use-affinity", "0"], 2: ["-referees", "2", "-use-affinity"]}


def interpreter() -> str:
    """The Python that runs the referee, and whether its interpreter loop lives in a shared
    ``libpython`` (pyenv's default build) or is linked into the executable (Debian's
    python3.11): most of a ply's CPU is that loop, so the build can show in the figures."""
    try:
        with open("/proc/self/maps") as fh:
            shared = "libpython" in fh.read()
    except OSError:
        return f"{sys.executable} (Python {sys.version.split()[0]})"
    how = "libpython loaded as a shared library" if shared else "libpython linked in"
    return f"{sys.executable} (Python {sys.version.split()[0]}, {how})"


def referee_processes_cpu(part: str = "run") -> float | None:
    """CPU seconds reported so far by ``-referees`` processes: ``run``, refereeing;
    ``start``, their start-up (Python and the imports: like this process's own imports,
    done in the uncounted warm-up, not counted as refereeing). None: the tree does not
    count them (an older one)."""
    try:
        module = importlib.import_module("guti.referee.execution.referee_pool")
    except ModuleNotFoundError:
        return None
    return float(module.referee_processes_cpu(part))


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine has been busy since it started (``/proc/stat``:
    user, nice, system, irq and softirq), whatever ran: the referee, its referee
    processes, the engines and the kernel's work for them. With the cores saturated, as
    in the pinned shapes, games/s follows this per ply, and it moves much less from run
    to run than games/s does; other work on the machine counts too, so it wants a
    machine otherwise idle."""
    with open("/proc/stat") as fh:
        fields = [int(value) for value in fh.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def run_tournament(folder: str, bot: str, games: int, concurrency: int,
                   openings: bool = True, flags: tuple[str, ...] = ()) -> dict[str, float]:
    """One tournament in this process: CPU seconds of the referee (this process, and its
    ``-referees`` processes, engines never counted), wall seconds, plies.
    ``openings``: 2-ply random openings (else every game from the start position);
    ``flags``: more of guti's options."""
    db = os.path.join(folder, f"c{concurrency}-{time.monotonic_ns()}.db")
    argv = ["-engine", f"cmd={bot}", "name=a", "option.Seed=1",
            "-engine", f"cmd={bot}", "name=b", "option.Seed=2",
            "-each", "tc=10+0.1", "-game", "egara-guti", "-games", str(games),
            "-concurrency", str(concurrency), "-db", db, "-quiet", "-ratinginterval", "0"]
    if openings:
        argv += ["-openings", "random:2", "-srand", "1"]
    argv += flags
    main = _tournament_main()
    children, starts = referee_processes_cpu(), referee_processes_cpu("start")
    before = resource.getrusage(resource.RUSAGE_SELF)
    busy = machine_busy_seconds()
    began = time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        code = main(argv)
    wall = time.perf_counter() - began
    busy = machine_busy_seconds() - busy
    after = resource.getrusage(resource.RUSAGE_SELF)
    if code != 0:
        raise SystemExit(f"tournament exited {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures = {"cpu": cpu, "wall": wall, "busy": busy, "plies": float(_plies(db)),
               "games": float(games)}
    ended, started = referee_processes_cpu(), referee_processes_cpu("start")
    if ended is not None and children is not None and started is not None and starts is not None:
        figures["cpu"] += ended - children
        figures["start_cpu"] = started - starts
    return figures


def cli_startup(repeat: int = 10, bytecode: bool = True) -> float:
    """Median wall seconds of ``guti match --help`` (a fresh interpreter each time).

    ``bytecode``: as installed, with the modules' compiled bytecode cached (pip compiles
    a package when it installs it), in a temporary cache folder so that the source tree
    stays clean, filled by one run first. Without it every start compiles every module
    it imports again (how it runs where ``PYTHONDONTWRITEBYTECODE`` is set)."""
    entry = "guti.cli" if os.path.exists(os.path.join(ROOT, "guti", "cli.py")) \
        else "guti.referee.cli.main"  # where older trees keep the command
    code = ("import sys; sys.argv=['guti','match','--help']\n"
            f"from {entry} import main\nsys.exit(main())")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=ROOT)
        if bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = cache
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        times = []
        for _ in range(repeat + 1):  # the first run fills the cache and is not counted
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL,
                           env=env, check=True)
            times.append(time.perf_counter() - began)
    return statistics.median(times[1:])


def measure(games: int, pinned: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        bot = build_bot(folder)
        # Not counted: a few games first, so that the modules a run imports on its way
        # are loaded (and, without a bytecode cache, compiled) before the CPU is counted.
        os.mkdir(os.path.join(folder, "warm-up"))
        run_tournament(os.path.join(folder, "warm-up"), bot, 4, 2)
        one = run_tournament(folder, bot, games, 1)
        two = run_tournament(folder, bot, games, 2)
        extra: dict[str, float] = {}
        if pinned:
            p1 = run_tournament(folder, bot, games, 1, flags=tuple(PINNED[1]))
            p2 = run_tournament(folder, bot, games, 2, flags=tuple(PINNED[2]))
            # what a run costs besides its games: starting the referee processes and their
            # engines, closing them, the database (median of three 2-game runs)
            short = statistics.median(run_tournament(folder, bot, 2, 2, flags=tuple(PINNED[2]))
                                      ["wall"] for _ in range(3))
            extra = {
                "pinned_short_run_s": short,
                "pinned_games_per_s_c1": p1["games"] / p1["wall"],
                "pinned_games_per_s_c2": p2["games"] / p2["wall"],
                "pinned_busy_us_per_ply_c2": 1e6 * p2["busy"] / p2["plies"],
            }
            if "start_cpu" in p2:  # a tree that counts its referee processes' CPU
                extra["pinned_cpu_ms_per_ply"] = (1000 * (p1["cpu"] + p2["cpu"])
                                                  / (p1["plies"] + p2["plies"]))
                extra["pinned_referee_start_cpu_s"] = p2["start_cpu"] / 2
    plies = one["plies"] + two["plies"]
    return {
        **extra,
        "cpu_ms_per_ply": 1000 * (one["cpu"] + two["cpu"]) / plies,
        "games_per_s_c1": one["games"] / one["wall"],
        "games_per_s_c2": two["games"] / two["wall"],
        "wall_c1": one["wall"],
        "wall_c2": two["wall"],
        "plies": plies,
        "startup_s": cli_startup(),
        "startup_nocache_s": cli_startup(bytecode=False),
    }


def measured_in(tree: str, games: int, pinned: bool) -> dict[str, float]:
    """This script's figures for the source tree ``tree``, measured in a fresh process."""
    return json_in(tree, __file__, ["--games", str(games), *(["--pinned"] if pinned else [])])


def run_cutegames(binary: str, folder: str, bot: str, games: int, concurrency: int) -> float:
    """Games/s of cutegames on the same match (:mod:`cutegames_match`)."""
    return games / cutegames_match.play(binary, folder, bot, games, concurrency,
                                        {"type": "clock", "time": 10000, "increment": 100})


def compare_cutegames(binary: str, games: int, rounds: int, pinned: bool = False) -> int:
    """guti against cutegames, same engines and match, alternating; medians of games/s
    (``pinned``: guti also with :data:`PINNED`'s flags)."""
    runs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        bot = build_bot(folder)
        run_tournament(folder, bot, 4, 2)  # warm-up, not counted
        for _ in range(max(1, rounds)):
            for c in (1, 2):
                runs.setdefault(f"cutegames c{c}", []).append(
                    run_cutegames(binary, folder, bot, games, c))
                one = run_tournament(folder, bot, games, c, openings=False)
                runs.setdefault(f"guti c{c}", []).append(one["games"] / one["wall"])
                runs.setdefault(f"guti cpu c{c}", []).append(1000 * one["cpu"] / one["plies"])
                if pinned:
                    one = run_tournament(folder, bot, games, c, openings=False,
                                         flags=tuple(PINNED[c]))
                    runs.setdefault(f"pinned c{c}", []).append(one["games"] / one["wall"])
                    runs.setdefault(f"pinned cpu c{c}", []).append(
                        1000 * one["cpu"] / one["plies"])
    med = {key: statistics.median(values) for key, values in runs.items()}
    print(f"interpreter: {interpreter()}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; medians of {rounds} run(s), "
          f"{games} games from the start position")
    shapes = ["guti", "pinned"] if pinned else ["guti"]
    heads = {"guti": "guti", "pinned": "guti pinned"}
    print("| | cutegames | " + " | ".join(
        f"{heads[s]} | {heads[s]} referee CPU per ply (ms)" for s in shapes) + " |")
    print("|---|---|" + "---|---|" * len(shapes))
    for c in (1, 2):
        cells = " | ".join(f"{med[f'{s} c{c}']:.1f} | {med[f'{s} cpu c{c}']:.3f}"
                           for s in shapes)
        print(f"| games/s, concurrency {c} | {med[f'cutegames c{c}']:.1f} | {cells} |")
    if pinned:
        print("guti pinned: " + "; ".join(f"concurrency {c}: {' '.join(PINNED[c])}"
                                          for c in (1, 2)))
    # The host's load moves both hosts' rates by a third from one minute to the next, so
    # the ratio of each guti run to the cutegames run of its own round (minutes apart at
    # most) says more than the ratio of the medians.
    for s in shapes:
        ratios = sorted(g / c for g, c in zip(runs[f"{s} c2"], runs["cutegames c2"], strict=True))
        print(f"{heads[s]} / cutegames at concurrency 2, round by round: median "
              f"{statistics.median(ratios):.2f}x, from {ratios[0]:.2f}x to {ratios[-1]:.2f}x")
    return 0


ROWS = [
    ("referee CPU per ply (ms) = CPU s per 1,000 plies", "cpu_ms_per_ply", "{:.3f}"),
    ("games/s, concurrency 1", "games_per_s_c1", "{:.1f}"),
    ("games/s, concurrency 2", "games_per_s_c2", "{:.1f}"),
    ("`guti match --help` start-up (s), bytecode cached (as installed)", "startup_s", "{:.3f}"),
    ("`guti match --help` start-up (s), compiling every module", "startup_nocache_s", "{:.3f}"),
    ("pinned: referee CPU per ply (ms), referee processes included", "pinned_cpu_ms_per_ply",
     "{:.3f}"),
    ("pinned: games/s, concurrency 1 (`-use-affinity 0`)", "pinned_games_per_s_c1", "{:.1f}"),
    ("pinned: games/s, concurrency 2 (`-referees 2 -use-affinity`)", "pinned_games_per_s_c2",
     "{:.1f}"),
    ("pinned, concurrency 2: the whole machine's CPU per ply (us: referees, engines, kernel)",
     "pinned_busy_us_per_ply_c2", "{:.1f}"),
    ("pinned: start-up CPU of each referee process (s; not in the CPU per ply)",
     "pinned_referee_start_cpu_s", "{:.3f}"),
    ("pinned: wall seconds of a 2-game run at concurrency 2 (a run's fixed cost)",
     "pinned_short_run_s", "{:.3f}"),
]


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def _cell(figures: dict[str, float] | None, key: str, fmt: str) -> str:
    """A table cell: the figure, or n/a (a baseline older than the option it needs)."""
    return fmt.format(figures[key]) if figures and key in figures else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--baseline", metavar="COMMIT",
                        help="measure this commit too, alternating with this checkout")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure this many times (alternating with the baseline); "
                             "the medians are shown (a loaded machine varies from run to run)")
    parser.add_argument("--json", action="store_true", help="one JSON line of figures")
    parser.add_argument("--cutegames", metavar="BINARY",
                        help="compare games/s with this cutegames executable instead")
    parser.add_argument("--pinned", action="store_true",
                        help="also measure the pinned shapes (see PINNED)")
    args = parser.parse_args()
    if args.cutegames:
        return compare_cutegames(args.cutegames, args.games, args.rounds, args.pinned)
    if args.json:
        print(json.dumps(measure(args.games, args.pinned)))
        return 0
    print(f"load before: {uptime()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="referee-cpu-") as scratch:
        trees = {"this checkout": ROOT}
        if args.baseline:
            extract(args.baseline, scratch)
            trees = {args.baseline: scratch, "this checkout": ROOT}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for turn in range(max(1, args.rounds)):
            # first one tree, then the other, then the other first: neither is always
            # measured at the same point of a round (the load changes along it)
            for name, tree in list(trees.items())[::-1 if turn % 2 else 1]:
                runs[name].append(measured_in(tree, args.games, args.pinned))
    medians = {name: _medians(values) for name, values in runs.items()}
    print(f"interpreter: {interpreter()}")
    print(f"load after: {uptime()}; medians of {max(1, args.rounds)} run(s) per tree, alternated")
    print("| | " + " | ".join(trees) + " |")
    print("|---|" + "---|" * len(trees))
    for label, key, fmt in ROWS:
        if any(key in figures for figures in medians.values()):
            print(f"| {label} | " + " | ".join(_cell(medians[name], key, fmt) for name in trees)
                  + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
