"""The root of a search: its moves as child positions, and one iteration over them."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .scores import INF

if TYPE_CHECKING:
    from guti.rules import Board, Move

    from .tree import Tree


def child_of(own: int, enemy: int, move: Move) -> tuple[int, int]:
    """The mover's and the other side's masks after ``move``: the tree's form of a move."""
    src, dst = 1 << (move.from_point - 1), 1 << (move.to_point - 1)
    return (own & ~src) | dst, enemy & ~move.capture_mask


class RootMoves:
    """The root moves (deduplicated child positions, most captures first, seeded order
    among equals) and the search over them at one depth.

    At full strength the root is a PVS window like the tree's; a weakened level
    searches every root move with a full window (``full_width``) so every move gets
    an exact score for :meth:`Searcher._weakened_choice`."""

    def __init__(self, board: Board, legal: list[Move], rng: random.Random, tree: Tree,
                 full_width: bool) -> None:
        self.turn = 0 if board.turn == "w" else 1
        own, enemy = (board.white, board.black) if self.turn == 0 else (board.black, board.white)
        self.enemy = enemy
        self.clock = board.clock
        self.tree = tree
        self.full_width = full_width
        moves: list[tuple[int, int, str]] = []
        seen: set[tuple[int, int]] = set()
        for move in legal:
            child = child_of(own, enemy, move)
            if child not in seen:
                seen.add(child)
                moves.append((child[0], child[1], str(move)))
        rng.shuffle(moves)  # seeded tie-break among equal moves
        moves.sort(key=lambda item: item[1].bit_count())  # most pieces taken first
        self.moves = moves
        self.scores: dict[str, int] = {}  # this iteration's score per move
        self.last_scores: dict[str, int] = {}  # the last completed iteration's
        self.iteration_best: tuple[str, int] | None = None

    def search(self, depth: int) -> int:
        """One iteration: score every root move; the best moves to the front."""
        tree, negamax, reps = self.tree, self.tree.negamax, self.tree.reps
        size, turn_bit, turn0, clock0, enemy0 = tree.size, tree.turn_bit, self.turn, self.clock, self.enemy
        full_width = self.full_width
        self.iteration_best = None
        alpha, beta = -INF, INF
        best, best_i = -INF, 0
        for i, (oa, ea, text) in enumerate(self.moves):
            ck = (oa | (ea << size) | turn_bit) if turn0 == 0 else (ea | (oa << size))
            reps[ck] = reps.get(ck, 0) + 1
            cclock = clock0 + 1 if ea == enemy0 else 0
            if i == 0 or full_width:
                s = -negamax(ea, oa, depth - 1, -INF if full_width else -beta,
                             INF if full_width else -alpha, 1, cclock, ck, turn0 ^ 1)
            else:
                s = -negamax(ea, oa, depth - 1, -alpha - 1, -alpha, 1, cclock, ck, turn0 ^ 1)
                if s > alpha:
                    s = -negamax(ea, oa, depth - 1, -beta, -alpha, 1, cclock, ck, turn0 ^ 1)
            reps[ck] -= 1
            self.scores[text] = s
            if s > best:
                best, best_i = s, i
                if s > alpha:
                    alpha = s
                    self.iteration_best = (text, s)
                    tree.pv_at[0] = ((oa, ea), tree.pv_at[1])
        self.moves.insert(0, self.moves.pop(best_i))
        return best
