"""Time controls and the referee's clocks, in cutechess-cli/fastchess spellings.

Spellings accepted (values of ``-each``/``-engine`` tokens):

- ``tc=[MOVES/]BASE[+INC]`` -- BASE and INC in seconds (decimals allowed,
  BASE may also be ``M:SS``); MOVES per period: after every MOVES moves of a
  side, BASE is added to that side's clock again. ``tc=inf`` (or
  ``infinite``) means no clock.
- ``st=SECONDS`` -- fixed time per move (sent as ``go movetime``).
- ``depth=N``, ``nodes=N`` -- search limits sent with ``go``; no clock runs.
- ``timemargin=MS`` -- how far past its time an engine may answer before it
  loses on time (cutechess semantics).

The referee keeps the clocks itself (:class:`Clock`), measured from the
moment ``go`` is written to the arrival of the ``bestmove`` line, and tells the
engine its remaining time with ``p1time/p2time/p1inc/p2inc`` (milliseconds).
The value type :class:`~guti.referee.game.limits.Limits` and the parsing of the
spellings above live in :mod:`guti.referee.game.limits`; they are re-exported here for
the game's callers. :func:`go_for_turn` turns the limits and the clocks into the
protocol's :class:`~guti.referee.ugi.go.Go`.
With MOVES/BASE the ``go`` also carries ``movestogo N`` (protocol.md 5.2, as in
UCI): the moves left in the mover's period, so its clock's jump by BASE is announced.
"""

from __future__ import annotations

from guti.referee.game.limits import (
    LIMIT_KEYS,
    Limits,
    TimeControlError,
    parse_limits,
    parse_tc,
)
from guti.referee.ugi.go import Go

__all__ = ["LIMIT_KEYS", "Clock", "Limits", "TimeControlError", "go_arguments", "go_for_turn",
           "parse_limits", "parse_tc"]

class Clock:
    """One side's clock, kept by the referee in milliseconds (float).

    Use: ``allowed = clock.allowed_ms()`` before ``go``; after the reply
    ``clock.charge(elapsed_ms)`` -> False when the side lost on time.
    """

    __slots__ = ("limits", "has_clock", "remaining_ms", "moves_in_period")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        #: ``limits.has_clock`` (whether a clock runs at all), which the game loop asks
        #: every ply.
        self.has_clock = limits.base_ms is not None
        self.remaining_ms: float = float(limits.base_ms or 0)
        self.moves_in_period = 0

    def allowed_ms(self) -> float | None:
        """How long this move may take before it is a time forfeit, margin included.

        None when neither a clock nor ``st`` limits the move (depth/nodes only).
        """
        lim = self.limits
        if lim.base_ms is not None:
            budget = self.remaining_ms
            if lim.movetime_ms is not None:
                budget = min(budget, lim.movetime_ms)
            return budget + lim.margin_ms
        if lim.movetime_ms is not None:
            return lim.movetime_ms + lim.margin_ms
        return None

    def charge(self, elapsed_ms: float) -> bool:
        """Book a move that took ``elapsed_ms``; False if it was over the limit."""
        return self.charge_within(elapsed_ms, self.allowed_ms())

    def charge_within(self, elapsed_ms: float, allowed: float | None) -> bool:
        """:meth:`charge`, ``allowed`` being what :meth:`allowed_ms` said before the move
        (the game loop has it: not worked out twice per ply)."""
        ok = allowed is None or elapsed_ms <= allowed
        lim = self.limits
        if lim.base_ms is not None:
            self.remaining_ms -= elapsed_ms
            if ok:
                self.remaining_ms = max(self.remaining_ms, 0.0) + lim.inc_ms
                self.moves_in_period += 1
                if lim.moves_per_period and self.moves_in_period >= lim.moves_per_period:
                    self.moves_in_period = 0
                    self.remaining_ms += lim.base_ms
        return ok


def go_arguments(side: str, white: Clock, black: Clock) -> Go:
    """The ``go`` for ``side`` (``"w"``/``"b"``) to move, with both clocks as they stand."""
    mover = white if side == "w" else black
    return go_for_turn(
        mover.limits, (white.limits, white.remaining_ms), (black.limits, black.remaining_ms),
        mover.moves_in_period,
    )


def go_for_turn(
    mover: Limits,
    white: tuple[Limits, float],
    black: tuple[Limits, float],
    moves_in_period: int = 0,
) -> Go:
    """The ``go`` for the side whose limits are ``mover``; ``white``/``black`` are each
    side's (limits, remaining ms). Both clocks are reported when the mover has a clock
    (as UCI does), the opponent's only when it has one too. With a period in force
    (``tc=MOVES/BASE``) ``movestogo`` says how many moves, this one included, remain
    until the mover's clock gets BASE again (``moves_in_period``: moves it has made in
    the period so far); without it an engine would see its time jump unannounced."""
    shown = mover.base_ms is not None
    period = mover.moves_per_period if shown else None
    p1 = white if shown and white[0].base_ms is not None else None
    p2 = black if shown and black[0].base_ms is not None else None
    return Go(
        p1time=None if p1 is None else max(0, int(p1[1])),
        p1inc=None if p1 is None else p1[0].inc_ms,
        p2time=None if p2 is None else max(0, int(p2[1])),
        p2inc=None if p2 is None else p2[0].inc_ms,
        movestogo=None if not period else max(1, period - moves_in_period),
        movetime=mover.movetime_ms,
        depth=mover.depth,
        nodes=mover.nodes,
    )
