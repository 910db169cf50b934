#!/usr/bin/env python3
"""A legal UGI engine (random legal moves, answered at once) that does what may trouble its
referee, though the protocol allows it; for the tests of ``tests/test_referee_trouble.py``.

Usage: troubled.py [--chatty MB] [--setsid PIDFILE] [--gate DIR] [--at N]

  --chatty MB       at go N, writes MB megabytes of ``info`` lines before its bestmove
  --setsid PIDFILE  at start, forks a child that calls setsid() (leaving the engine's
                    process group) and sleeps for ever; ``PID STARTTIME`` of it is
                    appended to PIDFILE
  --gate DIR        at go N, appends ``go`` to DIR/events, waits until DIR/open exists,
                    writes its bestmove, then appends ``replied`` to DIR/events: a test
                    can stop the referee between the two and continue it after the reply
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def note(gate: str, event: str) -> None:
    with open(os.path.join(gate, "events"), "a") as fh:
        fh.write(event + "\n")


def start_setsid_child(pidfile: str) -> None:
    """A child in a session of its own: the engine's group kill does not reach it."""
    if os.fork() == 0:
        os.setsid()
        with open(f"/proc/{os.getpid()}/stat") as fh:
            start = fh.read().rsplit(")", 1)[1].split()[19]
        with open(pidfile, "a") as fh:
            fh.write(f"{os.getpid()} {start}\n")
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        while True:
            time.sleep(1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chatty", type=float, default=0.0)
    ap.add_argument("--setsid")
    ap.add_argument("--gate")
    ap.add_argument("--at", type=int, default=1)
    opts = ap.parse_args()
    if opts.setsid:
        start_setsid_child(opts.setsid)

    from guti.rules import Board

    rng = random.Random(1)
    game = "egara-guti"
    board = Board(game)
    gos = 0
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "ugi":
            out("id name troubled")
            out("option name UGI_Variant type combo default egara-guti var egara-guti var pretwa")
            out("ugiok")
        elif cmd == "isready":
            out("readyok")
        elif cmd == "setoption" and len(words) >= 5 and words[2].lower() == "ugi_variant":
            game = words[4]
        elif cmd == "position":
            moves = words[words.index("moves") + 1 :] if "moves" in words else []
            board = Board(game) if words[1] == "startpos" else Board.from_fen(
                game, " ".join(words[2 : words.index("moves") if "moves" in words else None]))
            for move in moves:
                board.push_str(move)
        elif cmd == "go":
            gos += 1
            hit = gos == opts.at
            if hit and opts.chatty:
                line = b"info depth 12 seldepth 20 score cp 31 nodes 123456789 nps 9999999 pv 1-2\n"
                block = line * ((1 << 20) // len(line))
                for _ in range(int(opts.chatty * (1 << 20) / len(block))):
                    sys.stdout.buffer.write(block)
                sys.stdout.buffer.flush()
            if hit and opts.gate:
                note(opts.gate, "go")
                while not os.path.exists(os.path.join(opts.gate, "open")):
                    time.sleep(0.005)
            legal = board.legal_moves
            out(f"bestmove {rng.choice(legal)}" if legal else "bestmove none")
            if hit and opts.gate:
                note(opts.gate, "replied")
        elif cmd == "quit":
            break


if __name__ == "__main__":
    main()
