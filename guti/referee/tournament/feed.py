"""Where a run's games come from: a :class:`GameFeed` hands the executor one scheduled game
at a time and hears of each stored one.

A format with a fixed schedule feeds the games the database has not stored yet
(:class:`ScheduleFeed`); a format whose later games depend on results (a knockout)
schedules them as results come (:class:`~guti.referee.tournament.knockout_feed.KnockoutFeed`).
The run driver only speaks to this interface, so a new format needs no change there.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guti.referee.game.scheduled import ScheduledGame


class FormatError(ValueError):
    """A format cannot go on with what the database holds (a damaged database); one line."""


class GameFeed(ABC):
    """The job source of one run of a tournament."""

    #: True when results decide which games are played next: a game slot then waits for
    #: its result before taking another game, and the number of games is open.
    follows_results = False

    @abstractmethod
    def next_job(self) -> ScheduledGame | None:
        """The next game to play; None when there is none now."""

    def stored(self, job: ScheduledGame, result: str) -> tuple[list[str], int]:
        """Game ``job`` is stored with ``result``: the lines to tell (what it decided) and how
        many games it added to the schedule (stored in the database before they are fed).
        May raise :class:`FormatError` or the storage's ``StoreError``."""
        return [], 0

    def overview(self) -> list[str]:
        """The state of the tournament to tell when a run starts and when it ends."""
        return []


class ScheduleFeed(GameFeed):
    """A fixed schedule's games the database has not stored yet, in schedule order."""

    def __init__(self, pending: Iterator[ScheduledGame]) -> None:
        self.pending = pending

    def next_job(self) -> ScheduledGame | None:
        return next(self.pending, None)
