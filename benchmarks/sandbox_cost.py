"""What an engine's resource limits cost: per engine start and per move.

**Start**: ``--starts`` starts (default 40) of ``/bin/true`` through guti's
:class:`~guti.referee.process.engine_process.EngineProcess`, plain and inside each kind of
limit (memory and processes: a cgroup; network off: a namespace; files private:
bubblewrap; all of them): the time from ``start()`` to the exit being seen (the
wrapper's Python start, the cgroup made and joined, the namespace, bubblewrap, the exec),
and the time of ``quit()`` (the cgroup emptied and removed). Median and 90th percentile.

**Move**: ``--games`` games (default 4, ``--plies`` plies each) between two instant
engines (the C bot, else the faulty.py test engine), plain and with each kind of limit:
the wall time per ply and the referee's own CPU per ply (``time.process_time``: what it
spends reading the engines' CPU time from their cgroup or /proc, and everything else).
With ``limits.ponder=off`` every CPU reading is taken afresh (no tick cache).

    nice python benchmarks/sandbox_cost.py [--starts 40] [--games 4] [--plies 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from guti.referee.game.engine_config import EngineConfig, engine_config_from_tokens  # noqa: E402
from guti.referee.game.limits import Limits  # noqa: E402
from guti.referee.game.runner import play_game  # noqa: E402
from guti.referee.game.settings import Adjudication, GameSpec  # noqa: E402
from guti.referee.process import event_loop  # noqa: E402
from guti.referee.process.engine_process import EngineProcess  # noqa: E402
from guti.referee.process.sandbox import enforcement  # noqa: E402
from guti.referee.ugi.client import UgiEngine  # noqa: E402

#: The kinds of limits compared, as engine settings.
KINDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "memory+processes": ("limits.memory=256M", "limits.processes=16"),
    "network off": ("limits.network=off",),
    "files private": ("limits.files=private",),
    "all four": ("limits.memory=256M", "limits.processes=16", "limits.network=off",
                 "limits.files=private"),
    "ponder off": ("limits.ponder=off",),
}
C_BOT = os.path.join(ROOT, "bots", "c", "bot")
FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")


def config(name: str, argv: list[str], settings: tuple[str, ...], cwd: str) -> EngineConfig:
    tokens = [("cmd", argv[0]), ("name", name), ("dir", cwd), ("stderr", os.devnull)]
    if len(argv) > 1:
        tokens.append(("args", " ".join(argv[1:])))
    return engine_config_from_tokens([*tokens, *((s.split("=", 1)[0], s.split("=", 1)[1])
                                                 for s in settings)])


async def starts(settings: tuple[str, ...], n: int, cwd: str) -> tuple[list[float], list[float]]:
    """Start and stop ``/bin/true`` ``n`` times: the start times and the stop times (s)."""
    started, stopped = [], []
    for i in range(n):
        proc = EngineProcess(config(f"true{i}", ["/bin/true"], settings, cwd))
        t0 = time.perf_counter()
        await proc.start()
        handle = proc._handle  # the exit, as the referee sees it
        assert handle is not None
        await handle.exited.wait()
        t1 = time.perf_counter()
        await proc.quit(grace=0.0, term_grace=0.0)
        started.append(t1 - t0)
        stopped.append(time.perf_counter() - t1)
    return started, stopped


async def moves(settings: tuple[str, ...], games: int, plies: int, argv: list[str], cwd: str
                ) -> tuple[float, float, int]:
    """Play ``games`` games of at most ``plies`` plies: wall s, referee CPU s, plies."""
    cfgs = [config(f"e{k}", argv, settings, cwd) for k in range(2)]
    engines = [await UgiEngine.launch(c, "egara-guti") for c in cfgs]
    spec = GameSpec("egara-guti", adjudication=Adjudication(maxmoves=plies // 2)).with_limits(
        Limits(movetime_ms=1000))
    wall = cpu = 0.0
    total = 0
    try:
        for g in range(games):
            white, black = engines[g % 2], engines[1 - g % 2]
            w0, c0 = time.perf_counter(), time.process_time()
            record = await play_game(white, black, spec)
            wall += time.perf_counter() - w0
            cpu += time.process_time() - c0
            total += record.plies
    finally:
        for engine in engines:
            await engine.quit(grace=0.5)
    return wall, cpu, total


def ms(values: list[float], q: float) -> str:
    values = sorted(values)
    return f"{values[min(len(values) - 1, int(q * len(values)))] * 1000:.1f}"


async def main(opts: argparse.Namespace) -> None:
    how = enforcement()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; limits here: "
          f"memory by {how.memory}, processes by {how.processes}, network off by "
          f"{how.network}, files private by {how.bubblewrap}")
    cwd = os.path.join("/tmp", f"guti-sandbox-bench-{os.getpid()}")
    os.makedirs(cwd, exist_ok=True)
    argv = [C_BOT] if os.access(C_BOT, os.X_OK) else [sys.executable, FAULTY]
    await starts((), 5, cwd)  # a warm-up, not counted
    print(f"\nstart of /bin/true ({opts.starts} each; ms): median, p90 start | median stop")
    for kind, settings in KINDS.items():
        if kind == "ponder off":
            continue  # nothing to start it in
        began, ended = await starts(settings, opts.starts, cwd)
        print(f"  {kind:18} {ms(began, 0.5):>7} {ms(began, 0.9):>7} | "
              f"{statistics.median(ended) * 1000:.1f}")
    print(f"\nmoves of {os.path.basename(argv[-1])} ({opts.games} games of up to {opts.plies} "
          "plies): wall ms per ply, referee CPU ms per ply")
    await moves((), 1, opts.plies, argv, cwd)  # a warm-up, not counted
    for kind, settings in KINDS.items():
        wall, cpu, plies = await moves(settings, opts.games, opts.plies, argv, cwd)
        print(f"  {kind:18} {wall / plies * 1000:7.3f} {cpu / plies * 1000:7.3f}"
              f"   ({plies} plies)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", type=int, default=40)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--plies", type=int, default=60)
    event_loop.run(main(ap.parse_args()))
    print(f"load after: {os.getloadavg()[0]:.2f}")
