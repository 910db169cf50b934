"""How long starting engines holds up the referee's event loop (what other games' replies wait).

Starts ``--engines`` engine processes (default 32) at once on guti's event loop, as a
tournament's first games do, while a 1 ms heartbeat on the same loop measures its lag
(how late each tick ran). Also times each spawn, from the call to the process handle
(before guti ran it in a worker thread, all of it held up the loop). ``--ballast MB``
first makes the referee that much bigger (a long run's referee holds its schedule,
standings and buffers: forking copies its page tables).
``--handshake`` starts the reference engine and does the UGI handshake instead of a
plain ``cat`` (the Python start-up of 32 engines on a 2-core machine then mostly measures
the CPU they take from the referee, not the spawning itself).

    nice python benchmarks/engine_start_lag.py [--engines 32] [--ballast 200] [--handshake]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import statistics
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from guti.referee.process import event_loop, process_handle  # noqa: E402
from guti.referee.process.engine_process import EngineProcess  # noqa: E402
from guti.referee.ugi.client import UgiEngine  # noqa: E402


@dataclass
class Spec:
    name: str
    argv: list[str]
    cwd: str | None = None
    stderr_path: str | None = None
    options: dict[str, str] | None = None


async def heartbeat(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        due = time.perf_counter() + 0.001
        await asyncio.sleep(0.001)
        lags.append(max(0.0, time.perf_counter() - due))


async def main(opts: argparse.Namespace) -> None:
    spawns: list[float] = []
    original = process_handle.ProcessHandle.spawn.__func__  # type: ignore[attr-defined]

    async def timed_spawn(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return await original(cls, *args, **kwargs)
        finally:
            spawns.append(time.perf_counter() - t0)

    if not inspect.iscoroutinefunction(original):  # an older guti (--baseline): in the loop
        def timed_spawn(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            try:
                return original(cls, *args, **kwargs)
            finally:
                spawns.append(time.perf_counter() - t0)

    process_handle.ProcessHandle.spawn = classmethod(timed_spawn)  # type: ignore[method-assign]
    lags: list[float] = []
    stop = asyncio.Event()
    beat = asyncio.create_task(heartbeat(lags, stop))
    await asyncio.sleep(0.05)
    lags.clear()
    started = time.perf_counter()
    if opts.handshake:
        spec = Spec("ref", [sys.executable, "-m", "guti.engine"], options={})
        engines = await asyncio.gather(*(UgiEngine.launch(spec, "egara-guti", 60)  # type: ignore[arg-type]
                                         for _ in range(opts.engines)))
        took = time.perf_counter() - started
        stop.set()
        await beat
        await asyncio.gather(*(e.quit() for e in engines))
    else:
        procs = [EngineProcess(Spec(f"cat{i}", ["cat"])) for i in range(opts.engines)]  # type: ignore[arg-type]
        await asyncio.gather(*(p.start() for p in procs))
        took = time.perf_counter() - started
        await asyncio.sleep(0.02)
        stop.set()
        await beat
        await asyncio.gather(*(p.quit() for p in procs))
    lags.sort()
    print(f"{opts.engines} engines started in {took * 1000:.1f} ms"
          f" ({'handshake' if opts.handshake else 'cat'}, ballast {opts.ballast} MB,"
          f" loop {type(asyncio.get_running_loop()).__module__})")
    print(f"  spawn (start to handle): mean {statistics.mean(spawns) * 1000:.2f} ms,"
          f" max {max(spawns) * 1000:.2f} ms, total {sum(spawns) * 1000:.1f} ms")
    if lags:
        p99 = lags[min(len(lags) - 1, int(0.99 * len(lags)))]
        print(f"  loop lag: p50 {statistics.median(lags) * 1000:.2f} ms,"
              f" p99 {p99 * 1000:.2f} ms, max {lags[-1] * 1000:.2f} ms ({len(lags)} ticks)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", type=int, default=32)
    ap.add_argument("--ballast", type=int, default=0, help="MB the referee holds first")
    ap.add_argument("--handshake", action="store_true")
    opts = ap.parse_args()
    ballast = [bytearray(1 << 20) for _ in range(opts.ballast)]
    for block in ballast:
        block[::4096] = b"\1" * len(block[::4096])  # touched: real pages to copy
    event_loop.run(main(opts))
