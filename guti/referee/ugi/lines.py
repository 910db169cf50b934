"""The protocol lines the referee writes to an engine and reads back, as values.

A position is a :class:`Position` (built from a rules ``Board`` by the one start-position
rule, :meth:`Position.of`) and a search is a :class:`~guti.referee.ugi.go.Go`;
:func:`position_line` and :func:`go_line` are the only writers of ``position`` and ``go``.
An answer to ``go`` is read into a :class:`GoReply`. Pure text in and out: the UGI client
(:mod:`guti.referee.ugi.client`) does the writing and the waiting.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from guti.referee.process.errors import UNFINISHED_SHOWN
from guti.referee.process.text import visible
from guti.referee.ugi.search_info import SearchInfo
from guti.rules import Board, Result

if TYPE_CHECKING:
    from guti.referee.ugi.go import Go

#: Info lines kept per ``go`` (the latest ones).
MAX_INFOS = 32


@functools.cache
def _start_fen(game: str) -> str:
    """``game``'s start FEN, worked out once per game name (it takes a board built)."""
    return Board(game).fen()


class Position(NamedTuple):
    """What a ``position`` command says: a start FEN (None: the game's start
    position, sent as ``startpos``) and the moves played from it. A named tuple, as
    :class:`~guti.referee.game.judge.Verdict` is: a game makes one every ply (:meth:`then`)."""

    fen: str | None = None
    moves: tuple[str, ...] = ()

    def then(self, move: str) -> Position:
        """This position with ``move`` played."""
        return Position(self.fen, (*self.moves, move))

    @classmethod
    def of(cls, board: Board) -> Position:
        """The position of ``board``: its root and its move stack. The one start-position
        rule: a root equal to the game's start position is sent as ``startpos``."""
        root = board.root_fen
        fen = None if root == _start_fen(board.game.name) else root
        return cls(fen, tuple(str(m) for m in board.move_stack))


def position_line(position: Position) -> str:
    """``position startpos|fen F [moves M...]``: the only place that writes it."""
    head = "position startpos" if position.fen is None else f"position fen {position.fen}"
    return f"{head} moves {' '.join(position.moves)}" if position.moves else head


def go_line(go: Go) -> str:
    """``go ...``: the only place that writes it."""
    return f"go {go.arguments()}"


def setoption_line(name: str, value: str | None) -> str:
    """``setoption name N value V``, or ``setoption name N`` for a button's press (``value``
    None): the only place that writes it."""
    return f"setoption name {name}" if value is None else f"setoption name {name} value {value}"


def query_line(question: str) -> str:
    """``query gameover|p1turn|result``: the only place that writes it."""
    return f"query {question}"


#: The answers to ``query result`` (protocol.md 5.2), by result.
RESULT_WORDS = {Result.WHITE_WINS: "p1win", Result.BLACK_WINS: "p2win", Result.DRAW: "draw",
                Result.UNFINISHED: "none"}


def result_word(board: Board) -> str:
    """What ``query result`` is to be answered with in ``board``'s position."""
    outcome = board.outcome()
    return RESULT_WORDS[Result.UNFINISHED if outcome is None else outcome.result]


def is_bestmove(line: str) -> bool:
    """A ``bestmove`` line: its first word, blanks around words ignored (protocol.md 5.1)."""
    return line.split()[:1] == ["bestmove"]


def is_response(line: str) -> bool:
    """The answer to a ``query``: ``response ...``."""
    return line.split()[:1] == ["response"]


def unfinished_note(unfinished: bytes) -> str:
    """``; its last output, "bestmove 16-12\\r", has no newline after it`` (control
    characters shown escaped), when what an engine left unended (``EngineTimeout``'s
    ``unfinished``) looks like a reply whose newline is missing: a reply word, or a lone
    carriage return in it; "" else (an ``info`` line caught while still being written says
    nothing wrong)."""
    if not (b"\r" in unfinished
            or unfinished.lstrip().startswith((b"bestmove", b"ugiok", b"readyok"))):
        return ""
    more = "..." if len(unfinished) > UNFINISHED_SHOWN else ""
    text = visible(unfinished[:UNFINISHED_SHOWN].decode("utf-8", "replace"))
    return f'; its last output, "{text}{more}", has no newline after it'


def is_info(line: str) -> bool:
    """An ``info`` line: its first word, blanks around words ignored (protocol.md 5.1)."""
    return line.split()[:1] == ["info"]


def is_info_string(line: str) -> bool:
    """``info string ...``: free text from the engine (an error report among them)."""
    return line.split()[:2] == ["info", "string"]


def is_ugiok(line: str) -> bool:
    """``ugiok``, the end of the engine's handshake reply."""
    return line.split()[:1] == ["ugiok"]


def is_error_report(line: str) -> bool:
    """``info string error ...``: the engine says a command it was sent was wrong (a bad
    ``position``, an option it refuses); blanks around words ignored."""
    return line.split()[:3] == ["info", "string", "error"]


def is_unknown_command(line: str) -> bool:
    """``info string unknown command ...``: the engine's word for a command it does not
    know; blanks around words ignored."""
    return line.split()[:4] == ["info", "string", "unknown", "command"]


def is_refusal(line: str) -> bool:
    """An error report or an unknown command: the engine refused what it was sent."""
    return is_error_report(line) or is_unknown_command(line)


def is_readyok(line: str) -> bool:
    return line.strip() == "readyok"


def elapsed_ms(sent_at: float, received_at: float) -> float:
    """Milliseconds from ``sent_at`` to ``received_at`` (``time.monotonic()`` seconds), to
    the nanosecond. Why rounded: the difference of two large counts of seconds carries
    float noise in its last digits (``0.08712339331395924`` for 87,123 ns); rounded, it is
    what was measured (``0.087123``), the clocks charged with it stay as short, and the
    database's JSON of a game's times is written in a third of the CPU time."""
    return round((received_at - sent_at) * 1e9) / 1e6


class GoReply(NamedTuple):
    """The answer to one ``go`` (a named tuple, as :class:`Position` is).

    ``bestmove`` is the word after ``bestmove`` (None if missing); ``elapsed_ms``
    runs from ``go`` written (``sent_at``) to the ``bestmove`` line received
    (``received_at``), both ``time.monotonic()`` seconds. ``search`` is what the last
    ``info`` line with search fields before ``bestmove`` said (None when none came).
    """

    bestmove: str | None
    line: str
    infos: list[str]
    elapsed_ms: float
    sent_at: float
    received_at: float
    search: SearchInfo | None = None

    @classmethod
    def read(cls, lines: Sequence[str], sent_at: float, received_at: float) -> GoReply:
        """The reply whose last line is the ``bestmove`` line."""
        words = lines[-1].split()
        infos = [line for line in lines[:-1] if is_info(line)][-MAX_INFOS:]
        return cls(
            bestmove=words[1] if len(words) > 1 else None,
            line=lines[-1],
            infos=infos,
            search=SearchInfo.last_of(infos),
            elapsed_ms=elapsed_ms(sent_at, received_at),
            sent_at=sent_at,
            received_at=received_at,
        )
