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

    1. 17-12 {book} 9-13 {[%emt 0.012] [%clk 0:00:04.988]} 2. 22x12x2 {...} ...
    {engine Beta played illegal 3-4 in ...} 1-0

Choices (documented here because PDN has no single standard for them):

- ``GameType`` holds the game name (PDN's numeric GameType codes cover only
  draughts variants), and ``Variant`` repeats it for tools that look there.
- Every engine move carries ``[%emt S.sss]`` (seconds it took, ms precision)
  and, when a clock runs, ``[%clk H:MM:SS.mmm]`` (time left after the move,
  increment included); book plies carry ``{book}``. These are the PGN
  command-comment spellings other tools already read.
- ``Termination`` is the reason from :mod:`referee.game.reasons`
  (``unterminated`` for an unfinished game); the one-line detail of an
  engine fault or of an adjudication (the rule and the scores that triggered
  it) is a comment just before the result.
- Black-to-move starts are numbered ``1...``; numbers follow the FEN's
  full-move field.

:class:`PdnWriter` appends each record and then flushes and fsyncs, so a
crash never leaves a half-written game behind a complete one.
"""

from __future__ import annotations

import os

from referee.game.reasons import Reason
from referee.game.record import GameRecord
from referee.process.text import visible

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


def format_movetext(record: GameRecord) -> list[str]:
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
            elapsed = record.elapsed_ms[i] if i < len(record.elapsed_ms) else None
            clock = record.clock_ms[i] if i < len(record.clock_ms) else None
            parts = []
            if elapsed is not None:
                parts.append(f"[%emt {elapsed / 1000:.3f}]")
            if clock is not None:
                parts.append(f"[%clk {format_clock(clock)}]")
            if parts:
                words.append("{" + " ".join(parts) + "}")
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


def format_game(record: GameRecord) -> str:
    """The whole PDN record (tags, blank line, movetext), ending in a newline."""
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
    return "\n".join(tags) + "\n\n" + _wrap(format_movetext(record)) + "\n"


class PdnWriter:
    """Appends games to a PDN file, each one flushed and fsynced before returning."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self._first = self._fh.tell() == 0

    def write(self, record: GameRecord) -> None:
        text = format_game(record)
        if not self._first:
            text = "\n" + text
        self._first = False
        try:
            self._fh.write(text)
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:  # disk full, ...: say which file
            raise OSError(exc.errno, exc.strerror, self.path) from None

    def close(self) -> None:
        # Every write is flushed at once, so only a write that already failed (and
        # was reported) can leave data to flush here: do not fail a second time.
        try:
            self._fh.close()
        except OSError:
            pass

    def __enter__(self) -> PdnWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
