"""A file that gets one entry per finished game, appended safely (PDN, EPD).

Each entry is written, flushed and fsynced before :meth:`GameFileWriter.write` (or
:meth:`~GameFileWriter.append`) returns, so a crash never leaves a half-written game
behind a complete one; a failed write is an ``OSError`` that names the file. A character
device or a FIFO (``-pdnout /dev/null``, a pipe) is written into and never fsynced: there
is nothing to make durable, and a device refuses. Subclasses
say how a game is rendered (:class:`~guti.referee.game.pdn.PdnWriter`,
:class:`~guti.referee.game.epd.EpdWriter`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from guti.referee.game.output_paths import is_stream

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord


class GameFileWriter:
    """Appends one rendered entry per game to ``path``."""

    #: What the file is, in messages (``PDN file out.pdn: No space left on device``).
    kind = "game"
    #: Put between two entries.
    separator = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self._stream = is_stream(self._fh.fileno())
        self._first = self._stream or self._fh.tell() == 0

    def render(self, record: GameRecord) -> str:
        raise NotImplementedError

    def write(self, record: GameRecord) -> None:
        self.append(self.render(record))

    def append(self, text: str) -> None:
        """Append an entry made by :meth:`render`: only the file's work, which waits for
        the disk (a thread can do it; see :mod:`guti.referee.storage.result_writer`)."""
        if not self._first:
            text = self.separator + text
        self._first = False
        try:
            self._fh.write(text)
            self._fh.flush()
            if not self._stream:
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

    def __enter__(self) -> GameFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
