"""The floor under the referee's CPU per ply: a bare loop that does only the unavoidable.

Why: issue 16 asks for 0.07 ms of referee CPU per ply. This measures what a referee
written in Python cannot go below on this machine: per ply, write ``position``/``go``,
wait for the engine's reply, read it, and judge and play the move with the rules core;
no clock, record, store, traffic log or timeout bookkeeping. Two shapes of wait:

- ``loop``: the event loop (uvloop when installed) wakes a reader callback, which
  resolves a future the game coroutine awaits (guti's shape);
- ``thread``: each game in its own thread, sleeping in ``poll()`` on the engine's stdout.

Both play the same games (the C bot, compiled into a temporary folder, at concurrency 1
and 2), alternately, ``--rounds`` times; CPU per ply is ``getrusage`` of this process.

    python benchmarks/referee_floor.py [--games 200] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import select
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from guti.rules import Board  # noqa: E402

GO = b"\ngo p1time 10000 p2time 10000 p1inc 100 p2inc 100\n"


def spawn(bot: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([bot], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    os.write(proc.stdin.fileno(), b"ugi\nisready\n")
    seen = b""
    while b"readyok" not in seen:
        seen += os.read(proc.stdout.fileno(), 65536)
    os.set_blocking(proc.stdout.fileno(), False)
    return proc


def fds(proc: subprocess.Popen[bytes]) -> tuple[int, int]:
    assert proc.stdin is not None and proc.stdout is not None
    return proc.stdin.fileno(), proc.stdout.fileno()


def thread_game(pair: list[subprocess.Popen[bytes]]) -> int:
    """One game, blocking: poll, read, judge, play. Returns its plies."""
    board, line, plies = Board("egara-guti"), "position startpos", 0
    polls = []
    for proc in pair:
        poll = select.poll()
        poll.register(fds(proc)[1], select.POLLIN)
        polls.append(poll)
    while not board.is_game_over():
        side = plies & 1
        stdin, stdout = fds(pair[side])
        os.write(stdin, line.encode() + GO)
        polls[side].poll(10_000)
        move = os.read(stdout, 65536).split()[1].decode()
        board.push(board.legal_move(move) or move)
        line += (" " if plies else " moves ") + move
        plies += 1
    return plies


async def loop_game(pair: list[subprocess.Popen[bytes]]) -> int:
    """One game, the event loop's way: a reader callback resolves the awaited future."""
    loop = asyncio.get_running_loop()
    board, line, plies = Board("egara-guti"), "position startpos", 0
    waiting: list[asyncio.Future[bytes]] = []

    def readable(stdout: int) -> None:
        data = os.read(stdout, 65536)
        if waiting and not waiting[0].done():
            waiting.pop().set_result(data)

    for proc in pair:
        loop.add_reader(fds(proc)[1], readable, fds(proc)[1])
    try:
        while not board.is_game_over():
            stdin, _ = fds(pair[plies & 1])
            reply = loop.create_future()
            waiting.append(reply)
            os.write(stdin, line.encode() + GO)
            move = (await reply).split()[1].decode()
            board.push(board.legal_move(move) or move)
            line += (" " if plies else " moves ") + move
            plies += 1
    finally:
        for proc in pair:
            loop.remove_reader(fds(proc)[1])
    return plies


def measure(shape: str, pairs: list[list[subprocess.Popen[bytes]]], games: int) -> float:
    """CPU ms per ply of ``games`` games played on ``pairs`` at once (one game per pair)."""
    each = games // len(pairs)
    plies = [0] * len(pairs)
    before = resource.getrusage(resource.RUSAGE_SELF)
    if shape == "thread":
        def slot(i: int) -> None:
            for _ in range(each):
                plies[i] += thread_game(pairs[i])
        threads = [threading.Thread(target=slot, args=(i,)) for i in range(len(pairs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        async def slot_async(i: int) -> None:
            for _ in range(each):
                plies[i] += await loop_game(pairs[i])

        async def play() -> None:
            await asyncio.gather(*(slot_async(i) for i in range(len(pairs))))
        try:
            import uvloop
            uvloop.run(play())
        except ImportError:
            asyncio.run(play())
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return 1000 * cpu / sum(plies)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bot = os.path.join(folder, "cbot")
        subprocess.run(["gcc", "-O2", "-o", bot, os.path.join(ROOT, "bots", "c", "bot.c")],
                       check=True)
        pairs = [[spawn(bot), spawn(bot)] for _ in range(2)]
        results: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for concurrency in (1, 2):
                for shape in ("loop", "thread"):
                    key = f"{shape} c{concurrency}"
                    cpu = measure(shape, pairs[:concurrency], args.games)
                    results.setdefault(key, []).append(cpu)
        for pair in pairs:
            for proc in pair:
                proc.kill()
                proc.wait()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {args.games} games per run")
    print("| shape | concurrency | CPU per ply (ms), each round |")
    print("|---|---|---|")
    for key, values in results.items():
        shape, conc = key.split()
        print(f"| {shape} | {conc[1:]} | {' / '.join(f'{v:.3f}' for v in values)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
