"""A live reference-engine process for the engine tests: send lines, read with timeouts.

Why: the engine must be tested as the referee and consoles see it, through its pipes, so
every test talks to ``python -m engine`` started fresh. A reader thread moves stdout
lines into a queue, so every read can time out instead of hanging the suite.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE_ARGV = [sys.executable, "-m", "engine"]
TIMEOUT = 15.0  # generous: a shared, noisy 2-core machine


class Engine:
    """The engine process; ``lines`` holds (arrival time, line) pairs from its stdout."""

    def __init__(self, argv: list[str] | None = None):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv or ENGINE_ARGV, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put((time.perf_counter(), raw.decode("utf-8", "replace").rstrip("\r\n")))
        self.lines.put((time.perf_counter(), None))

    def send(self, line: str | bytes) -> float:
        data = line if isinstance(line, bytes) else line.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def read(self, timeout: float = TIMEOUT) -> tuple[float, str]:
        try:
            at, line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output from the engine within {timeout} s") from None
        if line is None:
            raise AssertionError("the engine closed its output")
        return at, line

    def read_until(self, prefix: str, timeout: float = TIMEOUT) -> tuple[float, list[str]]:
        """Lines up to and including the first starting with ``prefix``; (its time, lines)."""
        deadline = time.perf_counter() + timeout
        got = []
        while True:
            at, line = self.read(max(0.01, deadline - time.perf_counter()))
            got.append(line)
            if line.startswith(prefix):
                return at, got

    def ask(self, line: str, timeout: float = TIMEOUT) -> list[str]:
        """Send ``line`` then ``isready``; every line before ``readyok``."""
        self.send(line)
        self.send("isready")
        return self.read_until("readyok", timeout)[1][:-1]

    def handshake(self) -> None:
        self.send("ugi")
        self.read_until("ugiok")
        self.ask("uginewgame")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except OSError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
