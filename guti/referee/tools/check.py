"""``guti check``: run an engine through protocol.md and report, one line per item.

Lines are ``PASS item (detail)``, ``FAIL item: expected ..., saw ... [FEN ...;
last engine lines: ...]``, ``WARN item: ...`` or ``SKIP item: why``. Every expected answer
is computed with guti's rules core (positions from :mod:`guti.referee.tools.check_cases`),
never written down by hand.

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

import argparse
import asyncio
import re
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.judge import Fault, Verdict, judge_reply
from guti.referee.process.engine_process import EngineProcess
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineError,
    EngineProtocolError,
    EngineTimeout,
)
from guti.referee.process.group import live_members
from guti.referee.process.text import visible
from guti.referee.tools.check_cases import GameCases, PositionCase, cases_for
from guti.referee.tools.engine_argv import parse_options, split_engine_argv
from guti.referee.tools.perft_diff import PerftCollector, diff_perft
from guti.referee.ugi.client import GoReply, Position, UgiEngine, is_bestmove, position_line
from guti.referee.ugi.go import Go
from guti.referee.ugi.options import Handshake
from guti.rules import GAMES, Board, RulesError, divide

#: protocol.md 5.2: ugiok within 2 s of ugi.
UGIOK_LIMIT = 2.0
#: How long the check waits for ugiok at all before calling the handshake failed.
HANDSHAKE_WAIT = 4.0
#: Bound for answers that should come at once (readyok, response, error lines).
QUICK = 2.0
#: Bound for a bestmove after go depth/nodes, or for a perft answer.
SLOW = 10.0
#: go movetime used, and the lateness tolerated on top of it (a loaded machine).
MOVETIME = 200
MOVETIME_MARGIN = 250
#: The clock for the timed go: the side to move must answer within it.
CLOCK_MS = 600
#: How long go infinite must keep searching before stop, and the bound for bestmove after stop.
INFINITE_WAIT = 0.3
STOP_LIMIT = 1.0
#: After quit: the engine must exit within this many seconds (protocol: "about a second").
QUIT_LIMIT = 2.0

Emit = Callable[[str], None]
#: An item: does its exchange with the engine, returns the PASS detail or raises.
Body = Callable[[], Awaitable[str]]


#: First words of the lines an engine may write on stdout (protocol.md 5.3), plus the
#: ``MOVE: N`` lines of ``go perft``; anything else is debugging text on the wrong stream.
PROTOCOL_WORDS = frozenset({"id", "option", "ugiok", "readyok", "bestmove", "info", "response",
                            "nodes"})
_PERFT_LINE = re.compile(r"^\S+:\s*\d+\s*$")
#: Engine lines kept to explain a FAIL.
RECENT_LINES = 3
#: Bytes that are no UTF-8 at all: a lone continuation byte, an overlong encoding, 0xFF/0xFE.
INVALID_UTF8 = b"\x80 \xc3\x28 \xc0\xaf \xff\xfe invalid utf-8\n"


def is_protocol_line(line: str) -> bool:
    """Whether a stdout line is one protocol.md lets an engine write (blank lines pass)."""
    words = line.split()
    return not words or words[0] in PROTOCOL_WORDS or bool(_PERFT_LINE.match(line))


@dataclass(frozen=True)
class ItemResult:
    status: str  # PASS, FAIL, WARN, SKIP
    name: str
    detail: str = ""

    def line(self) -> str:
        if self.status == "PASS":
            return f"PASS {self.name}" + (f" ({self.detail})" if self.detail else "")
        return f"{self.status} {self.name}: {self.detail}"


class Fail(Exception):
    """An item failed: what the protocol asks for and what the engine did."""

    def __init__(self, expected: str, saw: str) -> None:
        super().__init__(f"expected {expected}, saw {saw}")


class Skip(Exception):
    """An item does not apply to this engine; the message says why."""


class Gone(Exception):
    """The engine can no longer be talked to (exited, closed its output, flooded it)."""


def _short(lines: list[str], limit: int = 3) -> str:
    """A few lines quoted for a message."""
    if not lines:
        return "nothing"
    shown = "; ".join(repr(line[:120]) for line in lines[:limit])
    return shown + (f" and {len(lines) - limit} more lines" if len(lines) > limit else "")


def _said(exc: Exception) -> str:
    """An EngineProcess message without the engine's internal name."""
    return re.sub(r"\bengine E\b", "the engine", str(exc), count=1)


def _is_error(line: str) -> bool:
    return line.startswith("info string error")


class Checker:
    """One run of the check against one engine command."""

    def __init__(self, argv: list[str], games: list[str] | None, emit: Emit) -> None:
        self.argv = argv
        self.only_games = games
        self.emit = emit
        self.results: list[ItemResult] = []
        self.eng: UgiEngine | None = None
        self.gone: str | None = None  # why the engine cannot be used any more
        self.hs: Handshake | None = None
        self.unanswered: str | None = None  # a query that got no answer: later ones are skipped
        self.proc: EngineProcess | None = None
        self.game = "egara-guti"
        self.where: str | None = None  # the FEN of the last position sent, for FAIL lines
        self.recent: deque[str] = deque(maxlen=RECENT_LINES)  # search output left out
        self.errors: list[str] = []  # the item's first 'info string' lines
        self.stray: list[str] = []  # non-protocol stdout lines (the first few)
        self.stray_count = 0
        self.free_text = False  # during d: its picture is free text, not stray lines

    # -- bookkeeping ------------------------------------------------------------------
    def add(self, status: str, name: str, detail: str = "") -> None:
        res = ItemResult(status, name, detail)
        self.results.append(res)
        self.emit(res.line())

    @property
    def failed(self) -> int:
        return sum(r.status == "FAIL" for r in self.results)

    def summary(self) -> str:
        counts = {s: sum(r.status == s for r in self.results)
                  for s in ("PASS", "FAIL", "WARN", "SKIP")}
        if counts["FAIL"]:
            verdict = "does NOT conform to UGI"
        elif counts["WARN"]:
            verdict = "conforms to UGI, not to all of guti's extensions (see WARN lines)"
        else:
            verdict = "conforms to UGI and to guti's extensions"
        return (
            f"guti check: {counts['PASS']} passed, {counts['FAIL']} failed, "
            f"{counts['WARN']} warnings, {counts['SKIP']} skipped: the engine {verdict}"
        )

    def context(self) -> str:
        """`` [FEN ...; the engine said: ...; last engine lines: ...]``: what a FAIL line
        needs to be reproduced at the console."""
        where = f"FEN {self.where}" if self.where else "no position sent yet"
        said = f"; the engine said: {_short(self.errors)}" if self.errors else ""
        return f" [{where}{said}; last engine lines: {_short(list(self.recent))}]"

    def traffic(self, _wall: float, direction: str, _name: str, line: str) -> None:
        """Every line to and from the engine: keeps the last few it wrote and notes any
        that is not protocol (debugging text belongs on stderr)."""
        if direction != "<":
            return
        if line.startswith("info string") and len(self.errors) < 2:
            self.errors.append(line)  # an error reply explains more than search output
        if not line.startswith("info") or line.startswith("info string"):
            self.recent.append(line)
        if not self.free_text and not is_protocol_line(line):
            self.stray_count += 1
            if len(self.stray) < 3:
                self.stray.append(line)

    def sent_position(self, position: Position) -> None:
        """Note the FEN of a position sent, for FAIL lines (its text when it is invalid)."""
        try:
            board = (Board(self.game) if position.fen is None
                     else Board.from_fen(self.game, position.fen))
            for move in position.moves:
                board.push_str(move)
            self.where = board.fen()
        except (RulesError, ValueError):
            self.where = f"(invalid) {position_line(position)}"

    async def item(self, name: str, body: Body, extension: bool = False) -> bool:
        """Run one item; True when it passed. Timeouts leave the engine probed for life.
        A failed ``extension`` item (guti's own, not UGI's) is a WARN, unless the engine
        died of it."""
        if self.gone is not None:
            self.add("SKIP", name, f"engine gone ({self.gone})")
            return False
        self.recent.clear()
        self.errors = []
        failed = "WARN" if extension else "FAIL"
        try:
            detail = await body()
        except Skip as exc:
            self.add("SKIP", name, str(exc))
            return False
        except Fail as exc:
            self.add(failed, name, str(exc) + self.context())
            await self._probe(name)
            return False
        except Gone as exc:  # crashing on any input breaks UGI, extension or not
            self.add("FAIL", name, str(exc) + self.context())
            return False
        self.add("PASS", name, str(detail or ""))
        return True

    async def _probe(self, after: str) -> None:
        """After a failure, see whether the engine still answers isready; if not, it is gone."""
        eng = self.eng
        if eng is None or self.gone is not None:
            return
        if not eng.is_alive:
            self.gone = f"exited during {after}"
            return
        eng.stop()  # ends a search left running by the failed item
        try:
            await eng.sync(QUICK)
        except EngineError:
            self.gone = f"no readyok after {after}"

    # -- reading ----------------------------------------------------------------------
    async def answer(
        self, read: Awaitable[list[str]], timeout: float, expected: str
    ) -> tuple[list[str], float]:
        """The lines a read of the client returns, and the time it took.

        A timeout is a :class:`Fail` (``expected`` ..., saw what came); an exit or a
        flood is :class:`Gone`.
        """
        start = time.monotonic()
        try:
            lines = await read
        except EngineTimeout as exc:
            saw = f"nothing within {timeout:g} s"
            if exc.lines:
                saw += f" (only {_short(exc.lines)})"
            raise Fail(expected, saw) from None
        except (EngineDisconnected, EngineProtocolError) as exc:
            self.gone = _said(exc)
            raise Gone(f"expected {expected}, saw {_said(exc)}") from None
        return lines, time.monotonic() - start

    async def read_until(
        self, done: Callable[[str], bool], timeout: float, expected: str
    ) -> tuple[list[str], float]:
        """Lines up to and including the first ``done`` one, and the time it took."""
        assert self.eng is not None
        return await self.answer(self.eng.read_until(done, timeout), timeout, expected)

    async def ready(self, what: str, timeout: float = QUICK) -> list[str]:
        """``isready``; the lines before ``readyok`` (which must come within ``timeout``)."""
        assert self.eng is not None
        lines, _ = await self.answer(self.eng.sync(timeout), timeout, f"readyok {what}")
        return lines

    async def bestmove(self, position: Position | None, go: Go, timeout: float) -> GoReply:
        """Send ``position`` (if any) and ``go``; the reply, which must come within ``timeout``."""
        assert self.eng is not None
        eng = self.eng
        if position is not None:
            self.sent_position(position)
        sent_at = eng.start_search(position, go)
        replies: list[GoReply] = []

        async def read() -> list[str]:
            replies.append(await eng.wait_bestmove(sent_at, timeout))
            return [replies[0].line]

        await self.answer(read(), timeout, f"bestmove after 'go {go.arguments()}'")
        return replies[0]

    # -- judging ----------------------------------------------------------------------
    @staticmethod
    def judge_move(
        board: Board, move: str | None, elapsed_ms: float = 0.0, allowed_ms: float | None = None
    ) -> Verdict:
        """The judge's verdict on ``move``; Fail for any fault but lateness (``Fault.TIME``,
        which the caller words)."""
        verdict = judge_reply(board, move, elapsed_ms, allowed_ms)
        if verdict.fault in (None, Fault.TIME):
            return verdict
        legal = [str(m) for m in board.legal_moves]
        listed = " ".join(legal[:8]) + (" ..." if len(legal) > 8 else "")
        if not legal:
            raise Fail("bestmove none (the game is over)", f"bestmove {move}")
        saw = {
            Fault.NO_MOVE: "bestmove with no move",
            Fault.NONE_WITH_MOVES: "bestmove none",
            Fault.MALFORMED: f"malformed move {move!r}",
        }.get(verdict.fault, f"illegal move {move}")
        raise Fail(f"a legal move ({listed})", saw)

    # -- the items --------------------------------------------------------------------
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
        self.report_stray_lines()
        await self.revive("quit")
        await self.item("quit", self.check_quit)

    def report_stray_lines(self) -> None:
        """A WARN when the engine wrote lines on stdout that are no protocol: a GUI reads
        every stdout line as protocol, so debugging text belongs on stderr."""
        if not self.stray_count:
            self.add("PASS", "stdout: protocol lines only")
            return
        self.add("WARN", "stdout: protocol lines only",
                 f"expected only protocol lines on stdout (debugging text goes to stderr), saw "
                 f"{self.stray_count} other lines: {_short(self.stray)}")

    def new_engine(self) -> UgiEngine:
        """A (not yet started) engine whose traffic this check watches."""
        config = EngineConfig(name="E", argv=self.argv)
        self.proc = EngineProcess(config, self.traffic)
        return UgiEngine(self.proc, config)

    def send_position(self, position: Position) -> None:
        assert self.eng is not None
        self.sent_position(position)
        self.eng.send_position(position)

    async def revive(self, section: str) -> None:
        """Start a fresh engine for ``section`` if the last one is gone, so that one crash
        does not hide the rest of the report. Only an engine that once shook hands is
        restarted; if the restart fails, the section's items are skipped."""
        if self.gone is None or self.hs is None:
            return
        why = self.gone
        if self.eng is not None:
            await self.eng.quit(grace=0.0, term_grace=0.3)
        self.emit(f"# restarting the engine for {section} (it was gone: {why})")
        self.eng = self.new_engine()
        self.unanswered = None
        try:
            await self.eng.start()
            await self.eng.read_handshake(HANDSHAKE_WAIT)
            await self.eng.sync(QUICK)
        except EngineError as exc:
            self.gone = f"restart failed: {_said(exc)}"
            return
        self.gone = None

    async def check_handshake(self) -> str:
        assert self.eng is not None
        try:
            await self.eng.start()
        except EngineError as exc:
            self.gone = "did not start"
            raise Gone(f"expected a running engine, saw {_said(exc)}") from None
        try:
            hs = await self.eng.read_handshake(HANDSHAKE_WAIT)
        except EngineTimeout:
            self.gone = "no ugiok"
            raise Gone(f"expected ugiok within {UGIOK_LIMIT:g} s of ugi, "
                       f"saw none within {HANDSHAKE_WAIT:g} s") from None
        except EngineError as exc:
            self.gone = "died in the handshake"
            raise Gone(f"expected id, option and ugiok lines, saw {_said(exc)}") from None
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
            raise Fail("option lines 'option name N type T ...'", _short(bad))
        variant = hs.variant
        if variant is not None and (variant.type != "combo" or not variant.vars):
            raise Fail("UGI_Variant of type combo with var values", f"type {variant.type} "
                       f"with vars {variant.vars}")
        return (f"id name {hs.id_name}; {len(hs.options)} options; "
                f"games {', '.join(hs.games())}; ugiok in {hs.elapsed * 1000:.0f} ms")

    async def check_isready(self) -> str:
        start = time.monotonic()
        await self.ready("after isready")
        return f"readyok in {(time.monotonic() - start) * 1000:.0f} ms"

    async def pick_games(self) -> list[str]:
        """The games to check: those asked for (they must be declared) or all declared."""
        if self.hs is None:
            return [g for g in (self.only_games or ["egara-guti"]) if g in GAMES]
        declared = self.hs.games()
        for g in declared:
            if g not in GAMES:
                self.add("SKIP", f"UGI_Variant {g}", "guti has no rules for this game")
        if self.only_games is None:
            return [g for g in declared if g in GAMES]
        picked = []
        for g in self.only_games:
            if g in declared:
                picked.append(g)
            else:
                self.add("FAIL", f"{g}: declared",
                         f"expected {g} in the engine's games, saw {', '.join(declared)}")
        return picked

    async def check_game(self, c: GameCases) -> None:
        g = self.game = c.game
        eng = self.eng
        assert eng is not None

        async def variant() -> str:
            if self.hs is None or self.hs.variant is None:
                return f"no UGI_Variant option: the engine plays {g}"
            eng.select_game(g)
            errors = [line for line in await self.ready(f"after selecting {g}") if _is_error(line)]
            if errors:
                raise Fail("the game selected without complaint", _short(errors))
            return f"setoption name {self.hs.variant.name} value {g}"

        async def newgame() -> str:
            eng.announce_new_game()
            start = time.monotonic()
            await self.ready("after uginewgame", timeout=5.0)
            return f"readyok in {(time.monotonic() - start) * 1000:.0f} ms"

        await self.item(f"{g}: UGI_Variant", variant)
        await self.item(f"{g}: uginewgame", newgame)
        await self.check_search(c)

        for case in (PositionCase("startpos", None), c.startpos_moves, c.fen_moves, c.fen_short,
                     c.black_to_move):
            await self.item(f"{g}: position {case.label}", self.position_body(g, case))

        async def finished() -> str:
            fin = c.finished
            reply = await self.bestmove(fin.position(), Go(infinite=True), QUICK)
            self.judge_move(fin.board(g), reply.bestmove)
            return f"bestmove none in {reply.elapsed_ms:.0f} ms"

        await self.item(f"{g}: go on a finished game ({c.finished.reason})", finished)
        for case in c.queries:
            await self.item(f"{g}: query, {case.label}", self.query_body(g, case))
        await self.item(f"{g}: d (guti extension)", self.show_board_body(), extension=True)
        await self.check_perft(c)
        await self.check_bad_input(c)

    def show_board_body(self) -> Body:
        """``d`` (protocol.md 5.2, a guti extension): some picture of the board before
        ``readyok``, no error."""
        async def body() -> str:
            assert self.eng is not None
            self.eng.send("d")
            self.free_text = True
            try:
                lines = [line for line in await self.ready("after d") if line.strip()]
            finally:
                self.free_text = False
            if not lines or any(_is_error(line) or "unknown command" in line for line in lines):
                raise Fail("a picture of the board before readyok", _short(lines))
            return f"{len(lines)} lines"
        return body

    async def check_search(self, c: GameCases) -> None:
        """The ``go`` items: each way to limit a search, ``stop`` during and without one."""
        g = c.game
        eng = self.eng
        assert eng is not None
        search = c.startpos_moves  # a mid-game position with several moves
        board = search.board(g)

        async def go_movetime() -> str:
            limit = MOVETIME + MOVETIME_MARGIN
            reply = await self.bestmove(search.position(), Go(movetime=MOVETIME),
                                        3.0 + MOVETIME / 1000)
            move, ms = reply.bestmove, reply.elapsed_ms
            if self.judge_move(board, move, ms, limit).fault is Fault.TIME:
                raise Fail(f"bestmove within {MOVETIME} ms (+{MOVETIME_MARGIN} ms margin)",
                           f"bestmove {move} after {ms:.0f} ms")
            return f"bestmove {move} in {ms:.0f} ms"

        async def go_clock() -> str:
            clock = Go(p1time=CLOCK_MS, p1inc=0, p2time=CLOCK_MS, p2inc=0)
            reply = await self.bestmove(search.position(), clock, 3.0 + CLOCK_MS / 1000)
            move, ms = reply.bestmove, reply.elapsed_ms
            if self.judge_move(board, move, ms, CLOCK_MS).fault is Fault.TIME:
                raise Fail(f"bestmove before the side's {CLOCK_MS} ms are gone",
                           f"bestmove {move} after {ms:.0f} ms")
            return f"bestmove {move} in {ms:.0f} ms of {CLOCK_MS}"

        def go_limited(go: Go) -> Body:
            async def body() -> str:
                reply = await self.bestmove(search.position(), go, SLOW)
                self.judge_move(board, reply.bestmove)
                return f"bestmove {reply.bestmove} in {reply.elapsed_ms:.0f} ms"
            return body

        async def go_infinite() -> str:
            eng.start_search(search.position(), Go(infinite=True))
            try:
                lines, _ = await self.read_until(
                    lambda line: line.split()[:1] == ["bestmove"], INFINITE_WAIT, "")
            except Fail:
                pass  # nothing before stop: as it should be
            else:
                raise Fail("no bestmove before stop", f"{lines[-1]!r} during go infinite")
            early = await self.ready("at once during go infinite", timeout=1.0)
            found = [line for line in early if line.split()[:1] == ["bestmove"]]
            if found:
                raise Fail("no bestmove before stop", f"{found[0]!r} during go infinite")
            eng.stop()
            stopped_at = time.monotonic()
            lines, _ = await self.answer(
                eng.read_until(is_bestmove, 3.0), 3.0, "bestmove after stop")
            took = time.monotonic() - stopped_at
            words = lines[-1].split()
            move = words[1] if len(words) > 1 else None
            self.judge_move(board, move)
            if took > STOP_LIMIT:
                raise Fail(f"bestmove within {STOP_LIMIT:g} s of stop",
                           f"it after {took:.2f} s")
            return f"readyok during the search; bestmove {move} {took * 1000:.0f} ms after stop"

        async def stop_idle() -> str:
            eng.stop()
            extra = [line for line in await self.ready("after stop") if line.strip()]
            moves = [line for line in extra if line.split()[:1] == ["bestmove"]]
            if moves:
                raise Fail("no answer to stop with no search running", _short(moves))
            return "ignored"

        await self.item(f"{g}: go movetime", go_movetime)
        await self.item(f"{g}: go with a clock", go_clock)
        await self.item(f"{g}: go with movestogo", self.movestogo_body(search, board))
        await self.item(f"{g}: go depth", go_limited(Go(depth=2)))
        await self.item(f"{g}: go nodes", go_limited(Go(nodes=500)))
        await self.item(f"{g}: go infinite, isready, stop", go_infinite)
        await self.item(f"{g}: stop with no search", stop_idle)

    def movestogo_body(self, search: PositionCase, board: Board) -> Body:
        """``movestogo`` (protocol.md 5.2): guti sends it whenever a period is in force,
        so every engine must accept it (it may ignore the value)."""
        async def body() -> str:
            clock = Go(p1time=CLOCK_MS * 5, p1inc=0, p2time=CLOCK_MS * 5, p2inc=0, movestogo=5)
            reply = await self.bestmove(search.position(), clock, 3.0 + CLOCK_MS * 5 / 1000)
            errors = [line for line in reply.infos if _is_error(line)]
            if errors:
                raise Fail(f"'go {clock.arguments()}' accepted", _short(errors))
            self.judge_move(board, reply.bestmove)
            return f"bestmove {reply.bestmove} in {reply.elapsed_ms:.0f} ms"
        return body

    def position_body(self, g: str, case: PositionCase) -> Body:
        async def body() -> str:
            assert self.eng is not None
            self.send_position(case.position())
            errors = [line for line in await self.ready("after position") if _is_error(line)]
            if errors:
                raise Fail(f"'{position_line(case.position())}' accepted", _short(errors))
            reply = await self.bestmove(None, Go(depth=1), SLOW)
            self.judge_move(case.board(g), reply.bestmove)
            return f"bestmove {reply.bestmove}"
        return body

    def query_body(self, g: str, case: PositionCase) -> Body:
        async def body() -> str:
            assert self.eng is not None
            if self.unanswered is not None:
                raise Skip(f"the engine did not answer {self.unanswered} in an earlier item")
            board = case.board(g)
            want = {
                "gameover": "true" if board.is_game_over() else "false",
                "p1turn": "true" if board.turn == "w" else "false",
                "result": board.ugi_result(),
            }
            self.send_position(case.position())
            got: dict[str, str] = {}
            for question in want:
                self.eng.send(f"query {question}")
                self.unanswered = f"query {question}"
                lines, _ = await self.read_until(
                    lambda line: line.split()[:1] == ["response"] or _is_error(line)
                    or line.startswith("info string unknown command"),
                    QUICK, f"'response ...' to query {question}")
                words = lines[-1].split()
                if words[0] != "response":
                    raise Fail(f"'response {want[question]}' to query {question}",
                               repr(lines[-1]))
                got[question] = words[1] if len(words) > 1 else ""
                self.unanswered = None
            if got != want:
                fmt = ", ".join
                raise Fail(fmt(f"{q} {a}" for q, a in want.items()),
                           fmt(f"{q} {a}" for q, a in got.items()))
            return ", ".join(f"{q} {a}" for q, a in got.items())
        return body

    async def check_perft(self, c: GameCases) -> None:
        g = c.game
        eng = self.eng
        assert eng is not None
        supported: list[bool] = []

        async def probe() -> str:
            eng.start_search(Position(), Go(perft=1))
            collector = PerftCollector()

            def done(line: str) -> bool:
                return (collector.feed(line) or line.split()[:1] == ["bestmove"]
                        or _is_error(line) or line.startswith("info string unknown command"))

            try:
                lines, _ = await self.read_until(done, QUICK, "")
            except Fail:
                await self._probe("'go perft 1'")
                raise Skip("the engine does not answer go perft (optional)") from None
            if not collector.done:
                await self.ready("after go perft")
                raise Skip(f"the engine does not support go perft (optional): it answered "
                           f"{lines[-1][:80]!r}")
            supported.append(True)
            return "supported"

        await self.item(f"{g}: go perft", probe, extension=True)
        for case, depth in c.perft:
            name = f"{g}: go perft {depth}, {case.label}"
            if not supported:
                if self.gone is None:
                    self.add("SKIP", name, "no go perft")
                continue
            # a supported go perft that miscounts shows a move generator off the rules: FAIL
            await self.item(name, self.perft_body(g, case, depth))

    def perft_body(self, g: str, case: PositionCase, depth: int) -> Body:
        async def body() -> str:
            assert self.eng is not None
            board = case.board(g)
            ours = divide(board, depth) if depth > 0 else []
            self.eng.start_search(case.position(), Go(perft=depth))
            collector = PerftCollector()
            await self.read_until(collector.feed, SLOW, f"a 'nodes N' line after go perft {depth}")
            diff = diff_perft(depth, ours, collector.result)
            if not diff.same or not diff.order_ok:
                report = diff.lines()
                raise Fail(f"{diff.our_total} nodes as guti counts them",
                           "; ".join(line.strip() for line in report[:6]))
            return f"{diff.our_total} nodes, {len(ours)} moves"
        return body

    async def check_bad_input(self, c: GameCases) -> None:
        g = c.game
        eng = self.eng
        assert eng is not None
        bad = c.bad
        keep = bad.keep
        illegal = Position(keep.fen, (*keep.moves, bad.illegal_move))
        malformed = Position(keep.fen, (*keep.moves, bad.malformed_move))
        sent_keep: list[bool] = []

        def rejected(bad_line: str | Position, prefix: str = "info string error") -> Body:
            async def body() -> str:
                if not sent_keep:
                    self.send_position(keep.position())
                    sent_keep.append(True)
                if isinstance(bad_line, Position):
                    self.send_position(bad_line)
                    line = position_line(bad_line)
                else:
                    eng.send(bad_line)
                    line = bad_line
                answers = await self.ready(f"after {line[:60]!r}")
                said = [a for a in answers if a.startswith(prefix)]
                if not said:
                    raise Fail(f"'{prefix} ...' before readyok", _short(answers))
                return said[0][:100]
            return body

        async def garbage() -> str:
            eng.send("\x01\x7f garbage \u00ff\u00fe " + "x" * 10000)
            eng.send("position")
            eng.send("query")
            eng.send("setoption")
            await self.ready("after garbage lines")
            return "readyok after garbage"

        async def invalid_utf8() -> str:
            assert self.proc is not None
            self.proc.send_raw(INVALID_UTF8)
            await self.ready("after a line of invalid UTF-8")
            return "readyok after invalid byte sequences"

        async def kept() -> str:
            move = (await self.bestmove(None, Go(depth=1), SLOW)).bestmove
            try:
                self.judge_move(keep.board(g), move)
            except Fail as exc:
                kept_line = position_line(keep.position())
                raise Fail(f"the position before the bad lines kept ({kept_line})",
                           f"{exc}".removeprefix("expected ")) from None
            return f"bestmove {move} in the kept position"

        wording = " (guti's wording)"
        await self.item(f"{g}: bad input, illegal move{wording}", rejected(illegal), True)
        await self.item(f"{g}: bad input, malformed move{wording}", rejected(malformed), True)
        await self.item(f"{g}: bad input, bad FEN{wording}", rejected(Position(bad.bad_fen)), True)
        await self.item(f"{g}: bad input, unknown command{wording}",
                        rejected("frobnicate 3", "info string unknown command"), True)
        await self.item(f"{g}: bad input, unknown query{wording}", rejected("query colour"), True)
        if self.hs is not None and self.hs.variant is not None:
            await self.item(f"{g}: bad input, unknown game{wording}",
                            rejected(f"setoption name {self.hs.variant.name} value chess"), True)
        await self.item(f"{g}: bad input, garbage still answers isready", garbage)
        await self.item(f"{g}: bad input, invalid UTF-8 still answers isready", invalid_utf8)
        await self.item(f"{g}: bad input, position kept", kept)

    async def check_quit(self) -> str:
        eng = self.eng
        assert eng is not None
        pgid = eng.pid
        eng.send("quit")
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


async def run_check(argv: list[str], games: list[str] | None, emit: Emit) -> int:
    """Check the engine ``argv``; report lines go to ``emit``. Returns the number of failures."""
    return await Checker(argv, games, emit).run()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="guti check",
        description="Check an engine against protocol.md, one PASS/FAIL/WARN/SKIP line per "
        "item. FAIL: UGI requires it of every engine; WARN: a guti extension (d, go perft, "
        "the wording of error lines) or debugging text on stdout. Exit status 0 when no "
        "item FAILed (the engine conforms to UGI).",
        usage="guti check [--game GAME] -- ENGINE_CMD [ARGS...]",
    )
    ap.add_argument("--game", action="append", choices=sorted(GAMES),
                    help="check only this game (repeatable; default: every game it declares)")
    opts_argv, cmd = split_engine_argv(argv)
    opts = parse_options(ap, opts_argv)
    if not cmd:
        ap.error("no engine command: give it after '--', e.g. guti check -- python -m guti.engine")

    def emit(line: str) -> None:
        print(visible(line), flush=True)

    try:
        failures = asyncio.run(run_check(cmd, opts.game, emit))  # UGI failures only
    except KeyboardInterrupt:
        print("guti check: interrupted", file=sys.stderr)
        return 130
    return 1 if failures else 0
