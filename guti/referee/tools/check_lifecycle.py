"""The items of ``guti check`` about the engine as a whole: it starts and shakes hands
(``ugi`` ... ``ugiok``), answers ``isready``, declares the games to check, and exits on
``quit`` leaving no process behind."""

from __future__ import annotations

import asyncio
import os
import time

from guti.referee.game.resources import mib_text
from guti.referee.process.errors import EngineError, EngineStartError, EngineTimeout
from guti.referee.process.group import live_members
from guti.referee.tools.check_session import (
    HANDSHAKE_WAIT,
    QUIT_LIMIT,
    UGIOK_LIMIT,
    CheckSession,
    Fail,
    Gone,
    clip,
    said,
    short,
)
from guti.referee.ugi.lines import unfinished_note
from guti.referee.ugi.options import UNDECLARED_GAME, declaration_problem
from guti.rules import GAMES


class LifecycleItems(CheckSession):
    """Handshake, isready, the games to check, quit."""

    async def check_handshake(self) -> str:
        assert self.eng is not None
        try:
            await self.eng.start()
        except EngineStartError:
            raise  # no engine to check: one line and exit 2, as match says it (cli.check)
        except EngineError as exc:
            self.gone = "did not start"
            raise Gone(f"expected a running engine, saw {said(exc)}") from None
        try:
            hs = await self.eng.read_handshake(HANDSHAKE_WAIT)
        except EngineTimeout as exc:
            self.gone = "no ugiok"
            raise Gone(f"expected ugiok within {UGIOK_LIMIT:g} s of ugi, "
                       f"saw none within {HANDSHAKE_WAIT:g} s{unfinished_note(exc.unfinished)}") from None
        except EngineError as exc:
            self.gone = "died in the handshake"
            raise Gone(f"expected id, option and ugiok lines, saw {said(exc)}") from None
        self.hs = hs
        if hs.elapsed > UGIOK_LIMIT:
            raise Fail(f"ugiok within {UGIOK_LIMIT:g} s of ugi", f"it after {hs.elapsed:.2f} s")
        if hs.id_name is None or hs.id_author is None:
            missing = " and ".join(
                w for w, v in (("id name", hs.id_name), ("id author", hs.id_author)) if v is None
            )
            raise Fail(f"{missing} before ugiok", "none")
        bad = [line for line in hs.other_lines if line.split()[:1] == ["option"]]
        if bad:
            raise Fail("option lines 'option name N type T ...'", short(bad))
        variant = hs.variant
        if variant is not None and (variant.type != "combo" or not variant.vars):
            raise Fail("UGI_Variant of type combo with var values", f"type {variant.type} "
                       f"with vars {variant.vars}")
        if hs.declared_twice:
            raise Fail("each option declared once (names read in any case)",
                       "declared again: " + short(hs.declared_twice))
        wrong = [why for why in map(declaration_problem, hs.options.values()) if why]
        if wrong:
            raise Fail("options declared as protocol.md has them", short(wrong))
        return (f"id name {clip(hs.id_name, 120)}; {len(hs.options)} options; "
                f"games {', '.join(hs.games())}; ugiok in {hs.elapsed * 1000:.0f} ms")

    async def check_isready(self) -> str:
        start = time.monotonic()
        await self.ready("after isready")
        return f"readyok in {(time.monotonic() - start) * 1000:.0f} ms"

    async def pick_games(self) -> list[str]:
        """The games to check: those asked for (they must be declared) or all declared."""
        if self.hs is None:
            return [g for g in (self.only_games or [UNDECLARED_GAME]) if g in GAMES]
        declared = self.hs.games()
        for g in declared:
            if g not in GAMES:
                self.add("SKIP", f"UGI_Variant {g}", "guti has no rules for this game")
        if self.only_games is None:
            return self.hs.known_games()
        picked = []
        for g in self.only_games:
            if g in declared:
                picked.append(g)
            else:
                self.add("FAIL", f"{g}: declared",
                         f"expected {g} in the engine's games, saw {', '.join(declared)}")
        return picked

    def report_resources(self) -> None:
        """What the engine's searches took: its peak memory and the most processes and
        threads it had at once (looked at mid-search and at each bestmove), so that its
        author sees what ``limits.memory`` and ``limits.processes`` it needs. Reported
        also when the engine is gone by now: the looks were taken while it searched."""
        name = "resources during its searches"
        if self.gone is None:
            self.look_at_usage()
        most = self.most
        if most is None:
            why = ("the engine was gone before any search" if self.gone is not None
                   else "its processes are read from /proc, which is Linux's"
                   if not os.path.isdir("/proc/self") else "it ran no search")
            self.add("SKIP", name, f"no search was looked at ({why})")
            return
        memory = "not known" if most.peak_memory is None else mib_text(most.peak_memory)
        processes = "process" if most.processes == 1 else "processes"
        self.add("PASS", name,
                 f"peak memory {memory} (its largest process's peak resident memory), at "
                 f"most {most.threads} threads in {most.processes} {processes} during its "
                 "searches; limits.memory counts the memory of all its processes, "
                 "limits.processes their threads")

    async def check_quit(self) -> str:
        eng = self.eng
        assert eng is not None
        pgid = eng.pid
        eng.ask_to_quit()
        start = time.monotonic()
        while eng.returncode is None and time.monotonic() - start < QUIT_LIMIT:
            await asyncio.sleep(0.02)
        took = time.monotonic() - start
        if eng.returncode is None:
            raise Gone(f"expected the engine to exit within {QUIT_LIMIT:g} s of quit, "
                       "saw it still running")
        left: list[int] = []
        if pgid is not None:
            # Look before EngineProcess's own clean-up (ORPHAN_PIPE_GRACE) kills leftovers.
            for _ in range(8):
                left = live_members(pgid)
                if not left:
                    break
                await asyncio.sleep(0.02)
        # Under load the transport's own clean-up may have killed them before we looked.
        left = left or (list(self.proc.orphans_killed) if self.proc is not None else [])
        if left:
            raise Gone("expected no process of the engine left after quit, saw "
                       f"{len(left)} still running (pids {' '.join(map(str, left))})")
        return f"exited in {took * 1000:.0f} ms with status {eng.returncode}"

