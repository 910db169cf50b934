"""FEN in and out (protocol.md): ``CELLS SIDE [CLOCK [MOVE]]``.

CELLS lists the points in numbering order, row by row (``/`` between rows):
``w``, ``b``, or a decimal count of empty points (no leading zero, never 0,
never past the end of its row); each row holds exactly its number of points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import RulesError

if TYPE_CHECKING:
    from .games import Game

_TOKEN_RE = re.compile(r"[wb]|[1-9][0-9]*")


@dataclass(frozen=True)
class Position:
    """A parsed FEN: piece masks (bit p-1 = point p), side to move (0 White, 1 Black), counters."""

    white: int
    black: int
    turn: int
    clock: int
    fullmove: int


def _row_error(fen: str, row: int, text: str, why: str) -> RulesError:
    return RulesError(f"bad FEN {fen!r}: row {row} ({text!r}) {why}")


def parse_fen(game: Game, fen: str) -> Position:
    """Parse ``fen`` for ``game``; RulesError says what is wrong and where."""
    if not isinstance(fen, str):
        raise RulesError(f"FEN must be a string, got {type(fen).__name__}")
    shown = fen if len(fen) <= 120 else fen[:117] + "..."
    fields = fen.split()
    if not 2 <= len(fields) <= 4:
        raise RulesError(
            f"bad FEN {shown!r}: expected 2 to 4 fields 'CELLS SIDE [CLOCK [MOVE]]', got {len(fields)}"
        )
    rows = fields[0].split("/")
    sizes = game.geometry.rows
    if len(rows) != len(sizes):
        raise RulesError(
            f"bad FEN {shown!r}: {game.name} has {len(sizes)} rows "
            f"({'/'.join(map(str, sizes))}), got {len(rows)}"
        )
    white = black = 0
    point = 0
    for number, (text, size) in enumerate(zip(rows, sizes, strict=True), start=1):
        filled = 0
        pos = 0
        while pos < len(text):
            match = _TOKEN_RE.match(text, pos)
            if not match:
                bad = text[pos]
                why = "has a count with a leading zero or a 0" if bad == "0" else f"has {bad!r} (expected w, b or a count)"
                raise _row_error(shown, number, text, why)
            token = match.group()
            pos = match.end()
            if token == "w":
                white |= 1 << (point + filled)
                filled += 1
            elif token == "b":
                black |= 1 << (point + filled)
                filled += 1
            elif len(token) > 4:  # past any row (and int() refuses thousands of digits)
                raise _row_error(shown, number, text, f"runs past its {size} points")
            else:
                filled += int(token)
            if filled > size:
                raise _row_error(shown, number, text, f"runs past its {size} points")
        if filled != size:
            raise _row_error(shown, number, text, f"holds {filled} points, expected {size}")
        point += size
    side = fields[1]
    if side not in ("w", "b"):
        raise RulesError(f"bad FEN {shown!r}: side to move {side!r} must be 'w' or 'b'")
    clock, fullmove = 0, 1
    if len(fields) >= 3:
        clock = _counter(shown, "clock", fields[2], 0)
    if len(fields) == 4:
        fullmove = _counter(shown, "move number", fields[3], 1)
    return Position(white, black, 0 if side == "w" else 1, clock, fullmove)


def _counter(fen: str, what: str, text: str, minimum: int) -> int:
    if not re.fullmatch(r"0|[1-9][0-9]{0,8}", text) or int(text) < minimum:
        raise RulesError(f"bad FEN {fen!r}: {what} {text!r} must be a whole number >= {minimum}")
    return int(text)


def format_fen(game: Game, white: int, black: int, turn: int, clock: int, fullmove: int) -> str:
    """The FEN of a position; the inverse of :func:`parse_fen`."""
    rows = []
    point = 0
    for size in game.geometry.rows:
        parts: list[str] = []
        empty = 0
        for bit in range(point, point + size):
            mask = 1 << bit
            piece = "w" if white & mask else "b" if black & mask else ""
            if piece:
                if empty:
                    parts.append(str(empty))
                    empty = 0
                parts.append(piece)
            else:
                empty += 1
        if empty:
            parts.append(str(empty))
        rows.append("".join(parts))
        point += size
    return f"{'/'.join(rows)} {'wb'[turn]} {clock} {fullmove}"
