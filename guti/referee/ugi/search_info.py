"""What an engine said about its search: the fields of one ``info`` line.

protocol.md 5.3 lets an engine send ``info depth D seldepth S score cp X|win N|loss N
nodes N nps N time MS pv ...`` lines during a search. The referee keeps, for each move,
the last such line before ``bestmove`` that carries any search field (an ``info string``
line carries none): that is what the engine stood by when it moved, what adjudication
reads and what the game record shows (cutechess's ``{+0.25/12 1.2s}``).

Parsing is lenient: an engine's text is untrusted, so a field whose value is missing or
not a number is simply absent; nothing here raises on bad input. A line that names a
search field still counts when its value cannot be read (``score mate 3``): what the
engine last said is then unknown, and an earlier line's score must not stand in for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from guti.rules.numbers import whole_number

#: Largest value a field may carry (protocol.md: numbers up to 15 digits); beyond it the
#: field is ignored rather than stored, so one engine cannot make a record enormous.
_MAX_DIGITS = 15

#: The integer fields, by their word in the line.
_INT_FIELDS = ("depth", "seldepth", "nodes", "nps", "time")


@dataclass(frozen=True)
class Score:
    """An evaluation from the mover's point of view: centipieces (``kind == "cp"``) or a
    forced ``win``/``loss`` in ``value`` plies."""

    kind: str  # "cp" | "win" | "loss"
    value: int

    def at_least(self, threshold: int) -> bool:
        """The mover is at least ``threshold`` centipieces up (a forced win always is)."""
        return self.kind == "win" or (self.kind == "cp" and self.value >= threshold)

    def at_most(self, threshold: int) -> bool:
        """The mover is at most ``threshold`` centipieces (a forced loss always is)."""
        return self.kind == "loss" or (self.kind == "cp" and self.value <= threshold)

    def within(self, bound: int) -> bool:
        """``|score| <= bound`` centipieces (a forced result never is)."""
        return self.kind == "cp" and abs(self.value) <= bound

    def __str__(self) -> str:
        """As in a PDN comment: ``+0.25`` (pieces), ``+W7`` / ``-L7`` for forced results."""
        if self.kind == "win":
            return f"+W{self.value}"
        if self.kind == "loss":
            return f"-L{self.value}"
        return f"{self.value / 100:+.2f}"


@dataclass(frozen=True)
class SearchInfo:
    """The search fields of one ``info`` line; any of them may be absent (None)."""

    score: Score | None = None
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    time: int | None = None  # ms since go, as the engine reports it

    @classmethod
    def parse(cls, line: str) -> SearchInfo | None:
        """The fields of ``line``; None when it is not an ``info`` line naming a search
        field (``info string ...`` is text, never fields). A field named with a value that
        cannot be read is absent from the result."""
        words = line.split()
        if words[:1] != ["info"] or (len(words) > 1 and words[1] == "string"):
            return None
        fields: dict[str, Any] = {}
        named = False
        i = 1
        while i < len(words):
            word = words[i]
            if word in ("string", "pv"):
                break  # free text, or moves, to the end of the line
            if word in _INT_FIELDS:
                named = True
                number = _integer(words[i + 1]) if i + 1 < len(words) else None
                if number is not None:
                    fields[word] = number
                i += 2
            elif word == "score":
                named = True
                kind = words[i + 1] if i + 1 < len(words) else ""
                number = _integer(words[i + 2]) if i + 2 < len(words) else None
                if kind in ("cp", "win", "loss") and number is not None:
                    fields["score"] = Score(kind, number)
                i += 3
            else:
                i += 1
        return cls(**fields) if named else None

    @classmethod
    def last_of(cls, lines: Sequence[str]) -> SearchInfo | None:
        """The fields of the last line among ``lines`` that has any (read from the end:
        usually the last line is the one)."""
        for line in reversed(lines):
            info = cls.parse(line)
            if info is not None:
                return info
        return None

    def to_json(self) -> dict[str, Any]:
        """A plain dict of the fields present (the database and JSON form)."""
        data = {k: v for k, v in asdict(self).items() if v is not None}
        if self.score is not None:
            data["score"] = {"kind": self.score.kind, "value": self.score.value}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> SearchInfo | None:
        """The inverse of :meth:`to_json` (None stays None)."""
        if data is None:
            return None
        fields = {k: data[k] for k in _INT_FIELDS if k in data}
        score = data.get("score")
        if score is not None:
            fields["score"] = Score(str(score["kind"]), int(score["value"]))
        return cls(**fields)


def _integer(text: str) -> int | None:
    return whole_number(text, _MAX_DIGITS, signed=True)
