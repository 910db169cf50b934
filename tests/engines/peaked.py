#!/usr/bin/env python3
"""A UGI test engine whose strength peaks at a hidden value of its option ``X``: the target
of ``guti tune``'s tests.

Each move is a random legal move with probability ``min(1, |X - 70| / 80)``, else the
best move of a two-ply material search (most pieces ahead after the opponent's best
reply; ties broken at random). So the engine plays best at ``X = 70`` and worse the
farther ``X`` is from it.

Deterministic: the random choices are seeded by ``X`` and the position (with its move
history), so the same values and openings always give the same games, whichever process
plays them. Other options, for the tests of parameter specs: ``Narrow`` (spin 0..10),
``Upside`` (a spin declared with min 10 above max 0), ``Style`` (combo) and ``Wide`` (a
string, any number; not used).
"""

from __future__ import annotations

import os
import random
import sys

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from guti.rules import GAMES, Board  # noqa: E402

PEAK = 70


def material(board: Board, side: object) -> int:
    """``side``'s pieces minus the opponent's."""
    mine = board.count(side)  # type: ignore[arg-type]
    return mine - (board.count("w") + board.count("b") - mine)


def best_move(board: Board, rng: random.Random) -> str:
    """The move keeping the most material after the opponent's best reply."""
    me = board.turn
    scored = []
    for move in board.legal_moves:
        board.push(move)
        replies = board.legal_moves
        worst = material(board, me)
        for reply in replies:
            board.push(reply)
            worst = min(worst, material(board, me))
            board.pop()
        board.pop()
        scored.append((worst, str(move)))
    top = max(score for score, _ in scored)
    return rng.choice([text for score, text in scored if score == top])


def choose(board: Board, x: int, position: str) -> str:
    rng = random.Random(f"{x}|{position}")
    if rng.random() < min(1.0, abs(x - PEAK) / 80):
        return str(rng.choice(board.legal_moves))
    return best_move(board, rng)


def main() -> None:
    game, x, board, position = "egara-guti", 0, Board("egara-guti"), "startpos"

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "ugi":
            out("id name peaked")
            out(f"option name UGI_Variant type combo default {game} "
                + " ".join(f"var {g}" for g in GAMES))
            out("option name X type spin default 0 min 0 max 200")
            out("option name Narrow type spin default 5 min 0 max 10")
            out("option name Upside type spin default 5 min 10 max 0")
            out("option name Style type combo default calm var calm var wild")
            out("option name Wide type string default 0")
            out("ugiok")
        elif words[0] == "isready":
            out("readyok")
        elif words[:3] == ["setoption", "name", "UGI_Variant"] and len(words) >= 5:
            game = words[4]
        elif words[:3] == ["setoption", "name", "X"] and len(words) >= 5:
            x = int(words[4])
        elif words[0] == "position":
            position = " ".join(words[1:])
            cut = words.index("moves") if "moves" in words else len(words)
            head = words[1:cut]
            board = Board(game) if head == ["startpos"] else Board.from_fen(game, " ".join(head[1:]))
            for move in words[cut + 1:]:
                board.push_str(move)
        elif words[0] == "go":
            out(f"bestmove {choose(board, x, position)}" if board.legal_moves else "bestmove none")
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
