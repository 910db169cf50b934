#!/usr/bin/env python3
"""A UGI test engine whose reported scores follow a script, for adjudication tests.

Usage: scripted.py --scores SPEC [--name NAME]

SPEC is a comma-separated list, one entry per ``go`` of this engine in a game (the last
one repeats for ever; ``uginewgame`` starts the script again): ``cp:N`` / ``win:N`` / ``loss:N`` (an ``info depth 1 score ...`` line
before ``bestmove``), ``none`` (an info line without a score) or ``silent`` (no info line
at all); ``ENTRY*K`` repeats an entry K times. Example: ``cp:0*5,cp:-600``.

Moves are deterministic, so two runs of the same pair play the same game: the first legal
move (in the rules core's order) that leads to a position not seen before in the game,
else the first legal move. Avoiding repetitions makes games long enough (Alquerque runs
to about a hundred plies) for adjudication rules to trigger well before the rules end it.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.rules import GAMES, Board  # noqa: E402


def expand(spec: str) -> list[str]:
    entries: list[str] = []
    for item in spec.split(","):
        text, _, times = item.partition("*")
        entries += [text.strip()] * (int(times) if times else 1)
    return entries


def info_line(entry: str) -> str | None:
    if entry == "silent":
        return None
    if entry == "none":
        return "info depth 1 nodes 1 time 0"
    kind, _, value = entry.partition(":")
    return f"info depth 1 score {kind} {int(value)} nodes 1 time 0"


def _key(board: Board) -> str:
    return board.fen().rsplit(" ", 2)[0]  # the position without the clock and move number


def choose(board: Board, seen: set[str]) -> str:
    for move in board.legal_moves:
        board.push(move)
        fresh = _key(board) not in seen
        board.pop()
        if fresh:
            return str(move)
    return str(board.legal_moves[0])


def replay(game: str, words: list[str]) -> tuple[Board, set[str]]:
    """The board of a ``position`` command and every position seen on the way."""
    cut = words.index("moves") if "moves" in words else len(words)
    head, moves = words[:cut], words[cut + 1:]
    board = Board(game) if head == ["startpos"] else Board.from_fen(game, " ".join(head[1:]))
    seen = {_key(board)}
    for move in moves:
        board.push_str(move)
        seen.add(_key(board))
    return board, seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scores", default="silent")
    ap.add_argument("--name", default="scripted")
    opts = ap.parse_args()
    script = expand(opts.scores)
    game, board, seen, goes = "egara-guti", Board("egara-guti"), set(), 0

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "ugi":
            out(f"id name {opts.name}")
            out(f"option name UGI_Variant type combo default {game} "
                + " ".join(f"var {g}" for g in GAMES))
            out("ugiok")
        elif words[0] == "isready":
            out("readyok")
        elif words[:3] == ["setoption", "name", "UGI_Variant"] and len(words) >= 5:
            game = words[4]
        elif words[0] == "uginewgame":
            goes = 0  # every game follows the script from its start
        elif words[0] == "position":
            board, seen = replay(game, words[1:])
        elif words[0] == "go":
            entry = script[min(goes, len(script) - 1)]
            goes += 1
            line = info_line(entry)
            if line is not None:
                out(line)
            out(f"bestmove {choose(board, seen)}" if board.legal_moves else "bestmove none")
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
