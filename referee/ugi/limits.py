"""What an engine may spend on a move, and the ``go`` line's arguments built from it.

:class:`Limits` is the value type of a time control (parsed from ``tc=``/``st=``/...
by :mod:`referee.game.timecontrol`, which also keeps the clocks). :class:`Go` is
the parameters of one ``go`` command; :func:`go_for_turn` builds it from the
limits and the clocks' remaining times. The line itself is written in one place,
:meth:`referee.ugi.client.UgiEngine.start_search` via :func:`referee.ugi.client.go_line`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


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


@dataclass(slots=True)
class Go:
    """The parameters of one ``go`` (protocol.md): clocks and increments in ms, a fixed
    ``movetime``, ``depth``/``nodes`` limits, ``infinite`` (until ``stop``) or ``perft``.

    With no limit at all the search is ``infinite``: an engine must never be sent a
    ``go`` it could read as something else. (Not frozen: one is built every ply, and a
    frozen dataclass's ``__init__`` costs several times more.)
    """

    p1time: int | None = None
    p1inc: int | None = None
    p2time: int | None = None
    p2inc: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False
    perft: int | None = None

    def arguments(self) -> str:
        """The words after ``go``, e.g. ``p1time 5000 p1inc 50 movetime 100``."""
        if self.perft is not None:
            return f"perft {self.perft}"
        values = (
            ("p1time", self.p1time), ("p1inc", self.p1inc), ("p2time", self.p2time),
            ("p2inc", self.p2inc), ("movetime", self.movetime), ("depth", self.depth),
            ("nodes", self.nodes),
        )  # spelled out: this runs every ply
        parts = [f"{name} {value}" for name, value in values if value is not None]
        if self.infinite or not parts:
            parts.append("infinite")
        return " ".join(parts)

    @classmethod
    def parse(cls, text: str) -> Go:
        """Read ``go`` arguments typed by a person (``depth 3``, ``movetime 500``,
        ``infinite``); ValueError with a one-line message for anything else."""
        words = text.split()
        values: dict[str, Any] = {}
        infinite = False
        names = {f.name for f in fields(cls)} - {"infinite"}
        i = 0
        while i < len(words):
            word = words[i]
            if word == "infinite":
                infinite = True
                i += 1
                continue
            if word not in names:
                known = ", ".join([*sorted(names), "infinite"])
                raise ValueError(f"unknown go parameter {word!r} (known: {known})")
            if i + 1 >= len(words) or not words[i + 1].isdigit():
                raise ValueError(f"{word} (a go parameter) needs a whole number >= 0")
            values[word] = int(words[i + 1])
            i += 2
        return cls(infinite=infinite, **values)


def go_for_turn(
    mover: Limits, white: tuple[Limits, float], black: tuple[Limits, float]
) -> Go:
    """The ``go`` for the side whose limits are ``mover``; ``white``/``black`` are each
    side's (limits, remaining ms). Both clocks are reported when the mover has a clock
    (as UCI does), the opponent's only when it has one too."""
    shown = mover.base_ms is not None
    p1 = white if shown and white[0].base_ms is not None else None
    p2 = black if shown and black[0].base_ms is not None else None
    return Go(
        p1time=None if p1 is None else max(0, int(p1[1])),
        p1inc=None if p1 is None else p1[0].inc_ms,
        p2time=None if p2 is None else max(0, int(p2[1])),
        p2inc=None if p2 is None else p2[0].inc_ms,
        movetime=mover.movetime_ms,
        depth=mover.depth,
        nodes=mover.nodes,
    )
