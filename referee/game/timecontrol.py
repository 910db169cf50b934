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
moment ``go`` is written to the moment ``bestmove`` is read, and tells the
engine its remaining time with ``p1time/p2time/p1inc/p2inc`` (milliseconds).
The value type :class:`~referee.ugi.limits.Limits` and the building of ``go``
live in :mod:`referee.ugi.limits` (the protocol's side); ``Limits`` is
re-exported here for the callers that parse time controls.
The UGI protocol has no ``movestogo``, so with MOVES/BASE the engine just
sees its remaining time.
"""

from __future__ import annotations

import math
from dataclasses import replace

from referee.ugi.limits import Go, Limits, go_for_turn

__all__ = ["LIMIT_KEYS", "Clock", "Limits", "TimeControlError", "go_arguments", "parse_limits",
           "parse_tc"]

#: Keys of engine tokens that belong to the time control.
LIMIT_KEYS = frozenset({"tc", "st", "depth", "nodes", "timemargin"})


class TimeControlError(ValueError):
    """A malformed time-control token; the message is one line naming it."""


def _seconds_to_ms(text: str, what: str) -> int:
    """Parse seconds (``1.5``, ``90``, ``1:30``) into whole milliseconds."""
    raw = text
    try:
        if ":" in text:
            mins, _, secs = text.partition(":")
            if not mins or not secs:
                raise ValueError
            value = int(mins) * 60 + float(secs)
        else:
            value = float(text)
    except ValueError:
        raise TimeControlError(f"{what}: {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise TimeControlError(f"{what}: {raw!r} must be a finite number >= 0")
    return round(value * 1000)


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TimeControlError(f"{what}: {text!r} is not a whole number") from None
    if value < 1:
        raise TimeControlError(f"{what}: {text!r} must be at least 1")
    return value


def parse_tc(text: str) -> Limits:
    """Parse a ``tc=`` value: ``40/60+0.5``, ``60+0.5``, ``60``, ``1:30+1``, ``inf``."""
    spec = text.strip()
    if spec.lower() in ("inf", "infinite"):
        return Limits()
    if not spec:
        raise TimeControlError("tc: empty time control")
    moves = None
    if "/" in spec:
        head, _, spec = spec.partition("/")
        moves = _positive_int(head, f"tc={text}: moves per period")
    base, plus, inc = spec.partition("+")
    base_ms = _seconds_to_ms(base, f"tc={text}: base time")
    inc_ms = _seconds_to_ms(inc, f"tc={text}: increment") if plus else 0
    if base_ms == 0 and inc_ms == 0:
        raise TimeControlError(f"tc={text}: base time and increment are both zero")
    return Limits(base_ms=base_ms, inc_ms=inc_ms, moves_per_period=moves)


def parse_limits(tokens: dict[str, str], base: Limits | None = None) -> Limits:
    """Apply limit tokens (``tc``, ``st``, ``depth``, ``nodes``, ``timemargin``) onto ``base``.

    Later settings override earlier ones key by key, so ``-each tc=...`` can be
    refined per engine with ``-engine ... depth=3``.
    """
    limits = base or Limits()
    for key, value in tokens.items():
        if key == "tc":
            clock = parse_tc(value)
            limits = replace(
                limits,
                base_ms=clock.base_ms,
                inc_ms=clock.inc_ms,
                moves_per_period=clock.moves_per_period,
            )
        elif key == "st":
            ms = _seconds_to_ms(value, "st")
            if ms <= 0:
                raise TimeControlError(f"st: {value!r} must be more than 0 seconds")
            limits = replace(limits, movetime_ms=ms)
        elif key == "depth":
            limits = replace(limits, depth=_positive_int(value, "depth"))
        elif key == "nodes":
            limits = replace(limits, nodes=_positive_int(value, "nodes"))
        elif key == "timemargin":
            try:
                margin = int(value)
            except ValueError:
                raise TimeControlError(f"timemargin: {value!r} is not a whole number of ms") from None
            if margin < 0:
                raise TimeControlError(f"timemargin: {value!r} must be >= 0 ms")
            limits = replace(limits, margin_ms=margin)
        else:
            raise TimeControlError(f"unknown time-control key {key!r}")
    return limits


class Clock:
    """One side's clock, kept by the referee in milliseconds (float).

    Use: ``allowed = clock.allowed_ms()`` before ``go``; after the reply
    ``clock.charge(elapsed_ms)`` -> False when the side lost on time.
    """

    __slots__ = ("limits", "remaining_ms", "moves_in_period")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
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
        allowed = self.allowed_ms()
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
        mover.limits, (white.limits, white.remaining_ms), (black.limits, black.remaining_ms)
    )
