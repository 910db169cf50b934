"""A knockout's games as the executor asks for them, scheduled as results come in.

Why: the executor pulls jobs one at a time (``next_job``); a round-robin hands it a
fixed list, a knockout cannot, because later rounds and tie-break pairs depend on
results. This feed keeps the bracket (:mod:`guti.referee.tournament.knockout`) up to date
with every stored game and adds the games it then needs to the database schedule
*before* handing them out. A kill at any point leaves schedule and games consistent:
the bracket is rebuilt from them on ``-resume`` and whatever is still missing is
scheduled then (:meth:`KnockoutFeed.extend` is idempotent), so no game is lost or
played twice.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from guti.referee.tournament.feed import GameFeed
from guti.referee.tournament.knockout import (
    Bracket,
    build,
    describe,
    lines,
    new_jobs,
    round_title,
)

if TYPE_CHECKING:
    from guti.referee.game.openings import Opening
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.storage.store import TournamentStore


class KnockoutFeed(GameFeed):
    """The job source of a knockout run (see the module docstring)."""

    follows_results = True

    def __init__(
        self,
        store: TournamentStore,
        games: int,
        tiebreak: int,
        openings: Sequence[Opening] | None,
    ) -> None:
        self.store = store
        self.games = games
        self.tiebreak = tiebreak
        self.openings = openings
        self.names = store.engine_names()
        self.scheduled = store.scheduled_games()
        self.results = {row[0]: row[4] for row in store.results()}
        self.queue: deque[ScheduledGame] = deque(store.pending())
        self.bracket = self._build()
        self.announced = {(e.round, e.slot) for e in self.bracket.decided() if not e.bye}
        self.extend()  # whatever a kill left unscheduled

    def _build(self) -> Bracket:
        return build(len(self.names), self.games, self.tiebreak,
                     ((gid, rnd, w, b) for gid, _pid, rnd, w, b in self.scheduled), self.results)

    def extend(self) -> tuple[list[str], int]:
        """Schedule (in the database, then in the queue) every game the bracket needs
        now; returns a line per encounter that got games, and how many games."""
        wanted = self.bracket.wanted()
        next_game = max((row[0] for row in self.scheduled), default=-1) + 1
        next_pair = max((row[1] for row in self.scheduled), default=-1) + 1
        jobs = new_jobs(self.bracket, next_game, next_pair, self.openings)
        if not jobs:
            return [], 0
        self.store.add_jobs(jobs)
        self.scheduled += [(j.game_id, j.pair_id, j.round, j.white, j.black) for j in jobs]
        self.queue.extend(jobs)
        out = []
        for enc, count in wanted:
            assert enc.high is not None and enc.low is not None
            high, low = self.names[enc.high], self.names[enc.low]
            title = round_title(enc, enc is self.bracket.rounds[-1][0])
            if enc.game_ids:
                out.append(f"Knockout {title}: {high} {enc.points[0]:g} - "
                           f"{enc.points[1]:g} {low} is tied: a tie-break pair is played")
            else:
                out.append(f"Knockout {title}: {high} vs {low}, {count} games")
        self.bracket = self._build()
        return out, len(jobs)

    def next_job(self) -> ScheduledGame | None:
        return self.queue.popleft() if self.queue else None

    def overview(self) -> list[str]:
        """The bracket as it stands (printed when a run starts and when it ends)."""
        return lines(self.bracket, self.names)

    def stored(self, job: ScheduledGame, result: str) -> tuple[list[str], int]:
        """Take a stored game into the bracket; returns the lines to print (encounters
        now decided, games newly scheduled, the winner) and how many games were added."""
        self.results[job.game_id] = result
        self.bracket = self._build()
        out: list[str] = []
        for enc in self.bracket.decided():
            if enc.bye or (enc.round, enc.slot) in self.announced:
                continue
            self.announced.add((enc.round, enc.slot))
            final = enc is self.bracket.rounds[-1][0]
            out.append(f"Knockout {describe(enc, self.names, final)}")
            if final and enc.winner is not None:
                out.append(f"Knockout winner: {self.names[enc.winner]}")
        scheduled, added = self.extend()
        return out + scheduled, added
