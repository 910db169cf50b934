#!/usr/bin/env python3
"""A tiny UGI engine for referee tests: a legal random mover that misbehaves on request.

Usage: faulty.py [--mode MODE] [--at N] [--pidfile F] [--mark F] [--variants a,b] [--seed S]

Modes (N = the engine's N-th ``go``, 1-based, default 1):
  good          legal random moves, answered at once (also the benchmark engine)
  crash         exit with status 3 at go N, without answering
  kill          SIGKILL itself at go N (a signal death)
  hang          never answers go N (nor anything after it)
  slow          at go N answers only after its time + 0.4 s (a time forfeit), and again
                whenever it is asked anew in that position of that game (a referee that
                was late itself voids a late move and asks again, up to three times)
  illegal       at go N plays a well-formed illegal move
  garbage       at go N answers ``bestmove @@garbage@@``
  none          at go N answers ``bestmove none`` although moves exist
  chatter       at go N prints junk lines but never a bestmove
  ignore-quit   ignores quit, SIGTERM and EOF on stdin
  fork          forks a grandchild that keeps the pipes open and ignores SIGTERM
  fork-crash    like fork, and the engine itself exits at go N
  setsid-crash  like fork-crash, the grandchild in a session of its own (out of the group)
  longline      at go N writes 10 MB without a newline, then hangs
  close-stdout  at go N closes its stdout and keeps running
  exit-now      exits with status 0 before reading anything
  startup-crash raises an exception at start-up (traceback on stderr, status 1)
  no-ugiok      never finishes the handshake
  split         writes every reply's ``bestmove`` word alone, flushed, and its move a moment
                later (no ``info`` line before it): the referee reads the word on its own
``--think S`` makes every ``go`` take S seconds (games that last, so that they overlap).
``--threads N`` gives it N threads from the start (a pool of N - 1 idle search threads).
``--name TEXT`` is the ``id name`` it reports and ``--stderr TEXT`` a line it writes to
stderr at start (both with ``\\x1b``-style escapes decoded, for hostile-text tests).
Every process of the engine appends ``PID STARTTIME`` to the pidfile, so tests
can check that none survives. With ``--mark F`` the engine appends its mode to F the
moment the fault strikes (at go N), so a test can wait for that event instead of sleeping.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def record_pid(pidfile: str | None) -> None:
    if not pidfile:
        return
    with open(f"/proc/{os.getpid()}/stat") as fh:
        data = fh.read()
    start = data[data.rfind(")") + 2 :].split()[19]
    with open(pidfile, "a") as fh:
        fh.write(f"{os.getpid()} {start}\n")


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="good")
    ap.add_argument("--at", type=int, default=1)
    ap.add_argument("--pidfile")
    ap.add_argument("--mark")
    ap.add_argument("--variants", default="egara-guti,pretwa")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--think", type=float, default=0.0)
    ap.add_argument("--name", help="the id name it reports (\\x escapes decoded)")
    ap.add_argument("--stderr", help="written to stderr at start (\\x escapes decoded)")
    ap.add_argument("--threads", type=int, default=1)
    opts = ap.parse_args()
    idle = threading.Event()
    for _ in range(opts.threads - 1):  # a search thread pool, waiting for work
        threading.Thread(target=idle.wait, daemon=True).start()
    mode = opts.mode
    record_pid(opts.pidfile)
    if opts.stderr:
        sys.stderr.write(opts.stderr.encode().decode("unicode_escape") + "\n")
        sys.stderr.flush()
    if mode == "exit-now":
        sys.exit(0)
    if mode == "startup-crash":
        raise RuntimeError("faulty engine: deliberate start-up crash")
    if mode in ("ignore-quit", "fork", "fork-crash", "setsid-crash"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode in ("fork", "fork-crash", "setsid-crash"):
        recorded, told = os.pipe()
        if os.fork() == 0:  # grandchild: holds stdin/stdout/stderr, ignores SIGTERM
            if mode == "setsid-crash":
                os.setsid()
            record_pid(opts.pidfile)
            os.write(told, b".")
            while True:
                time.sleep(1)
        os.read(recorded, 1)  # its pid is in the pidfile before the engine plays on

    from guti.rules import Board

    rng = random.Random(opts.seed)
    variants = [v for v in opts.variants.split(",") if v]
    game = variants[0] if variants else "egara-guti"
    board = Board(game)
    base: tuple[str, ...] = ()
    applied: list[str] = []
    gos = 0
    games = 0  # uginewgame commands so far
    slow_at: tuple[int, str] | None = None  # (game, position) of the slow answer

    def set_position(words: list[str]) -> None:
        nonlocal board, base, applied
        if "moves" in words:
            cut = words.index("moves")
            head, moves = words[:cut], words[cut + 1 :]
        else:
            head, moves = words, []
        key = tuple(head)
        if key == base and moves[: len(applied)] == applied:
            new = moves[len(applied) :]  # incremental: only the new plies
        else:
            board = Board(game) if head == ["startpos"] else Board.from_fen(game, " ".join(head[1:]))
            base, applied, new = key, [], moves
        for m in new:
            board.push_str(m)
            applied.append(m)

    def my_time(words: list[str]) -> float:
        key = "p1time" if board.turn == "w" else "p2time"
        for name in (key, "movetime"):
            if name in words:
                return int(words[words.index(name) + 1]) / 1000
        return 0.0

    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "ugi":
            name = opts.name.encode().decode("unicode_escape") if opts.name else "faulty-" + mode
            out("id name " + name)
            out("id author guti tests")
            if variants:
                vars_ = " ".join(f"var {v}" for v in variants)
                out(f"option name UGI_Variant type combo default {variants[0]} {vars_}")
            out("option name Hash type spin default 16 min 1 max 1024")
            if mode != "no-ugiok":
                out("ugiok")
        elif cmd == "isready":
            out("readyok")
        elif cmd == "setoption" and len(words) >= 5 and words[2].lower() == "ugi_variant":
            game = words[4]
            board, base, applied = Board(game), (), []
        elif cmd == "uginewgame":
            games += 1
            board, base, applied = Board(game), (), []
        elif cmd == "position":
            set_position(words[1:])
        elif cmd == "go":
            gos += 1
            hit = gos == opts.at
            if hit and opts.mark:
                with open(opts.mark, "a") as fh:
                    fh.write(mode + "\n")
            if hit and mode in ("crash", "fork-crash", "setsid-crash"):
                os._exit(3)
            if hit and mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if hit and mode == "hang":
                while True:
                    time.sleep(1)
            if hit and mode == "longline":
                chunk = "x" * (1 << 20)
                for _ in range(10):
                    sys.stdout.write(chunk)
                sys.stdout.flush()
                while True:
                    time.sleep(1)
            if hit and mode == "close-stdout":
                sys.stdout.flush()
                os.close(1)
                while True:
                    time.sleep(1)
            if hit and mode == "chatter":
                for i in range(5):
                    out(f"thinking very hard {i}")
                while True:
                    time.sleep(1)
            if hit and mode == "slow":
                slow_at = (games, board.fen())
            if slow_at is not None and slow_at == (games, board.fen()):
                time.sleep(my_time(words) + 0.4)
            time.sleep(opts.think)
            moves = board.legal_moves
            if hit and mode == "garbage":
                out("bestmove @@garbage@@")
                continue
            if hit and mode == "none":
                out("bestmove none")
                continue
            if hit and mode == "illegal":
                legal = {str(m) for m in moves}
                n = 23 if game == "egara-guti" else 19
                bad = next(
                    f"{a}-{b}"
                    for a in range(1, n + 1)
                    for b in range(1, n + 1)
                    if a != b and f"{a}-{b}" not in legal
                )
                out(f"info string playing illegal {bad} on purpose")
                out(f"bestmove {bad}")
                continue
            if not moves:
                out("bestmove none")
                continue
            if mode == "split":
                sys.stdout.write("bestmove")
                sys.stdout.flush()
                time.sleep(0.02)  # the referee reads the word before its move is written
                out(f" {rng.choice(moves)}")
                continue
            out("info depth 1 score cp 0 nodes 1")
            out(f"bestmove {rng.choice(moves)}")
        elif cmd == "quit":
            if mode == "ignore-quit":
                continue
            break
    if mode == "ignore-quit":
        while True:  # EOF on stdin too is ignored
            time.sleep(1)


if __name__ == "__main__":
    main()
