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
The UGI protocol has no ``movestogo``, so with MOVES/BASE the engine just
sees its remaining time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: Keys of engine tokens that belong to the time control.
LIMIT_KEYS = frozenset({"tc", "st", "depth", "nodes", "timemargin"})


class TimeControlError(ValueError):
    """A malformed time-control token; the message is one line naming it."""


@dataclass(frozen=True)
class Limits:
    """What an engine is allowed per move/game. All times in milliseconds.

    ``base_ms is None`` means no game clock. ``movetime_ms`` is ``st=``.
    ``depth``/``nodes`` are passed through to ``go``.
    """

    base_ms: int | None = None
    inc_ms: int = 0
    moves_per_period: int | None = None
    movetime_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None
    margin_ms: int = 0

    @property
    def has_clock(self) -> bool:
        return self.base_ms is not None

    def is_unlimited(self) -> bool:
        """No clock, no movetime, no depth/nodes: ``go infinite`` would never end."""
        return (
            self.base_ms is None
            and self.movetime_ms is None
            and self.depth is None
            and self.nodes is None
        )

    def pdn_time_control(self) -> str:
        """PGN/PDN-style TimeControl tag value (``40/60+0.5``, ``60``, ``1/move``, ``-``)."""
        if self.base_ms is not None:
            text = _secs(self.base_ms)
            if self.moves_per_period:
                text = f"{self.moves_per_period}/{text}"
            if self.inc_ms:
                text += f"+{_secs(self.inc_ms)}"
            return text
        if self.movetime_ms is not None:
            return f"{_secs(self.movetime_ms)}/move"
        return "-"

    def describe(self) -> str:
        """Short human text, e.g. ``tc=5+0.05 depth=4``."""
        parts = []
        if self.base_ms is not None:
            parts.append("tc=" + self.pdn_time_control())
        if self.movetime_ms is not None:
            parts.append(f"st={_secs(self.movetime_ms)}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        if self.margin_ms:
            parts.append(f"timemargin={self.margin_ms}")
        return " ".join(parts) or "none"


def _secs(ms: int) -> str:
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


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


def go_arguments(side: str, white: Clock, black: Clock) -> str:
    """The arguments of ``go`` for ``side`` (``"w"``/``"b"``) to move.

    Both clocks are reported when the mover has a clock (as UCI does); the
    opponent's time is reported when it has one too.
    """
    mover = white if side == "w" else black
    lim = mover.limits
    parts: list[str] = []
    if lim.base_ms is not None:
        for tag, clock in (("p1", white), ("p2", black)):
            if clock.limits.base_ms is not None:
                parts.append(f"{tag}time {max(0, int(clock.remaining_ms))}")
                parts.append(f"{tag}inc {clock.limits.inc_ms}")
    if lim.movetime_ms is not None:
        parts.append(f"movetime {lim.movetime_ms}")
    if lim.depth is not None:
        parts.append(f"depth {lim.depth}")
    if lim.nodes is not None:
        parts.append(f"nodes {lim.nodes}")
    if not parts:
        parts.append("infinite")
    return " ".join(parts)
