"""One game between two running engines, refereed move by move.

:func:`play_game` plays the game a :class:`~guti.referee.game.settings.GameSpec`
describes: it sends ``uginewgame``, then for every ply ``position
startpos|fen ... moves ...`` and ``go`` with the clock, reads ``bestmove``,
has it judged (:func:`guti.referee.game.judge.judge_reply`, the same judge the
console and ``guti check`` use) and decides the end of the game itself by
protocol.md (``Board.outcome()``); the engines' ``query`` answers are
never asked for. When the match turned adjudication on (``-draw``, ``-resign``,
``-maxmoves``), an :class:`~guti.referee.game.adjudication.Adjudicator` sees every ply after the
rules and may end the game with reason ``adjudication``. It never raises for anything an
engine does: every fault becomes a loss for that side with a
:class:`~guti.referee.game.reasons.Reason` and a one-line detail. Every wait is bounded:

- ``timeouts.handshake`` for ``uginewgame`` + ``isready``/``readyok``;
- with a clock or ``st``: time left (+ margin) + ``timeouts.stall_grace``. A reply
  after time + margin is a ``time forfeit``; no reply by the end of the
  grace is ``stalled``;
- without either (``depth=``/``nodes=`` only): ``timeouts.move`` then ``stalled``.

No engine is charged for the referee's own lateness (a suspended referee, a stalled
event loop: :mod:`guti.referee.process.lateness`). A wait that ran out is extended by the
time the referee was late during it; a reply over its time that would have been in time
but for that lateness is voided: the move is asked again, ``position`` and ``go`` with
the clocks as they were (at most :data:`MAX_VOIDS` times per move), and the event is
noted in the traffic log and told in one line on stderr. Neither is done for a move during
which the engine wrote more than :data:`FLOOD_BYTES` of output.

Each engine's CPU time is read before ``uginewgame``, after its ``readyok``, before every
``go``, after every ``bestmove`` and at the end, and its peak memory at the end (before
the caller stops it): the record's per-ply ``cpu_ms`` and its per-engine ``resources``
(:mod:`guti.referee.game.resources`). An engine with ``limits.cpus`` loses at a move that
used more cores; one with ``limits.ponder=off``, at a ``go`` once its CPU off its moves
in the game is past ``limits.offmove_cpu``; one with ``limits.memory``, at the move after
the kernel killed a process of it for memory (its cgroup counts the kills).

Per ply the referee only appends the move to the
:class:`~guti.referee.ugi.lines.Position` it keeps (no rebuilding from the
board), so its own work per ply is that and the rules core's check of the one move
played.

The loop is :class:`_Game`, one small method per step and per way a game ends;
it is tested without processes through the tests' in-memory transport
(``tests/fake_transport.py``, ``tests/test_ugi_client.py``). The engines stay running; starting, restarting and quitting them is the
caller's job (see :mod:`guti.referee.execution.engine_pool` and
:mod:`guti.referee.execution.pairing`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from guti.referee.game.adjudication import Adjudicator, Ruling
from guti.referee.game.fault_details import reply_fault_detail
from guti.referee.game.game_start import opening_record
from guti.referee.game.judge import Fault, Verdict, judge_reply
from guti.referee.game.reasons import Reason
from guti.referee.game.resources import GameResources
from guti.referee.game.timecontrol import Clock, go_for_turn
from guti.referee.process import lateness
from guti.referee.process.errors import EngineError, EngineTimeout, ErrorKind
from guti.referee.ugi.lines import GoReply, Position, unfinished_note
from guti.rules import Board, Move, Result, RulesError, Side

if TYPE_CHECKING:
    from guti.referee.game.observer import MoveObserver
    from guti.referee.game.record import GameRecord
    from guti.referee.game.settings import GameSpec, Timeouts
    from guti.referee.ugi.client import UgiEngine

#: The reason a game is lost for, by the kind of engine-process fault.
REASON_OF_FAULT = {
    ErrorKind.START: Reason.START_FAILURE,
    ErrorKind.DISCONNECT: Reason.DISCONNECT,
    ErrorKind.TIMEOUT: Reason.STALLED,
    ErrorKind.PROTOCOL: Reason.PROTOCOL_ERROR,
}


#: How many times one move may be voided for the referee's lateness and asked again.
MAX_VOIDS = 3
#: Output an engine may write during one move and still have the referee's lateness in it
#: forgiven. Reading megabytes of it is what makes the referee late then: the engine's own
#: doing, not the referee's trouble.
FLOOD_BYTES = 1 << 20


async def play_game(
    white: UgiEngine, black: UgiEngine, spec: GameSpec, observer: MoveObserver | None = None
) -> GameRecord:
    """Play the game ``spec`` describes, ``white`` against ``black``; return its record.
    ``observer`` is told every move (the live page): a hook on the game as it goes, not
    part of its description. A bad ``spec.start_fen`` or opening move raises RulesError
    before any engine is touched (they are the caller's input)."""
    board, record = opening_record(spec, white.name, black.name)
    game = _Game(board, record, {Side.WHITE: white, Side.BLACK: black},
                 {Side.WHITE: Clock(spec.white_limits), Side.BLACK: Clock(spec.black_limits)},
                 spec.timeouts, observer)
    if spec.adjudication.active:
        game.adjudicator = Adjudicator(spec.adjudication)
    return await game.play()


class _Game:
    """One game in progress. :meth:`play` runs it; every other method is one step, and
    each way a game ends has its own: :meth:`ended_by_rules`, :meth:`adjudicated`,
    :meth:`not_ready`, :meth:`stalled`, :meth:`engine_failed`, :meth:`bad_reply`."""

    def __init__(self, board: Board, record: GameRecord, engines: dict[Side, UgiEngine],
                 clocks: dict[Side, Clock], timeouts: Timeouts,
                 observer: MoveObserver | None = None) -> None:
        self.board = board
        self.record = record
        self.engines = engines
        self.clocks = clocks
        self.timeouts = timeouts
        self.observer = observer  # told every move (the live page)
        #: -draw/-resign/-maxmoves, when any is on
        self.adjudicator: Adjudicator | None = None
        self.position = Position.of(board)
        self.watch: lateness.LatenessWatch | None = None  # set while the game plays
        #: The engine's output written before the ``go`` now awaited (see :meth:`flooded`).
        self.output_at_go = 0
        #: Each engine's CPU through the game, on and off its move.
        self.cpu = GameResources(engines, record.cpu_ms)

    async def play(self) -> GameRecord:
        with lateness.hold() as watch:
            self.watch = watch
            self.cpu.game_starts()
            record = await self.play_held()
        record.resources.update(self.cpu.game_ends())  # before the engines are stopped
        return record

    async def play_held(self) -> GameRecord:
        for side in (Side.WHITE, Side.BLACK):
            try:
                await self.engines[side].new_game(self.timeouts.handshake)
            except EngineError as exc:
                return self.not_ready(side, exc)
            self.cpu.ready(side)
        while True:
            # Without listing the moves (the judge checks the one played by itself).
            if self.board.is_game_over():
                return self.ended_by_rules()
            side = self.board.turn
            allowed = self.clocks[side].allowed_ms()
            excess = self.cpu.before_go(side, self.record.plies + 1)
            if excess is not None:
                return self.lose(side, Reason.RESOURCE_LIMIT, excess)
            voids = 0
            while True:
                try:
                    reply = await self.ask(side, allowed, again=voids > 0)
                except EngineTimeout as exc:
                    return self.stalled(side, allowed, unfinished_note(exc.unfinished))
                except EngineError as exc:
                    return self.engine_failed(side, exc)
                verdict = judge_reply(self.board, reply.bestmove, reply.elapsed_ms, allowed)
                if (verdict.fault is not Fault.TIME or voids == MAX_VOIDS
                        or not self.voided(side, reply, allowed)):
                    break
                voids += 1
            self.clocks[side].charge_within(reply.elapsed_ms, allowed)
            if verdict.move is None:
                return self.bad_reply(side, verdict, reply, allowed)
            self.play_move(side, verdict.move, verdict.text or str(verdict.move), reply)
            excess = self.limit_excess(side, reply)
            if excess is not None:
                return self.lose(side, Reason.RESOURCE_LIMIT, excess)
            ruling = self.adjudicate(side, verdict.move, reply)
            if ruling is not None and self.board.outcome() is None:  # the rules come first
                return self.adjudicated(ruling)

    def wait_for(self, allowed: float | None) -> float:
        """How long to wait for ``bestmove``: the move timeout, or the time + grace."""
        return self.timeouts.move if allowed is None else allowed / 1000 + self.timeouts.stall_grace

    async def ask(self, side: Side, allowed: float | None, again: bool = False) -> GoReply:
        """Send ``position`` and ``go`` with both clocks as they stand; return the reply
        (``again``: a voided move asked anew, its CPU counted from now). A wait that runs
        out is extended by the time the referee was late during it (at most
        :data:`MAX_VOIDS` times): the engine's silence is measured in the referee's
        running time only."""
        clocks = self.clocks
        go = go_for_turn(clocks[side], clocks[Side.WHITE], clocks[Side.BLACK])
        engine = self.engines[side]
        if again:
            self.cpu.asked_again(side)
        self.output_at_go = engine.output_bytes()
        sent_at = engine.start_go(self.position, go)
        watch = self.watch
        if watch is not None and allowed is not None:  # its heartbeat quickens near the deadline
            watch.awaiting(self, sent_at + allowed / 1000)
        try:
            wait, extended = self.wait_for(allowed), 0.0
            for _ in range(MAX_VOIDS):
                try:
                    return await engine.wait_bestmove(sent_at, wait + extended)
                except EngineTimeout:
                    late = self.late_within(sent_at, time.monotonic())
                    if late <= extended or self.flooded(engine):
                        raise
                    engine.note(f"referee late for {(late - extended) * 1000:.0f} ms during"
                                " the wait for bestmove: the wait is extended by as much")
                    extended = late
            return await engine.wait_bestmove(sent_at, wait + extended)
        finally:
            if watch is not None:
                watch.awaiting(self, None)

    def late_within(self, start: float, end: float) -> float:
        """Seconds of ``[start, end]`` the referee itself was late for (not running)."""
        return 0.0 if self.watch is None else self.watch.late_within(start, end)

    def voided(self, side: Side, reply: GoReply, allowed: float | None) -> bool:
        """Whether ``reply``, over its time, would have been in time but for the referee's
        own lateness while it was awaited; if so the event is logged and noted in the
        record."""
        late_ms = self.late_within(reply.sent_at, reply.received_at) * 1000
        engine = self.engines[side]
        if (allowed is None or late_ms <= 0 or reply.elapsed_ms - late_ms > allowed
                or self.flooded(engine)):
            return False
        text = (f"referee late for {late_ms:.0f} ms during {engine.name}'s move"
                f" {self.record.plies + 1} ({reply.elapsed_ms:.0f} ms measured,"
                f" {allowed:.0f} ms allowed): the move is void and asked again")
        engine.note(f"{text} (reply was: {reply.line})")
        self.record.notes.append(f"{self.record.white} vs {self.record.black}: {text}")
        return True

    def flooded(self, engine: UgiEngine) -> bool:
        """Whether ``engine`` wrote more than :data:`FLOOD_BYTES` since its ``go``: the
        referee's lateness meanwhile came from reading it, and is not forgiven."""
        return engine.output_bytes() - self.output_at_go > FLOOD_BYTES

    def play_move(self, side: Side, move: Move, text: str, reply: GoReply) -> None:
        """Play the judged move (``text`` as the engine wrote it); the ``position`` sent
        next is this one's plus the move."""
        self.board.push(move)
        clock = self.clocks[side]
        self.record.moves.append(text)
        self.record.elapsed_ms.append(reply.elapsed_ms)
        self.record.search.append(reply.search)
        self.record.cpu_ms.append(None)  # known at the end of the game (GameResources)
        self.cpu.after_move(side, self.record.plies)
        self.record.clock_ms.append(clock.remaining_ms if clock.has_clock else None)
        self.position = self.position.then(text)
        if self.observer is not None:
            self.observer.moved(self.record, self.board)

    def limit_excess(self, side: Side, reply: GoReply) -> str | None:
        """Why the engine broke a limit by the move just played, or None: its
        ``limits.cpus``, or its ``limits.memory`` (the kernel killed a process of it for
        memory, though the engine answered: it loses all the same). Under a process limit
        its helpers that ended after their parent are reaped first: guti is their
        subreaper, and as zombies they would count against that limit."""
        engine = self.engines[side]
        if engine.sandbox is None:
            return None
        if engine.sandbox.processes is not None:
            engine.reap_ended_helpers()
        why = engine.sandbox.cpu_excess(self.cpu.last_move_ms(side), reply.elapsed_ms)
        if why is None and engine.sandbox.memory is not None:
            why = engine.resource_breach(memory_only=True)
        return None if why is None else f"engine {engine.name}: {why}"

    def adjudicate(self, side: Side, move: Move, reply: GoReply) -> Ruling | None:
        """The adjudicator's word on the ply just played (None: play on, or no rules)."""
        if self.adjudicator is None:
            return None
        return self.adjudicator.after_ply(side, reply.search, move.is_capture, self.record.plies)

    # -- the ways a game ends -------------------------------------------------------------
    def ended_by_rules(self) -> GameRecord:
        outcome = self.board.outcome()
        assert outcome is not None
        self.record.result = outcome.result
        self.record.reason = Reason.from_termination(outcome.reason)
        self.record.final_fen = self.board.fen()
        return self.record

    def adjudicated(self, ruling: Ruling) -> GameRecord:
        """Ended early by ``-draw``/``-resign``/``-maxmoves``: no one's fault."""
        self.record.result = ruling.result
        self.record.reason = Reason.ADJUDICATION
        self.record.detail = ruling.detail
        self.record.final_fen = self.board.fen()
        return self.record

    def lose(self, side: Side, reason: Reason, detail: str) -> GameRecord:
        """``side`` loses for ``reason``; when the engine's fault came of a resource limit
        it ran into (a process killed for memory, process starts refused), the reason is
        that limit, named in the detail, and what happened then follows."""
        breach = self.engines[side].resource_breach()
        if breach is not None and breach not in detail:
            reason = Reason.RESOURCE_LIMIT
            detail = f"engine {self.engines[side].name}: {breach}; then: {detail}"
        record = self.record
        record.result = Result.loss_for(side)
        record.reason = reason
        record.detail = detail
        record.fault = side
        record.final_fen = self.board.fen()
        return record

    def not_ready(self, side: Side, exc: EngineError) -> GameRecord:
        return self.lose(side, REASON_OF_FAULT[exc.kind], str(exc))

    def engine_failed(self, side: Side, exc: EngineError) -> GameRecord:
        """A crash, a disconnect or a protocol error: the detail's first line says what
        happened (with the most telling stderr line); the lines after it are the engine's
        last stderr lines, kept whole in the database, the PDN comment and the JSON."""
        detail = str(exc)
        lines = self.engines[side].stderr_lines()
        if lines:
            detail += f"\nlast {len(lines)} stderr lines of the engine:\n" + "\n".join(lines)
        return self.lose(side, REASON_OF_FAULT[exc.kind], detail)

    def opponent_to_blame(self, side: Side) -> GameRecord | None:
        """Before ``side`` is charged with a time fault: the loss of its opponent instead,
        when the opponent's CPU off its moves broke its ``limits.ponder=off`` meanwhile
        (a search it left running took the cores ``side`` needed); else None."""
        other = side.other
        why = self.cpu.offmove_breach(other, self.record.plies + 1)
        return None if why is None else self.lose(other, Reason.RESOURCE_LIMIT, why)

    def stalled(self, side: Side, allowed: float | None, note: str = "") -> GameRecord:
        """``side`` gave no ``bestmove`` in time and a grace (``note``: what it left
        unfinished, see :func:`~guti.referee.ugi.lines.unfinished_note`)."""
        blamed = self.opponent_to_blame(side)
        if blamed is not None:
            return blamed
        name = self.engines[side].name
        if allowed is None:
            why = f"no bestmove within {self.timeouts.move:g} s (move timeout)"
        else:
            why = (
                f"no bestmove within {self.wait_for(allowed):.3f} s "
                f"({allowed:.0f} ms allowed + {self.timeouts.stall_grace:g} s grace)"
            )
        return self.lose(side, Reason.STALLED, f"engine {name}: {why}{note}")

    def bad_reply(
        self, side: Side, verdict: Verdict, reply: GoReply, allowed: float | None
    ) -> GameRecord:
        """A reply the judge did not accept (or a ``bestmove none``, which never is here:
        the loop asks only while the game goes on)."""
        fault = verdict.fault or Fault.NONE_WITH_MOVES
        blamed = self.opponent_to_blame(side) if fault is Fault.TIME else None
        if blamed is not None:
            return blamed
        earlier = (self.asked_before(verdict.text)
                   if fault in (Fault.ILLEGAL, Fault.MOVE_WHEN_OVER) else None)
        detail = reply_fault_detail(self.engines[side].name, self.board, verdict, reply,
                                    allowed, earlier)
        return self.lose(side, fault.reason, detail)

    def asked_before(self, text: str | None) -> str | None:
        """The FEN of the position the side to move was asked about at its previous go,
        when ``text`` is a legal move there (a stale answer); else None."""
        if text is None or len(self.record.moves) - self.record.opening_plies < 2:
            return None
        before = self.board.copy()
        before.pop()
        before.pop()
        try:
            before.parse_move(text)
        except RulesError:
            return None
        return before.fen()
