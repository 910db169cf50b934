"""One game between two running engines, refereed move by move.

:func:`play_game` sends ``uginewgame``, then for every ply ``position
startpos|fen ... moves ...`` and ``go`` with the clock, reads ``bestmove``,
checks it with the rules core and decides the end of the game itself by
protocol.md (``Board.outcome()``); the engines' ``query`` answers are
never asked for. It never raises for anything an engine does: every fault
becomes a loss for that side with a :class:`~referee.game.reasons.Reason` and a
one-line detail. Every wait is bounded:

- ``sync_timeout`` for ``uginewgame`` + ``isready``/``readyok``;
- with a clock or ``st``: time left (+ margin) + ``stall_grace``. A reply
  after time + margin is a ``time forfeit``; no reply by the end of the
  grace is ``stalled``;
- without either (``depth=``/``nodes=`` only): ``move_timeout`` then ``stalled``.

Per ply the referee only appends the move to the ``position`` string it
keeps (no rebuilding), so its own overhead is a few tens of microseconds
plus the rules core's move check (see ``benchmarks/referee_overhead.py``).

The engines stay running; starting, restarting and quitting them is the
caller's job (see :mod:`referee.tournament.match`).
"""

from __future__ import annotations

import re
import time

from engine.rules import Board, Result, RulesError, Side
from referee.game.reasons import Reason
from referee.game.record import GameRecord
from referee.game.settings import (
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
)
from referee.game.timecontrol import Clock, Limits, go_arguments
from referee.process.engine_process import EngineError, EngineProcess, EngineTimeout

#: A well-formed move string (protocol.md notation); anything else after ``bestmove``
#: is a protocol error, a well-formed but illegal move an ``illegal move``.
MOVE_SYNTAX = re.compile(r"[1-9][0-9]*(?:-[1-9][0-9]*|(?:x[1-9][0-9]*)+)")


def start_board(game_name: str, start_fen: str | None) -> Board:
    """The board a game starts from (RulesError for a bad name or FEN)."""
    return Board(game_name) if start_fen is None else Board.from_fen(game_name, start_fen)


async def play_game(
    white: EngineProcess,
    black: EngineProcess,
    game_name: str,
    start_fen: str | None = None,
    opening_moves: tuple[str, ...] | list[str] = (),
    limits: Limits | None = None,
    *,
    black_limits: Limits | None = None,
    round: str = "1",
    event: str = "?",
    site: str = "?",
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
    sync_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    stall_grace: float = DEFAULT_STALL_GRACE,
) -> GameRecord:
    """Play one game; return its record. ``limits`` apply to White, and to Black
    unless ``black_limits`` is given. Bad ``start_fen``/``opening_moves`` raise
    RulesError before any engine is touched (they are the caller's input)."""
    wlim = limits or Limits()
    blim = black_limits or wlim
    board = start_board(game_name, start_fen)
    record = GameRecord(
        game=game_name,
        white=white.name,
        black=black.name,
        start_fen=start_fen,
        round=round,
        event=event,
        site=site,
        date=time.strftime("%Y.%m.%d"),
        start_time=time.strftime("%H:%M:%S"),
        time_control=_time_control_tag(wlim, blim),
        first_side=board.turn,
    )
    position = "position startpos" if start_fen is None else f"position fen {board.fen()}"
    sep = " moves "
    for text in opening_moves:
        board.push_str(text)
        record.moves.append(str(board.move_stack[-1]))
        record.elapsed_ms.append(None)
        record.clock_ms.append(None)
        position += sep + record.moves[-1]
        sep = " "
    record.opening_plies = len(record.moves)

    def lose(side: Side, reason: Reason, detail: str) -> GameRecord:
        record.result = Result.loss_for(side)
        record.reason = reason
        record.detail = detail
        record.fault = side
        record.final_fen = board.fen()
        return record

    for side, eng in ((Side.WHITE, white), (Side.BLACK, black)):
        try:
            await eng.new_game(sync_timeout)
        except EngineError as exc:
            return lose(side, exc.reason, str(exc))

    clocks = {"w": Clock(wlim), "b": Clock(blim)}
    engines = {"w": white, "b": black}
    while True:
        outcome = board.outcome()
        if outcome is not None:
            record.result = outcome.result
            record.reason = Reason.from_termination(outcome.reason)
            record.final_fen = board.fen()
            return record
        side = board.turn
        eng = engines[side]
        clock = clocks[side]
        allowed = clock.allowed_ms()
        wait = move_timeout if allowed is None else allowed / 1000 + stall_grace
        try:
            reply = await eng.go(position, go_arguments(side, clocks["w"], clocks["b"]), wait)
        except EngineTimeout:
            if allowed is None:
                why = f"no bestmove within {move_timeout:g} s (move timeout)"
            else:
                why = (
                    f"no bestmove within {wait:.3f} s "
                    f"({allowed:.0f} ms allowed + {stall_grace:g} s grace)"
                )
            return lose(side, Reason.STALLED, f"engine {eng.name}: {why}")
        except EngineError as exc:
            return lose(side, exc.reason, str(exc))
        elapsed = reply.elapsed_ms
        if not clock.charge(elapsed):
            return lose(
                side,
                Reason.TIME_FORFEIT,
                f"engine {eng.name} used {elapsed:.0f} ms, {allowed:.0f} ms allowed",
            )
        text = reply.bestmove
        if text is None:
            return lose(side, Reason.PROTOCOL_ERROR, f"engine {eng.name} sent {reply.line!r}")
        if text == "none":
            n = len(board.legal_moves)
            return lose(
                side,
                Reason.ILLEGAL_MOVE,
                f"engine {eng.name} sent bestmove none with {n} legal moves in {board.fen()}",
            )
        if MOVE_SYNTAX.fullmatch(text) is None:
            shown = reply.line if len(reply.line) <= 80 else reply.line[:77] + "..."
            return lose(side, Reason.PROTOCOL_ERROR, f"engine {eng.name} sent malformed {shown!r}")
        try:
            move = board.parse_move(text)
        except RulesError as exc:
            return lose(
                side,
                Reason.ILLEGAL_MOVE,
                f"engine {eng.name} played illegal {text} in {board.fen()}: {exc}",
            )
        board.push(move)
        record.moves.append(text)
        record.elapsed_ms.append(elapsed)
        record.clock_ms.append(clock.remaining_ms if clock.limits.has_clock else None)
        position += sep + text
        sep = " "


def _time_control_tag(white: Limits, black: Limits) -> str:
    a, b = white.pdn_time_control(), black.pdn_time_control()
    return a if a == b else f"{a}:{b}"


def start_failure_record(
    game_name: str,
    white: str,
    black: str,
    failed_side: Side,
    detail: str,
    start_fen: str | None = None,
    round: str = "1",
    event: str = "?",
    site: str = "?",
    limits: Limits | None = None,
) -> GameRecord:
    """The record of a game that could not start because ``failed_side``'s engine did not."""
    lim = limits or Limits()
    return GameRecord(
        game=game_name,
        white=white,
        black=black,
        start_fen=start_fen,
        result=Result.loss_for(failed_side),
        reason=Reason.START_FAILURE,
        detail=detail,
        fault=failed_side,
        round=round,
        event=event,
        site=site,
        date=time.strftime("%Y.%m.%d"),
        start_time=time.strftime("%H:%M:%S"),
        time_control=lim.pdn_time_control(),
        final_fen=start_board(game_name, start_fen).fen(),
        first_side=start_board(game_name, start_fen).turn,
    )
