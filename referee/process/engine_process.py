"""One engine program run through pipes, trusting nothing it does (no protocol here).

:class:`EngineProcess` starts an engine (an argv list, never a shell) as the
leader of its own process group, with stdin/stdout pipes. stderr is copied
to the engine log (``stderr_path`` of its spec) and to the traffic hook,
and kept as a short tail for error messages; it is never parsed. What the
lines mean is the business of :mod:`referee.ugi.client`, which sees this
class only through :class:`referee.ugi.transport.Transport`.

Every wait has a hard bound and ends in one of four exceptions, each
carrying the :class:`~referee.game.reasons.Reason` a game runner needs:

- :class:`EngineStartError` (``start failure``): cannot exec (the UGI client
  raises it too, for a failed handshake);
- :class:`EngineDisconnected` (``disconnect``): stdout closed / process
  exited; the message includes the exit code or signal;
- :class:`EngineTimeout` (``stalled``): no line within the bound;
- :class:`EngineProtocolError` (``protocol error``): a line over 1 MiB, or
  more than 16 MiB of unread output. Memory stays bounded either way.

Reading uses a small asyncio ``SubprocessProtocol`` that splits lines as
chunks arrive and stamps each with the monotonic arrival time, so move
times are measured from the write to the line received, free of
event-loop delays on our side.

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
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import BinaryIO, Protocol

from referee.game.reasons import Reason
from referee.process import lifeline
from referee.process.group import (
    enable_subreaper,
    group_members,
    live_members,
    reap_orphans,
    signal_group,
)
from referee.process.stderr_summary import tail_lines, telling_line

#: Longest accepted line from an engine (bytes, without the newline).
LINE_LIMIT = 1 << 20
#: Most output that may wait unread before the engine is called faulty.
QUEUE_LIMIT = 16 << 20
#: Bytes of stderr kept for error messages and a crashed engine's record.
STDERR_TAIL = 4096
#: After the engine process exits, how long its stdout may stay open (held by
#: a grandchild) before the group is killed so that EOF arrives.
ORPHAN_PIPE_GRACE = 0.25

#: ``hook(wall_time, direction, engine_name, line)``; direction ``">"`` to the
#: engine, ``"<"`` from it, ``"!"`` a line of its stderr (logged, never parsed).
TrafficHook = Callable[[float, str, str, str], None]


class EngineError(Exception):
    """Base of engine faults; ``reason`` is the verdict, ``str(exc)`` the one-line detail."""

    reason: Reason = Reason.PROTOCOL_ERROR

    def __init__(self, message: str, reason: Reason | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class EngineStartError(EngineError):
    reason = Reason.START_FAILURE


class EngineDisconnected(EngineError):
    reason = Reason.DISCONNECT


class EngineTimeout(EngineError):
    """No line in time. ``lines``: what a read-until saw before the bound (for messages);
    ``elapsed_ms``: how long a ``go`` had been waiting, when that is what timed out."""

    reason = Reason.STALLED

    def __init__(
        self,
        message: str,
        reason: Reason | None = None,
        *,
        lines: list[str] | None = None,
        elapsed_ms: float | None = None,
    ) -> None:
        super().__init__(message, reason)
        self.lines: list[str] = lines or []
        self.elapsed_ms = elapsed_ms


class EngineProtocolError(EngineError):
    reason = Reason.PROTOCOL_ERROR


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


class _Pipes(asyncio.SubprocessProtocol):
    """Collects stdout lines (bounded), stderr (tail + sinks) and the exit, and wakes readers."""

    def __init__(self, owner: EngineProcess) -> None:
        self.owner = owner
        self.lines: deque[tuple[str, float]] = deque()
        self.queued = 0
        self.partial = bytearray()
        self.overflow: str | None = None
        self.stdout_closed = False
        self.exited = False
        self.waiter: asyncio.Future[None] | None = None
        self.exit_event = asyncio.Event()
        self.err_closed = asyncio.Event()  # stderr at EOF: its tail is complete
        self.err_partial = bytearray()
        self.err_tail = bytearray()

    # -- events from the transport -------------------------------------------------
    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._stdout(data, time.monotonic())
        elif fd == 2:
            self._stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            if self.partial and not self.overflow:
                self._push(bytes(self.partial), time.monotonic())
            self.partial.clear()
            self.stdout_closed = True
            self._wake()
        elif fd == 2:
            self.err_closed.set()
            if self.err_partial:
                self._err_line(bytes(self.err_partial))
                self.err_partial.clear()

    def process_exited(self) -> None:
        self.exited = True
        self.exit_event.set()
        self._wake()
        self.owner._on_exit()

    # -- helpers ---------------------------------------------------------------------
    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, message: str) -> None:
        if self.overflow is None:
            self.overflow = message
        self.partial = bytearray()
        self._wake()

    def _push(self, raw: bytes | bytearray, now: float) -> None:
        line = raw.decode("utf-8", "replace")
        if line.endswith("\r"):
            line = line[:-1]
        hook = self.owner.traffic
        if hook is not None:
            hook(time.time(), "<", self.owner.name, line)
        self.lines.append((line, now))
        self.queued += len(raw) + 1

    def _stdout(self, data: bytes, now: float) -> None:
        if self.overflow is not None:
            return
        if b"\n" not in data:
            self.partial += data
            if len(self.partial) > LINE_LIMIT:
                self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
            return
        self.partial += data
        parts = self.partial.split(b"\n")
        self.partial = bytearray(parts.pop())
        for raw in parts:
            if len(raw) > LINE_LIMIT:
                self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
                return
            self._push(raw, now)
        if len(self.partial) > LINE_LIMIT:
            self._fail(f"sent a line longer than {LINE_LIMIT} bytes")
        elif self.queued > QUEUE_LIMIT:
            self._fail(f"left more than {QUEUE_LIMIT} bytes of output unread")
        self._wake()

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
        self.pid: int | None = None
        #: Members of the group that guti itself had to kill after the leader exited with
        #: its pipes still held open: evidence that the engine left processes behind.
        self.orphans_killed: list[int] = []
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._pipes: _Pipes | None = None
        self._stderr_file: BinaryIO | None = None
        self._closed = False

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
        loop = asyncio.get_running_loop()
        referee = os.getpid()
        try:
            transport, pipes = await loop.subprocess_exec(
                lambda: _Pipes(self),
                *cfg.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cfg.cwd,
                start_new_session=True,
                preexec_fn=lambda: lifeline.die_with_parent(referee),  # killed with guti
            )
        except OSError as exc:
            self._close_stderr()
            self._closed = True
            why = exc.strerror or str(exc)
            raise EngineStartError(
                f"engine {self.name}: cannot start {shlex.join(cfg.argv)}: {why}"
            ) from None
        self._transport = transport
        self._pipes = pipes
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        self._stdin = stdin
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
        see :func:`~referee.process.stderr_summary.telling_line`."""
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
        self._write("".join(line + "\n" for line in lines))
        sent_at = time.monotonic()
        if self.traffic is not None:
            now = time.time()
            for line in lines:
                self.traffic(now, ">", self.name, line)
        return sent_at

    def drop_pending(self) -> None:
        """Forget lines received but not read yet (they cannot answer what comes next)."""
        p = self._pipes
        if p is not None and p.lines:
            p.lines.clear()
            p.queued = 0

    def send_raw(self, data: bytes) -> None:
        """Write bytes exactly as given, even ones that are not UTF-8 (``guti check``
        sends invalid byte sequences on purpose; a game never does)."""
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(data)
        if self.traffic is not None:
            self.traffic(time.time(), ">", self.name, data.decode("utf-8", "backslashreplace"))

    def _write(self, text: str) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(text.encode())

    async def read_line(self, timeout: float) -> str:
        """The next line from the engine within ``timeout`` seconds."""
        line, _ = await self.read_stamped(time.monotonic() + timeout)
        return line

    async def read_stamped(self, deadline: float) -> tuple[str, float]:
        """The next line and its ``time.monotonic()`` arrival, by ``deadline`` (monotonic)."""
        p = self._pipes
        if p is None:
            raise EngineDisconnected(f"engine {self.name} is not running")
        while True:
            if p.lines:
                item = p.lines.popleft()
                p.queued -= len(item[0]) + 1
                return item
            if p.overflow is not None:
                raise EngineProtocolError(f"engine {self.name} {p.overflow}")
            if p.stdout_closed:
                raise EngineDisconnected(await self._disconnect_text())
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EngineTimeout(f"engine {self.name} did not answer in time")
            fut = asyncio.get_running_loop().create_future()
            p.waiter = fut
            try:
                await asyncio.wait_for(fut, remaining)
            except TimeoutError:
                pass
            finally:
                p.waiter = None

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
                with contextlib.suppress(OSError, RuntimeError):
                    if self._stdin is not None and self._stdin.can_write_eof():
                        self._stdin.write_eof()
                if not await self._wait_exit(grace):
                    signal_group(pgid, signal.SIGTERM)
                    if not await self._wait_exit(term_grace):
                        signal_group(pgid, signal.SIGKILL)
                        await self._wait_exit(5.0)
            await self._clean_group(pgid)
            lifeline.release(pgid)
        finally:
            if self._transport is not None:
                self._transport.close()
            self._close_stderr()

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
