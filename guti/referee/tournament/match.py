"""A match: N games between two engines, colours alternating, engines kept or restarted.

A match is played by the tournament's executor (:mod:`guti.referee.execution.executor`) with one
game at a time, so both share one way of starting, reusing and replacing engine
processes (:mod:`guti.referee.execution.engine_pool`: kept between games, restarted after a fault
or with ``restart=on``) and of turning engine faults into lost games.

:func:`run_match` plays the games in the order of the tournament's scheduler
(:func:`match_schedule`): a match of N games is a two-engine round-robin of
pairs, so game i (0-based) has the first engine as White when i is even and
games 2k and 2k+1 share opening k: each engine plays each opening once with
each colour (``-reverse``: the second engine is White when i is even; ``-noswap``:
one engine is White in every game). If an engine cannot be started before
the first game, :class:`~guti.referee.process.errors.EngineStartError` propagates
(the CLI makes that exit status 2); later start failures become lost games
with reason ``start failure``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.referee.execution.executor import Execution, ExecutionPlan
from guti.referee.execution.stopping import RunControl
from guti.referee.storage.export import open_game_files
from guti.referee.tournament.scheduler import pairs_per_encounter, schedule
from guti.referee.tournament.settings import MatchSettings, Scheduling
from guti.rules import Result

if TYPE_CHECKING:
    from guti.referee.game.openings import Opening
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame


@dataclass
class MatchScore:
    """Score from the first engine's point of view."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    unfinished: int = 0

    def add(self, record: GameRecord) -> None:
        if record.result is Result.DRAW:
            self.draws += 1
        elif record.winner == self.first:
            self.wins += 1
        elif record.winner == self.second:
            self.losses += 1
        else:
            self.unfinished += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    def line(self) -> str:
        """``Score of A vs B: 5-2-3 (W-D-L), points 6-4 [0.600], 10 games``."""
        other = self.losses + self.draws / 2
        ratio = f"{self.points / self.games:.3f}" if self.games else "-"
        return (
            f"Score of {self.first} vs {self.second}: {self.wins}-{self.draws}-{self.losses} "
            f"(W-D-L), points {self.points:g}-{other:g} [{ratio}], {self.games} games"
        )


def match_schedule(
    games: int, openings: Sequence[Opening] | None, scheduling: Scheduling | None = None
) -> Iterator[ScheduledGame]:
    """The games of a match, from the tournament scheduler: rounds of one pair (the same
    opening, colours reversed unless ``noswap``) between engines 0 and 1, cut at
    ``games``. A match numbers its games as rounds (the PDN ``Round`` tag is the game
    number)."""
    rules = scheduling or Scheduling()
    jobs = schedule("roundrobin", 2, pairs_per_encounter(games), 2, openings,
                    noswap=rules.noswap, reverse=rules.reverse)
    for job in itertools.islice(jobs, games):
        yield dataclasses.replace(job, round=job.game_id + 1)


async def run_match(
    settings: MatchSettings,
    on_game: Callable[[int, GameRecord], None] | None = None,
    control: RunControl | None = None,
    say: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> MatchScore:
    """Play the match; ``on_game(index, record)`` after each game. A stop of ``control``
    starts no further game; an abort ends the running one unreported (nothing written).
    Engines are always quit (and their process groups reaped) on the way out. ``say``:
    install the signal rules of :mod:`guti.referee.execution.stopping` for the match,
    telling what a signal does through it, and hear the news of a cluster's workers;
    ``warn``: hear of trouble (a referee process or worker lost, a game played again).
    Neither given: the match tells nothing."""
    s = settings
    control = control or RunControl()
    plan = ExecutionPlan([s.first, s.second], s.game, concurrency=1, cluster=s.cluster,
                         wait_ms=s.scheduling.wait_ms, cpus=s.scheduling.cpus,
                         tag_processes=False)
    # a cluster's: Dask is imported only then
    executor = Execution(plan).open(warn or _untold, say or _untold, s.traffic)
    score = MatchScore(s.first.name, s.second.name)
    writers = open_game_files(s.pdn_path, s.records.pdn_fields, s.records.epd_path)
    jobs = match_schedule(s.games, s.game.schedule_openings(), s.scheduling)

    async def on_result(job: ScheduledGame, record: GameRecord) -> None:
        score.add(record)
        for writer in writers:
            writer.write(record)
        if on_game is not None:
            on_game(job.game_id, record)
        flush = getattr(s.traffic, "flush", None)
        if flush is not None:
            flush()

    signals = (contextlib.nullcontext() if say is None
               else control.signals(say, lambda: len(executor.running)))
    with signals:
        try:
            # a start failure before game 1 ends the match; nothing runs yet, so a
            # graceful stop (one Ctrl-C) cuts the check short as well
            await control.unless_aborted(executor.check_engines(), or_stopped=True)
            if not control.stopping:
                await executor.run(lambda: next(jobs, None), on_result, control,
                                   games=s.games)
        finally:
            if control.aborted:
                executor.kill_all()
            with contextlib.suppress(Exception):
                await executor.close()
            for writer in writers:
                writer.close()
    return score


def _untold(_text: str) -> None:
    """What a match run without ``say`` or ``warn`` does with a line: nothing."""
