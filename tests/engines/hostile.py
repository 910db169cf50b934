#!/usr/bin/env python3
"""A UGI engine that attacks the machine at its first ``go``, for the resource-limit tests.

Usage: hostile.py --mode MODE [--pidfile F] [--mark F] [--port P] [--target T] [--burn S]
                  [--sync DIR]

Modes:
  good      legal moves, at once (the opponent, or a control)
  memory    at go 1 fills 2 GB of memory, page by page, then plays on
  forkbomb  at go 1 starts up to 64 processes that sleep for ever; when a start is
            refused it dies of it (as an engine failing to start a search thread)
  network   at go 1 connects to 127.0.0.1:P; writes ``connected`` or ``blocked: why``
            to the mark file, and plays on either way
  burn      at every go spends ``--burn`` CPU seconds (0.1 by default) before its move
  helper    at every go has a helper process spend them: the helper is forked twice (so
            it is not the engine's child, and its CPU never counts in the engine's own)
            and has ended before the engine answers
  files     at go 1 writes the file T (``--target``), then ``written`` or ``blocked: why``
            to the mark file, and plays on either way
  spin      after its first bestmove leaves a thread spinning for ever (a search thread
            never stopped); with ``--sync DIR`` it tells its opponent when the thread has
            spent ``--burn`` CPU seconds since each of its bestmoves (see below)

``--sync DIR`` makes the opponent's wait an event, not a time: before each of its
bestmoves a spinner writes ``DIR/KEY.expect`` (KEY names the position its move makes),
and ``DIR/KEY.done`` once its thread has spent ``--burn`` CPU seconds after that
bestmove. Any engine given ``--sync DIR`` that is asked to move in a position with an
``.expect`` file waits for its ``.done`` first, so the spinner's CPU is all spent off
its move, whatever the machine's load.

Every process it starts appends ``PID STARTTIME`` to the pidfile, so tests can check that
none survives; ``--mark`` gets the mode (``memory``, ``forkbomb``) the moment it strikes.
The fork bomb is bounded (64) so that, were the limit not enforced, the machine is not hurt.
"""

from __future__ import annotations

import argparse
import contextlib
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
    elif mode == "child-memory":  # a child hoards; the engine waits for it, plays on
        note(opts.mark, mode)
        child = os.fork()
        if child == 0:
            record_pid(opts.pidfile)
            hoard = []
            for _ in range(2048):
                hoard.append(b"\x01" * (1 << 20))
            os._exit(0)
        os.waitpid(child, 0)
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


def position_key(start: list[str], moves: list[str]) -> str:
    """The name of a position for ``--sync``: its start and its moves."""
    return hashlib.sha1(" ".join([*start, "moves", *moves]).encode()).hexdigest()[:16]


class Spinner:
    """A thread that, once started, spins for ever; it writes ``DIR/KEY.done`` once it has
    spent ``burn`` CPU seconds since the bestmove that made position KEY."""

    def __init__(self, sync: str | None, burn: float) -> None:
        self.sync, self.burn = sync, burn
        self.lock = threading.Lock()
        self.pending: tuple[str, float] | None = None  # (key, thread CPU at its bestmove)
        self.started = False
        self.spent = 0.0  # the thread's CPU seconds, as it last read them

    def expect(self, key: str) -> None:
        if self.sync:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.sync, key + ".done"))
            open(os.path.join(self.sync, key + ".expect"), "w").close()

    def moved(self, key: str) -> None:
        """Its bestmove for position ``key`` is out."""
        with self.lock:
            self.pending = (key, self.spent)
        if not self.started:
            self.started = True
            threading.Thread(target=self.spin, daemon=True).start()

    def spin(self) -> None:
        block = bytes(1 << 16)
        while True:
            hashlib.sha256(block).digest()
            self.spent = time.thread_time()
            with self.lock:
                if self.pending is not None and self.spent - self.pending[1] >= self.burn:
                    key, self.pending = self.pending[0], None
                    if self.sync:
                        open(os.path.join(self.sync, key + ".done"), "w").close()


def wait_for_spinner(sync: str | None, key: str) -> None:
    """With ``--sync``: when a spinner made this position, wait until its thread has spent
    its CPU (the ``.done`` file); polls, as an engine thinking would."""
    if sync and os.path.exists(os.path.join(sync, key + ".expect")):
        while not os.path.exists(os.path.join(sync, key + ".done")):
            time.sleep(0.005)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="good")
    ap.add_argument("--pidfile")
    ap.add_argument("--mark")
    ap.add_argument("--port", type=int, default=9)
    ap.add_argument("--target", default="/etc/guti-hostile-engine-was-here")
    ap.add_argument("--burn", type=float, default=0.1)
    ap.add_argument("--sync")
    opts = ap.parse_args()
    record_pid(opts.pidfile)
    game, board, gos = "egara-guti", Board("egara-guti"), 0
    start: list[str] = ["startpos"]
    played: list[str] = []
    spinner = Spinner(opts.sync, opts.burn) if opts.mode == "spin" else None
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
            cut = words.index("moves") if "moves" in words else len(words)
            start, played = words[1:cut], words[cut + 1:]
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
            elif opts.mode == "helper":
                burn_in_helper(opts.burn)
            wait_for_spinner(opts.sync, position_key(start, played))
            moves = board.legal_moves
            if spinner is not None and moves:
                key = position_key(start, [*played, str(moves[0])])
                spinner.expect(key)
                out(f"bestmove {moves[0]}")
                spinner.moved(key)
                continue
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


def burn_in_helper(seconds: float) -> None:
    """:func:`burn` in a grandchild whose parent exits at once; back once it has ended
    (its end closes the pipe's last write end)."""
    done, holds = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(done)
        if os.fork() == 0:
            burn(seconds, threads=1)
        os._exit(0)
    os.close(holds)
    os.waitpid(child, 0)
    while os.read(done, 1):
        pass
    os.close(done)


if __name__ == "__main__":
    main()
