"""The one vocabulary of ways a game ends.

Every layer that reports why a game ended (the PDN ``Termination`` tag, the
tournament database, the terminal summary) uses these exact strings, so a
reason written by one part can be read back by another without mapping.
The four rule endings are the rules core's own
:class:`~guti.rules.result.Termination` (protocol.md section 3, end rules
1-4), taken from there, not spelt again; ``adjudication`` is an end the match
asked for (``-draw``/``-resign``/``-maxmoves``, :mod:`guti.referee.game.adjudication`),
decided on the engines' scores, no one's fault; the rest are the referee's verdicts
on a misbehaving engine, which always lose.
"""

from __future__ import annotations

from enum import StrEnum

from guti.rules.result import Termination


class Reason(StrEnum):
    """Why a game ended; ``str(reason)`` / ``reason.value`` is the documented spelling."""

    # Decided by the rules of the game (the rules core's spellings).
    NO_LEGAL_MOVE = Termination.NO_LEGAL_MOVE.value
    THREE_OR_FEWER = Termination.THREE_OR_FEWER.value
    FIFTY_PLIES = Termination.FIFTY_PLIES.value
    REPETITION = Termination.REPETITION.value
    # Ended early by the match's adjudication rules (the detail names the rule).
    ADJUDICATION = "adjudication"
    # Verdicts of the referee on an engine (the faulty side loses).
    TIME_FORFEIT = "time forfeit"  # bestmove arrived after time + margin
    ILLEGAL_MOVE = "illegal move"  # well-formed move that is not legal here
    PROTOCOL_ERROR = "protocol error"  # malformed bestmove, over-long line, bad handshake
    DISCONNECT = "disconnect"  # engine exited or closed its stdout
    STALLED = "stalled"  # no reply long after its time was gone
    START_FAILURE = "start failure"  # could not be started / handshake failed
    RESOURCE_LIMIT = "resource limit"  # ran into its memory or process limit

    @property
    def is_rule(self) -> bool:
        """True for the endings decided by the rules; False for engine faults and for
        adjudication."""
        return self.value in _RULE_SPELLINGS

    @property
    def termination(self) -> Termination | None:
        """The rules' ending this reason is, None for a referee's verdict."""
        return Termination(self.value) if self.is_rule else None

    @classmethod
    def from_termination(cls, termination: Termination) -> Reason:
        """The reason for a game the rules ended."""
        return cls(termination.value)

    @classmethod
    def parse(cls, text: str) -> Reason:
        """The reason spelled ``text`` (as stored in PDN/DB); ValueError if unknown."""
        try:
            return cls(text.strip())
        except ValueError:
            raise ValueError(f"unknown termination reason {text!r}") from None


_RULE_SPELLINGS = frozenset(t.value for t in Termination)
