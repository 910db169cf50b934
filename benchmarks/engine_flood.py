"""One engine's output must not cost another engine its game.

Why: the referee reads every engine in one event loop. If reading a flooding engine's
output holds the loop, a well-behaved engine in another game has its ``bestmove`` read
late and loses on time although it answered within its limit.

The case: two games at once (concurrency 2). In one, two *flooders* send ``info`` lines
at about 50,000 lines/s each, all the time, and answer ``go`` after half their time. In
the other, two *punctual* engines answer ``go movetime 50`` (``st=0.05``, no margin)
after 40 ms by their own clock, 10 ms inside their limit (``--slack-ms``), and write nothing else
but, with the ``bestmove``, an ``info string wrote T`` (T: their ``time.monotonic()``
at the write, the same clock as the referee's), so the referee's *receive lag* is
measured too: from the engine's write to the referee's stamp of the reply. Both
are small Python programs in this file (``--engine flooder|punctual``); moves come from
the rules core. Any loss of a punctual engine is a fault of the referee: it is counted,
with the punctual engines' largest measured move time.

    python benchmarks/engine_flood.py [--rounds 10] [--log] [--slack-ms 10] [--baseline COMMIT]

``--log`` writes the traffic log (``-log``) of both games to a temporary file.
``--baseline COMMIT`` runs this same script on COMMIT's files (extracted into a
temporary folder) in the same run and prints both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

FLOOD_PER_S = 50_000
PUNCTUAL_SLACK_MS = 10.0


# --------------------------------------------------------------------------- the engines


def _engine(kind: str, slack_ms: float) -> None:
    """A minimal UGI engine: ``flooder`` or ``punctual`` (see the module docstring)."""
    from guti.rules import Board

    out = sys.stdout.buffer
    lock = threading.Lock()

    def write(data: bytes) -> None:
        with lock:
            out.write(data)
            out.flush()

    if kind == "flooder":
        def flood() -> None:
            batch = 500  # lines per burst; FLOOD_PER_S / batch bursts a second
            n = 0
            while True:
                lines = b"".join(b"info depth %d nodes %d nps 1000000 string %s\n"
                                 % (n + i, 1000 * (n + i), b"x" * 40) for i in range(batch))
                n += batch
                write(lines)
                time.sleep(batch / FLOOD_PER_S)

        threading.Thread(target=flood, daemon=True).start()
    board = Board("egara-guti")
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "ugi":
            write(b"id name " + kind.encode() + b"\nugiok\n")
        elif words[0] == "isready":
            write(b"readyok\n")
        elif words[0] == "position":
            board = Board("egara-guti")
            if "moves" in words:
                for move in words[words.index("moves") + 1:]:
                    board.push_str(move)
        elif words[0] == "go":
            got = time.monotonic()
            movetime = int(words[words.index("movetime") + 1]) if "movetime" in words else 50
            wait = movetime / 2 if kind == "flooder" else movetime - slack_ms
            time.sleep(max(0.0, got + wait / 1000 - time.monotonic()))
            legal = board.legal_moves
            move = f"bestmove {legal[0] if legal else 'none'}\n".encode()
            write(b"info string wrote %.6f\n" % time.monotonic() + move)
        elif words[0] == "quit":
            return


# --------------------------------------------------------------------------- the measurement


def _config(kind: str, name: str, slack_ms: float):  # type: ignore[no-untyped-def]
    from guti.referee.game.engine_config import EngineConfig

    return EngineConfig(name=name, argv=[sys.executable, os.path.abspath(__file__),
                                         "--engine", kind, "--slack-ms", str(slack_ms)])


async def _pair(kind: str, game_no: int, traffic, slack_ms: float):  # type: ignore[no-untyped-def]
    from guti.referee.ugi.client import UgiEngine

    hook = traffic.hook(f"g{game_no}") if traffic is not None else None
    a = await UgiEngine.launch(_config(kind, f"{kind}1", slack_ms), "egara-guti", 20, hook)
    b = await UgiEngine.launch(_config(kind, f"{kind}2", slack_ms), "egara-guti", 20, hook)
    return a, b


def _timed(engine, lags: list[float]) -> None:  # type: ignore[no-untyped-def]
    """Record, for each reply of ``engine``, how long after the engine wrote it the
    referee stamped it (the engine's ``info string wrote T`` uses the same clock)."""
    wait_bestmove = engine.wait_bestmove  # what the game loop awaits for each reply

    async def timed_wait(*args, **kw):  # type: ignore[no-untyped-def]
        reply = await wait_bestmove(*args, **kw)
        for info in reply.infos:
            if info.startswith("info string wrote "):
                lags.append(1000 * (reply.received_at - float(info.split()[3])))
        return reply

    engine.wait_bestmove = timed_wait


async def _measure(rounds: int, log_path: str | None, slack_ms: float) -> dict[str, float]:
    from guti.referee.game.limits import parse_limits
    from guti.referee.game.runner import play_game
    from guti.referee.game.settings import GameSpec
    from guti.referee.process.traffic_log import TrafficLog

    traffic = TrafficLog(log_path) if log_path else None
    limits = parse_limits({"st": "0.05"})
    floods = await _pair("flooder", 1, traffic, slack_ms)
    punctual = await _pair("punctual", 2, traffic, slack_ms)
    lags: list[float] = []
    for eng in punctual:
        _timed(eng, lags)
    forfeits = games = 0
    worst = 0.0
    moves = 0
    try:
        for r in range(rounds):
            w, b = punctual if r % 2 == 0 else punctual[::-1]
            fw, fb = floods if r % 2 == 0 else floods[::-1]
            spec = GameSpec("egara-guti", round_tag=str(r + 1)).with_limits(limits)
            _, record = await asyncio.gather(play_game(fw, fb, spec), play_game(w, b, spec))
            games += 1
            if record.fault is not None:
                forfeits += 1
                print(f"round {r + 1}: punctual game lost: {record.reason}: {record.detail}",
                      file=sys.stderr)
            times = [t for t in record.elapsed_ms if t is not None]
            moves += len(times)
            worst = max([worst, *times])
            if traffic is not None:
                traffic.flush()
    finally:
        for eng in (*floods, *punctual):
            await eng.quit(grace=0.2)
        if traffic is not None:
            traffic.close()
    lags.sort()
    return {"games": float(games), "forfeits": float(forfeits), "worst_ms": worst,
            "moves": float(moves), "lag_median_ms": lags[len(lags) // 2],
            "lag_p99_ms": lags[int(len(lags) * 0.99)], "lag_max_ms": lags[-1]}


def measure(rounds: int, log: bool, slack_ms: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "traffic.log") if log else None
        began = time.perf_counter()
        result = asyncio.run(_measure(rounds, path, slack_ms))
        result["wall_s"] = time.perf_counter() - began
        if path is not None:
            result["log_mib"] = os.path.getsize(path) / 2**20
    return result


def _baseline(commit: str, rounds: int, log: bool, slack_ms: float) -> dict[str, float]:
    """This script's figures for ``commit``, measured in its own files."""
    from source_trees import extract, json_in

    args = ["--rounds", str(rounds), "--slack-ms", str(slack_ms)] + (["--log"] if log else [])
    with tempfile.TemporaryDirectory(prefix="engine-flood-") as tree:
        extract(commit, tree)
        return json_in(tree, __file__, args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["flooder", "punctual"], help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--log", action="store_true", help="write the traffic log")
    parser.add_argument("--slack-ms", type=float, default=PUNCTUAL_SLACK_MS,
                        help="how long before their limit the punctual engines answer")
    parser.add_argument("--baseline", metavar="COMMIT")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.engine:
        _engine(args.engine, args.slack_ms)
        return 0
    base = (_baseline(args.baseline, args.rounds, args.log, args.slack_ms)
            if args.baseline else None)
    now = measure(args.rounds, args.log, args.slack_ms)
    if args.json:
        print(json.dumps(now))
        return 0
    rows = [("punctual games", "games", "{:.0f}"), ("their moves", "moves", "{:.0f}"),
            ("punctual games lost", "forfeits", "{:.0f}"),
            ("largest punctual move time (ms, limit 50)", "worst_ms", "{:.1f}"),
            ("receive lag, median (ms)", "lag_median_ms", "{:.2f}"),
            ("receive lag, 99th percentile (ms)", "lag_p99_ms", "{:.2f}"),
            ("receive lag, largest (ms)", "lag_max_ms", "{:.2f}")]
    print(f"load average: {os.getloadavg()[0]:.2f}; traffic log: {'on' if args.log else 'off'};"
          f" punctual engines answer {args.slack_ms:g} ms before their limit")
    head = f"| | baseline {args.baseline} | this checkout |" if base else "| | this checkout |"
    print(head)
    print("|---|---|---|" if base else "|---|---|")
    for label, key, fmt in rows:
        cells = [fmt.format(base[key])] if base else []
        print(f"| {label} | {' | '.join([*cells, fmt.format(now[key])])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
