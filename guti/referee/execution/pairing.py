"""One scheduled game between two pools' engines: the step both executors share.

Why: the local executor and the cluster's workers play a game the same way (take a process
of each engine, a start failure being a loss for that side; play it under the game
settings, each engine's own limits winning over the shared ones; number it; give the
processes back, a faulty one to be replaced; kill them on an abort). Written once, the two
cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from guti.referee.execution.engine_pool import EnginePool, engine_starts
from guti.referee.game.game_start import start_failure_record
from guti.referee.game.observer import MoveObserver
from guti.referee.game.reasons import Reason
from guti.referee.game.runner import play_game
from guti.referee.process.errors import EngineStartError
from guti.referee.ugi.client import UgiEngine
from guti.rules import Side

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import GameSettings

#: Called with (white, black) processes once both are taken, before the first move; may
#: return the game's move observer (the live page) or None.
BeforePlay = Callable[[UgiEngine, UgiEngine], MoveObserver | None]


async def play_job(
    job: ScheduledGame,
    white: EnginePool,
    black: EnginePool,
    settings: GameSettings,
    before_play: BeforePlay | None = None,
) -> GameRecord:
    """Play ``job`` with a process from each pool; every engine fault becomes a loss. The
    first move is asked once the engine starts under way in this loop have ended
    (:class:`~guti.referee.execution.engine_pool.EngineStarts`): no clock of this game
    runs during another game's start burst."""
    spec = settings.spec_for(job, white.config.limits, black.config.limits)
    procs: list[UgiEngine] = []
    try:
        for side, pool in ((Side.WHITE, white), (Side.BLACK, black)):
            try:
                procs.append(await pool.take())
            except EngineStartError as exc:
                if procs:  # black could not start: white did nothing wrong
                    await white.give_back(procs.pop(), faulty=False, played=False)
                record = start_failure_record(spec, white.name, black.name, side, str(exc))
                record.number = job.game_id + 1
                return record
        await engine_starts().settled()
        observer = before_play(procs[0], procs[1]) if before_play is not None else None
        record = await play_game(procs[0], procs[1], spec, observer)
        record.number = job.game_id + 1  # stored ids are 0-based; people read 1-based
    except BaseException:
        for proc in procs:  # aborted mid-game: these processes are not reusable
            proc.kill_now()
        raise
    await white.give_back(procs[0], needs_replacing(record, Side.WHITE, procs[0]))
    await black.give_back(procs[1], needs_replacing(record, Side.BLACK, procs[1]))
    return record


def needs_replacing(record: GameRecord, side: Side, proc: UgiEngine) -> bool:
    """Whether ``side``'s process is not to be trusted with another game after ``record``:
    it lost by a fault of its own, other than a time forfeit, or its last ``go`` was never
    answered (a stall charged to its opponent, whose search off its move took the cores):
    its late ``bestmove`` would answer the next game's first ``go``. An engine that lost on
    time did send its ``bestmove``, only late: it is idle and sound, and is kept (as
    cutechess and cutegames keep theirs). Replacing it would start a process while other
    games play, a burst of work on their clocks, and a loaded machine would turn one late
    reply into a chain of them."""
    return proc.searching or (record.fault is side and record.reason is not Reason.TIME_FORFEIT)
