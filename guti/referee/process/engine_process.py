"""One engine program run through pipes, trusting nothing it does (no protocol here).

:class:`EngineProcess` starts an engine (an argv list, never a shell) as the
leader of its own process group, with stdin/stdout pipes. stderr is copied
to the engine log (``stderr_path`` of its spec) and to the traffic hook,
and kept as a short tail for error messages; it is never parsed. What the
lines mean is the business of :mod:`guti.referee.ugi.client`, which sees this
class only through :class:`guti.referee.ugi.transport.Transport`.

Every wait has a hard bound and ends in one of four exceptions, each
carrying its :class:`ErrorKind` (the game maps kinds to its reasons for a loss):

- :class:`EngineStartError` (``start failure``): cannot exec (the UGI client
  raises it too, for a failed handshake);
- :class:`EngineDisconnected` (``disconnect``): stdout closed / process
  exited; the message includes the exit code or signal;
- :class:`EngineTimeout` (``stalled``): no line within the bound;
- :class:`EngineProtocolError` (``protocol error``): a line over 1 MiB, or
  more than 16 MiB of unread output, counted in bytes of memory (raw bytes plus
  16 bytes per arrival stamp), so the bound holds for any mix of lines.

guti owns the engine's stdin and stdout pipes: the event loop calls a reader when
stdout has data, which takes it with one ``os.read``, and lines go out with one
``os.write`` (the rest, if the pipe is full, later and in order), so a ply costs one call
into Python each way rather than a pipe transport's layers. stderr and the exit come
through a small asyncio ``SubprocessProtocol``. stdout's raw bytes are kept, each chunk
stamped with its monotonic arrival time; lines are split and decoded only
when read, and :meth:`EngineProcess.read_through` finds the answer it waits for
(``bestmove``) with byte searches, decoding only the lines it keeps. So an engine
that floods output costs a copy per chunk, not Python work per line, and cannot delay
the reading of other engines; a move's time runs from the write to the arrival of
the chunk that completed its ``bestmove`` line.

Typical use::

    proc = EngineProcess(config)          # anything with name, argv, cwd, stderr_path
    await proc.start()
    sent_at = proc.send_lines(["isready"])
    line, at = await proc.read_stamped(time.monotonic() + 5)
    await proc.quit()          # quit, grace, SIGTERM, SIGKILL the group, reap
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shlex
import signal
import time
from array import array
from collections.abc import Callable, Coroutine, Sequence
from typing import BinaryIO, Protocol

from guti.referee.process import lifeline
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineProtocolError,
    EngineStartError,
    EngineTimeout,
    start_failure_reason,
)
from guti.referee.process.group import (
    enable_subreaper,
    group_members,
    live_members,
    reap_orphans,
    signal_group,
)
from guti.referee.process.stderr_summary import tail_lines, telling_line

#: Longest accepted line from an engine (bytes, without the newline).
LINE_LIMIT = 1 << 20
#: Most output that may wait unread before the engine is called faulty.
QUEUE_LIMIT = 16 << 20
#: Bytes of the unread-output budget charged per arrival stamp (its two array slots), so
#: that the bound holds in memory for any mix of lines and chunks.
STAMP_COST = 16
#: Read stamps and bytes of stdout kept before they are freed (see ``_Pipes._compact``):
#: freeing them costs a copy, so it is done seldom, not after every line read.
COMPACT_STAMPS = 256
COMPACT_BYTES = 1 << 16
#: Bytes of stderr kept for error messages and a crashed engine's record.
STDERR_TAIL = 4096
#: After the engine process exits, how long its stdout may stay open (held by
#: a grandchild) before the group is killed so that EOF arrives.
ORPHAN_PIPE_GRACE = 0.25
#: Most bytes taken from the engine's stdout by one read: a pipe's default capacity. Not
#: more: a larger buffer is an ``mmap``/``munmap`` (and page faults) in every read, since
#: glibc maps allocations of 128 KiB and up, and one ply is one read.
READ_SIZE = 1 << 16

#: ``hook(wall_time, direction, engine_name, line)``; direction ``">"`` to the
#: engine, ``"<"`` from it, ``"!"`` a line of its stderr (logged, never parsed).
TrafficHook = Callable[[float, str, str, str], None]
#: ``block(wall_time, direction, engine_name, text)``: several lines at once, joined by "\n".
TrafficBlockHook = Callable[[float, str, str, str], None]


def describe_exit(returncode: int | None) -> str:
    """``exit code 3`` / ``killed by signal 11 (SIGSEGV)`` / ``still running``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"killed by signal {-returncode} ({name})"
    return f"exit code {returncode}"


#: The bytes ``bytes.split()`` splits on: a word followed by one of them is a whole word.
_BLANKS = frozenset(b" \t\n\r\x0b\x0c")


def _longest_line(data: bytes) -> int:
    """Length of the longest line in ``data`` (only for chunks larger than a line may be)."""
    return max(len(line) for line in data.split(b"\n"))


class _Pipes(asyncio.SubprocessProtocol):
    """Collects stdout (bounded), stderr (tail + sinks) and the exit, and wakes readers.

    stdout is kept as raw bytes and split only when a reader asks for lines, so a chunk
    costs a copy and a few C-level searches whatever its number of lines: an engine that
    floods ``info`` lines cannot hold up the event loop, and with it the reading of other
    engines. A chunk that completes at least one line is stamped with its arrival time
    (``ends``/``times``: the chunk's end offset, its ``time.monotonic()``); a line's arrival
    is the stamp of the chunk holding its newline. Offsets are absolute (bytes since the
    process started), ``buf`` holds those from ``base`` on; ``pos`` is the read position,
    ``line_start`` the start of the unfinished line.
    """

    def __init__(self, owner: EngineProcess) -> None:
        self.owner = owner
        # made by subprocess_exec inside the running loop; kept, because asking for the
        # running loop costs a getpid() system call every time (CPython's fork check)
        self.loop = asyncio.get_running_loop()
        self.buf = bytearray()
        self.base = 0
        self.pos = 0
        self.line_start = 0
        self.scanned = 0  # complete lines before this offset hold no line ``scanned_for``
        self.scanned_for = b""  # starts with (as its first word)
        self.ends: array[int] = array("q")
        self.times: array[float] = array("d")
        self.first_stamp = 0
        self.overflow: str | None = None
        self.stdout_closed = False
        self.exited = False
        self.waiter: asyncio.Future[None] | None = None
        self.want: bytes | None = None  # a waiting reader wants a line with this first word
        #: The newline of the line ``want`` names, when the chunk that brought it found it
        #: (the usual reply: a chunk that begins with the line), so the reader need not search.
        self.found: int | None = None
        #: The line ``want`` names (its raw bytes) and its arrival, when it came as a chunk
        #: of its own with nothing else unread (an instant reply): handed over whole.
        self.ready: tuple[bytes, float] | None = None
        self.deadline = math.inf  # the waiting reader's (monotonic)
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = math.inf
        self.exit_event = asyncio.Event()
        self.err_closed = asyncio.Event()  # stderr at EOF: its tail is complete
        self.err_partial = bytearray()
        self.err_tail = bytearray()

    # -- events from the transport (stderr and the exit; stdout is read by the owner) ---
    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self._stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 2:
            self.err_closed.set()
            if self.err_partial:
                self._err_line(bytes(self.err_partial))
                self.err_partial.clear()

    def process_exited(self) -> None:
        self.exited = True
        self.exit_event.set()
        self.wake()
        self.owner._on_exit()

    def stdout_eof(self) -> None:
        """The engine's stdout is closed: its unfinished last line counts as a line."""
        if self.overflow is None and self.base + len(self.buf) > self.line_start:
            self.on_stdout(b"\n", time.monotonic())
        self.stdout_closed = True
        self.wake()

    # -- helpers ---------------------------------------------------------------------
    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def arm(self, deadline: float) -> None:
        """Wake the reader at ``deadline``. One timer serves many waits: it is moved only
        to an earlier time; fired early, it re-arms itself for the reader's deadline then,
        so a game's waits (whose deadlines only grow) make a timer every few seconds, not
        one per ply."""
        self.deadline = deadline
        if self.timer is not None and self.timer_at <= deadline:
            return
        if self.timer is not None:
            self.timer.cancel()
        self.timer_at = deadline
        delay = max(0.0, deadline - time.monotonic())
        self.timer = self.loop.call_later(delay, self._timer_fired)

    def wait_for(self, word: bytes | None, waiter: asyncio.Future[None]) -> asyncio.Future[None]:
        """Make ``waiter`` the reader's: resolved by a line whose first word is ``word``
        (any line: None), or by the end of output, the exit, an overflow or the timer.
        (A method, not assignments in the reader: type checkers would take ``found``,
        set to None here, for None still after the wait, and the compiled build trusts
        them.)"""
        self.waiter, self.want, self.found = waiter, word, None
        return waiter

    def _timer_fired(self) -> None:
        self.timer, self.timer_at = None, math.inf
        if self.waiter is None:
            return
        if time.monotonic() >= self.deadline:
            self.wake()
        else:
            self.arm(self.deadline)

    def _fail(self, message: str) -> None:
        if self.overflow is None:
            self.overflow = message
        del self.buf[self.line_start - self.base :]  # the unfinished line is never read
        self.wake()

    def on_stdout(self, data: bytes, now: float) -> None:
        want, waiter = self.want, self.waiter
        if (want is not None and self.pos == self.base + len(self.buf) and data.startswith(want)
                and data.find(b"\n") == len(data) - 1 and data[len(want)] in _BLANKS
                and len(data) <= LINE_LIMIT and self.overflow is None
                and self.owner.traffic is None and waiter is not None and not waiter.done()):
            self._hand_over(waiter, data, now)
            return
        if self.overflow is not None:
            return
        buf, size = self.buf, len(data)
        start = self.base + len(buf)
        buf += data
        last = data.rfind(b"\n")
        if last < 0:
            if start + size - self.line_start > LINE_LIMIT:
                self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
            return
        done_from = self.line_start
        if size > LINE_LIMIT or start + last - done_from > LINE_LIMIT:  # else no line can be
            first = data.find(b"\n")
            if (start + first - done_from > LINE_LIMIT or size - last - 1 > LINE_LIMIT
                    or (size > LINE_LIMIT and _longest_line(data) > LINE_LIMIT)):
                self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
                return
        end = self.line_start = start + last + 1
        self.ends.append(start + size)
        self.times.append(now)
        if self.owner.traffic is not None:
            self._log(done_from, end)
        # the memory held for unread output: its bytes plus the stamps' slots
        if start + size - self.pos + STAMP_COST * (len(self.ends) - self.first_stamp) > QUEUE_LIMIT:
            self._fail(f"left more than {QUEUE_LIMIT} bytes of output unread")
            return
        if waiter is None or waiter.done():
            return
        if want is not None:
            base = self.base
            at = buf.find(want, done_from - base)
            if at < 0:
                return
            if at == done_from - base and buf[at + len(want)] in _BLANKS:
                # the usual reply: the first line this chunk completes is the one asked for
                # (the reader searched every line before it, and has not been woken since)
                self.found = base + buf.find(b"\n", at)
        waiter.set_result(None)

    def _hand_over(self, waiter: asyncio.Future[None], data: bytes, now: float) -> None:
        """The reply of an instant engine: the awaited line in a chunk of its own, with
        nothing unread before it (and no traffic log to feed). It is given to the waiting
        reader as it is, without the buffer, the arrival stamps or a search: the chunk is
        read the moment it comes, so the offsets simply move past it."""
        self.buf.clear()  # everything in it was read
        self.base = self.pos = self.line_start = self.pos + len(data)
        self.ready = data, now
        waiter.set_result(None)

    def take_ready(self, keep: int) -> tuple[list[str], float]:
        """:meth:`take` for the line :meth:`_hand_over` gave."""
        assert self.ready is not None
        data, now = self.ready
        self.ready = None
        return ([_line_text(data[:-1])] if keep else []), now

    def give_back(self) -> None:
        """Put the line :meth:`_hand_over` gave back before the bytes read since, unread,
        with its stamp: its reader was cancelled before it took it (an abort, or a wait
        running out in the same turn of the loop), and the next reader must see it."""
        assert self.ready is not None
        data, now = self.ready
        self.ready = None
        self.buf[0:0] = data
        self.base -= len(data)
        self.pos -= len(data)
        ends, i = self.ends, self.first_stamp
        while i < len(ends) and ends[i] <= self.pos:  # (stamps of chunks read already)
            i += 1
        ends.insert(i, self.pos + len(data))
        self.times.insert(i, now)
        self.first_stamp = i

    def _log(self, begin: int, end: int) -> None:
        """Hand the lines between offsets ``begin`` and ``end`` to the traffic hook (in one
        call when it takes blocks of lines)."""
        owner = self.owner
        text = self.buf[begin - self.base : end - self.base - 1].decode("utf-8", "replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n").removesuffix("\r")
        wall = time.time()
        if owner.traffic_block is not None:
            owner.traffic_block(wall, "<", owner.name, text)
        elif owner.traffic is not None:
            for line in text.split("\n"):
                owner.traffic(wall, "<", owner.name, line)

    # -- reading (lazily) ------------------------------------------------------------
    def stamp(self, newline: int) -> float:
        """Arrival time of the line whose newline is at absolute offset ``newline``, the
        last line to be read (the stamps of chunks read to their end are passed over)."""
        ends, i = self.ends, self.first_stamp
        while ends[i] <= newline:
            i += 1
        self.first_stamp = i + 1 if ends[i] == newline + 1 else i
        return self.times[i]

    def find_line(self, word: bytes | None) -> int | None:
        """Absolute offset of the newline ending the first complete unread line (whose
        first word is ``word``, when given); None if there is none yet."""
        buf, base, pos = self.buf, self.base, self.pos
        if pos >= self.line_start:
            return None  # no complete line unread (the usual state when a wait begins)
        if word is None:
            nl = buf.find(b"\n", pos - base, self.line_start - base)
            return None if nl < 0 else base + nl
        i = (max(pos, self.scanned) if word == self.scanned_for else pos) - base
        end = self.line_start - base
        while True:
            j = buf.find(word, i, end)
            if j < 0:
                self.scanned, self.scanned_for = self.line_start, word
                return None
            begin = max(buf.rfind(b"\n", pos - base, j) + 1, pos - base)
            nl = buf.find(b"\n", j)
            # the usual answer: the word opens its line and a blank or the newline ends it
            if (j == begin and buf[j + len(word)] in _BLANKS) or buf[begin:nl].split()[:1] == [word]:
                return base + nl
            i = nl + 1

    def take(self, newline: int, keep: int) -> tuple[list[str], float]:
        """Consume the unread lines through the one ending at ``newline``; the last
        ``keep`` of them, decoded, and the arrival time of the last."""
        buf, lo = self.buf, self.pos - self.base
        end = start = newline - self.base
        if keep and buf.rfind(b"\n", lo, end) < 0:  # one line (an instant reply): no loop
            text = _line_text(buf[lo:end])
            at = self.stamp(newline)
            self.pos = newline + 1
            if self.first_stamp > COMPACT_STAMPS or end > COMPACT_BYTES:
                self._compact()
            return [text], at
        for _ in range(keep):
            start = max(buf.rfind(b"\n", lo, end) + 1, lo)
            if start <= lo:
                break
            end = start - 1
        text = buf[start : newline - self.base].decode("utf-8", "replace")
        lines = [line.removesuffix("\r") for line in text.split("\n")] if keep else []
        at = self.stamp(newline)
        self.pos = newline + 1
        if self.first_stamp > COMPACT_STAMPS or self.pos - self.base > COMPACT_BYTES:
            self._compact()
        return lines, at

    def drop(self) -> None:
        """Forget the complete lines not read yet (before every ``go``: usually none)."""
        if self.pos != self.line_start:
            self.pos = self.line_start
            self._compact()

    def _compact(self) -> None:
        """Free what is read: the stamps and bytes before the read position, once there
        are more than COMPACT_STAMPS / COMPACT_BYTES of them (the readers call this only
        then; until it runs, a chunk read to its end may still count as one unread stamp)."""
        ends, i = self.ends, self.first_stamp
        while i < len(ends) and ends[i] <= self.pos:
            i += 1
        if i > COMPACT_STAMPS and 2 * i > len(ends):
            del ends[:i]
            del self.times[:i]
            i = 0
        self.first_stamp = i
        rel = self.pos - self.base
        if rel > COMPACT_BYTES and 2 * rel > len(self.buf):
            del self.buf[:rel]
            self.base = self.pos

    def _stderr(self, data: bytes) -> None:
        self.err_tail += data
        if len(self.err_tail) > STDERR_TAIL:
            del self.err_tail[: len(self.err_tail) - STDERR_TAIL]
        sink = self.owner._stderr_file
        if sink is not None:
            with contextlib.suppress(OSError):
                sink.write(data)
        if self.owner.traffic is None:
            return
        self.err_partial += data
        if b"\n" in self.err_partial:
            parts = self.err_partial.split(b"\n")
            self.err_partial = bytearray(parts.pop())
            for raw in parts:
                self._err_line(raw)
        if len(self.err_partial) > 4096:
            self._err_line(bytes(self.err_partial))
            self.err_partial.clear()

    def _err_line(self, raw: bytes | bytearray) -> None:
        hook = self.owner.traffic
        if hook is not None:
            text = raw[:4096].decode("utf-8", "replace").rstrip("\r")
            hook(time.time(), "!", self.owner.name, text)


def _line_text(raw: bytes | bytearray) -> str:
    """One line as read: decoded (a bad byte replaced), a CR before its newline dropped."""
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def _unwatch(remove: Callable[[int], object], fd: int) -> None:
    """``loop.remove_reader(fd)`` / ``remove_writer(fd)``, its answer ignored. Why not a
    plain call: uvloop's return None where asyncio's (and the type stubs) return a bool,
    and the compiled build (``GUTI_COMPILE=1``) checks a call's result against its stub."""
    remove(fd)


class ProcessSpec(Protocol):
    """What starting a process needs (an ``EngineConfig`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def argv(self) -> list[str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def stderr_path(self) -> str | None: ...


class EngineProcess:
    """A running engine program. Create, then :meth:`start`; end with :meth:`quit`."""

    def __init__(self, spec: ProcessSpec, traffic: TrafficHook | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.traffic = traffic
        #: The hook's bulk form (``hook.block(wall, direction, name, text)``, ``text`` the
        #: lines of one chunk joined by newlines), used when it has one: far cheaper per line.
        self.traffic_block: TrafficBlockHook | None = getattr(traffic, "block", None)
        self.pid: int | None = None
        #: Members of the group that guti itself had to kill after the leader exited with
        #: its pipes still held open: evidence that the engine left processes behind.
        self.orphans_killed: list[int] = []
        self._transport: asyncio.SubprocessTransport | None = None
        self._pipes: _Pipes | None = None
        self._stderr_file: BinaryIO | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # Our ends of the engine's stdin and stdout (-1: none), read and written with plain
        # os.read/os.write from the event loop's reader and writer callbacks: a ply then
        # costs one call into Python each way instead of a pipe transport's layers.
        self._in_fd = -1
        self._out_fd = -1
        self._out_pending = bytearray()  # written to stdin when the pipe has room, in order

    # -- life cycle ------------------------------------------------------------------
    async def start(self) -> None:
        """Exec the engine in its own process group; :class:`EngineStartError` if impossible."""
        enable_subreaper()
        cfg = self.spec
        if cfg.stderr_path:
            try:
                self._stderr_file = open(cfg.stderr_path, "ab", buffering=0)  # noqa: SIM115
            except OSError as exc:
                raise EngineStartError(
                    f"engine {self.name}: cannot open stderr log {cfg.stderr_path}: {exc.strerror}"
                ) from None
        loop = self._loop = asyncio.get_running_loop()
        referee = os.getpid()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            transport, pipes = await loop.subprocess_exec(
                lambda: _Pipes(self),
                *cfg.argv,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=asyncio.subprocess.PIPE,
                cwd=cfg.cwd,
                start_new_session=True,
                preexec_fn=lambda: lifeline.die_with_parent(referee),  # killed with guti
            )
        except OSError as exc:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            self._close_stderr()
            self._closed = True
            why = start_failure_reason(exc, cfg.argv[0], cfg.cwd)
            raise EngineStartError(
                f"engine {self.name}: cannot start {shlex.join(cfg.argv)}: {why}"
            ) from None
        finally:
            os.close(stdin_r)  # the engine has its own copies of these two ends
            os.close(stdout_w)
        self._transport = transport
        self._pipes = pipes
        self._in_fd, self._out_fd = stdin_w, stdout_r
        os.set_blocking(stdin_w, False)
        os.set_blocking(stdout_r, False)
        loop.add_reader(stdout_r, self._readable)
        self.pid = transport.get_pid()
        lifeline.watch(self.pid)  # its whole group is killed if guti dies

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), None while running."""
        if self._transport is None:
            return None
        return self._transport.get_returncode()

    @property
    def is_alive(self) -> bool:
        p = self._pipes
        return p is not None and not p.exited and not p.stdout_closed and not self._closed

    def stderr_tail(self) -> str:
        """The most telling line of the engine's stderr, for messages (may be empty):
        see :func:`~guti.referee.process.stderr_summary.telling_line`."""
        return telling_line(self.stderr_lines())

    def stderr_lines(self) -> list[str]:
        """The last lines the engine wrote to stderr (at most 20, of its last 4 KiB)."""
        if self._pipes is None:
            return []
        return tail_lines(self._pipes.err_tail.decode("utf-8", "replace"))

    def _on_exit(self) -> None:
        # A grandchild may still hold our stdout; then EOF would never come. Give
        # the pipe a moment to drain, then kill whatever is left of the group.
        loop = asyncio.get_running_loop()
        loop.call_later(ORPHAN_PIPE_GRACE, self._kill_orphans_if_pipe_open)

    def _kill_orphans_if_pipe_open(self) -> None:
        p = self._pipes
        if p is not None and not p.stdout_closed and self.pid is not None:
            self.orphans_killed = live_members(self.pid)
            signal_group(self.pid, signal.SIGKILL)

    # -- raw I/O ---------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write one line (newline added). Never blocks; a dead pipe shows up on reading."""
        self.send_lines((line,))

    def send_lines(self, lines: Sequence[str]) -> float:
        """Write ``lines`` in one write; the ``time.monotonic()`` just after it (a move's
        time runs from there). Never blocks; a dead pipe shows up on reading."""
        self._write_bytes(("\n".join(lines) + "\n").encode() if lines else b"")
        sent_at = time.monotonic()
        if self.traffic is not None:
            now = time.time()
            for line in lines:
                self.traffic(now, ">", self.name, line)
        return sent_at

    def drop_pending(self) -> None:
        """Forget lines received but not read yet (they cannot answer what comes next)."""
        p = self._pipes
        if p is not None:
            p.drop()

    def send_raw(self, data: bytes) -> None:
        """Write bytes exactly as given, even ones that are not UTF-8 (``guti check``
        sends invalid byte sequences on purpose; a game never does)."""
        self._write_bytes(data)
        if self.traffic is not None:
            self.traffic(time.time(), ">", self.name, data.decode("utf-8", "backslashreplace"))

    def _write_bytes(self, data: bytes) -> None:
        """Write at once what the pipe takes; keep the rest, in order, for the event loop's
        writer to send when the pipe has room. Never blocks; a dead pipe shows up on
        reading."""
        if self._in_fd < 0:
            return
        if self._out_pending:  # earlier bytes still wait: these go after them
            self._out_pending += data
            return
        try:  # not contextlib.suppress: this runs every ply
            done = os.write(self._in_fd, data)
        except BlockingIOError:
            done = 0
        except OSError:  # the engine closed its stdin (exited): reading will say so
            return
        if done < len(data):
            self._out_pending += data[done:]
            if self._loop is not None:
                self._loop.add_writer(self._in_fd, self._flush)

    def _flush(self) -> None:
        """Write what waits for room in the pipe (called when it has some)."""
        try:
            done = os.write(self._in_fd, self._out_pending)
        except BlockingIOError:
            return
        except OSError:
            done = len(self._out_pending)  # a dead pipe: nothing more can be written
        del self._out_pending[:done]
        if not self._out_pending and self._loop is not None:
            _unwatch(self._loop.remove_writer, self._in_fd)

    def _readable(self) -> None:
        """The event loop's reader of stdout."""
        try:
            data = os.read(self._out_fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        p = self._pipes
        assert p is not None
        if data:
            p.on_stdout(data, time.monotonic())
        else:
            self._stop_reader()
            p.stdout_eof()

    def _stop_reader(self) -> None:
        if self._loop is not None and self._out_fd >= 0:
            _unwatch(self._loop.remove_reader, self._out_fd)

    async def read_line(self, timeout: float) -> str:
        """The next line from the engine within ``timeout`` seconds."""
        line, _ = await self.read_stamped(time.monotonic() + timeout)
        return line

    async def read_stamped(self, deadline: float) -> tuple[str, float]:
        """The next line and its ``time.monotonic()`` arrival, by ``deadline`` (monotonic)."""
        lines, at = await self._read(None, deadline, 1)
        return lines[-1], at

    def read_through(
        self, word: str, deadline: float, keep: int
    ) -> Coroutine[None, None, tuple[list[str], float]]:
        """The lines up to and including the first whose first word is ``word`` (blanks
        around words ignored), by ``deadline``: the last ``keep`` of them and the arrival
        time of that line. Lines are searched in the raw bytes and only the kept ones
        decoded. On timeout the EngineTimeout's ``lines`` are the last ``keep`` seen.

        Awaited like a coroutine function (it returns :meth:`_read`'s coroutine: one
        coroutine less per ply)."""
        return self._read(word.encode(), deadline, keep)

    async def _read(
        self, word: bytes | None, deadline: float, keep: int
    ) -> tuple[list[str], float]:
        """One wait with one timer: woken by a line that may be the one (or EOF, exit,
        overflow), not by every chunk."""
        p = self._pipes
        if p is None:
            raise EngineDisconnected(f"engine {self.name} is not running")
        newline: int | None = p.find_line(word)
        if newline is not None:
            return p.take(newline, keep)
        loop = p.loop
        try:
            while True:
                if p.overflow is not None:
                    raise EngineProtocolError(f"engine {self.name} {p.overflow}")
                if p.stdout_closed:
                    raise EngineDisconnected(await self._disconnect_text())
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = p.find_line(None) is not None
                    lines = p.take(p.line_start - 1, keep)[0] if seen else []
                    raise EngineTimeout(f"engine {self.name} did not answer in time", lines=lines)
                p.arm(deadline)
                await p.wait_for(word, loop.create_future())
                if p.ready is not None:
                    return p.take_ready(keep)
                newline = p.found
                if newline is None:
                    newline = p.find_line(word)
                if newline is not None:
                    return p.take(newline, keep)
        finally:
            if p.ready is not None:
                p.give_back()
            p.waiter = p.want = p.found = None

    async def _disconnect_text(self) -> str:
        p = self._pipes
        if p is not None and not p.exited:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(p.exit_event.wait(), 0.5)
        if p is not None and p.exited:  # the exit may be seen before the last stderr bytes
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(p.err_closed.wait(), 0.2)
        rc = self.returncode
        if rc is None:
            text = f"engine {self.name} closed its output (process still running)"
        else:
            text = f"engine {self.name} exited ({describe_exit(rc)})"
        tail = self.stderr_tail()
        return f"{text}; stderr: {tail}" if tail else text

    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None:
        """End the engine for good: ``quit``, wait ``grace`` s, SIGTERM the group, wait
        ``term_grace`` s, SIGKILL the group; then kill and reap anything left in the group.
        Safe to call more than once and on an engine that never started."""
        if self._closed:
            return
        self._closed = True
        p = self._pipes
        pgid = self.pid
        try:
            if p is None or pgid is None:
                return
            if not p.exited:
                self.send("quit")
                self._close_stdin()  # end of input: an engine that missed quit sees EOF
                if not await self._wait_exit(grace):
                    signal_group(pgid, signal.SIGTERM)
                    if not await self._wait_exit(term_grace):
                        signal_group(pgid, signal.SIGKILL)
                        await self._wait_exit(5.0)
            await self._clean_group(pgid)
            lifeline.release(pgid)
        finally:
            if p is not None and p.timer is not None:
                p.timer.cancel()
            if self._transport is not None:
                self._transport.close()
            self._close_stdin()
            self._close_stdout()
            self._close_stderr()

    def _close_stdin(self) -> None:
        if self._in_fd < 0:
            return
        if self._out_pending:
            with contextlib.suppress(OSError):
                os.write(self._in_fd, self._out_pending)  # what fits; the rest is lost
            self._out_pending.clear()
            if self._loop is not None:
                _unwatch(self._loop.remove_writer, self._in_fd)
        os.close(self._in_fd)
        self._in_fd = -1

    def _close_stdout(self) -> None:
        if self._out_fd < 0:
            return
        self._stop_reader()
        os.close(self._out_fd)
        self._out_fd = -1

    async def _wait_exit(self, timeout: float) -> bool:
        p = self._pipes
        assert p is not None
        if p.exited:
            return True
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(p.exit_event.wait(), timeout)
        return p.exited

    async def _clean_group(self, pgid: int) -> None:
        """The leader is gone: TERM, then KILL, whatever is left in its group, and reap it."""
        if live_members(pgid):
            signal_group(pgid, signal.SIGTERM)
            for _ in range(10):
                await asyncio.sleep(0.02)
                if not live_members(pgid):
                    break
            else:
                signal_group(pgid, signal.SIGKILL)
                for _ in range(100):
                    if not live_members(pgid):
                        break
                    await asyncio.sleep(0.02)
        # Orphans re-parented to us (subreaper) become our zombies; reap them,
        # retrying briefly for those still being re-parented.
        for _ in range(10):
            reap_orphans(pgid, pgid)
            if not group_members(pgid):
                break
            await asyncio.sleep(0.02)

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (for emergencies such as Ctrl-C); no waiting."""
        if self.pid is not None and not self._closed:
            signal_group(self.pid, signal.SIGKILL)

    def _close_stderr(self) -> None:
        if self._stderr_file is not None:
            with contextlib.suppress(OSError):
                self._stderr_file.close()
            self._stderr_file = None
