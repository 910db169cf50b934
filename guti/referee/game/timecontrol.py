"""The referee's clocks, kept in milliseconds from the moment ``go`` is written to the
arrival of the ``bestmove`` line (:class:`Clock`), and the ``go`` each turn sends
(:func:`go_for_turn`): the engine is told its remaining time with
``p1time/p2time/p1inc/p2inc`` (milliseconds). With MOVES/BASE the ``go`` also carries
``movestogo N`` (protocol.md 5.2, as in UCI): the moves left in the mover's period, so its
clock's jump by BASE is announced. The time control itself
(:class:`~guti.referee.game.limits.Limits`) and its spellings live in
:mod:`guti.referee.game.limits`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.ugi.go import Go

if TYPE_CHECKING:
    from guti.referee.game.limits import Limits


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


def go_for_turn(mover: Clock, white: Clock, black: Clock) -> Go:
    """The ``go`` for the side whose clock is ``mover`` (``white`` or ``black``), with both
    clocks as they stand. Both clocks are reported when the mover has a clock (as UCI
    does), the opponent's only when it has one too. With a period in force
    (``tc=MOVES/BASE``) ``movestogo`` says how many moves, this one included, remain
    until the mover's clock gets BASE again; without it an engine would see its time
    jump unannounced."""
    lim = mover.limits
    if not mover.has_clock:
        return Go(movetime=lim.movetime_ms, depth=lim.depth, nodes=lim.nodes)
    p1time, p1inc = _shown(white)
    p2time, p2inc = _shown(black)
    period = lim.moves_per_period
    return Go(p1time, p1inc, p2time, p2inc,
              movestogo=max(1, period - mover.moves_in_period) if period else None,
              movetime=lim.movetime_ms, depth=lim.depth, nodes=lim.nodes)


def _shown(clock: Clock) -> tuple[int | None, int | None]:
    """A clock as ``go`` tells it: whole milliseconds left and the increment (None, None:
    no clock runs)."""
    if not clock.has_clock:
        return None, None
    return max(0, int(clock.remaining_ms)), clock.limits.inc_ms
