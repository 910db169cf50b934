#!/usr/bin/env python3
"""A UGI engine with a deliberately wrong move generator, for the perft-diff tests.

Usage: buggy_movegen.py [--missing-jump FROMxTO] [--game egara-guti]

It plays by guti's rules core with one directed jump deleted from the board's
jump table: by default Egara-guti's ``20x6`` (20 over 16 to 6, one direction
of the left vertical line 2-6-16-20), the kind of slip an engine author makes
when writing the tables by hand. The reverse jump ``6x20`` still works, so
the bug only shows in positions where a White piece on 20 could capture up
the vertical: from the start its first differing perft is depth 5, under
``13-12`` only, and stepping into ``13-12`` narrows it further. Everything
else (protocol, end rules, FEN) is correct, so the console's and the check's
perft diffs are what find the bug.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.engine.ugi import RESULT_WORDS  # noqa: E402  (an engine: the reference engine's words)
from guti.rules import Board, Result, RulesError, divide, get_game  # noqa: E402
from guti.rules.games import Game  # noqa: E402


def buggy_game(name: str, missing: str) -> Game:
    """``name``'s Game with the directed jump ``missing`` (``"20x6"``) removed."""
    game = get_game(name)
    src, dst = (int(p) for p in missing.split("x"))
    geo = game.geometry
    jumps_from = [list(entries) for entries in geo.jumps_from]
    before = len(jumps_from[src - 1])
    jumps_from[src - 1] = [e for e in jumps_from[src - 1] if e[1] != dst - 1]
    if len(jumps_from[src - 1]) == before:
        raise SystemExit(f"buggy_movegen: {name} has no jump {missing}")
    broken = dataclasses.replace(geo, jumps_from=tuple(tuple(e) for e in jumps_from))
    return dataclasses.replace(game, geometry=broken)


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--missing-jump", default="20x6")
    ap.add_argument("--game", default="egara-guti", help="the game that has the bug")
    opts = ap.parse_args()
    games = {"egara-guti": get_game("egara-guti"), "pretwa": get_game("pretwa")}
    games[opts.game] = buggy_game(opts.game, opts.missing_jump)
    game = games["egara-guti"]
    board = Board(game)
    rng = random.Random(1)
    pending: str | None = None  # bestmove held back by go infinite

    def set_position(words: list[str]) -> Board:
        if "moves" in words:
            cut = words.index("moves")
            head, moves = words[:cut], words[cut + 1 :]
        else:
            head, moves = words, []
        if head == ["startpos"]:
            new = Board(game)
        elif head and head[0] == "fen":
            new = Board.from_fen(game, " ".join(head[1:]))
        else:
            raise RulesError("position: expected startpos or fen")
        for i, m in enumerate(moves, 1):
            try:
                new.push_str(m)
            except RulesError as exc:
                raise RulesError(f"move {i}: {exc}") from None
        return new

    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd == "ugi":
            out("id name buggy-movegen")
            out("id author guti tests")
            out("option name UGI_Variant type combo default egara-guti var egara-guti var pretwa")
            out("ugiok")
        elif cmd == "isready":
            out("readyok")
        elif cmd == "setoption":
            if len(args) >= 4 and args[1].lower() == "ugi_variant" and args[3] in games:
                game = games[args[3]]
                board = Board(game)
            else:
                out(f"info string error setoption: cannot set {' '.join(args)}")
        elif cmd == "uginewgame":
            board = Board(game)
        elif cmd == "position":
            try:
                board = set_position(args)
            except RulesError as exc:
                out(f"info string error position: {exc}")
        elif cmd == "go":
            if "perft" in args:
                i = args.index("perft")
                depth = args[i + 1] if i + 1 < len(args) else ""
                if not depth.isdigit():
                    out(f"info string error go perft: bad depth {depth!r}")
                    continue
                d = int(depth)
                total = 1
                if d > 0:
                    split = divide(board, d)
                    for move, count in split:
                        out(f"{move}: {count}")
                    total = sum(c for _, c in split)
                out(f"nodes {total}")
                continue
            moves = board.legal_moves
            best = str(rng.choice(moves)) if moves else "none"
            out("info depth 1 score cp 0 nodes 1")
            if "infinite" in args and moves:
                pending = best
            else:
                out(f"bestmove {best}")
        elif cmd == "stop":
            if pending is not None:
                out(f"bestmove {pending}")
                pending = None
        elif cmd == "query":
            what = args[0] if args else ""
            if what == "gameover":
                out(f"response {'true' if board.is_game_over() else 'false'}")
            elif what == "p1turn":
                out(f"response {'true' if board.turn == 'w' else 'false'}")
            elif what == "result":
                outcome = board.outcome()
                result = Result.UNFINISHED if outcome is None else outcome.result
                out(f"response {RESULT_WORDS[result]}")
            else:
                out(f"info string error query: unknown question {what!r}")
        elif cmd == "d":
            for line in board.board_string().splitlines():
                if not line.startswith("fen "):
                    out(f"info string {line}")
            out(f"fen {board.fen()}")
            out("legal " + " ".join(str(m) for m in board.legal_moves))
        elif cmd == "quit":
            break
        else:
            out(f"info string unknown command {raw.strip()}")


if __name__ == "__main__":
    main()
