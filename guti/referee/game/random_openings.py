"""Openings made by random play: ``-openings file=random:K`` (or ``plies=K`` alone).

:func:`random_openings` plays random legal plies from the start position, keeps the
positions it meets (so that few plies, which lead to the same positions again and again,
cost little), and returns openings that are distinct as long as the game allows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from guti.referee.game.openings import Opening, OpeningsError
from guti.rules import Board, Move

#: Random games :func:`random_openings` plays before it gives up when none of them lasts
#: the plies asked for (with fewer openings asked for, their own budget, 50 tries each,
#: is smaller).
_FIRST_TRIES = 10_000
#: Most positions :func:`random_openings` keeps while it searches (memory stays bounded).
_KNOWN_LIMIT = 20_000


@dataclass(frozen=True)
class _Node:
    """A position reached by random play: the board, whether the game is over there, and
    its legal moves (the list ``rng.choice`` draws from, in the rules core's order)."""

    board: Board
    over: bool
    legal: list[Move]

    @classmethod
    def of(cls, board: Board) -> _Node:
        return cls(board, board.is_game_over(), board.legal_moves)

    def then(self, move: Move) -> _Node:
        board = self.board.copy()
        board.push(move)
        return _Node.of(board)


def random_openings(game: str, plies: int, count: int, seed: int | None = None) -> list[Opening]:
    """``count`` openings of ``plies`` random legal plies from the start, none finished,
    distinct as long as the game allows (deterministic for a given ``seed``)."""
    if plies < 0 or count < 1:
        raise OpeningsError("random openings need plies >= 0 and count >= 1")
    rng = random.Random(seed)
    seen: set[tuple[str, ...]] = set()
    found: list[Opening] = []
    attempts = 0
    start = Board(game)
    # The positions met so far, by the moves that lead to them: with few plies the same
    # ones come up again and again (and with few distinct openings every attempt is made).
    known: dict[tuple[str, ...], _Node] = {(): _Node.of(start)}
    while len(found) < count and attempts < count * 50:
        if not found and attempts >= _FIRST_TRIES:
            break  # none of that many reached the plies: more tries would not either
        attempts += 1
        key: tuple[str, ...] = ()
        node = known[key]
        while len(key) < plies and not node.over:
            move = rng.choice(node.legal)
            key = (*key, str(move))
            child = known.get(key)
            if child is None:
                child = node.then(move)
                if len(known) < _KNOWN_LIMIT:
                    known[key] = child
            node = child
        if node.over or len(key) < plies:
            continue
        if key in seen and attempts < count * 25:
            continue
        seen.add(key)
        found.append(Opening(None, key, f"random {len(found) + 1}"))
    if not found:
        raise OpeningsError(f"cannot make random openings of {plies} plies for {game}")
    return found
