#!/usr/bin/env python3
"""A UGI engine that attacks the machine at its first ``go``, for the resource-limit tests.

Usage: hostile.py --mode MODE [--pidfile F] [--mark F] [--port P] [--target T] [--burn S]

Modes:
  good      legal moves, at once (the opponent, or a control)
  memory    at go 1 fills 2 GB of memory, page by page, then plays on
  forkbomb  at go 1 starts up to 64 processes that sleep for ever; when a start is
            refused it dies of it (as an engine failing to start a search thread)
  network   at go 1 connects to 127.0.0.1:P; writes ``connected`` or ``blocked: why``
            to the mark file, and plays on either way
  burn      at every go spends ``--burn`` CPU seconds (0.1 by default) before its move
  files     at go 1 writes the file T (``--target``), then ``written`` or ``blocked: why``
            to the mark file, and plays on either way

Every process it starts appends ``PID STARTTIME`` to the pidfile, so tests can check that
none survives; ``--mark`` gets the mode (``memory``, ``forkbomb``) the moment it strikes.
The fork bomb is bounded (64) so that, were the limit not enforced, the machine is not hurt.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import sys
import threading
import time

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.rules import Board  # noqa: E402 - after the path of the repository


def record_pid(pidfile: str | None) -> None:
    if not pidfile:
        return
    with open(f"/proc/{os.getpid()}/stat") as fh:
        data = fh.read()
    start = data[data.rfind(")") + 2 :].split()[19]
    with open(pidfile, "a") as fh:
        fh.write(f"{os.getpid()} {start}\n")


def note(path: str | None, text: str) -> None:
    if path:
        with open(path, "a") as fh:
            fh.write(text + "\n")


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def attack(mode: str, opts: argparse.Namespace) -> None:
    if mode == "memory":
        note(opts.mark, mode)
        hoard = []
        for _ in range(2048):
            hoard.append(b"\x01" * (1 << 20))  # written, so really held
    elif mode == "forkbomb":
        note(opts.mark, mode)
        for _ in range(64):
            if os.fork() == 0:
                record_pid(opts.pidfile)
                while True:
                    time.sleep(1)
    elif mode == "network":
        try:
            socket.create_connection(("127.0.0.1", opts.port), timeout=2).close()
            note(opts.mark, "connected")
        except OSError as exc:
            note(opts.mark, f"blocked: {exc}")
    elif mode == "files":
        try:
            with open(opts.target, "w") as fh:
                fh.write("an engine was here\n")
            note(opts.mark, "written")
        except OSError as exc:
            note(opts.mark, f"blocked: {exc}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="good")
    ap.add_argument("--pidfile")
    ap.add_argument("--mark")
    ap.add_argument("--port", type=int, default=9)
    ap.add_argument("--target", default="/etc/guti-hostile-engine-was-here")
    ap.add_argument("--burn", type=float, default=0.1)
    opts = ap.parse_args()
    record_pid(opts.pidfile)
    game, board, gos = "egara-guti", Board("egara-guti"), 0
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "ugi":
            out(f"id name hostile-{opts.mode}")
            out("option name UGI_Variant type combo default egara-guti var egara-guti var pretwa")
            out("ugiok")
        elif words[0] == "isready":
            out("readyok")
        elif words[0] == "setoption" and len(words) >= 5 and words[2].lower() == "ugi_variant":
            game = words[4]
        elif words[0] == "position":
            board = Board(game) if words[1] == "startpos" else Board.from_fen(
                game, " ".join(words[2:words.index("moves")] if "moves" in words else words[2:]))
            for move in words[words.index("moves") + 1:] if "moves" in words else []:
                board.push_str(move)
        elif words[0] == "go":
            gos += 1
            if gos == 1:
                attack(opts.mode, opts)
            if opts.mode == "burn":
                burn(opts.burn)
            moves = board.legal_moves
            out(f"bestmove {moves[0]}" if moves else "bestmove none")
        elif words[0] == "quit":
            break


def burn(seconds: float, threads: int = 8) -> None:
    """Spend ``seconds`` of CPU, on as many cores as the machine gives: ``threads`` threads
    hashing (hashlib lets go of the interpreter's lock), so that even on a loaded machine
    the engine runs on more than half a core while it burns."""
    block = bytes(1 << 20)
    until = time.process_time() + seconds

    def spin() -> None:
        while time.process_time() < until:
            hashlib.sha256(block).digest()

    workers = [threading.Thread(target=spin) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


if __name__ == "__main__":
    main()
