"""What a running tournament tells whoever shows it: plain news lines, the games about to
be played, each game stored with the standings it changed, a schedule that grew.

The tournament emits these and knows nothing of terminals or pages; the command line
renders them (:mod:`guti.referee.cli.progress`: per-game lines, a progress bar, the
periodic standings), as fastchess's ``output/`` renders its tournament's. A listener is
called in the tournament's event loop and must return at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.stats.standings import Standings


@dataclass(frozen=True, slots=True)
class Note:
    """One line of news: a resume, the bracket, an SPRT decision, a signal's effect."""

    text: str


@dataclass(frozen=True, slots=True)
class Trouble:
    """One line about trouble met and handled on the way: a referee process or a worker
    lost, a game played again. Told apart from :class:`Note` so that a terminal can put
    it where warnings go."""

    text: str


@dataclass(frozen=True, slots=True)
class PlayStarted:
    """The games are about to be played: ``finished`` of ``total`` are stored already."""

    finished: int
    total: int


@dataclass(frozen=True, slots=True)
class GameStored:
    """Game ``job`` ended as ``record`` and is stored: ``finished`` of ``total`` now, and
    ``standings`` count it."""

    job: ScheduledGame
    record: GameRecord
    finished: int
    total: int
    standings: Standings


@dataclass(frozen=True, slots=True)
class ScheduleGrew:
    """``added`` more games were scheduled (a knockout's next round or tie-break): ``total``
    now."""

    added: int
    total: int


@dataclass(frozen=True, slots=True)
class PlayEnded:
    """No further game will be played in this run (every one stored, or the run stopped)."""


TournamentEvent = Note | Trouble | PlayStarted | GameStored | ScheduleGrew | PlayEnded
#: Who hears a tournament's events.
EventListener = Callable[[TournamentEvent], None]


def ignore(_event: TournamentEvent) -> None:
    """The listener of a run nobody watches."""
