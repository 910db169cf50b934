"""The optional watcher of a running tournament: games starting, moves, games stored.

:class:`~guti.referee.execution.local.LocalExecutor` (and each referee process of a
:class:`~guti.referee.execution.referee_pool.RefereePool`) asks it for a per-game
:class:`~guti.referee.game.observer.MoveObserver` when a game starts, and
:func:`~guti.referee.tournament.run.run_tournament` tells it each game it stored. Every call is
made in the tournament's event loop and must return at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from guti.referee.game.observer import MoveObserver
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame


class TournamentObserver(Protocol):
    def started(self, job: ScheduledGame, white: str, black: str) -> MoveObserver | None:
        """Game ``job`` starts between engines ``white`` and ``black``."""

    def finished(self, job: ScheduledGame, record: GameRecord) -> None:
        """Game ``job`` ended and is stored in the database."""
