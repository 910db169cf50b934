"""The reference engine's input: command lines read by a thread of their own.

Why a thread: a command may have to wait for the running job (``isready`` behind a ``go
perft`` or ``bench``, whose lines come first). While it waits, the lines after it are
still read, so that a ``stop``, a ``quit`` or the end of input behind it can end the job
(:meth:`InputLines.interrupt_waiting`) instead of waiting for a perft that may never end.

Every line is bounded: one longer than :data:`MAX_LINE_BYTES` is read to its end,
dropped, and handed on as an error to answer, so no input grows the engine's memory.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from typing import BinaryIO, NamedTuple

#: The longest command line read (bytes, its line end included): a ``position`` with
#: thousands of moves fits many times over.
MAX_LINE_BYTES = 1 << 20

#: The words of a command line: protocol.md separates them by spaces and tabs only (a
#: control character or another script's space is part of a word, not a separator).
words = re.compile(r"[^ \t\r\n]+").findall


class InputLine(NamedTuple):
    """One line of input as text (None: the end of input), when it was read, and the
    error to answer instead of carrying it out (a line too long), if any."""

    text: str | None
    received: float
    error: str | None = None


def read_line(stdin: BinaryIO) -> InputLine:
    """The next line of ``stdin`` (its text None at the end of input); one longer than
    :data:`MAX_LINE_BYTES` is read to its end and dropped, its error said instead."""
    raw = stdin.readline(MAX_LINE_BYTES + 1)
    received = time.perf_counter()
    if not raw:
        return InputLine(None, received)
    if len(raw) > MAX_LINE_BYTES:
        while raw and not raw.endswith(b"\n"):  # the rest of it, dropped
            raw = stdin.readline(MAX_LINE_BYTES)
        return InputLine("", received, f"a line of more than {MAX_LINE_BYTES >> 20} MiB: "
                                       "not read")
    return InputLine(raw.decode("utf-8", "replace"), received)


class InputLines:
    """The lines of ``stdin``, read ahead by a daemon thread (see the module)."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._lines: deque[InputLine] = deque()
        self._arrived = threading.Condition()
        threading.Thread(target=self._read, args=(stdin,), name="ugi-input",
                         daemon=True).start()

    def _read(self, stdin: BinaryIO) -> None:
        line = InputLine("", 0.0)
        try:  # to the end of input or a quit (nothing after it is read)
            while line.text is not None and words(line.text)[:1] != ["quit"]:
                line = read_line(stdin)
                self._put(line)
        except (OSError, ValueError):  # input closed under us: as its end
            self._put(InputLine(None, time.perf_counter()))

    def _put(self, line: InputLine) -> None:
        with self._arrived:
            self._lines.append(line)
            self._arrived.notify()

    def next(self) -> InputLine:
        """The next line, waiting for it."""
        with self._arrived:
            while not self._lines:
                self._arrived.wait()
            return self._lines.popleft()

    def interrupt_waiting(self) -> bool:
        """Whether a ``stop`` or ``quit``, or the end of input, has been read and waits to
        be carried out."""
        with self._arrived:
            return any(line.text is None or words(line.text)[:1] in (["stop"], ["quit"])
                       for line in self._lines)
