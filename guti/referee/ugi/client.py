"""The one UGI client: every line guti writes to an engine is written here.

:class:`UgiEngine` speaks protocol.md over a :class:`~guti.referee.ugi.transport.Transport`
(a real :class:`~guti.referee.process.engine_process.EngineProcess`, or the tests'
in-memory one, ``tests/fake_transport.py``). Callers never
format a line: they hand over values (a :class:`~guti.referee.ugi.lines.Position`, a
:class:`~guti.referee.ugi.go.Go`), which :mod:`guti.referee.ugi.lines` turns into text.
Likewise there is one handshake loop (:meth:`UgiEngine.read_handshake`), one
``isready``/``readyok`` wait (:meth:`UgiEngine.sync`) and one read-until loop
(:meth:`UgiEngine.read_until`), all bounded. The client knows nothing of games being
refereed or tournaments: judging a reply is :mod:`guti.referee.game.judge`'s business.

Typical use::

    eng = await UgiEngine.launch(config, "pretwa", handshake_timeout=10)
    await eng.new_game(timeout=10)
    reply = await eng.go(Position.of(board), Go(p1time=5000, p2time=5000), timeout=6)
    reply.bestmove, reply.elapsed_ms, reply.infos
    await eng.quit()          # quit, grace, SIGTERM, SIGKILL the group, reap

An engine whose ``UGI_Variant`` combo lacks the game is a start failure; one
that declares no ``UGI_Variant`` at all plays Egara-guti only (protocol.md
5.2), so asking it for any other game is a start failure too.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from guti.referee.process.engine_process import EngineProcess, EngineSpec, TrafficHook
from guti.referee.process.errors import EngineError, EngineStartError, EngineTimeout
from guti.referee.ugi.lines import (
    MAX_INFOS,
    GoReply,
    Position,
    elapsed_ms,
    go_line,
    is_error_report,
    is_readyok,
    is_refusal,
    is_ugiok,
    position_line,
    setoption_line,
    unfinished_note,
)
from guti.referee.ugi.options import (
    EngineOption,
    Handshake,
    OptionValueError,
    TooManyOptions,
    checked_option_value,
)

if TYPE_CHECKING:
    from guti.referee.process.sandbox import Sandbox
    from guti.referee.ugi.go import Go
    from guti.referee.ugi.transport import Transport

#: Lines kept by a read up to a given line (the latest ones): more than any answer
#: guti reads whole (``go perft`` with a move per line, ``d``) holds.
MAX_KEPT_LINES = 1000


class UgiEngineSpec(EngineSpec, Protocol):
    """What starting and configuring an engine needs: how to run it, inside its limits
    (:class:`~guti.referee.process.engine_process.EngineSpec`), and the options to set in
    the handshake. The game layer's ``EngineConfig`` is one."""

    @property
    def options(self) -> Mapping[str, str]: ...


class UgiEngine:
    """One engine spoken to over UGI. Create with :meth:`launch` (start + handshake)
    or around a transport (then :meth:`start`, :meth:`read_handshake`, ...)."""

    def __init__(self, transport: Transport, config: UgiEngineSpec | None = None) -> None:
        self.transport = transport
        #: The options set in the handshake (those of ``config``, when given).
        self.configured_options: dict[str, str] = dict(config.options) if config else {}
        self.name = transport.name
        self.info = Handshake()
        #: Its resource limits (``limits.*`` settings; None: none), for the game to judge
        #: what each move used.
        self.sandbox: Sandbox | None = config.sandbox if config is not None else None
        #: A ``go`` was written (:meth:`start_search`) and :meth:`wait_bestmove` has not
        #: read its ``bestmove``: the engine may still search, and its late reply would
        #: answer the next ``go``. (``guti check`` and the console read replies with
        #: their own predicates and do not keep it.)
        self.searching = False

    # -- life cycle (delegated to the transport) ------------------------------------------
    @classmethod
    async def launch(
        cls,
        config: UgiEngineSpec,
        game: str,
        handshake_timeout: float = 10.0,
        traffic: TrafficHook | None = None,
    ) -> UgiEngine:
        """Start the engine and do the handshake for ``game``; on any failure the process
        is cleaned up and :class:`EngineStartError` raised."""
        eng = cls(EngineProcess(config, traffic), config)
        try:
            await eng.start()
            await eng.handshake(game, handshake_timeout)
        except BaseException:
            await eng.quit(grace=0.0)
            raise
        return eng

    async def start(self) -> None:
        await self.transport.start()

    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None:
        """Ask the engine to quit (if it runs), then have the transport end it: its input
        closed, ``grace`` s to exit, then SIGTERM and ``term_grace`` s, then SIGKILL."""
        if self.transport.is_alive:
            self.ask_to_quit()
        await self.transport.quit(grace, term_grace)

    def ask_to_quit(self) -> None:
        """``quit``: the only place that writes it."""
        self.send("quit")

    def kill_now(self) -> None:
        self.transport.kill_now()

    @property
    def pid(self) -> int | None:
        return self.transport.pid

    @property
    def returncode(self) -> int | None:
        return self.transport.returncode

    @property
    def is_alive(self) -> bool:
        return self.transport.is_alive

    def stderr_lines(self) -> list[str]:
        """The engine's last stderr lines (bounded), for the record of a game it lost."""
        return self.transport.stderr_lines()

    def output_bytes(self) -> int:
        """The bytes of output the engine has written so far."""
        return self.transport.output_bytes

    def cpu_clock(self) -> Callable[[], float | None]:
        """A function that reads the CPU seconds the engine has used so far (None: not
        known), cheap enough to call before and after every move."""
        return self.transport.cpu_clock()

    def resource_breach(self, memory_only: bool = False) -> str | None:
        """The resource limit the engine ran into (with its peak use), or None;
        ``memory_only``: only its memory limit (a process of it killed for it)."""
        return self.transport.resource_breach(memory_only)

    def reap_ended_helpers(self) -> None:
        """Reap the engine's processes that ended after their parent (see the transport)."""
        self.transport.reap_ended_helpers()

    def peak_memory(self) -> tuple[int | None, str]:
        """The most memory the engine has held at once (bytes; None: not known), and from
        where (``cgroup``: all its processes; ``VmHWM``: its largest process)."""
        return self.transport.peak_memory()

    @property
    def id_name(self) -> str | None:
        return self.info.id_name

    @property
    def id_author(self) -> str | None:
        return self.info.id_author

    @property
    def options(self) -> dict[str, EngineOption]:
        return self.info.options

    # -- writing ------------------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write a line as it is (the console's passthrough, the check's deliberate bad input)."""
        self.transport.send(line)

    def set_option(self, name: str, value: str | None) -> None:
        """``setoption``; ``value`` None presses a button."""
        self.transport.send(setoption_line(name, value))

    def select_game(self, game: str) -> bool:
        """Set ``UGI_Variant`` to ``game``; False (nothing sent) when the engine declares none."""
        variant = self.info.variant
        if variant is None:
            return False
        self.set_option(variant.name, game)
        return True

    def ask_ready(self) -> None:
        """Write ``isready`` (:meth:`sync` waits for the answer; the console reads it itself)."""
        self.transport.send("isready")

    def announce_new_game(self) -> None:
        """Write ``uginewgame`` (:meth:`new_game` also waits until the engine is ready)."""
        self.transport.send("uginewgame")

    def stop(self) -> None:
        """End the running search (its ``bestmove`` still comes and must be read)."""
        self.transport.send("stop")

    def send_position(self, position: Position) -> None:
        self.transport.send(position_line(position))

    def start_search(self, position: Position | None, go: Go) -> float:
        """Write ``position`` (if given) and ``go`` in one write; the monotonic time of it."""
        text = go_line(go)
        self.searching = True
        return self.transport.send_lines([text] if position is None
                                         else [position_line(position), text])

    # -- reading ------------------------------------------------------------------------------
    async def read_line(self, timeout: float) -> str:
        """The next line, whatever it is (for a reader that dispatches lines itself)."""
        return await self.transport.read_line(timeout)

    async def read_until(
        self, done: Callable[[str], bool], timeout: float, keep: int = MAX_KEPT_LINES
    ) -> list[str]:
        """Lines up to and including the first for which ``done`` is true, within ``timeout``
        s: the last ``keep`` of them (``done`` sees every one), so that a flood costs no
        memory. On timeout the EngineTimeout's ``lines`` are the last ones seen."""
        lines, _ = await self._read_until(done, time.monotonic() + timeout, keep)
        return lines

    async def _read_until(
        self, done: Callable[[str], bool], deadline: float, keep: int
    ) -> tuple[list[str], float]:
        seen: deque[str] = deque(maxlen=keep)
        while True:
            try:
                line, at = await self.transport.read_stamped(deadline)
            except EngineTimeout as exc:
                raise EngineTimeout(str(exc), lines=list(seen),
                                    unfinished=exc.unfinished) from None
            seen.append(line)
            if done(line):
                return list(seen), at

    async def read_handshake(self, timeout: float) -> Handshake:
        """Send ``ugi`` and read up to ``ugiok`` (EngineTimeout / EngineDisconnected);
        what the engine said is kept as :attr:`info` and returned."""
        start = time.monotonic()
        info = Handshake()

        def noted(line: str) -> bool:  # each line noted as it comes: nothing else is kept
            if is_ugiok(line):
                return True
            info.note(line)
            return False

        self.transport.send("ugi")
        try:
            await self.read_until(noted, timeout, keep=MAX_INFOS)
        except EngineTimeout as exc:
            raise EngineTimeout(
                f"engine {self.name}: no ugiok within {timeout:g} s of ugi"
                f"{unfinished_note(exc.unfinished)}", lines=exc.lines, unfinished=exc.unfinished
            ) from None
        except TooManyOptions as exc:
            raise EngineStartError(f"engine {self.name} {exc}") from None
        info.elapsed = time.monotonic() - start
        self.info = info
        return info

    async def sync(self, timeout: float) -> list[str]:
        """``isready`` and the lines before ``readyok``, which must come within ``timeout``:
        the last :data:`MAX_INFOS`, after the refusals (``info string error``, ``info string
        unknown command``: up to :data:`MAX_INFOS` of them) that came before those, so that
        an option or a position refused is seen however much the engine says with it."""
        self.ask_ready()
        errors: list[str] = []
        count = 0

        def done(line: str) -> bool:
            nonlocal count
            if is_refusal(line):
                count += 1
                if len(errors) < MAX_INFOS:
                    errors.append(line)
            return is_readyok(line)

        kept = (await self.read_until(done, timeout, keep=MAX_INFOS + 1))[:-1]
        earlier = count - sum(1 for line in kept if is_refusal(line))
        return errors[:earlier] + kept

    async def handshake(self, game: str, timeout: float = 10.0) -> None:
        """``ugi``/``ugiok``, options, ``UGI_Variant``, ``isready``/``readyok`` within ``timeout``."""
        deadline = time.monotonic() + timeout
        try:
            await self.read_handshake(timeout)
            self._configure(game)
            answers = await self.sync(max(0.0, deadline - time.monotonic()))
        except EngineTimeout as exc:
            raise EngineStartError(
                f"engine {self.name}: no complete handshake (ugiok/readyok) within {timeout:g} s"
                f"{unfinished_note(exc.unfinished)}"
            ) from None
        except EngineStartError:
            raise
        except EngineError as exc:
            raise EngineStartError(f"{exc} during the handshake") from None
        errors = [line for line in answers if is_error_report(line)]
        if errors:  # an option or the game not applied: no game may run like that
            raise EngineStartError(
                f"engine {self.name} rejected its set-up: {errors[0][:300]}"
                + (f" (and {len(errors) - 1} more error lines)" if len(errors) > 1 else "")
            )

    def _configure(self, game: str) -> None:
        """The configured options, then the game; EngineStartError if it does not play it."""
        checked: list[tuple[str, str | None]] = []
        for name, value in self.configured_options.items():
            if name.lower() == "ugi_variant":
                continue  # the referee sets the game itself
            try:
                sent = checked_option_value(self.options, name, value)  # declared, or raises
            except OptionValueError as exc:
                raise EngineStartError(f"engine {self.name}: option.{name}={value}: {exc}") from None
            checked.append((self.options[name.lower()].name, sent))  # as the engine spells it
        for name, sent_value in checked:
            self.set_option(name, sent_value)
        why = self.info.why_not(game)
        if why is not None:
            raise EngineStartError(f"engine {self.name} does not play {game} ({why})")
        self.select_game(game)

    async def new_game(self, timeout: float = 10.0) -> None:
        """``uginewgame`` then ``isready``/``readyok``: the engine is ready for a new game."""
        self.announce_new_game()
        try:
            await self.sync(timeout)
        except EngineTimeout as exc:
            raise EngineTimeout(
                f"engine {self.name}: no readyok within {timeout:g} s after uginewgame"
                f"{unfinished_note(exc.unfinished)}", unfinished=exc.unfinished
            ) from None

    async def go(self, position: Position | None, go: Go, timeout: float) -> GoReply:
        """Send ``position`` and ``go``; the ``bestmove`` reply within ``timeout`` s.

        Lines that arrived before this ``go`` are dropped (they cannot be its answer).
        Raises :class:`EngineTimeout` (with ``elapsed_ms``) when no ``bestmove`` comes.
        """
        return await self.wait_bestmove(self.start_go(position, go), timeout)

    def start_go(self, position: Position | None, go: Go) -> float:
        """Drop the lines that arrived before (they cannot answer this ``go``), then write
        ``position`` and ``go``; the monotonic time of the write (see :meth:`wait_bestmove`)."""
        self.drop_pending()
        return self.start_search(position, go)

    def drop_pending(self) -> None:
        """Forget the lines received and not read yet: what an engine said before a
        command cannot answer it (a second ``bestmove`` to an earlier ``go``)."""
        self.transport.drop_pending()

    def note(self, text: str) -> None:
        """A referee's line about this engine in the traffic log (``#``), when there is one."""
        hook = getattr(self.transport, "traffic", None)
        if hook is not None:
            hook(time.time(), "#", self.name, text)

    async def wait_bestmove(self, sent_at: float, timeout: float) -> GoReply:
        """The ``bestmove`` reply to a search started at ``sent_at``, within ``timeout`` s of it."""
        try:
            lines, at = await self.transport.read_through(
                "bestmove", sent_at + timeout, MAX_INFOS + 1
            )
        except EngineTimeout as exc:
            raise EngineTimeout(
                f"engine {self.name}: no bestmove within {timeout:.3f} s of go"
                f"{unfinished_note(exc.unfinished)}",
                lines=exc.lines,
                elapsed_ms=elapsed_ms(sent_at, time.monotonic()),
                unfinished=exc.unfinished,
            ) from None
        self.searching = False
        return GoReply.read(lines, sent_at, at)
