"""A match: N games between two engines, colours alternating, engines kept or restarted.

:class:`EngineSlot` owns one engine's process across games (reusable by the
tournament): it starts the engine on first use, keeps it between games, and
restarts it when the configuration says ``restart=on`` or after the engine
was at fault (a stalled or crashed engine is never trusted again).

:func:`run_match` plays the games. Game i (0-based) has the first engine as
White when i is even; games 2k and 2k+1 share opening k, so each engine plays
each opening once with each colour. If an engine cannot be started before
the first game, :class:`~referee.engine_process.EngineStartError` propagates
(the CLI makes that exit status 2); later start failures become lost games
with reason ``start failure``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from .engine_config import EngineConfig
from .engine_process import EngineProcess, EngineStartError, TrafficHook
from .game_record import GameRecord
from .game_runner import (
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
    DEFAULT_SYNC_TIMEOUT,
    play_configured_game,
    start_failure_record,
)
from .openings import Opening
from .pdn import PdnWriter
from .timecontrol import Limits


class EngineSlot:
    """One engine across many games: lazily started, restarted when needed."""

    def __init__(
        self,
        config: EngineConfig,
        game: str,
        handshake_timeout: float = DEFAULT_SYNC_TIMEOUT,
        traffic: TrafficHook | None = None,
    ) -> None:
        self.config = config
        self.game = game
        self.handshake_timeout = handshake_timeout
        self.traffic = traffic
        self.process: EngineProcess | None = None
        self.starts = 0

    @property
    def name(self) -> str:
        return self.config.name

    async def acquire(self) -> EngineProcess:
        """A running, handshaken engine (EngineStartError if it cannot be had)."""
        if self.process is not None and not self.process.is_alive:
            await self.process.quit(grace=0.0)
            self.process = None
        if self.process is None:
            self.starts += 1
            self.process = await EngineProcess.launch(
                self.config, self.game, self.handshake_timeout, self.traffic
            )
        return self.process

    async def release(self, faulty: bool) -> None:
        """After a game: quit the engine if it was at fault or restarts are configured."""
        if self.process is not None and (faulty or self.config.restart):
            proc, self.process = self.process, None
            await proc.quit(grace=0.0 if faulty else 1.0)

    async def close(self) -> None:
        if self.process is not None:
            proc, self.process = self.process, None
            await proc.quit()


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
    slots = (
        EngineSlot(s.first, s.game, s.handshake_timeout, s.traffic),
        EngineSlot(s.second, s.game, s.handshake_timeout, s.traffic),
    )
    score = MatchScore(s.first.name, s.second.name)
    writer = PdnWriter(s.pdn_path) if s.pdn_path else None
    try:
        for slot in slots:  # a start failure before game 1 ends the match
            await slot.acquire()
        for index in range(s.games):
            white, black = (slots[0], slots[1]) if index % 2 == 0 else (slots[1], slots[0])
            opening = s.openings[(index // 2) % len(s.openings)] if s.openings else None
            start_fen = opening.fen if opening else s.start_fen
            moves = opening.moves if opening else ()
            note = getattr(s.traffic, "note", None)
            if note is not None:
                note(f"game {index + 1}: {white.name} (white) vs {black.name} (black)")
            record = await _one_game(s, white, black, start_fen, moves, str(index + 1))
            if note is not None:
                note(f"game {index + 1}: {record.result} ({record.reason}) {record.detail}".rstrip())
            score.add(record)
            if writer is not None:
                writer.write(record)
            if on_game is not None:
                on_game(index, record)
            flush = getattr(s.traffic, "flush", None)
            if flush is not None:
                flush()
    finally:
        for slot in slots:
            with contextlib.suppress(Exception):
                await slot.close()
        if writer is not None:
            writer.close()
    return score


async def _one_game(
    s: MatchSettings,
    white: EngineSlot,
    black: EngineSlot,
    start_fen: str | None,
    moves: tuple[str, ...],
    round_: str,
) -> GameRecord:
    procs: list[EngineProcess] = []
    for side, slot in (("w", white), ("b", black)):
        try:
            procs.append(await slot.acquire())
        except EngineStartError as exc:
            return start_failure_record(
                s.game, white.name, black.name, side, str(exc), start_fen, round_,
                s.event, s.site, s.limits,
            )
    record = await play_configured_game(
        s, procs[0], procs[1], white.config.limits, black.config.limits, start_fen, moves, round_
    )
    await white.release(record.fault == "w")
    await black.release(record.fault == "b")
    return record
