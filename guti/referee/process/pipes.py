"""Pipes read and written from the event loop without ever blocking.

:func:`read_chunk` takes what a pipe holds with one ``os.read``. :class:`PipeWriter` writes at once what the pipe takes (one ``os.write``: a ply's
``position`` and ``go`` go out in one system call) and keeps the rest, in order, for
the event loop to write when the pipe has room. An engine that stops reading its
stdin therefore never blocks the referee; a dead pipe shows up on reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

#: Most bytes taken from a pipe by one read: a pipe's default capacity.
READ_SIZE = 1 << 16


def read_chunk(fd: int) -> bytes | None:
    """What the non-blocking pipe ``fd`` holds (one read): ``b""`` at its end (or when it
    fails), None when it holds nothing yet."""
    try:
        return os.read(fd, READ_SIZE)
    except BlockingIOError:
        return None
    except OSError:
        return b""


class PipeWriter:
    """The write end ``fd`` of a pipe (made non-blocking), written from ``loop``."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self._loop = loop
        self._pending = bytearray()  # waits for room in the pipe, in order

    def write(self, data: bytes) -> None:
        """Write ``data`` after anything still waiting; never blocks."""
        if self.fd < 0:
            return
        if self._pending:
            self._pending += data
            return
        try:
            done = os.write(self.fd, data)
        except BlockingIOError:
            done = 0
        except OSError:  # the reader closed its end (exited): reading will say so
            return
        if done < len(data):
            self._pending += data[done:]
            self._loop.add_writer(self.fd, self._flush)

    def _flush(self) -> None:
        """Write what waits (called when the pipe has room)."""
        try:
            done = os.write(self.fd, self._pending)
        except BlockingIOError:
            return
        except OSError:
            done = len(self._pending)  # a dead pipe: nothing more can be written
        del self._pending[:done]
        if not self._pending:
            self._loop.remove_writer(self.fd)

    def close(self) -> None:
        """Write what fits of what still waits (the rest is lost) and close the pipe."""
        if self.fd < 0:
            return
        if self._pending:
            with contextlib.suppress(OSError):
                os.write(self.fd, self._pending)
            self._pending.clear()
            self._loop.remove_writer(self.fd)
        os.close(self.fd)
        self.fd = -1
