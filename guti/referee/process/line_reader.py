"""Lines from an untrusted byte stream, bounded in bytes and stamped with their arrival.

:class:`LineReader` is fed the chunks an engine's stdout delivers (``feed(data, now)``)
and hands out complete lines (``find_line`` then ``take``). It does no I/O and knows no
clock: the caller passes each chunk's arrival time, so it is tested without processes.

What it guarantees, whatever the engine writes:

- **Bounded memory.** A line longer than :data:`LINE_LIMIT` bytes, or more than
  :data:`QUEUE_LIMIT` of unread output, puts the reader in error (:attr:`LineReader.error`,
  one line saying which); what is unread is counted in bytes of memory (the raw bytes
  plus :data:`STAMP_COST` per arrival stamp), so the bound holds for any mix of lines,
  a flood of empty lines included. Bytes and stamps already read are freed in batches.
- **A chatty engine is not a faulty one.** Over the budget, the oldest unread lines are
  dropped when every one of them is an ``info`` line or empty (:meth:`LineReader._fold_info`):
  an engine that reports its search in 20 MB of ``info`` lines during one long move
  followed the protocol, and a reader waiting for ``bestmove`` keeps only the last few
  lines before it anyway. Only output that cannot be folded so (other lines, an
  over-long line) is a fault.
- **Cheap floods.** A chunk costs a copy and a few searches in C, never Python work per
  line: lines are split and decoded only when taken, and only the ones kept are
  decoded. So an engine that floods ``info`` lines cannot hold up the event loop, and
  with it the reading of other engines.
- **Arrival times.** Every chunk that completes a line is stamped with the time it was
  fed; a line's arrival is the stamp of the chunk that held its newline. A move's time
  ends when its ``bestmove`` bytes arrived, however late the line is taken.

Offsets are absolute (bytes since the stream began): ``buf`` holds those from ``base``
on, ``pos`` is the read position, ``line_start`` the start of the unfinished line.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right

#: Longest accepted line (bytes, without the newline).
LINE_LIMIT = 1 << 20
#: Most output that may wait unread before the stream is called faulty.
QUEUE_LIMIT = 16 << 20
#: Bytes charged to the unread budget per arrival stamp (its two array slots).
STAMP_COST = 16
#: Read stamps and bytes are freed once there are more than these, and more than are
#: still unread: freeing costs a copy, so it is done seldom, not after every line.
COMPACT_STAMPS = 256
COMPACT_BYTES = 1 << 16

#: The start of a line that is neither an ``info`` line nor empty: one stops the folding.
_UNFOLDABLE = re.compile(rb"^(?!info)(?!\r?\n).", re.MULTILINE)
#: The bytes ``bytes.split()`` splits on: a word followed by one of them is a whole word.
_BLANKS = frozenset(b" \t\n\r\x0b\x0c")


def line_text(raw: bytes | bytearray) -> str:
    """One line as read: decoded (a bad byte replaced), a CR before its newline dropped."""
    return raw.decode("utf-8", "replace").removesuffix("\r")


class LineReader:
    """Complete lines of a byte stream, bounded in bytes, each with its arrival time."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.base = 0
        self.pos = 0
        self.line_start = 0
        #: Arrival stamps: ``ends[i]`` is the end offset of a chunk, ``times[i]`` when it
        #: came; those before ``first_stamp`` belong to chunks read to their end.
        self.ends: array[int] = array("q")
        self.times: array[float] = array("d")
        self.first_stamp = 0
        #: The lines the last :meth:`feed` or :meth:`close` completed, from this offset to
        #: ``line_start`` (empty when it completed none).
        self.completed_from = 0
        #: Complete lines before this offset hold no line opening with ``scanned_for``:
        #: a reader waiting for one word through a flood does not search them again.
        self.scanned = 0
        self.scanned_for = b""
        #: Why the stream is faulty (an over-long line, too much unread), or None.
        self.error: str | None = None
        self.closed = False
        #: Bytes of unread ``info`` lines dropped to stay within the budget.
        self.folded = 0

    @property
    def end(self) -> int:
        """Absolute offset of the end of what was fed."""
        return self.base + len(self.buf)

    def unread_cost(self) -> int:
        """Memory held for output not read yet: its bytes plus its stamps' slots."""
        return (self.base + len(self.buf) - self.pos
                + STAMP_COST * (len(self.ends) - self.first_stamp))

    # -- writing ---------------------------------------------------------------------
    def feed(self, data: bytes, now: float) -> bool:
        """Add a chunk that arrived at ``now``. True when a waiting reader has something to
        look at: at least one line completed (see :meth:`completed_contains`), or the
        stream became faulty (:attr:`error`)."""
        self.completed_from = self.line_start  # no line completed yet
        if self.error is not None or self.closed:
            return False
        start = self.end
        end = start + len(data)
        self.buf += data
        last = data.rfind(b"\n")
        if last < 0:
            if end - self.line_start > LINE_LIMIT:
                return self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
            return False
        long_possible = len(data) > LINE_LIMIT or start + last - self.line_start > LINE_LIMIT
        if long_possible and self._has_long_line(data, start, last):
            return self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
        self.line_start = start + last + 1
        self.ends.append(end)
        self.times.append(now)
        if self.unread_cost() > QUEUE_LIMIT and not self._fold_info():
            return self._fail(f"left more than {QUEUE_LIMIT} bytes of output unread")
        return True

    def _fold_info(self) -> bool:
        """Drop the oldest complete unread lines, down to half the budget, when each of
        them opens with ``info`` or is empty (protocol.md 5.1: empty lines are ignored);
        whether the output is back within the budget. Dropping from the front only moves
        the read position, so the later lines keep their offsets and stamps; the test is
        one search in C (:data:`_UNFOLDABLE`), not Python work per line."""
        buf, base, pos = self.buf, self.base, self.pos
        target = min(pos + self.unread_cost() - QUEUE_LIMIT // 2, self.line_start - 1)
        if target < pos:
            return False
        cut = buf.index(b"\n", target - base) + 1 + base  # a line boundary after target
        if _UNFOLDABLE.search(buf, pos - base, cut - base) is not None:
            return False
        self.pos = cut
        self.folded += cut - pos
        self._compact()
        return self.unread_cost() <= QUEUE_LIMIT

    def close(self, now: float) -> None:
        """The stream ended: its unfinished last line counts as a line."""
        self.completed_from = self.line_start
        if self.error is None and self.end > self.line_start:
            self.feed(b"\n", now)
        self.closed = True

    def _has_long_line(self, data: bytes, start: int, last: int) -> bool:
        """Whether ``data`` (fed at offset ``start``, its last newline at ``last``) holds or
        completes a line over the limit, or leaves one unfinished (asked only when the
        chunk or the span of lines it completes is longer than a line may be)."""
        first = data.find(b"\n")
        return (start + first - self.line_start > LINE_LIMIT
                or len(data) - last - 1 > LINE_LIMIT
                or (len(data) > LINE_LIMIT
                    and max(len(line) for line in data.split(b"\n")) > LINE_LIMIT))

    def _fail(self, message: str) -> bool:
        self.error = message
        del self.buf[self.line_start - self.base :]  # the unfinished line is never read
        return True

    def completed_contains(self, word: bytes) -> bool:
        """Whether the lines the last :meth:`feed` completed hold ``word`` anywhere (a
        quick test in C; :meth:`find_line` decides whether one opens with it)."""
        return self.buf.find(word, self.completed_from - self.base,
                             self.line_start - self.base) >= 0

    def completed_text(self) -> str | None:
        """The lines the last :meth:`feed` or :meth:`close` completed, decoded and joined
        by newlines (CRs before newlines dropped); None when it completed none."""
        begin, end = self.completed_from - self.base, self.line_start - self.base
        if end <= begin:
            return None
        text = self.buf[begin : end - 1].decode("utf-8", "replace")
        return text.replace("\r\n", "\n").removesuffix("\r") if "\r" in text else text

    # -- a reply handed over whole ---------------------------------------------------
    def is_whole_reply(self, data: bytes, word: bytes) -> bool:
        """Whether ``data`` is exactly one line opening with ``word``, and nothing is
        unread before it: the usual reply of a quick engine, which :meth:`hand_over` lets
        its reader have without keeping, stamping and searching it."""
        return (self.pos == self.base + len(self.buf) and self.error is None
                and len(word) < len(data) <= LINE_LIMIT and data.startswith(word)
                and data[len(word)] in _BLANKS and data.find(b"\n") == len(data) - 1)

    def hand_over(self, data: bytes) -> None:
        """Consume ``data`` (see :meth:`is_whole_reply`) unkept: everything before it is
        read, so all that is held is freed and the offsets move past it."""
        self.buf.clear()
        del self.ends[:], self.times[:]
        self.first_stamp = 0
        self.base = self.pos = self.line_start = self.completed_from = self.pos + len(data)

    def give_back(self, data: bytes, now: float) -> None:
        """Undo :meth:`hand_over` of ``data`` (arrived at ``now``): it becomes the first
        unread line again, before what was fed since (its reader was cancelled before it
        took the line, and the next reader must see it)."""
        self.buf[0:0] = data
        self.base -= len(data)
        self.pos -= len(data)
        self.ends.insert(self.first_stamp, self.pos + len(data))
        self.times.insert(self.first_stamp, now)
        self.scanned = 0  # a search since may have passed its offset

    # -- reading ---------------------------------------------------------------------
    def find_line(self, word: bytes | None = None) -> int | None:
        """Absolute offset of the newline ending the first complete unread line (whose
        first word is ``word``, blanks around words ignored, when given); None if none."""
        if self.pos >= self.line_start:
            return None
        buf, base, pos, end = self.buf, self.base, self.pos, self.line_start - self.base
        if word is None:
            return base + buf.index(b"\n", pos - base, end)
        i = (max(pos, self.scanned) if word == self.scanned_for else pos) - base
        while True:
            j = buf.find(word, i, end)
            if j < 0:
                self.scanned, self.scanned_for = self.line_start, word
                return None
            begin = max(buf.rfind(b"\n", pos - base, j) + 1, pos - base)
            nl = buf.index(b"\n", j)
            opens = j == begin and buf[j + len(word)] in _BLANKS
            if opens or buf[begin:nl].split()[:1] == [word]:
                return base + nl
            i = nl + 1

    def take(self, newline: int, keep: int) -> tuple[list[str], float]:
        """Consume the unread lines through the one ending at ``newline``: the last ``keep``
        of them, decoded, and the arrival time of the last."""
        buf, lo = self.buf, self.pos - self.base
        end = start = newline - self.base
        for _ in range(keep):
            start = max(buf.rfind(b"\n", lo, end) + 1, lo)
            if start <= lo:
                break
            end = start - 1
        lines = ([line_text(raw) for raw in buf[start : newline - self.base].split(b"\n")]
                 if keep else [])
        at = self._stamp(newline)
        self.pos = newline + 1
        self._compact()
        return lines, at

    def take_through(self, word: bytes | None, keep: int) -> tuple[list[str], float] | None:
        """:meth:`take` through the first complete line opening with ``word`` (any line:
        None); None while there is no such line."""
        newline = self.find_line(word)
        return None if newline is None else self.take(newline, keep)

    def take_all(self, keep: int) -> list[str]:
        """Consume every complete unread line; the last ``keep`` of them."""
        if self.pos >= self.line_start:
            return []
        return self.take(self.line_start - 1, keep)[0]

    def unfinished(self, limit: int) -> bytes:
        """The first ``limit`` bytes of the line begun but not ended yet (b"": none)."""
        start = self.line_start - self.base
        return bytes(self.buf[start:start + limit])

    def drop(self) -> None:
        """Forget the complete lines not read yet."""
        if self.pos != self.line_start:
            self.pos = self.line_start
            self._compact()

    def _stamp(self, newline: int) -> float:
        """Arrival time of the line whose newline is at ``newline``: that of the first
        chunk ending after it."""
        return self.times[bisect_right(self.ends, newline, self.first_stamp)]

    def _compact(self) -> None:
        """Free the stamps and bytes before the read position, once there are more than
        COMPACT_STAMPS / COMPACT_BYTES of them and more than are still unread: the
        memory held stays within twice what is unread, and each byte is moved O(1) times."""
        self.first_stamp = bisect_right(self.ends, self.pos, self.first_stamp)
        if self.first_stamp > COMPACT_STAMPS and 2 * self.first_stamp > len(self.ends):
            del self.ends[: self.first_stamp]
            del self.times[: self.first_stamp]
            self.first_stamp = 0
        read = self.pos - self.base
        if read > COMPACT_BYTES and 2 * read > len(self.buf):
            del self.buf[:read]
            self.base = self.pos
