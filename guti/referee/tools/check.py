"""``guti check``: run an engine through protocol.md and report, one line per item.

Lines are ``PASS item (detail)``, ``FAIL item: expected ..., saw ... [FEN ...;
last engine lines: ...]``, ``WARN item: ...`` or ``SKIP item: why``. Every expected answer
is computed with guti's rules core (positions from :mod:`guti.referee.tools.check_cases`),
never written down by hand. The items are in ``check_lifecycle`` (the engine as a whole),
``check_game`` (one game) and ``check_input`` (perft, bad input), on the session of
:mod:`guti.referee.tools.check_session`; the command line is :mod:`guti.referee.cli.check`.

Two parts: what UGI (cutegames' protocol) requires of every engine, and guti's own
extensions (``d``, ``go perft``, the exact wording ``info string error`` /
``info string unknown command``). An extension item that fails is a WARN, not a FAIL,
so an engine written for cutegames still "conforms to UGI"; the summary line says which
of the two the engine meets. Exit status 0 when the UGI part passes.

Every wait is bounded. An engine that crashes or stops answering gets a FAIL
for the item where it happened and SKIP lines for the rest ("engine gone"):
the first fault is the one to fix, and a hanging engine never hangs the check.
The engine is always killed at the end, whole process group included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.tools.check_cases import cases_for
from guti.referee.tools.check_game import GameItems
from guti.referee.tools.check_input import InputItems
from guti.referee.tools.check_lifecycle import LifecycleItems

if TYPE_CHECKING:
    from guti.referee.tools.check_session import Emit


class Checker(LifecycleItems, GameItems, InputItems):
    """One run of the check against one engine command: every item, in order."""

    async def run(self) -> int:
        """Run every item; the number of failures."""
        try:
            await self._run()
        finally:
            if self.eng is not None:
                await self.eng.quit(grace=0.2, term_grace=0.5)
        self.emit(self.summary())
        return self.failed

    async def _run(self) -> None:
        self.eng = self.new_engine()
        if not await self.item("handshake", self.check_handshake):
            if self.hs is None:
                self.gone = self.gone or "no handshake"
        await self.item("isready", self.check_isready)
        games = await self.pick_games() if self.hs is not None else []
        for game in games:
            cases = cases_for(game)
            assert cases is not None
            await self.revive(game)
            await self.check_game(cases)
            await self.check_perft(cases)
            await self.check_bad_input(cases)
        self.report_stray_lines()
        self.report_resources()
        await self.revive("quit")
        await self.item("quit", self.check_quit)


async def run_check(argv: list[str], games: list[str] | None, emit: Emit) -> int:
    """Check the engine ``argv``; report lines go to ``emit``. Returns the number of failures."""
    return await Checker(argv, games, emit).run()
