"""One run of ``guti check`` against one engine: the engine, the report lines, and the
bounded reads every item is made of.

An item is a coroutine that talks to the engine and returns its PASS detail or raises
:class:`Fail` (expected ..., saw ...), :class:`Skip` or :class:`Gone`;
:meth:`CheckSession.item` turns that into a report line. The items themselves are in
:mod:`guti.referee.tools.check_lifecycle`, :mod:`guti.referee.tools.check_game` and
:mod:`guti.referee.tools.check_input`; :mod:`guti.referee.tools.check` runs them in order.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
from guti.referee.process.usage import UsageSample, sample
from guti.referee.ugi.client import UgiEngine
from guti.referee.ugi.lines import (
    GoReply,
    Position,
    is_info,
    is_info_string,
    is_readyok,
    position_line,
    unfinished_note,
)
from guti.referee.ugi.options import UNDECLARED_GAME, Handshake
from guti.rules import Board, RulesError

if TYPE_CHECKING:
    from guti.referee.ugi.go import Go

#: protocol.md 5.2: ugiok within 2 s of ugi.
UGIOK_LIMIT = 2.0
#: How long the check waits for ugiok at all before calling the handshake failed.
HANDSHAKE_WAIT = 4.0
#: Bound for answers that should come at once (readyok, response, error lines).
QUICK = 2.0
#: Bound for a bestmove after go depth/nodes, or for a perft answer; and for the readyok
#: answers an engine still owes after a failed item before it is called gone.
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
ENGINE_LINE_WORDS = frozenset({"id", "option", "ugiok", "readyok", "bestmove", "info",
                               "response", "nodes"})
_PERFT_LINE = re.compile(r"^\S+:\s*\d+\s*$")
#: Engine lines kept to explain a FAIL.
RECENT_LINES = 3
#: Bytes that are no UTF-8 at all: a lone continuation byte, an overlong encoding, 0xFF/0xFE.
INVALID_UTF8 = b"\x80 \xc3\x28 \xc0\xaf \xff\xfe invalid utf-8\n"


def is_protocol_line(line: str) -> bool:
    """Whether a stdout line is one protocol.md lets an engine write (blank lines pass)."""
    words = line.split()
    return not words or words[0] in ENGINE_LINE_WORDS or bool(_PERFT_LINE.match(line.strip()))


@dataclass(frozen=True)
class ItemResult:
    """One line of the report: PASS, FAIL, WARN or SKIP, the item, and its detail."""

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
        super().__init__(f"expected {clip(expected)}, saw {clip(saw)}")


class Skip(Exception):
    """An item does not apply to this engine; the message says why."""


class Gone(Exception):
    """The engine can no longer be talked to (exited, closed its output, flooded it)."""


def clip(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters for a report line: an engine's megabyte of
    answer is shown by its start."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def short(lines: list[str], limit: int = 3) -> str:
    """A few lines quoted for a message."""
    if not lines:
        return "nothing"
    shown = "; ".join(repr(line[:120]) for line in lines[:limit])
    return shown + (f" and {len(lines) - limit} more lines" if len(lines) > limit else "")


def said(exc: Exception) -> str:
    """An EngineProcess message without the engine's internal name (the check and the
    console name their engine ``E``)."""
    return re.sub(r"\bengine E\b", "the engine", str(exc), count=1)


class CheckSession:
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
        #: ``isready`` lines written and ``readyok`` lines come: a late ``readyok`` must not
        #: be read as the answer to a later ``isready`` (see :meth:`_probe`).
        self.isready_sent = 0
        self.readyok_seen = 0
        self.proc: EngineProcess | None = None
        self.game = UNDECLARED_GAME  # until the engine says what it plays
        self.where: str | None = None  # the FEN of the last position sent, for FAIL lines
        self.recent: deque[str] = deque(maxlen=RECENT_LINES)  # search output left out
        self.errors: list[str] = []  # the item's first 'info string' lines
        self.stray: list[str] = []  # non-protocol stdout lines (the first few)
        self.stray_count = 0
        self.free_text = False  # during d: its picture is free text, not stray lines
        #: The most the engine's processes and threads were in one look during its
        #: searches, and its largest peak memory seen (see :meth:`look_at_usage`).
        self.most: UsageSample | None = None

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
        said = f"; the engine said: {short(self.errors)}" if self.errors else ""
        return f" [{where}{said}; last engine lines: {short(list(self.recent))}]"

    def traffic(self, _wall: float, direction: str, _name: str, line: str) -> None:
        """Every line to and from the engine: keeps the last few it wrote and notes any
        that is not protocol (debugging text belongs on stderr)."""
        if direction != "<":
            self.isready_sent += line.split() == ["isready"]
            return
        self.readyok_seen += is_readyok(line)
        if is_info_string(line) and len(self.errors) < 2:
            self.errors.append(line)  # an error reply explains more than search output
        if not is_info(line) or is_info_string(line):
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
        eng.drop_pending()  # what the failed item left unread
        owed = max(0, self.isready_sent - self.readyok_seen)  # answers still to come, late
        eng.ask_ready()
        deadline = time.monotonic() + SLOW
        try:  # the late answers first, then this one's: the engine is in step again
            for _ in range(owed + 1):
                await eng.read_until(is_readyok, max(0.0, deadline - time.monotonic()))
        except EngineError:
            self.gone = f"no readyok within {SLOW:g} s after {after}"

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
                saw += f" (only {short(exc.lines)})"
            raise Fail(expected, saw + unfinished_note(exc.unfinished)) from None
        except (EngineDisconnected, EngineProtocolError) as exc:
            self.gone = said(exc)
            raise Gone(f"expected {expected}, saw {said(exc)}") from None
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
        sent_at = eng.start_go(position, go)  # lines already there cannot answer it
        replies: list[GoReply] = []

        async def read() -> list[str]:
            replies.append(await eng.wait_bestmove(sent_at, timeout))
            return [replies[0].line]

        await self.answer(read(), timeout, f"bestmove after 'go {go.arguments()}'")
        self.look_at_usage()
        return replies[0]

    def look_at_usage(self) -> None:
        """Count the engine's processes (its process group) and their threads now, during
        or at the end of a search, and note its peak memory; the report's ``resources``
        line gives the most seen."""
        pid = self.proc.pid if self.proc is not None else None
        if pid is None:
            return
        now = sample(live_members(pid) or [pid])
        if not now.processes:
            return
        was = self.most or now
        peaks = [p for p in (was.peak_memory, now.peak_memory) if p is not None]
        self.most = UsageSample(max(was.processes, now.processes), max(was.threads, now.threads),
                                max(peaks) if peaks else None)

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


    def report_stray_lines(self) -> None:
        """A WARN when the engine wrote lines on stdout that are no protocol: a GUI reads
        every stdout line as protocol, so debugging text belongs on stderr."""
        if not self.stray_count:
            self.add("PASS", "stdout: protocol lines only")
            return
        self.add("WARN", "stdout: protocol lines only",
                 f"expected only protocol lines on stdout (debugging text goes to stderr), saw "
                 f"{self.stray_count} other lines: {short(self.stray)}")

    def new_engine(self) -> UgiEngine:
        """A (not yet started) engine whose traffic this check watches."""
        config = EngineConfig(name="E", argv=self.argv)
        self.proc = EngineProcess(config, self.traffic)
        return UgiEngine(self.proc, config)

    def send_position(self, position: Position) -> None:
        assert self.eng is not None
        self.sent_position(position)
        self.eng.send_position(position)

    def start_search(self, position: Position, go: Go) -> float:
        """Send ``position`` and ``go`` (a search or a ``go perft``), noting the position for
        FAIL lines; the time ``go`` was written. Lines already there are dropped, as the
        referee drops them: they cannot answer this ``go`` (a second ``bestmove`` before)."""
        assert self.eng is not None
        self.sent_position(position)
        return self.eng.start_go(position, go)

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
        self.isready_sent = self.readyok_seen = 0  # nothing is owed by a new engine
        try:
            await self.eng.start()
            await self.eng.read_handshake(HANDSHAKE_WAIT)
            await self.eng.sync(QUICK)
        except EngineError as exc:
            self.gone = f"restart failed: {said(exc)}"
            return
        self.gone = None
