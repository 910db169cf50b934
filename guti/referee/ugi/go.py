"""The ``go`` command's parameters (protocol.md), from plain numbers.

:class:`Go` holds what one ``go`` says; :meth:`Go.arguments` writes the words after
``go`` and :meth:`Go.parse` reads them back from text a person typed (the console).
Which figures a game sends (the clocks, ``movestogo``) is decided by the game layer's
time control (:func:`guti.referee.game.timecontrol.go_for_turn`); the line itself is
written by :func:`guti.referee.ugi.lines.go_line`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from guti.rules.numbers import whole_number


class Go(NamedTuple):
    """The parameters of one ``go`` (protocol.md): clocks and increments in ms, a fixed
    ``movetime``, ``depth``/``nodes`` limits, ``infinite`` (until ``stop``) or ``perft``.
    The limits come first, in the order they are sent (:data:`_WORDS`).

    With no limit at all the search is ``infinite``: an engine must never be sent a
    ``go`` it could read as something else.
    """

    p1time: int | None = None
    p1inc: int | None = None
    p2time: int | None = None
    p2inc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False
    perft: int | None = None

    def arguments(self) -> str:
        """The words after ``go``, e.g. ``p1time 5000 p1inc 50 movetime 100``."""
        if self.perft is not None:
            return f"perft {self.perft}"
        limits = zip(_WORDS, self, strict=False)  # the fields after the limits are left out
        parts = [f"{word} {value}" for word, value in limits if value is not None]
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
        names = set(cls._fields) - {"infinite"}
        i = 0
        while i < len(words):
            word = words[i]
            if word in values or (word == "infinite" and infinite):
                raise ValueError(f"{word} is given twice")
            if word == "infinite":
                infinite = True
                i += 1
                continue
            if word not in names:
                known = ", ".join([*sorted(names), "infinite"])
                raise ValueError(f"unknown go parameter {word!r} (known: {known})")
            number = whole_number(words[i + 1]) if i + 1 < len(words) else None
            least = 1 if word in _AT_LEAST_ONE else 0
            if number is None or number < least:
                given = words[i + 1] if i + 1 < len(words) else ""
                if number is None and given.isascii() and given.isdigit():  # over 18 digits
                    cut = given[:24] + ("..." if len(given) > 24 else "")
                    raise ValueError(f"{word} (a go parameter): {cut} is too large")
                raise ValueError(f"{word} (a go parameter) needs a whole number >= {least}")
            values[word] = number
            i += 2
        return cls(infinite=infinite, **values)


#: The parameters protocol.md bounds from 1: ``depth 0`` is no search at all.
_AT_LEAST_ONE = frozenset({"depth", "nodes", "movestogo"})

#: The limits of a ``go`` line, in the order they are sent: the first fields of Go.
_WORDS = ("p1time", "p1inc", "p2time", "p2inc", "movestogo", "movetime", "depth", "nodes")
