"""Reading the reference engine's commands: the one-line error that echoes what was wrong,
and the ``go`` command's words made into search limits or a perft depth (protocol.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.rules.numbers import whole_number

from .ugi_options import shown

if TYPE_CHECKING:  # imported on first use at run time: start-up stays fast
    from guti.engine.search import SearchLimits

MAX_PERFT_DEPTH = 1000

_INT_ARGS = ("p1time", "p2time", "p1inc", "p2inc", "movetime", "depth", "nodes", "movestogo")
#: The times of a ``go``: below 0 they read as 0 (protocol.md).
_TIME_ARGS = ("p1time", "p2time", "p1inc", "p2inc", "movetime")


class CommandError(ValueError):
    """A known command with a bad argument; the message is one line."""


@dataclass(frozen=True)
class GoPerft:
    """``go perft N``: count the move paths ``depth`` plies deep instead of searching."""

    depth: int


def read_go(tokens: list[str], turn: str, received: float) -> SearchLimits | GoPerft:
    """The search limits (or the perft) a ``go`` line's ``tokens`` ask for, the side to
    move being ``turn`` and the line read at ``received`` (``time.perf_counter()``, so the
    time before the search starts is charged too); CommandError for anything else.

    Only ``depth``, ``nodes``, ``movetime`` and the mover's own clock end a search: a
    ``go`` with none of them (only increments, ``movestogo`` or the other side's clock)
    is infinite."""
    from guti.engine.search import SearchLimits

    args: dict[str, int] = {}
    infinite = False
    perft: int | None = None
    i = 1
    while i < len(tokens):
        word = tokens[i]
        if word == "infinite":
            infinite = True
            i += 1
            continue
        if word not in _INT_ARGS and word != "perft":
            raise CommandError(f"go: unknown argument {shown(word, 40)!r}")
        if i + 1 >= len(tokens):
            raise CommandError(f"go {word}: missing value")
        text = tokens[i + 1]
        if word == "perft":
            perft = whole_number(text, 6)
            if perft is None or perft > MAX_PERFT_DEPTH:
                raise CommandError(
                    f"go perft: depth must be a whole number from 0 to {MAX_PERFT_DEPTH}, "
                    f"got {shown(text, 40)!r}")
        else:
            args[word] = _whole_number(word, text)
        i += 2
    if perft is not None:
        return GoPerft(perft)
    if "depth" in args and args["depth"] < 1:
        raise CommandError(f"go depth: must be >= 1, got {args['depth']}")
    for word in ("nodes", "movestogo"):
        if word in args and args[word] < 1:
            raise CommandError(f"go {word}: must be >= 1, got {args[word]}")
    own_clock = "p1time" if turn == "w" else "p2time"
    limited = any(word in args for word in ("depth", "nodes", "movetime", own_clock))
    return SearchLimits(
        depth=args.get("depth"),
        nodes=args.get("nodes"),
        movetime=args.get("movetime"),
        p1time=args.get("p1time"),
        p2time=args.get("p2time"),
        p1inc=args.get("p1inc", 0),
        p2inc=args.get("p2inc", 0),
        movestogo=args.get("movestogo"),
        infinite=infinite or not limited,
        start=received,
    )


def _whole_number(word: str, text: str) -> int:
    """The integer value of a ``go`` argument; times may be negative (read as 0)."""
    value = whole_number(text, 15, signed=word in _TIME_ARGS)
    if value is None or text.startswith("+"):
        digits = text[1:] if word in _TIME_ARGS and text[:1] == "-" else text
        if digits.isascii() and digits.isdigit():  # a whole number, past 15 digits
            raise CommandError(f"go {word}: {shown(text, 40)} is too large (at most 15 digits)")
        raise CommandError(f"go {word}: expected a whole number, got {shown(text, 40)!r}")
    return max(0, value)
