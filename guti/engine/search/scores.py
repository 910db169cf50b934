"""Score scale of the search: centipieces, with forced results above ``MATE_BOUND``.

A finished game (any end rule of protocol.md) at ``ply`` plies from the root scores
``MATE - ply`` for the side that wins there and ``ply - MATE`` for the side that loses, so
a quicker win is worth more and a later loss less. A draw scores 0. Everything else is an
evaluation in hundredths of a piece.
"""

from __future__ import annotations

from typing import NamedTuple

MATE = 30_000
MAX_PLY = 128
MATE_BOUND = MATE - 2 * MAX_PLY  # |score| above this is a forced result
INF = MATE + 1


class Score(NamedTuple):
    """A score as UGI states it: ``kind`` is ``cp``, ``win`` or ``loss``; ``value`` cp or plies."""

    kind: str
    value: int


def describe_score(score: int) -> Score:
    """Turn a search score into ``cp X`` / ``win N`` / ``loss N`` (N in plies)."""
    if score > MATE_BOUND:
        return Score("win", MATE - score)
    if score < -MATE_BOUND:
        return Score("loss", MATE + score)
    return Score("cp", score)
