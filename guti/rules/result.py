"""Sides, the four rule endings and game results: typed, with the one spelling each.

These are the rules' own words (protocol.md section 3): the referee, the engine,
the PDN writer and the database all take them from here. Every enum is a
``StrEnum`` whose value is the spelling used on the wire and in storage, so
``str(x)`` is what gets written and a stored string reads back with ``Enum(text)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Side(StrEnum):
    """A player; the value is the FEN letter (``w``/``b``)."""

    WHITE = "w"
    BLACK = "b"

    @property
    def other(self) -> Side:
        return Side.BLACK if self is Side.WHITE else Side.WHITE

    @property
    def label(self) -> str:
        """``White`` or ``Black``, for messages."""
        return "White" if self is Side.WHITE else "Black"

    @classmethod
    def from_index(cls, index: int) -> Side:
        return cls.WHITE if index == 0 else cls.BLACK


class Termination(StrEnum):
    """The end rules of protocol.md, in the order they are applied."""

    THREE_OR_FEWER = "three or fewer"  # Pretwa: 3 pieces or fewer against more
    NO_LEGAL_MOVE = "no legal move"  # side to move is blocked or has no pieces: it loses
    FIFTY_PLIES = "fifty plies"  # 50 plies without capture: more pieces wins
    REPETITION = "repetition"  # third occurrence of a position: more pieces wins


class Result(StrEnum):
    """A game's result as PDN writes it."""

    WHITE_WINS = "1-0"
    BLACK_WINS = "0-1"
    DRAW = "1/2-1/2"
    UNFINISHED = "*"

    @classmethod
    def win_for(cls, side: Side | None) -> Result:
        """The result when ``side`` wins (None: a draw)."""
        if side is None:
            return cls.DRAW
        return cls.WHITE_WINS if side is Side.WHITE else cls.BLACK_WINS

    @classmethod
    def loss_for(cls, side: Side) -> Result:
        return cls.win_for(side.other)

    @property
    def winner(self) -> Side | None:
        """The winning side; None for a draw or an unfinished game."""
        return {Result.WHITE_WINS: Side.WHITE, Result.BLACK_WINS: Side.BLACK}.get(self)


def white_points(result: str) -> float | None:
    """White's points for a result as stored (``"1-0"`` 1, a draw 0.5, ``"0-1"`` 0); None
    for an unfinished game (``"*"``) or any other text, which scores nothing."""
    return _WHITE_POINTS.get(result)


_WHITE_POINTS = {Result.WHITE_WINS.value: 1.0, Result.DRAW.value: 0.5, Result.BLACK_WINS.value: 0.0}



@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: the result, the winning side (None: draw) and the rule."""

    result: Result
    winner: Side | None
    reason: Termination

    @classmethod
    def win(cls, side: Side | None, reason: Termination) -> Outcome:
        """``side`` wins by ``reason`` (None: a draw)."""
        return cls(Result.win_for(side), side, reason)
