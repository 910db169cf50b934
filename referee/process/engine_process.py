"""One engine program, driven over UGI through pipes, trusting nothing it does.

:class:`EngineProcess` starts an engine (an argv list, never a shell) as the
leader of its own process group, with stdin/stdout pipes. stderr is copied
to the engine log (``EngineConfig.stderr_path``) and to the traffic hook,
and kept as a short tail for error messages; it is never parsed.

Every wait has a hard bound and ends in one of four exceptions, each
carrying the :class:`~referee.game.reasons.Reason` a game runner needs:

- :class:`EngineStartError` (``start failure``): cannot exec, died or
  misbehaved during the handshake, or declares ``UGI_Variant`` without the
  game asked for;
- :class:`EngineDisconnected` (``disconnect``): stdout closed / process
  exited; the message includes the exit code or signal;
- :class:`EngineTimeout` (``stalled``): no answer within the bound;
- :class:`EngineProtocolError` (``protocol error``): a line over 1 MiB, or
  more than 16 MiB of unread output. Memory stays bounded either way.

Reading uses a small asyncio ``SubprocessProtocol`` that splits lines as
chunks arrive and stamps each with the monotonic arrival time, so move
times are measured from ``go`` written to ``bestmove`` received, free of
event-loop delays on our side.

Typical use::

    eng = await EngineProcess.launch(config, "pretwa", handshake_timeout=10)
    await eng.new_game(timeout=10)
    res = await eng.go("position startpos", "p1time 5000 p2time 5000 p1inc 50 p2inc 50", timeout=6)
    res.bestmove, res.elapsed_ms, res.infos
    await eng.quit()          # quit, grace, SIGTERM, SIGKILL the group, reap

An engine whose ``UGI_Variant`` combo lacks the game is a start failure; one
that declares no ``UGI_Variant`` at all plays Egara-guti only (protocol.md
5.2), so asking it for any other game is a start failure too.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.game.reasons import Reason
from referee.process.group import (
    enable_subreaper,
    group_members,
    live_members,
    reap_orphans,
    signal_group,
)
from referee.ugi.engine_config import EngineConfig

#: The game of an engine that declares no ``UGI_Variant`` (protocol.md 5.2).
UNDECLARED_GAME = "egara-guti"
#: Longest accepted line from an engine (bytes, without the newline).
LINE_LIMIT = 1 << 20
#: Most output that may wait unread before the engine is called faulty.
QUEUE_LIMIT = 16 << 20
#: Bytes of stderr kept for error messages.
STDERR_TAIL = 2048
#: Info lines kept per ``go`` (the latest ones).
MAX_INFOS = 32
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
    reason = Reason.STALLED


class EngineProtocolError(EngineError):
    reason = Reason.PROTOCOL_ERROR


@dataclass
class EngineOption:
    """An ``option name N type T ...`` line as declared by the engine."""

    name: str
    type: str
    default: str | None = None
    min: str | None = None
    max: str | None = None
    vars: list[str] = field(default_factory=list)


_OPTION_KEYWORDS = {"name", "type", "default", "min", "max", "var"}


def note_handshake_line(line: str, into: Any) -> bool:
    """Record an ``id name``, ``id author`` or well-formed ``option`` line of the
    handshake in ``into`` (anything with ``id_name``, ``id_author`` and an ``options``
    dict keyed by lower-case name); False for any other line, ``ugiok`` included.
    The referee's handshake and the console's share this one reading."""
    tokens = line.split()
    if len(tokens) >= 2 and tokens[0] == "id" and tokens[1] in ("name", "author"):
        value = line.split(None, 2)[2].strip() if len(tokens) >= 3 else ""
        setattr(into, f"id_{tokens[1]}", value)
        return True
    if tokens[:1] == ["option"]:
        opt = parse_option_line(line)
        if opt is not None:
            into.options[opt.name.lower()] = opt
            return True
    return False


def parse_option_line(line: str) -> EngineOption | None:
    """Parse a UCI-style ``option`` line; None when it has no name or type."""
    tokens = line.split()
    if not tokens or tokens[0] != "option":
        return None
    fields: dict[str, str] = {}
    vars_: list[str] = []
    key: str | None = None
    words: list[str] = []

    def flush() -> None:
        if key is None:
            return
        text = " ".join(words)
        if key == "var":
            vars_.append(text)
        elif key not in fields:
            fields[key] = text

    for tok in tokens[1:]:
        # Only "name" may contain keywords-looking words before "type".
        if tok in _OPTION_KEYWORDS and not (key == "name" and tok != "type"):
            flush()
            key, words = tok, []
        else:
            words.append(tok)
    flush()
    name = fields.get("name")
    if not name or "type" not in fields:
        return None
    return EngineOption(
        name=name,
        type=fields["type"],
        default=fields.get("default"),
        min=fields.get("min"),
        max=fields.get("max"),
        vars=vars_,
    )


@dataclass
class GoResult:
    """The answer to one ``go``.

    ``bestmove`` is the word after ``bestmove`` (None if missing); ``elapsed_ms``
    runs from ``go`` written (``sent_at``) to the ``bestmove`` line received
    (``received_at``), both ``time.monotonic()`` seconds.
    """

    bestmove: str | None
    line: str
    infos: list[str]
    elapsed_ms: float
    sent_at: float
    received_at: float


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
        elif fd == 2 and self.err_partial:
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

    def _push(self, raw: bytes, now: float) -> None:
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

    def _err_line(self, raw: bytes) -> None:
        hook = self.owner.traffic
        if hook is not None:
            text = raw[:4096].decode("utf-8", "replace").rstrip("\r")
            hook(time.time(), "!", self.owner.name, text)


class EngineProcess:
    """A running engine. Create with :meth:`launch` (start + handshake) or :meth:`start`."""

    def __init__(self, config: EngineConfig, traffic: TrafficHook | None = None) -> None:
        self.config = config
        self.name = config.name
        self.traffic = traffic
        self.id_name: str | None = None
        self.id_author: str | None = None
        self.options: dict[str, EngineOption] = {}  # by lower-case name
        self.warnings: list[str] = []
        self.pid: int | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._pipes: _Pipes | None = None
        self._stderr_file = None
        self._closed = False

    # -- life cycle ------------------------------------------------------------------
    @classmethod
    async def launch(
        cls,
        config: EngineConfig,
        game: str,
        handshake_timeout: float = 10.0,
        traffic: TrafficHook | None = None,
    ) -> EngineProcess:
        """Start the engine and do the handshake for ``game``; on any failure the process
        is cleaned up and :class:`EngineStartError` raised."""
        eng = cls(config, traffic)
        try:
            await eng.start()
            await eng.handshake(game, handshake_timeout)
        except BaseException:
            await eng.quit(grace=0.0)
            raise
        return eng

    async def start(self) -> None:
        """Exec the engine in its own process group; :class:`EngineStartError` if impossible."""
        enable_subreaper()
        cfg = self.config
        if cfg.stderr_path:
            try:
                self._stderr_file = open(cfg.stderr_path, "ab", buffering=0)  # noqa: SIM115
            except OSError as exc:
                raise EngineStartError(
                    f"engine {self.name}: cannot open stderr log {cfg.stderr_path}: {exc.strerror}"
                ) from None
        loop = asyncio.get_running_loop()
        try:
            transport, pipes = await loop.subprocess_exec(
                lambda: _Pipes(self),
                *cfg.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cfg.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            self._close_stderr()
            self._closed = True
            why = exc.strerror or str(exc)
            raise EngineStartError(
                f"engine {self.name}: cannot start {cfg.command_line()}: {why}"
            ) from None
        self._transport = transport
        self._pipes = pipes
        self._stdin = transport.get_pipe_transport(0)
        self.pid = transport.get_pid()

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
        """The last line(s) the engine wrote to stderr, for messages (may be empty)."""
        if self._pipes is None:
            return ""
        text = self._pipes.err_tail.decode("utf-8", "replace").strip()
        return text.splitlines()[-1][:200] if text else ""

    def _on_exit(self) -> None:
        # A grandchild may still hold our stdout; then EOF would never come. Give
        # the pipe a moment to drain, then kill whatever is left of the group.
        loop = asyncio.get_running_loop()
        loop.call_later(ORPHAN_PIPE_GRACE, self._kill_orphans_if_pipe_open)

    def _kill_orphans_if_pipe_open(self) -> None:
        p = self._pipes
        if p is not None and not p.stdout_closed and self.pid is not None:
            signal_group(self.pid, signal.SIGKILL)

    # -- raw I/O ---------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write one line (newline added). Never blocks; a dead pipe shows up on reading."""
        self._write(line + "\n")
        if self.traffic is not None:
            self.traffic(time.time(), ">", self.name, line)

    def _write(self, text: str) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(text.encode())

    async def read_line(self, timeout: float) -> str:
        """The next line from the engine within ``timeout`` seconds."""
        line, _ = await self._read(time.monotonic() + timeout)
        return line

    async def _read(self, deadline: float) -> tuple[str, float]:
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
        rc = self.returncode
        if rc is None:
            text = f"engine {self.name} closed its output (process still running)"
        else:
            text = f"engine {self.name} exited ({describe_exit(rc)})"
        tail = self.stderr_tail()
        return f"{text}; stderr: {tail}" if tail else text

    # -- protocol --------------------------------------------------------------------
    async def handshake(self, game: str, timeout: float = 10.0) -> None:
        """``ugi``/``ugiok``, options, ``UGI_Variant``, ``isready``/``readyok`` within ``timeout``."""
        deadline = time.monotonic() + timeout
        try:
            self.send("ugi")
            while True:
                line, _ = await self._read(deadline)
                if line.split()[:1] == ["ugiok"]:
                    break
                note_handshake_line(line, self)
            for name, value in self.config.options.items():
                if name.lower() == "ugi_variant":
                    continue  # the referee sets the game itself
                if name.lower() not in self.options:
                    self.warnings.append(f"engine {self.name} does not declare option {name!r}")
                self.send(f"setoption name {name} value {value}")
            variant = self.options.get("ugi_variant")
            if variant is None and game != UNDECLARED_GAME:
                raise EngineStartError(
                    f"engine {self.name} does not play {game} (it declares no UGI_Variant "
                    f"option, so it plays {UNDECLARED_GAME} only)"
                )
            if variant is not None:
                if variant.vars and game not in variant.vars:
                    offered = ", ".join(variant.vars)
                    raise EngineStartError(
                        f"engine {self.name} does not play {game} (its UGI_Variant offers: {offered})"
                    )
                self.send(f"setoption name {variant.name} value {game}")
            self.send("isready")
            while True:
                line, _ = await self._read(deadline)
                if line.strip() == "readyok":
                    return
        except EngineTimeout:
            raise EngineStartError(
                f"engine {self.name}: no complete handshake (ugiok/readyok) within {timeout:g} s"
            ) from None
        except EngineStartError:
            raise
        except EngineError as exc:
            raise EngineStartError(f"{exc} during the handshake") from None

    async def sync(self, timeout: float) -> None:
        """``isready`` and wait for ``readyok`` (other lines are skipped)."""
        deadline = time.monotonic() + timeout
        self.send("isready")
        while True:
            line, _ = await self._read(deadline)
            if line.strip() == "readyok":
                return

    async def new_game(self, timeout: float = 10.0) -> None:
        """``uginewgame`` then ``isready``/``readyok``: the engine is ready for a new game."""
        self.send("uginewgame")
        try:
            await self.sync(timeout)
        except EngineTimeout:
            raise EngineTimeout(
                f"engine {self.name}: no readyok within {timeout:g} s after uginewgame"
            ) from None

    async def go(self, position: str, go_args: str, timeout: float) -> GoResult:
        """Send ``position`` and ``go <go_args>``; return the ``bestmove`` within ``timeout`` s.

        Lines that arrived before this ``go`` are dropped (they cannot be its answer).
        Raises :class:`EngineTimeout` (with ``elapsed_ms`` attribute) when no
        ``bestmove`` comes in time.
        """
        p = self._pipes
        if p is not None and p.lines:
            p.lines.clear()
            p.queued = 0
        text = f"{position}\ngo {go_args}\n"
        self._write(text)
        sent_at = time.monotonic()
        if self.traffic is not None:
            now = time.time()
            self.traffic(now, ">", self.name, position)
            self.traffic(now, ">", self.name, f"go {go_args}")
        deadline = sent_at + timeout
        infos: deque[str] = deque(maxlen=MAX_INFOS)
        while True:
            try:
                line, at = await self._read(deadline)
            except EngineTimeout:
                exc = EngineTimeout(
                    f"engine {self.name}: no bestmove within {timeout:.3f} s of go"
                )
                exc.elapsed_ms = (time.monotonic() - sent_at) * 1000  # type: ignore[attr-defined]
                raise exc from None
            if line.startswith("bestmove"):
                tokens = line.split()
                if tokens[0] == "bestmove":
                    move = tokens[1] if len(tokens) > 1 else None
                    return GoResult(move, line, list(infos), (at - sent_at) * 1000, sent_at, at)
            elif line.startswith("info"):
                infos.append(line)

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
