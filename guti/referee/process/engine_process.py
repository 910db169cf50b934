"""One engine program run through pipes, trusting nothing it does (no protocol here).

:class:`EngineProcess` is the transport the UGI client (:mod:`guti.referee.ugi.client`)
speaks through, which sees it only as a :class:`guti.referee.ugi.transport.Transport`:
lines out, lines in with their arrival times. It starts the engine as a
:class:`~guti.referee.process.process_handle.ProcessHandle` (its own process group,
killed with guti) and owns the engine's three pipes. One I/O model: every pipe is a
non-blocking descriptor watched by the event loop, read with one ``os.read`` when it
has data and written with ``os.write`` (what does not fit waits for room, in order);
the exit comes the same way, from a pidfd (see the handle).

- stdout is read by a :class:`~guti.referee.process.stdout_watch.StdoutWatch` into a
  :class:`~guti.referee.process.line_reader.LineReader` (bounded in bytes, each chunk
  stamped with its arrival). A waiting reader is woken only by a chunk that may hold
  the line it waits for, so a flood cannot delay the reading of other engines. A move's
  time runs from the write of ``go`` to the arrival of the chunk that completed its
  ``bestmove``.
- stderr is copied to the engine's log (``stderr_path``) and to the traffic hook, and
  its tail kept for messages (:class:`~guti.referee.process.stderr_summary.StderrTail`).

Every wait has a hard bound and ends in one of four exceptions of
:mod:`guti.referee.process.errors`, each with its kind: :class:`EngineStartError` (cannot
exec; the UGI client raises it too for a failed handshake), :class:`EngineDisconnected`
(stdout closed or the process exited; the message gives the exit code or signal),
:class:`EngineTimeout` (no line within the bound), :class:`EngineProtocolError` (a line
over 1 MiB, or more than 16 MiB of unread output: see the line reader).

Typical use::

    proc = EngineProcess(config)  # anything with name, argv, cwd, stderr_path, sandbox
    await proc.start()
    sent_at = proc.send_lines(["isready"])
    line, at = await proc.read_stamped(time.monotonic() + 5)
    await proc.quit()          # input closed, grace, SIGTERM, SIGKILL the group, reap
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from guti.faults import LIMIT_FAULTS
from guti.referee.process.engine_usage import EngineUsage
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineStartError,
    start_failure_reason,
)
from guti.referee.process.group import reap_orphans
from guti.referee.process.line_reader import LINE_LIMIT, QUEUE_LIMIT
from guti.referee.process.pipes import PipeWriter
from guti.referee.process.process_handle import ProcessHandle, ProcessSpec, describe_exit
from guti.referee.process.stderr_summary import StderrTail, telling_line
from guti.referee.process.stdout_watch import StdoutWatch, TrafficHook

if TYPE_CHECKING:
    from guti.referee.process.sandbox import Sandbox

__all__ = ["LINE_LIMIT", "QUEUE_LIMIT", "EngineProcess", "EngineSpec", "ProcessSpec",
           "TrafficHook", "describe_exit"]

#: After the engine process exits, how long its stdout may stay open (held by
#: a grandchild) before the group is killed so that EOF arrives.
ORPHAN_PIPE_GRACE = 0.25


class EngineSpec(ProcessSpec, Protocol):
    """What starting an engine needs: how to run it, and its limits (``limits.*``; None:
    none), which it is started inside (an ``EngineConfig`` is one)."""

    @property
    def sandbox(self) -> Sandbox | None: ...


class EngineProcess:
    """A running engine program. Create, then :meth:`start`; end with :meth:`quit`."""

    def __init__(self, spec: EngineSpec, traffic: TrafficHook | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.traffic = traffic
        self.pid: int | None = None
        self._handle: ProcessHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stdout = StdoutWatch(self.name, traffic)
        self._stderr = StderrTail(self.name, None, traffic)
        self._closed = False
        self._stdin: PipeWriter | None = None  # our end of the engine's stdin
        #: Its limits in place and what it uses.
        self._usage = EngineUsage(spec.sandbox)

    # -- life cycle ------------------------------------------------------------------
    async def start(self) -> None:
        """Exec the engine in its own process group; :class:`EngineStartError` if impossible."""
        cfg = self.spec
        if cfg.stderr_path:
            try:
                self._stderr.sink = open(cfg.stderr_path, "ab", buffering=0)  # noqa: SIM115
            except OSError as exc:
                raise EngineStartError(
                    f"engine {self.name}: cannot open stderr log {cfg.stderr_path}: {exc.strerror}"
                ) from None
        loop = self._loop = asyncio.get_running_loop()
        argv = self._confined_argv(cfg)
        (stdin_r, stdin_w), (stdout_r, stdout_w), (stderr_r, stderr_w) = (
            os.pipe(), os.pipe(), os.pipe())
        try:
            self._handle = await ProcessHandle.spawn(argv, cfg.cwd, stdin_r, stdout_w,
                                                     stderr_w)
        except BaseException as exc:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            self._stderr.stop()
            self._closed = True
            await self._usage.release()
            if not isinstance(exc, OSError) or (exc.filename is None
                                                and exc.errno in LIMIT_FAULTS):
                raise  # guti's own trouble (no descriptor or process left), not the engine's
            why = start_failure_reason(exc, cfg.argv[0], cfg.cwd)
            raise EngineStartError(
                f"engine {self.name}: cannot start {shlex.join(cfg.argv)}: {why}"
            ) from None
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):  # the engine has its own copies
                os.close(fd)
        handle = self._handle
        self.pid = handle.pid
        self._usage.started(handle.pid, lambda: handle.returncode is not None)
        self._stdin = PipeWriter(stdin_w, loop)
        self._stdout.watch(loop, stdout_r)
        self._stderr.watch(loop, stderr_r)
        self._handle.when_exited(self._on_exit)

    def _confined_argv(self, cfg: EngineSpec) -> list[str]:
        """The argv to start: the engine's own, or the one starting it inside its limits."""
        try:
            return self._usage.confined_argv(cfg.argv, cfg.cwd)
        except OSError as exc:
            self._stderr.stop()
            self._closed = True
            where = f"{exc.filename}: " if exc.filename else ""
            raise EngineStartError(
                f"engine {self.name}: cannot set up its limits: {where}{exc.strerror or exc}"
            ) from None

    def cpu_clock(self) -> Callable[[], float | None]:
        """A reader of the CPU seconds the engine has used so far: see
        :meth:`EngineUsage.cpu_clock <guti.referee.process.engine_usage.EngineUsage.cpu_clock>`."""
        return self._usage.cpu_clock()

    def peak_memory(self) -> tuple[int | None, str]:
        """The most memory the engine has held at once, and where that figure comes from:
        see :meth:`~guti.referee.process.engine_usage.EngineUsage.peak_memory`."""
        return self._usage.peak_memory()

    def reap_ended_helpers(self) -> None:
        """Reap the processes of the engine's group that ended after their parent and came
        back to guti, its subreaper: zombies until then, counted against its process
        limit."""
        if self.pid is not None:
            reap_orphans(self.pid, self.pid)

    def resource_breach(self, memory_only: bool = False) -> str | None:
        """The limit the engine ran into, with its peak use, or None (``memory_only``:
        only its memory limit)."""
        return self._usage.breach(memory_only)

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), None while running."""
        return None if self._handle is None else self._handle.returncode

    @property
    def is_alive(self) -> bool:
        h = self._handle
        return (h is not None and not h.exited.is_set() and not self._stdout.lines.closed
                and not self._closed)

    @property
    def orphans_killed(self) -> list[int]:
        """Processes of the engine's group still running after it exited with its pipes
        held open, which had to be killed (``guti check`` reports them)."""
        return [] if self._handle is None else self._handle.orphans_killed

    @property
    def output_bytes(self) -> int:
        """The bytes of stdout read from the engine so far (those folded away included)."""
        return self._stdout.lines.end

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
        self._stdout.wake()
        if self._loop is not None:
            self._loop.call_later(ORPHAN_PIPE_GRACE, self._kill_orphans_if_pipe_open)

    def _kill_orphans_if_pipe_open(self) -> None:
        if self._handle is not None and self._stdout.is_open:
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

    # -- reading -------------------------------------------------------------------
    def drop_pending(self) -> None:
        """Forget lines received but not read yet (they cannot answer what comes next)."""
        self._stdout.lines.drop()

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
        if self._handle is None:
            raise EngineDisconnected(f"engine {self.name} is not running")
        return await self._stdout.read(word, deadline, keep, self._disconnect_text)

    async def _disconnect_text(self) -> str:
        handle = self._handle
        if handle is not None and await handle.wait_exit(0.5):
            # the exit may be seen before the last stderr bytes
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stderr.ended.wait(), 0.2)
        rc = self.returncode
        if rc is None:
            text = f"engine {self.name} closed its output (process still running)"
        else:
            text = f"engine {self.name} exited ({describe_exit(rc)})"
        tail = self.stderr_tail()
        return f"{text}; stderr: {tail}" if tail else text

    # -- the end ---------------------------------------------------------------------
    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None:
        """End the engine for good: close its input (the UGI client has written ``quit``
        first), wait ``grace`` s, SIGTERM the group, wait ``term_grace`` s, SIGKILL the
        group; then kill and reap anything left in the group. Safe to call more than once
        and on an engine that never started."""
        if self._closed:
            return
        self._closed = True
        handle = self._handle
        try:
            if handle is None:
                return
            if not handle.exited.is_set():
                self._close_stdin()  # end of input: an engine that missed quit sees EOF
            await handle.stop(grace, term_grace)
            await self._usage.release()  # what left its group too
        finally:
            if handle is not None:
                handle.abandon()  # (a no-op once it has exited)
            self._usage.kill_now()  # cancelled before its cgroup was closed
            self._close_pipes()
            self._stderr.stop()

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (for emergencies such as Ctrl-C); no waiting."""
        if self._handle is not None and not self._closed:
            self._handle.kill_now()
            self._usage.kill_now()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()
            self._stdin = None

    def _close_pipes(self) -> None:
        self._close_stdin()
        self._usage.close()
        self._stdout.close()
