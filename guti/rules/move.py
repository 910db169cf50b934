"""Moves and their notation (protocol.md): ``17-12`` for a step, ``22x12x2`` for a capture."""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import attrgetter

from .errors import RulesError

_POINT = r"[1-9][0-9]*"
_STEP_RE = re.compile(rf"({_POINT})-({_POINT})")
_CAPTURE_RE = re.compile(rf"{_POINT}(?:x{_POINT})+")


class Move:
    """One turn: a step or a whole capture sequence.

    ``path`` holds the points (1-based) the piece stands on, start first;
    ``capture_mask`` the bits of the pieces it takes (0 for a step). Two
    moves are equal when their kind and path are (the captured pieces follow
    from the path on a given board).
    """

    __slots__ = ("path", "capture_mask", "is_capture", "_text")

    def __init__(
        self,
        path: tuple[int, ...],
        capture_mask: int = 0,
        is_capture: bool | None = None,
        text: str | None = None,
    ):
        """``text``: the notation, when the caller already has it (it must be the path's)."""
        self.path = path
        self.capture_mask = capture_mask
        if is_capture is None:
            is_capture = capture_mask != 0
        self.is_capture = is_capture
        self._text = ("x" if is_capture else "-").join(map(str, path)) if text is None else text

    @staticmethod
    def step(source: int, target: int) -> Move:
        """``Move((source, target))`` with its notation given: the board makes one per
        legal step of every position it judges. (Not ``cls.__new__``: the compiled build,
        setup.py, cannot compile that.)"""
        return Move((source, target), 0, False, f"{source}-{target}")

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
        return self._text

    def __repr__(self) -> str:
        return f"Move({self._text!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Move):
            return self._text == other._text
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)

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


#: ``str(move)`` for a sort key or a dict key, read in C (no ``__str__`` call per move).
move_text: Callable[[Move], str] = attrgetter("_text")
