"""The one vocabulary of ways a game ends.

Every layer that reports why a game ended (the PDN ``Termination`` tag, the
tournament database, the terminal summary) uses these exact strings, so a
reason written by one part can be read back by another without mapping.
The first four come from the rules (protocol.md section 3, end rules 1-4,
spelled as the rules core's ``Outcome.reason``); the rest are the
referee's verdicts on a misbehaving engine, which always lose.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a game ended; ``str(reason)`` / ``reason.value`` is the documented spelling."""

    # Decided by the rules of the game.
    NO_LEGAL_MOVE = "no legal move"  # side to move is blocked or has no pieces: it loses
    THREE_OR_FEWER = "three or fewer"  # Pretwa: 3 pieces or fewer against more
    FIFTY_PLIES = "fifty plies"  # 50 plies without capture: more pieces wins
    REPETITION = "repetition"  # third occurrence of a position: more pieces wins
    # Verdicts of the referee on an engine (the faulty side loses).
    TIME_FORFEIT = "time forfeit"  # bestmove arrived after time + margin
    ILLEGAL_MOVE = "illegal move"  # well-formed move that is not legal here
    PROTOCOL_ERROR = "protocol error"  # malformed bestmove, over-long line, bad handshake
    DISCONNECT = "disconnect"  # engine exited or closed its stdout
    STALLED = "stalled"  # no reply long after its time was gone
    START_FAILURE = "start failure"  # could not be started / handshake failed

    @property
    def is_rule(self) -> bool:
        """True for the endings decided by the rules, False for engine faults."""
        return self in _RULE_REASONS

    @classmethod
    def parse(cls, text: str) -> Reason:
        """The reason spelled ``text`` (as stored in PDN/DB); ValueError if unknown."""
        try:
            return cls(text.strip())
        except ValueError:
            raise ValueError(f"unknown termination reason {text!r}") from None


_RULE_REASONS = frozenset(
    {Reason.NO_LEGAL_MOVE, Reason.THREE_OR_FEWER, Reason.FIFTY_PLIES, Reason.REPETITION}
)

#: The game was not finished (interrupted match); result ``*``.
UNFINISHED_RESULT = "*"
