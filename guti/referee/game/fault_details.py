"""How a game lost for its reply is told: the one-line detail stored with the game.

The detail of a reply the judge refused names the engine, what it sent (clipped: it goes
into the PDN, the database and the report with every copy of the game) and the position,
and adds what explains the fault when the referee knows it: a move legal at the engine's
previous ``go`` (a second ``bestmove`` for one ``go``), or an ``info string error`` the
engine answered the ``position`` with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.game.judge import Fault, Verdict
from guti.referee.ugi.lines import GoReply, is_error_report

if TYPE_CHECKING:
    from guti.rules import Board


def reply_fault_detail(name: str, board: Board, verdict: Verdict, reply: GoReply,
                       allowed: float | None, earlier: str | None = None) -> str:
    """The detail of engine ``name``'s ``reply`` in ``board``'s position, refused as
    ``verdict`` says (``allowed``: the ms it had; ``earlier``: the FEN of the position of
    its previous ``go`` when its illegal move was legal there)."""
    fault = verdict.fault or Fault.NONE_WITH_MOVES
    fen = board.fen()
    if fault is Fault.TIME:
        used, limit = _ms_apart(reply.elapsed_ms, allowed or 0.0)
        detail = f"engine {name} used {used} ms, {limit} ms allowed"
    elif fault is Fault.NO_MOVE:
        detail = f"engine {name} sent {_clipped(reply.line)!r}"
    elif fault is Fault.NONE_WITH_MOVES:
        n = len(board.legal_moves)
        moves = "1 legal move" if n == 1 else f"{n} legal moves"
        detail = f"engine {name} sent bestmove none with {moves} in {fen}"
    elif fault is Fault.MALFORMED:
        detail = f"engine {name} sent malformed {_clipped(reply.line)!r}"
    else:
        # the rules' message names the move and the position again: said once here
        why = (verdict.error or "").removeprefix(f"illegal move {verdict.text!r} in {fen}: ")
        detail = (f"engine {name} played illegal {_clipped(verdict.text or '')} in {fen}: "
                  f"{_clipped(why, 200)}")
        if earlier is not None:
            detail += (f"; it answers a previous request (legal in {earlier}, the position"
                       f" of this engine's previous go): a second bestmove for one go?")
    return detail + _error_reply(reply)


def _ms_apart(used: float, allowed: float) -> tuple[str, str]:
    """Both times in ms with as few decimals (at most 3) as show them apart: a move of
    50.2 ms against 50 allowed reads ``50.2`` and ``50.0``, not ``50`` and ``50``."""
    for digits in range(4):
        a, b = f"{used:.{digits}f}", f"{allowed:.{digits}f}"
        if a != b:
            break
    return a, b


def _clipped(text: str, limit: int = 80) -> str:
    """An engine's words as a game's detail shows them: at most ``limit`` characters (the
    detail goes into the PDN, the database and the report with every copy of the game)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_reply(reply: GoReply) -> str:
    """`` after answering the position with: info string error ...`` when the engine
    rejected the ``position`` it was sent before the move: its wrong move then comes from
    another position, and the error line is what explains it (it would otherwise sit
    unread in the traffic log)."""
    errors = [line for line in reply.infos if is_error_report(line)]
    return f"; before it, the engine answered: {errors[0][:300]}" if errors else ""
