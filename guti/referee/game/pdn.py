"""Games as PDN (Portable Draughts Notation) records, appended safely to a file.

A record looks like::

    [Event "?"]
    [Site "?"]
    [Date "2024.05.01"]
    [Round "3"]
    [White "Alpha"]
    [Black "Beta"]
    [Result "1-0"]
    [GameType "egara-guti"]
    [Variant "egara-guti"]
    [SetUp "1"]                      (only when the game did not start from the
    [FEN "5/3/3/w/..."]               game's standard start position)
    [TimeControl "5+0.05"]
    [Termination "no legal move"]
    [PlyCount "57"]

    1. 17-12 {book} 9-13 {+0.25/12 0.012s [%emt 0.012] [%clk 0:00:04.988]}
    2. 22x12x2 {...} ... {engine Beta played illegal 3-4 in ...} 1-0

Choices (documented here because PDN has no single standard for them):

- ``GameType`` holds the game name (PDN's numeric GameType codes cover only
  draughts variants), and ``Variant`` repeats it for tools that look there.
- Every engine move's comment starts with what the engine reported with it, as
  cutechess-cli writes it: ``SCORE/DEPTH TIMEs`` (``+0.25/12 0.012s``: the score in
  pieces from the mover's point of view, ``+W7``/``-L7`` for a forced win/loss in 7
  plies, ``?`` for a half the engine did not report; the depth; the time the referee
  measured, in seconds). It is there when the engine's last ``info`` line before
  ``bestmove`` had a score or a depth. fastchess's optional fields follow, each
  ``, key=value`` when switched on (:class:`PdnFields`) and known: ``n=`` nodes,
  ``sd=`` seldepth, ``nps=`` nodes per second, ``tl=`` time left on the clock after
  the move (``4.988s``), ``latency=`` the measured time minus the ``time`` the engine
  reported (``0.003s``; see :meth:`GameRecord.latency_ms`). Then, always,
  ``[%emt S.sss]`` (seconds it took, ms precision) and, when a clock runs,
  ``[%clk H:MM:SS.mmm]`` (time left after the move, increment included): the PGN
  command-comment spellings other tools already read. A move the engine reported
  nothing with carries only these two, as before. Book plies carry ``{book}``.
- ``Termination`` is the reason from :mod:`guti.referee.game.reasons`
  (``unterminated`` for an unfinished game); the one-line detail of an
  engine fault or of an adjudication (the rule and the scores that triggered
  it) is a comment just before the result.
- Black-to-move starts are numbered ``1...``; numbers follow the FEN's
  full-move field.

:class:`PdnWriter` appends each record and then flushes and fsyncs, so a
crash never leaves a half-written game behind a complete one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.referee.game.game_file import GameFileWriter
from guti.referee.game.reasons import Reason
from guti.referee.process.text import visible

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord

LINE_WIDTH = 79


def _tag(name: str, value: str) -> str:
    value = visible(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'[{name} "{value}"]'


def _comment(text: str) -> str:
    return "{" + visible(text.replace("\n", " | ")).replace("}", ")").replace("{", "(") + "}"


def format_clock(ms: float) -> str:
    """``H:MM:SS.mmm`` for a clock reading in milliseconds (negative shown as 0)."""
    total = max(0, round(ms))
    hours, rest = divmod(total, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"


@dataclass(frozen=True)
class PdnFields:
    """fastchess's optional per-move fields (``-pdnout file=F nodes=true seldepth=true
    nps=true timeleft=true latency=true``); score, depth and time are always written."""

    nodes: bool = False
    seldepth: bool = False
    nps: bool = False
    timeleft: bool = False
    latency: bool = False

    def names(self) -> list[str]:
        """The switched-on fields, by their ``-pdnout`` key (stored with the settings)."""
        return [name for name in PDN_FIELD_NAMES if getattr(self, name)]

    @classmethod
    def of(cls, names: list[str] | tuple[str, ...]) -> PdnFields:
        """The inverse of :meth:`names` (unknown names are ignored)."""
        return cls(**{name: True for name in names if name in PDN_FIELD_NAMES})


#: The fields of :class:`PdnFields`, by their ``-pdnout`` key.
PDN_FIELD_NAMES = ("nodes", "seldepth", "nps", "timeleft", "latency")

#: None of the optional fields (score, depth and time only).
NO_FIELDS = PdnFields()


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}s"


def engine_report(record: GameRecord, ply: int, fields: PdnFields = NO_FIELDS) -> str:
    """What the engine reported with ``ply``, as the comment's text part: ``+0.25/12
    0.012s`` and the switched-on fastchess fields (``""`` when there is nothing)."""
    info = record.search[ply] if ply < len(record.search) else None
    elapsed = record.elapsed_ms[ply] if ply < len(record.elapsed_ms) else None
    clock = record.clock_ms[ply] if ply < len(record.clock_ms) else None
    items: list[str] = []
    if info is not None and (info.score is not None or info.depth is not None):
        score = str(info.score) if info.score is not None else "?"
        depth = str(info.depth) if info.depth is not None else "?"
        head = f"{score}/{depth}"
        items.append(head if elapsed is None else f"{head} {_seconds(elapsed)}")
    if info is not None:
        if fields.nodes and info.nodes is not None:
            items.append(f"n={info.nodes}")
        if fields.seldepth and info.seldepth is not None:
            items.append(f"sd={info.seldepth}")
        if fields.nps and info.nps is not None:
            items.append(f"nps={info.nps}")
    if fields.timeleft and clock is not None:
        items.append(f"tl={_seconds(clock)}")
    latency = record.latency_ms(ply)
    if fields.latency and latency is not None:
        items.append(f"latency={_seconds(latency)}")
    return ", ".join(items)


def move_comment(record: GameRecord, ply: int, fields: PdnFields = NO_FIELDS) -> str | None:
    """The comment after an engine's ``ply`` (without braces); None when it has none."""
    parts = [engine_report(record, ply, fields)]
    elapsed = record.elapsed_ms[ply] if ply < len(record.elapsed_ms) else None
    clock = record.clock_ms[ply] if ply < len(record.clock_ms) else None
    if elapsed is not None:
        parts.append(f"[%emt {elapsed / 1000:.3f}]")
    if clock is not None:
        parts.append(f"[%clk {format_clock(clock)}]")
    text = " ".join(part for part in parts if part)
    return text or None


def _start_fields(record: GameRecord) -> tuple[str, int]:
    """(side to move, full-move number) at the start of the record."""
    if record.start_fen:
        parts = record.start_fen.split()
        side = parts[1] if len(parts) > 1 else record.first_side
        try:
            number = int(parts[3]) if len(parts) > 3 else 1
        except ValueError:
            number = 1
        return side, max(1, number)
    return record.first_side, 1


def format_movetext(record: GameRecord, fields: PdnFields = NO_FIELDS) -> list[str]:
    """The movetext as a list of words (numbers, moves, comments, result)."""
    words: list[str] = []
    side, number = _start_fields(record)
    for i, move in enumerate(record.moves):
        if side == "w":
            words.append(f"{number}.")
        elif i == 0:
            words.append(f"{number}...")
        words.append(move)
        if i < record.opening_plies:
            words.append("{book}")
        else:
            comment = move_comment(record, i, fields)
            if comment is not None:
                words.append("{" + comment + "}")
        if side == "b":
            number += 1
        side = "b" if side == "w" else "w"
    if record.detail and (record.fault is not None or record.reason is Reason.ADJUDICATION):
        words.append(_comment(record.detail))
    words.append(record.result)
    return words


def _wrap(words: list[str]) -> str:
    lines: list[str] = []
    current = ""
    for word in words:
        if current and len(current) + 1 + len(word) > LINE_WIDTH:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return "\n".join(lines)


def format_game(record: GameRecord, fields: PdnFields = NO_FIELDS) -> str:
    """The whole PDN record (tags, blank line, movetext), ending in a newline; ``fields``:
    the optional per-move fields to write."""
    tags = [
        _tag("Event", record.event),
        _tag("Site", record.site),
        _tag("Date", record.date),
        _tag("Round", record.round),
        *([_tag("Game", str(record.number))] if record.number is not None else []),
        _tag("White", record.white),
        _tag("Black", record.black),
        _tag("Result", record.result),
        _tag("GameType", record.game),
        _tag("Variant", record.game),
    ]
    if record.start_fen:
        tags.append(_tag("SetUp", "1"))
        tags.append(_tag("FEN", record.start_fen))
    tags.append(_tag("TimeControl", record.time_control))
    tags.append(_tag("Termination", str(record.reason) if record.reason else "unterminated"))
    tags.append(_tag("PlyCount", str(record.plies)))
    if record.start_time:
        tags.append(_tag("Time", record.start_time))
    return "\n".join(tags) + "\n\n" + _wrap(format_movetext(record, fields)) + "\n"


class PdnWriter(GameFileWriter):
    """Appends games to a PDN file, each one flushed and fsynced before returning."""

    kind = "PDN"
    separator = "\n"

    def __init__(self, path: str, fields: PdnFields = NO_FIELDS) -> None:
        super().__init__(path)
        self.fields = fields

    def render(self, record: GameRecord) -> str:
        return format_game(record, self.fields)
