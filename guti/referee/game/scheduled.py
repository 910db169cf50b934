"""One game to play, as a schedule hands it on: its number, its pair, its round, which
engines play which colour, its opening.

Its own module in the game layer because every room below the tournament's scheduling
passes it on: the ways to run games play it, the storage writes it down and reads it
back for ``-resume``; none of them needs to know how a schedule is made
(:mod:`guti.referee.tournament.scheduler`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guti.referee.game.openings import Opening


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game to play. ``white``/``black`` index the tournament's engine list;
    ``round`` is 1-based; games of one pair share ``pair_id`` and ``opening``."""

    game_id: int
    pair_id: int
    round: int
    white: int
    black: int
    opening: Opening | None
