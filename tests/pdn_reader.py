"""A small reader for the PDN files ``guti match -pdnout`` writes, for tests.

Why a separate reader: tests must check what the referee wrote from the file
itself, not from the referee's own objects, so a bug in the writer shows up.
It reads only what ``referee/game/pdn.py`` produces (tag pairs, move numbers,
moves, ``{...}`` comments, a result), and keeps each move with the comments
that follow it, so per-move clock comments can be checked move by move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$', re.M)
_TOKEN = re.compile(r"\{[^}]*\}|\S+")
_MOVE_NUMBER = re.compile(r"\d+\.(\.\.)?")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


@dataclass
class PdnMove:
    """One move as written, with the text of the comments after it."""

    text: str
    comments: list[str] = field(default_factory=list)


@dataclass
class PdnGame:
    tags: dict[str, str]
    moves: list[PdnMove]
    result: str | None
    #: Comments before the first move or after the last one that belong to no move
    #: (the referee's fault note is written after the last move).
    notes: list[str] = field(default_factory=list)

    @property
    def move_texts(self) -> list[str]:
        return [m.text for m in self.moves]


def read_pdn(text: str) -> list[PdnGame]:
    """Every game of a PDN file, in order (tags, moves with their comments, result)."""
    games = []
    for chunk in re.split(r"\n\s*\n(?=\[Event )", text.strip()):
        if not chunk.strip():
            continue
        head, _, body = chunk.partition("\n\n")
        tags = dict(_TAG.findall(head))
        moves: list[PdnMove] = []
        notes: list[str] = []
        result = None
        for token in _TOKEN.findall(body):
            if token.startswith("{"):
                comment = token[1:-1].strip()
                # The writer puts one comment ({book} or the clock) after each
                # move; any further comment (the referee's fault note) is a note.
                if moves and not moves[-1].comments:
                    moves[-1].comments.append(comment)
                else:
                    notes.append(comment)
            elif token in RESULTS:
                result = token
            elif _MOVE_NUMBER.fullmatch(token):
                continue
            else:
                moves.append(PdnMove(token))
        games.append(PdnGame(tags, moves, result, notes))
    return games
