"""The one judge of an engine's answer to ``go``: in time, well formed, legal.

:func:`judge_reply` is what the game loop, the console and ``guti check`` all
ask, so the three can never disagree on whether a ``bestmove`` was fine. It
returns a typed :class:`Verdict` (never raises); each caller words it for its
reader (a game record's detail, a console line, a check FAIL).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple

from guti.referee.game.reasons import Reason
from guti.rules import Board, Move, RulesError

#: A well-formed move string (protocol.md notation); anything else after ``bestmove``
#: is a protocol error, a well-formed but illegal move an ``illegal move``.
MOVE_SYNTAX = re.compile(r"[1-9][0-9]*(?:-[1-9][0-9]*|(?:x[1-9][0-9]*)+)")


class Fault(Enum):
    """What is wrong with a reply, checked in this order."""

    TIME = "over the time allowed"
    NO_MOVE = "bestmove without a move"
    NONE_WITH_MOVES = "bestmove none with legal moves"
    MOVE_WHEN_OVER = "a move when the game is over"
    MALFORMED = "malformed move"
    ILLEGAL = "illegal move"

    @property
    def reason(self) -> Reason:
        """The game-ending reason this fault is scored as."""
        if self in (Fault.NO_MOVE, Fault.MALFORMED):
            return Reason.PROTOCOL_ERROR
        if self is Fault.TIME:
            return Reason.TIME_FORFEIT
        return Reason.ILLEGAL_MOVE


class Verdict(NamedTuple):
    """The judgement of one reply. ``fault`` None: fine; then ``move`` is the move to
    play, or None for a right ``bestmove none`` (the side to move has no move).
    ``text`` is the word after ``bestmove``; ``error`` the rules core's message for an
    illegal move. A named tuple: one is made every ply, and a tuple is made in C, where a
    frozen dataclass runs an ``__init__`` in Python that sets each field anew."""

    fault: Fault | None
    move: Move | None = None
    text: str | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.fault is None


def judge_reply(
    board: Board,
    bestmove: str | None,
    elapsed_ms: float = 0.0,
    allowed_ms: float | None = None,
) -> Verdict:
    """Judge ``bestmove`` (the word after ``bestmove``, None if missing) as the answer
    in ``board``, given after ``elapsed_ms`` when ``allowed_ms`` were allowed (None: no
    limit)."""
    if allowed_ms is not None and elapsed_ms > allowed_ms:
        return Verdict(Fault.TIME, text=bestmove)
    if bestmove is None:
        return Verdict(Fault.NO_MOVE)
    found = board.legal_move(bestmove)  # the usual case: one lookup, nothing else to check
    if found is not None:
        return Verdict(None, move=found, text=bestmove)
    legal = board.legal_moves
    if bestmove == "none":
        return Verdict(Fault.NONE_WITH_MOVES if legal else None, text=bestmove)
    if not legal:
        return Verdict(Fault.MOVE_WHEN_OVER, text=bestmove)
    if MOVE_SYNTAX.fullmatch(bestmove) is None:
        return Verdict(Fault.MALFORMED, text=bestmove)
    try:  # not legal: the rules core says why
        move = board.parse_move(bestmove)
    except RulesError as exc:
        return Verdict(Fault.ILLEGAL, text=bestmove, error=str(exc))
    return Verdict(None, move=move, text=bestmove)
