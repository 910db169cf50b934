"""How a game's record begins: its board, its PDN tags and its opening moves, before any
engine is asked for a move; and the record of a game that could not start at all."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.rules import Board, Result, Side

if TYPE_CHECKING:
    from guti.referee.game.limits import Limits
    from guti.referee.game.settings import GameSpec


def start_board(game_name: str, start_fen: str | None) -> Board:
    """The board a game starts from (RulesError for a bad name or FEN)."""
    return Board(game_name) if start_fen is None else Board.from_fen(game_name, start_fen)


def opening_record(spec: GameSpec, white: str, black: str) -> tuple[Board, GameRecord]:
    """The board of the game ``spec`` describes after its opening moves, and its record so
    far: the tags, and the opening moves with no time, clock, search or CPU of their own.
    RulesError for a bad start FEN or opening move."""
    board = start_board(spec.game, spec.start_fen)
    record = _begun(spec, white, black, board,
                    time_control_tag(spec.white_limits, spec.black_limits))
    for text in spec.opening_moves:
        board.push_str(text)
        record.moves.append(str(board.move_stack[-1]))
        record.elapsed_ms.append(None)
        record.clock_ms.append(None)
        record.search.append(None)
        record.cpu_ms.append(None)
    record.opening_plies = len(record.moves)
    return board, record


def date_and_time() -> tuple[str, str]:
    """The PDN ``Date`` and ``Time`` of a game starting now, from one reading of the clock:
    two readings could straddle midnight and date a game a day early."""
    stamp = time.strftime("%Y.%m.%d %H:%M:%S")
    return stamp[:10], stamp[11:]


def time_control_tag(white: Limits, black: Limits) -> str:
    """The PDN ``TimeControl`` tag: one side's limits, or both as ``white:black`` when they differ."""
    a, b = white.pdn_time_control(), black.pdn_time_control()
    return a if a == b else f"{a}:{b}"


def start_failure_record(
    spec: GameSpec, white: str, black: str, failed_side: Side, detail: str
) -> GameRecord:
    """The record of the game ``spec`` describes, which could not start because
    ``failed_side``'s engine did not; its ``TimeControl`` tag is that side's limits."""
    board = start_board(spec.game, spec.start_fen)
    record = _begun(spec, white, black, board, spec.limits_of(failed_side).pdn_time_control())
    record.result = Result.loss_for(failed_side)
    record.reason, record.detail, record.fault = Reason.START_FAILURE, detail, failed_side
    record.final_fen = board.fen()
    return record


def _begun(spec: GameSpec, white: str, black: str, board: Board,
           time_control: str) -> GameRecord:
    """The record every game of ``spec`` starts with, from ``board``: who, what and when."""
    date, start_time = date_and_time()
    return GameRecord(game=spec.game, white=white, black=black, start_fen=spec.start_fen,
                      round=spec.round_tag, event=spec.event, site=spec.site, date=date,
                      start_time=start_time, time_control=time_control,
                      first_side=board.turn)
