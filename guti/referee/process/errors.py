"""What can go wrong with an engine process, as exceptions that carry their kind.

Why a module of its own: configuration and the cluster's address parsing name
:class:`EngineStartError` without needing the process machinery (asyncio, pipes), so
``guti ... --help`` stays light; :mod:`guti.referee.process.engine_process` raises them.
"""

from __future__ import annotations

import os
import shlex
from enum import Enum

__all__ = [
    "EngineDisconnected",
    "EngineError",
    "EngineProtocolError",
    "EngineStartError",
    "EngineTimeout",
    "ErrorKind",
    "start_failure_reason",
]


class ErrorKind(Enum):
    """What went wrong with an engine process; the game layer maps each kind to its
    reason for losing (process is below game and knows no game reasons)."""

    START = "start"  # cannot exec, or no complete handshake
    DISCONNECT = "disconnect"  # stdout closed / process exited
    TIMEOUT = "timeout"  # no line in time
    PROTOCOL = "protocol"  # overlong line, too much unread output, bad answer


class EngineError(Exception):
    """Base of engine faults; ``kind`` says which, ``str(exc)`` is the one-line detail."""

    kind: ErrorKind = ErrorKind.PROTOCOL

    def __init__(self, message: str, kind: ErrorKind | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class EngineStartError(EngineError):
    kind = ErrorKind.START


def start_failure_reason(exc: OSError, program: str, cwd: str | None) -> str:
    """Why exec of ``program`` failed, in words that say what to do: a file without its
    execute bit is "PATH is not executable (chmod +x PATH?)", not a bare "Permission
    denied"."""
    if not program:
        return "the engine's command is empty"
    if isinstance(exc, PermissionError) and "/" in program:
        path = os.path.join(cwd or ".", program)  # an absolute program ignores cwd
        if os.path.isdir(path):
            return f"{program} is a directory, not a program"
        if os.path.isfile(path) and not os.access(path, os.X_OK):
            return f"{program} is not executable (chmod +x {shlex.quote(program)}?)"
    if isinstance(exc, FileNotFoundError) and "/" not in program and os.path.isfile(
            os.path.join(cwd or ".", program)):  # a shell, too, looks for a bare name on PATH
        return (f"{exc.strerror} (a name without a / is looked up on PATH; the one in "
                f"{cwd or 'the current folder'} is ./{program})")
    return exc.strerror or str(exc)


class EngineDisconnected(EngineError):
    kind = ErrorKind.DISCONNECT


#: Bytes of an unended line an :class:`EngineTimeout` carries to be shown (one more is
#: kept, to tell whether there were more).
UNFINISHED_SHOWN = 60


class EngineTimeout(EngineError):
    """No line in time. ``lines``: what a read-until saw before the bound (for messages);
    ``elapsed_ms``: how long a ``go`` had been waiting, when that is what timed out;
    ``unfinished``: the start of a line the engine wrote without ending it (a newline
    forgotten, or lines ended with a lone carriage return), which a reader never sees."""

    kind = ErrorKind.TIMEOUT

    def __init__(
        self,
        message: str,
        kind: ErrorKind | None = None,
        *,
        lines: list[str] | None = None,
        elapsed_ms: float | None = None,
        unfinished: bytes = b"",
    ) -> None:
        super().__init__(message, kind)
        self.lines: list[str] = lines or []
        self.elapsed_ms = elapsed_ms
        self.unfinished = unfinished


class EngineProtocolError(EngineError):
    kind = ErrorKind.PROTOCOL
