#!/usr/bin/env python3
"""The reference engine with one quirk a stranger's engine had, for tests of what guti says.

Usage: quirky.py [--quirk Q]... [--at N] [--option-line LINE]... [--setlog F]

The commands go to the reference engine (:mod:`guti.engine.ugi`) unless a quirk takes them:

  stdout-debug      also writes a non-protocol line ``debug: got ...`` for every command
  strict-utf8       exits with status 1 (message on stderr) on a line that is not UTF-8
  no-extensions     a cutegames-style engine: ``d`` and ``go perft`` are unknown commands,
                    and errors are worded ``info string invalid ...`` (not ``error``)
  reject-movestogo  answers a ``go`` with ``movestogo`` by ``info string error`` only
  panic             at go N writes 30 lines on stderr, the last ones a Rust panic
                    message and ``note: run with RUST_BACKTRACE=1 ...``, then exits 101
  reject-options    answers ``setoption`` of a ``--option-line`` option by ``info string error``
  reject-moves      answers every ``position ... moves ...`` with ``info string error``
                    (keeping its old position, so its next move is an illegal one)
  chatty-isready    writes 100 ``info string`` lines before each ``readyok``
  tabbed-errors     writes its ``info string error`` lines with a tab between the words
                    and a blank before them (protocol.md 5.1 allows any blanks)
  padded            writes every line with two blanks before and after it (allowed too)
  double-bestmove   writes each ``bestmove`` line twice, in one write
  late-readyok      answers the Nth ``isready`` (``--at N``) 2.5 s late, the others at once

``--option-line`` adds option declarations to the ``ugi`` answer (accepted by
``setoption`` silently); ``--setlog F`` appends every ``setoption`` and ``go`` line to F.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.engine.ugi import EngineSession, Output  # noqa: E402


class Quirky:
    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.quirks = set(opts.quirk or [])
        self.out = _Quirked(sys.stdout, self.quirks)
        self.engine_out: Output = _Rewriter(self) if "no-extensions" in self.quirks else self.out
        self.engine = EngineSession(self.engine_out)
        self.goes = 0
        self.readies = 0
        self.extra = {line.split(" type ")[0].removeprefix("option name ").lower()
                      for line in opts.option_line or []}

    def log(self, line: str) -> None:
        if self.opts.setlog:
            with open(self.opts.setlog, "a") as fh:
                fh.write(line.strip() + "\n")

    def say(self, line: str) -> None:
        if "no-extensions" in self.quirks and line.startswith("info string error"):
            line = "info string invalid" + line[len("info string error"):]
        if "tabbed-errors" in self.quirks and line.startswith("info string error"):
            line = " info\tstring\terror" + line[len("info string error"):]
        self.out.line(line)

    def handle(self, line: str) -> bool:
        words = line.split()
        if not words:
            return True
        if "stdout-debug" in self.quirks:
            self.out.line(f"debug: got {line.strip()[:40]}")
        head = words[0]
        if head in ("setoption", "go"):
            self.log(line)
        if head == "isready":
            self.readies += 1
            if "late-readyok" in self.quirks and self.readies == self.opts.at:
                time.sleep(2.5)  # past guti check's 2 s for a readyok
        if head == "isready" and "chatty-isready" in self.quirks:
            for n in range(100):
                self.out.line(f"info string getting ready, step {n}")
        if head == "ugi":
            return self.ugi()
        if head == "setoption" and " ".join(words[2:]).split(" value")[0].lower() in self.extra:
            if "reject-options" in self.quirks:
                self.say(f"info string error {line.strip()}: cannot apply it")
            return True
        if "no-extensions" in self.quirks and (head == "d" or words[:2] == ["go", "perft"]):
            self.out.line(f"info string unknown command {line.strip()}")
            return True
        if head == "go":
            self.goes += 1
            if "reject-movestogo" in self.quirks and "movestogo" in words:
                self.say("info string error go: unknown parameter movestogo")
                return True
            if "panic" in self.quirks and self.goes >= self.opts.at:
                self.panic()
        if head == "position" and "reject-moves" in self.quirks and "moves" in words:
            self.say("info string error position: moves are not supported here")
            return True
        return self.engine.handle(line)

    def ugi(self) -> bool:
        captured = io.StringIO()
        self.engine.out = Output(captured)
        self.engine.handle("ugi")
        self.engine.out = self.engine_out
        lines = captured.getvalue().splitlines()
        for line in lines[:-1]:
            self.out.line(line)
        for line in self.opts.option_line or []:
            self.out.line(line)
        self.out.line(lines[-1])
        return True

    def panic(self) -> None:
        for i in range(24):
            sys.stderr.write(f"search: iteration {i} done\n")
        sys.stderr.write("thread 'main' panicked at src/search.rs:42:9:\n")
        sys.stderr.write("index out of bounds: the len is 23 but the index is 23\n")
        sys.stderr.write("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
        sys.stderr.flush()
        os._exit(101)


class _Quirked(Output):
    """stdout, with the ``padded`` and ``double-bestmove`` quirks."""

    def __init__(self, stream: io.TextIOBase, quirks: set[str]) -> None:
        super().__init__(stream)  # type: ignore[arg-type]
        self.quirks = quirks

    def line(self, text: str) -> None:
        if "padded" in self.quirks:
            text = f"  {text}  "
        if "double-bestmove" in self.quirks and text.split()[:1] == ["bestmove"]:
            text = f"{text}\n{text}"  # one write: the second is there when the first is read
        super().line(text)


class _Rewriter(Output):
    """The reference engine's output with ``info string error`` reworded (no-extensions)."""

    def __init__(self, quirky: Quirky) -> None:
        super().__init__(sys.stdout)
        self.quirky = quirky

    def line(self, text: str) -> None:
        self.quirky.say(text)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quirk", action="append")
    ap.add_argument("--at", type=int, default=1)
    ap.add_argument("--option-line", action="append")
    ap.add_argument("--setlog")
    opts = ap.parse_args()
    quirky = Quirky(opts)
    try:
        while True:
            raw = sys.stdin.buffer.readline()
            if not raw:
                break
            try:
                line = raw.decode("utf-8", "strict" if "strict-utf8" in quirky.quirks else "replace")
            except UnicodeDecodeError as exc:
                sys.stderr.write(f"fatal: input is not UTF-8: {exc}\n")
                return 1
            if not quirky.handle(line):
                break
    finally:
        quirky.engine.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
