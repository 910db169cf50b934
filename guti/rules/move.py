"""Moves and their notation (protocol.md): ``17-12`` for a step, ``22x12x2`` for a capture."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import RulesError

_POINT = r"[1-9][0-9]*"
_STEP_RE = re.compile(rf"({_POINT})-({_POINT})")
_CAPTURE_RE = re.compile(rf"{_POINT}(?:x{_POINT})+")


@dataclass(frozen=True, slots=True, repr=False)
class Move:
    """One turn: a step or a whole capture sequence.

    ``path`` holds the points (1-based) the piece stands on, start first;
    ``capture_mask`` the bits of the pieces it takes (0 for a step); ``text`` its
    notation. Two moves are equal when their notation is, which says their kind and
    path (the captured pieces follow from the path on a given board).
    """

    path: tuple[int, ...] = field(compare=False)
    capture_mask: int = field(compare=False)
    is_capture: bool = field(compare=False)
    text: str

    @classmethod
    def step(cls, source: int, target: int) -> Move:
        """The step from ``source`` to ``target``."""
        return cls((source, target), 0, False, f"{source}-{target}")

    @classmethod
    def capture(cls, path: tuple[int, ...], capture_mask: int) -> Move:
        """The capture sequence along ``path`` taking the pieces of ``capture_mask``."""
        return cls(path, capture_mask, True, "x".join(map(str, path)))

    @property
    def from_point(self) -> int:
        return self.path[0]

    @property
    def to_point(self) -> int:
        return self.path[-1]

    @property
    def captured(self) -> tuple[int, ...]:
        """Points of the pieces this move takes, in ascending order."""
        mask, out = self.capture_mask, []
        while mask:
            low = mask & -mask
            mask ^= low
            out.append(low.bit_length())
        return tuple(out)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Move({self.text!r})"

    @staticmethod
    def parse_syntax(text: str) -> tuple[tuple[int, ...], bool]:
        """Split a move string into ``(path, is_capture)``; RulesError if it is not notation."""
        if not isinstance(text, str):
            raise RulesError(f"move must be a string, got {type(text).__name__}")
        if len(text) > 200:
            raise RulesError(f"malformed move {text[:20]!r}...: too long")
        step = _STEP_RE.fullmatch(text)
        if step:
            return (int(step.group(1)), int(step.group(2))), False
        if _CAPTURE_RE.fullmatch(text):
            return tuple(int(p) for p in text.split("x")), True
        raise RulesError(
            f"malformed move {text!r}: expected FROM-TO (e.g. 17-12) or FROMxTOx... (e.g. 22x12x2), "
            "decimal points without leading zeros and no spaces"
        )
