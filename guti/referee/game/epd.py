"""The final position of each game, one line per game (``-epdout file=F``).

A line is the final FEN followed by EPD-style operations, each ``; name value``::

    4w/3/3/1/3/3/b4 b 12 31; variant "egara-guti"; white "RefA"; black "RefB"; result "1-0"; termination "no legal move"; plies 57; game 7

``variant`` is the game; ``white``/``black`` the engines; ``result`` as in the PDN
``Result`` tag; ``termination`` the reason as in the PDN ``Termination`` tag
(``unterminated`` for an unfinished game); ``plies`` the number of plies played from
the start position (book plies included); ``game`` the game's number (absent for a
game played on its own). Strings are in double quotes; a ``"`` or ``;`` an engine
name might hold is written as ``'`` or ``,`` (control characters escaped), so
splitting the line at ``;`` always gives the FEN first and one operation each after.
The FEN is the referee's own (the rules core's), so replaying the game's moves from its
start gives it again.

Why EPD-style: cutechess-cli and fastchess write bare FENs to their ``-epdout`` files;
the operations after the FEN keep that first field for tools that read only it, and
say how the game got there for tools (and people) that want more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.game.game_file import GameFileWriter
from guti.referee.process.text import visible

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord


def _quoted(text: str) -> str:
    return '"' + visible(text).replace('"', "'").replace(";", ",") + '"'


def format_epd(record: GameRecord) -> str:
    """The line of ``record`` (ending in a newline)."""
    ops = [
        f"variant {_quoted(record.game)}",
        f"white {_quoted(record.white)}",
        f"black {_quoted(record.black)}",
        f"result {_quoted(str(record.result))}",
        f"termination {_quoted(str(record.reason) if record.reason else 'unterminated')}",
        f"plies {record.plies}",
    ]
    if record.number is not None:
        ops.append(f"game {record.number}")
    return "; ".join([record.final_fen, *ops]) + "\n"


class EpdWriter(GameFileWriter):
    """Appends one line per game, flushed and fsynced."""

    kind = "EPD"

    def render(self, record: GameRecord) -> str:
        return format_epd(record)
