"""The optional watcher of a running tournament: games starting, moves, games stored.

:class:`~referee.tournament.executor.Executor` asks it for a per-game
:class:`~referee.game.observer.MoveObserver` when a game starts, and
:func:`~referee.tournament.run.run_tournament` tells it each game it stored. Every call is
made in the tournament's event loop and must return at once.
"""

from __future__ import annotations

from typing import Protocol

from referee.game.observer import MoveObserver
from referee.game.record import GameRecord
from referee.tournament.scheduler import ScheduledGame


class TournamentObserver(Protocol):
    def started(self, job: ScheduledGame, white: str, black: str) -> MoveObserver | None:
        """Game ``job`` starts between engines ``white`` and ``black``."""

    def finished(self, job: ScheduledGame, record: GameRecord) -> None:
        """Game ``job`` ended and is stored in the database."""
