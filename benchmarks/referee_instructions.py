"""The referee's instructions per ply with instant engines, counted by valgrind.

CPU time on a shared machine moves by 10-20 % from one minute to the next; the number of
instructions the interpreter executes does not. This counts them (valgrind's
``callgrind``, user space only: the kernel's part of a ply, the pipe write, read and
``epoll_wait``, is not in it) for a tournament of the C bot against itself, Egara-guti at
tc=10+0.1, concurrency 1, run twice, with 10 and with 60 games: the difference divided by
the difference in plies is what one more ply costs, start-up and imports left out.

Under valgrind a ply takes some fifty times longer, so anything that happens per unit of
time would happen per ply more often than in a real run. The one such thing that cost was
in trees that read each engine's CPU from ``/proc`` at most once per clock tick (before
the CPU came from each process's CPU clock, read every time): in them a reading is used
again for 5 s instead of 10 ms, about what a real run's readings cost per ply.

    python benchmarks/referee_instructions.py [--baseline COMMIT] [--games-per-run 60]
    python benchmarks/referee_instructions.py --without go,cpu   # pieces taken out

``--without`` replaces pieces of the referee with stand-ins that do nothing (``go``: the
``go`` line, written as a constant; ``cpu``: each engine's CPU readings, read as not
known; ``resources``: all of the accounting of what engines used; ``lateness``: the
lateness watch's bookkeeping per ``go``), to see what each costs. Needs ``valgrind`` and
``gcc``. Prints a line per tree.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from source_trees import extract  # noqa: E402

PIECES = ("go", "cpu", "resources", "lateness")


def take_out(pieces: list[str]) -> None:
    """Replace the named pieces of the referee imported here with stand-ins."""
    if "go" in pieces:
        from guti.referee.game import runner
        from guti.referee.ugi import client
        runner.go_for_turn = lambda *args: None  # type: ignore[assignment]
        client.go_line = lambda go: "go p1time 10000 p1inc 100 p2time 10000 p2inc 100"
    if "cpu" in pieces:
        from guti.referee.ugi import client
        client.UgiEngine.cpu_clock = lambda self: lambda: None  # type: ignore[method-assign]
    if "resources" in pieces:
        from guti.referee.game import resources
        for name in ("game_starts", "ready", "before_go", "asked_again", "after_move"):
            setattr(resources.GameResources, name, lambda self, *args: None)
        resources.GameResources.last_move_ms = lambda self, side: None  # type: ignore
        resources.GameResources.game_ends = lambda self: {}  # type: ignore[method-assign]
    if "lateness" in pieces:
        from guti.referee.process import lateness
        lateness.LatenessWatch.awaiting = lambda self, who, deadline: None  # type: ignore


def play(bot: str, games: int, folder: str) -> int:
    """One tournament in this process; the plies it stored."""
    from guti.referee.cli.tournament import main_tournament

    db = os.path.join(folder, f"g{games}-{os.getpid()}.db")
    argv = ["-engine", f"cmd={bot}", "name=a", "option.Seed=1",
            "-engine", f"cmd={bot}", "name=b", "option.Seed=2",
            "-each", "tc=10+0.1", "-game", "egara-guti", "-games", str(games),
            "-concurrency", "1", "-db", db, "-quiet", "-ratinginterval", "0",
            "-openings", "random:2", "-srand", "1"]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        if main_tournament(argv) != 0:
            raise SystemExit("the tournament failed")
    with sqlite3.connect(db) as conn:
        return sum(len(str(m).split()) for (m,) in conn.execute("SELECT moves FROM games"))


def child(tree: str, bot: str, games: int, folder: str, pieces: list[str]) -> None:
    """Run under valgrind: a few games first (imports), then ``games``; print the plies."""
    sys.path.insert(0, tree)
    try:
        from guti.referee.process import cpu_time
    except ImportError:
        pass  # a tree from before engines' CPU was read
    else:
        if hasattr(cpu_time, "_TICKS"):  # a tree reading /proc in ticks (see above)
            cpu_time._TICKS = 0.2  # a reading kept 5 s
    take_out(pieces)
    play(bot, 2, folder)
    print(f"PLIES {play(bot, games, folder)}", flush=True)


def count(tree: str, bot: str, games: int, folder: str, pieces: list[str]) -> tuple[int, int]:
    """Instructions and plies of one run under valgrind."""
    env = dict(os.environ, GUTI_EVENT_LOOP="asyncio")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         os.path.abspath(__file__), "--child", tree, bot, str(games), folder, ",".join(pieces)],
        capture_output=True, text=True, env=env, check=True)
    collected = [int(n) for n in re.findall(r"Collected : (\d+)", done.stderr)]
    plies = re.search(r"PLIES (\d+)", done.stdout)
    if not collected or plies is None:
        raise SystemExit(f"no count from valgrind: {done.stderr[-500:]}")
    return max(collected), int(plies.group(1))


def per_ply(tree: str, bot: str, games: int, folder: str, pieces: list[str]) -> tuple[float, int]:
    small = count(tree, bot, 10, folder, pieces)
    large = count(tree, bot, games, folder, pieces)
    return (large[0] - small[0]) / (large[1] - small[1]), large[1] - small[1]


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tree, bot, games, folder, pieces = sys.argv[2:7]
        child(tree, bot, int(games), folder, [p for p in pieces.split(",") if p])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="also count this commit's tree")
    parser.add_argument("--games-per-run", type=int, default=60)
    parser.add_argument("--without", default="", help=f"pieces to take out: {','.join(PIECES)}")
    args = parser.parse_args()
    pieces = [p for p in args.without.split(",") if p]
    if any(p not in PIECES for p in pieces):
        parser.error(f"--without: pieces are {', '.join(PIECES)}")
    with tempfile.TemporaryDirectory() as folder:
        bot = os.path.join(folder, "cbot")
        subprocess.run(["gcc", "-O2", "-o", bot, os.path.join(ROOT, "bots", "c", "bot.c")],
                       check=True)
        trees = [("this checkout", ROOT)]
        if args.baseline:
            base = os.path.join(folder, "base")
            extract(args.baseline, base)
            trees.insert(0, (args.baseline, base))
        for name, tree in trees:
            instructions, plies = per_ply(tree, bot, args.games_per_run, folder, pieces)
            taken = f" without {', '.join(pieces)}" if pieces else ""
            print(f"{name}{taken}: {instructions:,.0f} instructions per ply "
                  f"({plies} plies counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
