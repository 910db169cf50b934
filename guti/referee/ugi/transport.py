"""The pipe to one engine as the UGI client sees it: lines out, stamped lines in.

:class:`Transport` is all :class:`guti.referee.ugi.client.UgiEngine` knows of a
process. :class:`guti.referee.process.engine_process.EngineProcess` is the real one;
the tests' ``FakeTransport`` (``tests/fake_transport.py``) answers from a script in
memory, so the client and the game loop are tested without processes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class Transport(Protocol):
    """Lines to and from one engine. Reads raise the ``guti.referee.process`` exceptions:
    ``EngineTimeout`` past the deadline, ``EngineDisconnected`` when the output is closed,
    ``EngineProtocolError`` for an overlong line or a flood."""

    name: str

    @property
    def pid(self) -> int | None: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def is_alive(self) -> bool: ...

    async def start(self) -> None: ...

    def send(self, line: str) -> None: ...

    def send_lines(self, lines: Sequence[str]) -> float:
        """Write the lines at once; the ``time.monotonic()`` of the write."""
        ...

    def drop_pending(self) -> None: ...

    async def read_stamped(self, deadline: float) -> tuple[str, float]:
        """The next line and its arrival time, by ``deadline`` (``time.monotonic()``)."""
        ...

    async def read_through(
        self, word: str, deadline: float, keep: int
    ) -> tuple[list[str], float]:
        """The lines through the first whose first word is ``word``: the last ``keep`` of
        them and that line's arrival time (``EngineTimeout`` with ``lines`` at ``deadline``)."""
        ...

    async def read_line(self, timeout: float) -> str: ...

    def stderr_lines(self) -> list[str]: ...

    @property
    def output_bytes(self) -> int:
        """The bytes of output read from the engine so far."""
        ...

    def cpu_clock(self) -> Callable[[], float | None]:
        """A function that reads the CPU seconds the engine has used so far (None: not
        known), cheap enough to call before and after every move."""
        ...

    def resource_breach(self, memory_only: bool = False) -> str | None:
        """The resource limit the engine ran into (with its peak use), or None;
        ``memory_only``: only its memory limit."""
        ...

    def reap_ended_helpers(self) -> None:
        """Reap the engine's processes that ended after their parent (they came back to
        guti): until then they count against its process limit."""
        ...

    def peak_memory(self) -> tuple[int | None, str]:
        """The most memory the engine has held at once (bytes; None: not known), and from
        where (``cgroup`` or ``VmHWM``)."""
        ...

    async def quit(self, grace: float = 1.0, term_grace: float = 1.0) -> None: ...

    def kill_now(self) -> None: ...
