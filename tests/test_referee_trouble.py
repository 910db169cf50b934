"""No engine charged for the referee's trouble: a chatty engine, a stopped referee, an
engine's children that leave its process group, engines started while games run.

Through the real programs: ``tests/engines/troubled.py`` is a legal engine that does
what may trouble its referee; the events a test waits on are written by the engine.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.record import GameRecord
from guti.referee.game.runner import play_game
from guti.referee.game.timecontrol import parse_limits
from guti.referee.process.line_reader import QUEUE_LIMIT
from guti.referee.ugi.client import UgiEngine

TROUBLED = str(Path(__file__).parent / "engines" / "troubled.py")


def troubled(name: str, *args: str) -> EngineConfig:
    return EngineConfig(name=name, argv=[sys.executable, TROUBLED, *args])


# -- a chatty but legal engine ---------------------------------------------------------------


def test_an_engine_writing_20_mb_of_info_in_one_move_is_not_forfeited() -> None:
    """20 MB of ``info`` lines during one move, then a legal bestmove: the game goes on,
    and what the reader holds unread stays within its budget all along."""
    peak = 0

    async def main() -> tuple[GameRecord, int]:
        nonlocal peak
        white = await UgiEngine.launch(troubled("chatty", "--chatty", "20", "--at", "2"),
                                       "egara-guti", 30)
        black = await UgiEngine.launch(troubled("plain"), "egara-guti", 30)
        lines = white.transport._lines  # type: ignore[attr-defined]
        feed = lines.feed

        def measured_feed(data: bytes, now: float) -> bool:
            nonlocal peak
            done = feed(data, now)
            peak = max(peak, len(lines.buf))
            return done

        lines.feed = measured_feed
        try:
            record = await play_game(white, black, "egara-guti",
                                     limits=parse_limits({"tc": "60+1"}),
                                     adjudication=None)
        finally:
            await white.quit()
            await black.quit()
        return record, lines.folded

    record, folded = asyncio.run(main())
    assert record.reason.is_rule, f"{record.reason}: {record.detail}"  # ended by the rules
    assert len(record.moves) >= 3  # the chatty move was played and the game went on
    assert folded >= 4 << 20  # old info lines were dropped unread
    assert peak <= QUEUE_LIMIT + (1 << 16) + 1, f"the reader held {peak} bytes"
