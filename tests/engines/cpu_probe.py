#!/usr/bin/env python3
"""A tiny UGI engine that reports where it runs: a legal random mover that, at every
``go``, reads its own ``/proc/PID/status`` and prints ``info string cpus LIST`` (the
``Cpus_allowed_list`` the kernel holds for it at that moment) before its move, and
``info string referee LIST``, its parent's (the referee that started it).

Why: ``-use-affinity`` is checked from the running engines themselves, while they play,
and the traffic log ties each report to the game it was made in.
Usage: cpu_probe.py [--think S] (seconds to spend on each move, default 0.05).
"""

from __future__ import annotations

import os
import random
import sys
import time

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.rules import Board  # noqa: E402


def allowed_cpus(pid: int | None = None) -> str:
    with open(f"/proc/{pid or os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return "?"


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    think = float(sys.argv[sys.argv.index("--think") + 1]) if "--think" in sys.argv else 0.05
    rng = random.Random()
    game = "egara-guti"
    board = Board(game)
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "ugi":
            out("id name cpu-probe")
            out(f"option name UGI_Variant type combo default {game} var {game} var pretwa")
            out("ugiok")
        elif words[0] == "isready":
            out("readyok")
        elif words[0] == "setoption" and len(words) >= 5 and words[2] == "UGI_Variant":
            game = words[4]
        elif words[0] == "position":
            cut = words.index("moves") if "moves" in words else len(words)
            head, moves = words[1:cut], words[cut + 1 :]
            board = Board(game) if head == ["startpos"] else Board.from_fen(game, " ".join(head[1:]))
            for move in moves:
                board.push_str(move)
        elif words[0] == "go":
            time.sleep(think)
            out(f"info string cpus {allowed_cpus()}")
            out(f"info string referee {allowed_cpus(os.getppid())}")
            legal = board.legal_moves
            out(f"bestmove {rng.choice(legal)}" if legal else "bestmove none")
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
