"""One engine program run through pipes, trusting nothing it does (no protocol here).

:class:`EngineProcess` is the transport the UGI client (:mod:`guti.referee.ugi.client`)
speaks through, which sees it only as a :class:`guti.referee.ugi.transport.Transport`:
lines out, lines in with their arrival times. It starts the engine as a
:class:`~guti.referee.process.process_handle.ProcessHandle` (its own process group,
killed with guti) and owns the engine's three pipes. One I/O model: every pipe is a
non-blocking descriptor watched by the event loop, read with one ``os.read`` when it
has data and written with ``os.write`` (what does not fit waits for room, in order);
the exit comes the same way, from a pidfd (see the handle).

- stdout goes into a :class:`~guti.referee.process.line_reader.LineReader`, bounded in
  bytes and stamped with each chunk's arrival; a waiting reader is woken only by a chunk
  that may hold the line it waits for, so a flood costs a copy per chunk, not Python work
  per line, and cannot delay the reading of other engines. A move's time runs from the
  write of ``go`` to the arrival of the chunk that completed its ``bestmove`` line.
- stderr is copied to the engine's log (``stderr_path`` of its spec) and to the traffic
  hook, and kept as a short tail for error messages
  (:class:`~guti.referee.process.stderr_summary.StderrTail`); it is never parsed.

Every wait has a hard bound and ends in one of four exceptions, each carrying its
:class:`~guti.referee.process.errors.ErrorKind` (the game maps kinds to its reasons):

- :class:`EngineStartError` (``start failure``): cannot exec (the UGI client raises it
  too, for a failed handshake);
- :class:`EngineDisconnected` (``disconnect``): stdout closed / process exited; the
  message includes the exit code or signal;
- :class:`EngineTimeout` (``stalled``): no line within the bound;
- :class:`EngineProtocolError` (``protocol error``): a line over 1 MiB, or more than
  16 MiB of unread output (see the line reader).

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
import os
import shlex
import time
from collections.abc import Callable, Sequence
from typing import BinaryIO

from guti.referee.process.deadline_timer import DeadlineTimer
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineProtocolError,
    EngineStartError,
    EngineTimeout,
)
from guti.referee.process.line_reader import LINE_LIMIT, QUEUE_LIMIT, LineReader
from guti.referee.process.pipe_writer import PipeWriter
from guti.referee.process.process_handle import ProcessHandle, ProcessSpec, describe_exit
from guti.referee.process.stderr_summary import StderrTail, telling_line

__all__ = ["LINE_LIMIT", "QUEUE_LIMIT", "EngineProcess", "ProcessSpec", "TrafficHook",
           "describe_exit"]

#: After the engine process exits, how long its stdout may stay open (held by
#: a grandchild) before the group is killed so that EOF arrives.
ORPHAN_PIPE_GRACE = 0.25
#: Most bytes taken from a pipe by one read: a pipe's default capacity.
READ_SIZE = 1 << 16

#: ``hook(wall_time, direction, engine_name, line)``; direction ``">"`` to the
#: engine, ``"<"`` from it, ``"!"`` a line of its stderr (logged, never parsed).
TrafficHook = Callable[[float, str, str, str], None]
#: ``block(wall_time, direction, engine_name, text)``: several lines at once, joined by "\n".
TrafficBlockHook = Callable[[float, str, str, str], None]


class EngineProcess:
    """A running engine program. Create, then :meth:`start`; end with :meth:`quit`."""

    def __init__(self, spec: ProcessSpec, traffic: TrafficHook | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.traffic = traffic
        #: The hook's bulk form (``hook.block(wall, direction, name, text)``, ``text`` the
        #: lines of one chunk joined by newlines), used when it has one: one call per chunk
        #: of a flood instead of one per line.
        self.traffic_block: TrafficBlockHook | None = getattr(traffic, "block", None)
        self.pid: int | None = None
        self._handle: ProcessHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lines = LineReader()
        self._stderr = StderrTail(self.name, None, traffic)
        self._stderr_file: BinaryIO | None = None
        self._stderr_closed = asyncio.Event()
        self._closed = False
        # our ends of the engine's pipes (None / -1: none)
        self._stdin: PipeWriter | None = None
        self._out_fd = self._err_fd = -1
        #: The reader waiting for a line (and the first word it waits for; None: any).
        self._waiter: asyncio.Future[None] | None = None
        self._want: bytes | None = None
        self._timer: DeadlineTimer | None = None  # made by the first wait

    # -- life cycle ------------------------------------------------------------------
    async def start(self) -> None:
        """Exec the engine in its own process group; :class:`EngineStartError` if impossible."""
        cfg = self.spec
        if cfg.stderr_path:
            try:
                self._stderr_file = open(cfg.stderr_path, "ab", buffering=0)  # noqa: SIM115
            except OSError as exc:
                raise EngineStartError(
                    f"engine {self.name}: cannot open stderr log {cfg.stderr_path}: {exc.strerror}"
                ) from None
            self._stderr.sink = self._stderr_file
        loop = self._loop = asyncio.get_running_loop()
        (stdin_r, stdin_w), (stdout_r, stdout_w), (stderr_r, stderr_w) = (
            os.pipe(), os.pipe(), os.pipe())
        try:
            self._handle = ProcessHandle.spawn(cfg.argv, cfg.cwd, stdin_r, stdout_w, stderr_w)
        except OSError as exc:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            self._close_stderr_file()
            self._closed = True
            why = exc.strerror or str(exc)
            raise EngineStartError(
                f"engine {self.name}: cannot start {shlex.join(cfg.argv)}: {why}"
            ) from None
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):  # the engine has its own copies
                os.close(fd)
        self.pid = self._handle.pid
        self._stdin = PipeWriter(stdin_w, loop)
        self._out_fd, self._err_fd = stdout_r, stderr_r
        for fd in (stdout_r, stderr_r):
            os.set_blocking(fd, False)
        loop.add_reader(stdout_r, self._stdout_readable)
        loop.add_reader(stderr_r, self._stderr_readable)
        self._handle.when_exited(self._on_exit)

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), None while running."""
        return None if self._handle is None else self._handle.returncode

    @property
    def is_alive(self) -> bool:
        h = self._handle
        return (h is not None and not h.exited.is_set() and not self._lines.closed
                and not self._closed)

    @property
    def orphans_killed(self) -> list[int]:
        """Processes of the engine's group still running after it exited with its pipes
        held open, which had to be killed (``guti check`` reports them)."""
        return [] if self._handle is None else self._handle.orphans_killed

    def stderr_tail(self) -> str:
        """The most telling line of the engine's stderr, for messages (may be empty):
        see :func:`~guti.referee.process.stderr_summary.telling_line`."""
        return telling_line(self.stderr_lines())

    def stderr_lines(self) -> list[str]:
        """The last lines the engine wrote to stderr (at most 20, of its last 4 KiB)."""
        return self._stderr.lines()

    def _on_exit(self) -> None:
        """The engine exited. A grandchild may still hold its stdout, and then EOF would
        never come: give the pipe a moment to drain, then kill what is left of the group."""
        self._wake()
        if self._loop is not None:
            self._loop.call_later(ORPHAN_PIPE_GRACE, self._kill_orphans_if_pipe_open)

    def _kill_orphans_if_pipe_open(self) -> None:
        if self._handle is not None and not self._lines.closed and self._out_fd >= 0:
            self._handle.kill_leftovers()

    # -- writing ---------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write one line (newline added). Never blocks; a dead pipe shows up on reading."""
        self.send_lines((line,))

    def send_lines(self, lines: Sequence[str]) -> float:
        """Write ``lines`` in one write; the ``time.monotonic()`` just after it (a move's
        time runs from there). Never blocks; a dead pipe shows up on reading."""
        self._write(("\n".join(lines) + "\n").encode() if lines else b"")
        sent_at = time.monotonic()
        if self.traffic is not None:
            now = time.time()
            for line in lines:
                self.traffic(now, ">", self.name, line)
        return sent_at

    def send_raw(self, data: bytes) -> None:
        """Write bytes exactly as given, even ones that are not UTF-8 (``guti check``
        sends invalid byte sequences on purpose; a game never does)."""
        self._write(data)
        if self.traffic is not None:
            self.traffic(time.time(), ">", self.name, data.decode("utf-8", "backslashreplace"))

    def _write(self, data: bytes) -> None:
        if self._stdin is not None:
            self._stdin.write(data)

    # -- reading (the event loop's side) ---------------------------------------------
    def _stdout_readable(self) -> None:
        try:
            data = os.read(self._out_fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._on_stdout(data, time.monotonic())
            return
        self._unwatch_stdout()
        self._lines.close(time.monotonic())
        self._log_completed()
        self._wake()

    def _on_stdout(self, data: bytes, now: float) -> None:
        """A chunk of stdout arrived at ``now``: keep it, log its lines, and wake the
        waiting reader when the chunk may hold the line it waits for."""
        lines = self._lines
        if not lines.feed(data, now):
            return
        self._log_completed()
        waiter, want = self._waiter, self._want
        if waiter is None or waiter.done():
            return
        if want is None or lines.error is not None or lines.completed_contains(want):
            waiter.set_result(None)

    def _log_completed(self) -> None:
        """Hand the lines the last chunk completed to the traffic hook (in one call when
        it takes blocks of lines)."""
        if self.traffic is None:
            return
        lines = self._lines
        begin, end = lines.completed_from - lines.base, lines.line_start - lines.base
        if end <= begin:
            return
        text = lines.buf[begin : end - 1].decode("utf-8", "replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n").removesuffix("\r")
        wall = time.time()
        if self.traffic_block is not None:
            self.traffic_block(wall, "<", self.name, text)
        else:
            for line in text.split("\n"):
                self.traffic(wall, "<", self.name, line)

    def _stderr_readable(self) -> None:
        try:
            data = os.read(self._err_fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._stderr.feed(data)
            return
        if self._loop is not None:
            self._loop.remove_reader(self._err_fd)
        self._stderr.close()
        self._stderr_closed.set()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _unwatch_stdout(self) -> None:
        if self._loop is not None and self._out_fd >= 0:
            self._loop.remove_reader(self._out_fd)

    # -- reading (the client's side) -------------------------------------------------
    def drop_pending(self) -> None:
        """Forget lines received but not read yet (they cannot answer what comes next)."""
        self._lines.drop()

    async def read_line(self, timeout: float) -> str:
        """The next line from the engine within ``timeout`` seconds."""
        line, _ = await self.read_stamped(time.monotonic() + timeout)
        return line

    async def read_stamped(self, deadline: float) -> tuple[str, float]:
        """The next line and its ``time.monotonic()`` arrival, by ``deadline`` (monotonic)."""
        lines, at = await self._read(None, deadline, 1)
        return lines[-1], at

    async def read_through(self, word: str, deadline: float, keep: int
                           ) -> tuple[list[str], float]:
        """The lines up to and including the first whose first word is ``word`` (blanks
        around words ignored), by ``deadline``: the last ``keep`` of them and the arrival
        time of that line. Lines are searched in the raw bytes and only the kept ones
        decoded. On timeout the EngineTimeout's ``lines`` are the last ``keep`` seen."""
        return await self._read(word.encode(), deadline, keep)

    async def _read(self, word: bytes | None, deadline: float, keep: int
                    ) -> tuple[list[str], float]:
        """Wait for a complete line opening with ``word`` (any line: None) until
        ``deadline``; woken by a chunk that may hold it, the end of output, the exit
        or a fault, not by every chunk."""
        if self._handle is None:
            raise EngineDisconnected(f"engine {self.name} is not running")
        lines, loop = self._lines, asyncio.get_running_loop()
        while True:
            found = lines.take_through(word, keep)
            if found is not None:
                return found
            if lines.error is not None:
                raise EngineProtocolError(f"engine {self.name} {lines.error}")
            if lines.closed:
                raise EngineDisconnected(await self._disconnect_text())
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EngineTimeout(f"engine {self.name} did not answer in time",
                                    lines=lines.take_all(keep))
            if self._timer is None:
                self._timer = DeadlineTimer(loop, self._wake)
            waiter = self._waiter = loop.create_future()
            self._want = word
            self._timer.arm(deadline)
            try:
                await waiter
            finally:
                self._timer.disarm()
                self._waiter = self._want = None

    async def _disconnect_text(self) -> str:
        handle = self._handle
        if handle is not None and await handle.wait_exit(0.5):
            # the exit may be seen before the last stderr bytes
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stderr_closed.wait(), 0.2)
        rc = self.returncode
        if rc is None:
            text = f"engine {self.name} closed its output (process still running)"
        else:
            text = f"engine {self.name} exited ({describe_exit(rc)})"
        tail = self.stderr_tail()
        return f"{text}; stderr: {tail}" if tail else text

    # -- the end ---------------------------------------------------------------------
    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None:
        """End the engine for good: ``quit``, wait ``grace`` s, SIGTERM the group, wait
        ``term_grace`` s, SIGKILL the group; then kill and reap anything left in the group.
        Safe to call more than once and on an engine that never started."""
        if self._closed:
            return
        self._closed = True
        handle = self._handle
        try:
            if handle is None:
                return
            if not handle.exited.is_set():
                self.send("quit")
                self._close_stdin()  # end of input: an engine that missed quit sees EOF
            await handle.stop(grace, term_grace)
        finally:
            if handle is not None:
                handle.abandon()  # (a no-op once it has exited)
            if self._timer is not None:
                self._timer.close()
            self._close_pipes()
            self._close_stderr_file()

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (for emergencies such as Ctrl-C); no waiting."""
        if self._handle is not None and not self._closed:
            self._handle.kill_now()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()
            self._stdin = None

    def _close_pipes(self) -> None:
        self._close_stdin()
        if self._out_fd >= 0:
            self._unwatch_stdout()
            os.close(self._out_fd)
            self._out_fd = -1
        if self._err_fd >= 0:
            if self._loop is not None:
                self._loop.remove_reader(self._err_fd)
            os.close(self._err_fd)
            self._err_fd = -1

    def _close_stderr_file(self) -> None:
        if self._stderr_file is not None:
            with contextlib.suppress(OSError):
                self._stderr_file.close()
            self._stderr_file = None
