"""A match: N games between two engines, colours alternating, engines kept or restarted.

A match is played by the tournament's :class:`~referee.tournament.executor.Executor` with one
game at a time, so both share one way of starting, reusing and replacing engine
processes (:mod:`referee.tournament.engine_pool`: kept between games, restarted after a fault
or with ``restart=on``) and of turning engine faults into lost games.

:func:`run_match` plays the games. Game i (0-based) has the first engine as
White when i is even; games 2k and 2k+1 share opening k, so each engine plays
each opening once with each colour. If an engine cannot be started before
the first game, :class:`~referee.process.engine_process.EngineStartError` propagates
(the CLI makes that exit status 2); later start failures become lost games
with reason ``start failure``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from referee.game.openings import Opening
from referee.game.pdn import PdnWriter
from referee.game.record import GameRecord
from referee.game.runner import DEFAULT_MOVE_TIMEOUT, DEFAULT_STALL_GRACE, DEFAULT_SYNC_TIMEOUT
from referee.game.timecontrol import Limits
from referee.process.engine_process import TrafficHook
from referee.tournament.executor import Executor, GameSettings
from referee.tournament.scheduler import ScheduledGame
from referee.ugi.engine_config import EngineConfig


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
        if record.result == "1/2-1/2":
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


@dataclass
class MatchSettings:
    """Everything a match needs; the CLI builds it from the command line."""

    first: EngineConfig
    second: EngineConfig
    game: str
    games: int = 2
    limits: Limits = field(default_factory=Limits)
    openings: list[Opening] | None = None  # None: every game from start_fen
    start_fen: str | None = None
    handshake_timeout: float = DEFAULT_SYNC_TIMEOUT
    move_timeout: float = DEFAULT_MOVE_TIMEOUT
    stall_grace: float = DEFAULT_STALL_GRACE
    event: str = "?"
    site: str = "?"
    pdn_path: str | None = None
    traffic: TrafficHook | None = None


async def run_match(
    settings: MatchSettings,
    on_game: Callable[[int, GameRecord], None] | None = None,
) -> MatchScore:
    """Play the match; ``on_game(index, record)`` after each game. Engines are always
    quit (and their process groups reaped) on the way out, also when cancelled."""
    s = settings
    executor = Executor(
        [s.first, s.second],
        GameSettings(
            game=s.game, limits=s.limits, handshake_timeout=s.handshake_timeout,
            move_timeout=s.move_timeout, stall_grace=s.stall_grace, event=s.event, site=s.site,
        ),
        concurrency=1,
        traffic=s.traffic,
        tag_processes=False,
    )
    fixed = Opening(s.start_fen, (), "fen") if s.start_fen is not None else None
    score = MatchScore(s.first.name, s.second.name)
    writer = PdnWriter(s.pdn_path) if s.pdn_path else None
    try:
        await executor.check_engines()  # a start failure before game 1 ends the match
        for index in range(s.games):
            white, black = (0, 1) if index % 2 == 0 else (1, 0)
            opening = s.openings[(index // 2) % len(s.openings)] if s.openings else fixed
            record = await executor.play(
                ScheduledGame(index, index // 2, index + 1, white, black, opening)
            )
            score.add(record)
            if writer is not None:
                writer.write(record)
            if on_game is not None:
                on_game(index, record)
            flush = getattr(s.traffic, "flush", None)
            if flush is not None:
                flush()
    finally:
        with contextlib.suppress(Exception):
            await executor.close()
        if writer is not None:
            writer.close()
    return score
