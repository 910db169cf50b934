"""What an engine may spend on a move: the time control's value type and its spellings,
in cutechess-cli/fastchess spellings (values of ``-each``/``-engine`` tokens):

- ``tc=[MOVES/]BASE[+INC]`` -- BASE and INC in seconds (decimals allowed, BASE may also be
  ``M:SS``); MOVES per period: after every MOVES moves of a side, BASE is added to that
  side's clock again. ``tc=inf`` (or ``infinite``) means no clock.
- ``st=SECONDS`` -- fixed time per move (sent as ``go movetime``).
- ``depth=N``, ``nodes=N`` -- search limits sent with ``go``; no clock runs.
- ``timemargin=MS`` -- how far past its time an engine may answer before it loses on time
  (cutechess semantics).

:class:`Limits` is the value type of a time control (its PDN ``TimeControl`` tag, its
margin), parsed from ``tc=``/``st=``/``depth=``/``nodes=``/``timemargin=`` tokens by
:func:`parse_limits`, which also bounds them: protocol.md lets a ``go`` number have at
most 15 digits and says guti never sends more, so a setting that could make a ``go`` carry
more is refused when it is read (one line naming it and the largest value allowed).
:mod:`guti.referee.game.timecontrol` keeps the clocks and turns limits and clocks into
each ``go`` (:func:`~guti.referee.game.timecontrol.go_for_turn`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from guti.rules.numbers import decimal_number, whole_number


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


#: Keys of engine tokens that belong to the time control.
LIMIT_KEYS = frozenset({"tc", "st", "depth", "nodes", "timemargin"})


#: The largest number a ``go`` may carry (protocol.md: at most 15 digits; guti never sends
#: more): every time in milliseconds, ``depth``, ``nodes`` and ``movestogo``.
MAX_GO_NUMBER = 999_999_999_999_999

#: More moves than one side makes in any game guti referees (the no-capture rule ends a
#: game long before): the clock of ``tc=`` is bounded over this many moves, so the time
#: a ``go`` reports stays within :data:`MAX_GO_NUMBER` however the game goes.
GAME_MOVES = 100_000


class TimeControlError(ValueError):
    """A malformed time-control token; the message is one line naming it."""


def _seconds_to_ms(text: str, what: str, most_ms: int = MAX_GO_NUMBER) -> int:
    """Parse seconds (``1.5``, ``90``, ``1:30``) into whole milliseconds, at most
    ``most_ms`` (checked on the milliseconds: ``1e308`` seconds is finite, its
    milliseconds are not)."""
    raw = text
    try:
        if ":" in text:
            mins, _, secs = text.partition(":")
            minutes, seconds = whole_number(mins.strip()), decimal_number(secs)
            if minutes is None or seconds is None:
                raise ValueError
            value = minutes * 60 + seconds
        else:
            read = decimal_number(text)
            if read is None:
                raise ValueError
            value = read
    except (ValueError, OverflowError):  # OverflowError: minutes too many for a float
        raise TimeControlError(f"{what}: {raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise TimeControlError(f"{what}: {raw!r} must be a finite number >= 0")
    ms = value * 1000
    if ms > most_ms:
        raise TimeControlError(f"{what}: {raw!r} is more than the largest allowed, "
                               f"{_secs(most_ms)} s")
    return round(ms)


def _positive_int(text: str, what: str, most: int = MAX_GO_NUMBER) -> int:
    """A whole number from 1 to ``most``."""
    try:
        value = int(text)
    except ValueError:  # also a number of thousands of digits
        raise TimeControlError(f"{what}: {text!r} is not a whole number") from None
    if value < 1:
        raise TimeControlError(f"{what}: {text!r} must be at least 1")
    if value > most:
        raise TimeControlError(f"{what}: {text!r} is more than the largest allowed, {most}")
    return value


def _periods(moves: int | None) -> int:
    """How often a game can give the base time of ``tc=[MOVES/]BASE``: at the start and
    again every ``MOVES`` moves, over :data:`GAME_MOVES` moves."""
    return 1 + GAME_MOVES // moves if moves else 1


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
    # the clock a go reports, every base time and increment of a whole game kept unspent,
    # must stay a go number: base * periods + GAME_MOVES * inc <= MAX_GO_NUMBER
    periods = _periods(moves)
    base_ms = _seconds_to_ms(base, f"tc={text}: base time", MAX_GO_NUMBER // periods)
    inc_most = (MAX_GO_NUMBER - base_ms * periods) // GAME_MOVES
    inc_ms = _seconds_to_ms(inc, f"tc={text}: increment", inc_most) if plus else 0
    if base_ms == 0:  # the increment comes after a move: the first would have no time
        raise TimeControlError(f"tc={text}: a base time of 0 leaves each side's first move "
                               "no time (the increment is added after a move)")
    return Limits(base_ms=base_ms, inc_ms=inc_ms, moves_per_period=moves)


def parse_limits(tokens: dict[str, str], base: Limits | None = None) -> Limits:
    """Apply limit tokens (``tc``, ``st``, ``depth``, ``nodes``, ``timemargin``) onto ``base``.

    Later settings override earlier ones key by key, so ``-each tc=...`` can be
    refined per engine with ``-engine ... depth=3``. Every number is bounded so that no
    ``go`` carries more than 15 digits (:data:`MAX_GO_NUMBER`, :data:`GAME_MOVES`).
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
            if margin > MAX_GO_NUMBER:  # a deadline as far off as the longest go time
                raise TimeControlError(f"timemargin: {value!r} is more than the largest "
                                       f"allowed, {MAX_GO_NUMBER} ms")
            limits = replace(limits, margin_ms=margin)
        else:
            raise TimeControlError(f"unknown time-control key {key!r}")
    return limits
