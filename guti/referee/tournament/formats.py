"""Tournament formats as classes behind one interface, as cutechess's ``Tournament``
subclasses are: round-robin, gauntlet and knockout.

A format says which games the database is created with (:meth:`TournamentFormat.schedule`)
and where each run's games come from (:meth:`TournamentFormat.feed`); the run driver
(:mod:`guti.referee.tournament.run`) asks nothing else of it. A new format is one more
class in :data:`FORMATS`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from guti.referee.tournament.feed import GameFeed, ScheduleFeed
from guti.referee.tournament.knockout import KNOCKOUT
from guti.referee.tournament.knockout_feed import KnockoutFeed
from guti.referee.tournament.scheduler import schedule, total_games

if TYPE_CHECKING:
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.storage.store import TournamentStore
    from guti.referee.tournament.settings import TournamentSettings


class TournamentFormat(ABC):
    """How the games of a tournament of ``settings`` are chosen."""

    name: ClassVar[str]

    def __init__(self, settings: TournamentSettings) -> None:
        self.settings = settings

    @abstractmethod
    def schedule(self) -> Iterable[ScheduledGame]:
        """The games the tournament's database is created with."""

    def scheduled_games(self) -> int | None:
        """How many games :meth:`schedule` stores (None: the schedule grows as the
        tournament goes): a resumed database holding another count was changed."""
        return None

    @abstractmethod
    def feed(self, store: TournamentStore) -> GameFeed:
        """The games of a run on ``store`` (may raise
        :class:`~guti.referee.tournament.feed.FormatError`)."""


class RoundRobin(TournamentFormat):
    """Every engine meets every other one ``rounds`` times, ``games`` games each time: the
    whole schedule is known at once (:mod:`guti.referee.tournament.scheduler`)."""

    name = "roundrobin"
    #: Who meets whom (:func:`~guti.referee.tournament.scheduler.pairings`).
    pairing: ClassVar[str] = "roundrobin"

    def schedule(self) -> Iterable[ScheduledGame]:
        s = self.settings
        return schedule(self.pairing, len(s.engines), s.rounds, s.games, s.game.schedule_openings(),
                        seeds=s.seeds, noswap=s.scheduling.noswap, reverse=s.scheduling.reverse)

    def scheduled_games(self) -> int:
        s = self.settings
        return total_games(self.pairing, len(s.engines), s.rounds, s.games, s.seeds)

    def feed(self, store: TournamentStore) -> GameFeed:
        return ScheduleFeed(store.pending())


class Gauntlet(RoundRobin):
    """The first ``seeds`` engines each meet every engine listed after them."""

    name = "gauntlet"
    pairing = "gauntlet"


class Knockout(TournamentFormat):
    """A single-elimination bracket: scheduled as it advances, so the database starts
    empty and each run's feed schedules what the results call for."""

    name = KNOCKOUT

    def schedule(self) -> Iterable[ScheduledGame]:
        return []

    def feed(self, store: TournamentStore) -> GameFeed:
        s = self.settings
        return KnockoutFeed(store, s.games, s.tiebreak, s.game.schedule_openings())


#: Every format by its ``-tournament`` name.
FORMATS: dict[str, type[TournamentFormat]] = {
    f.name: f for f in (RoundRobin, Gauntlet, Knockout)
}


def tournament_format(settings: TournamentSettings) -> TournamentFormat:
    """The format of ``settings`` (its name was checked when the settings were made)."""
    return FORMATS[settings.fmt](settings)
