"""The pipe between guti and one of its referee processes (``-referees``).

Each message is a tuple whose first item names it, pickled and framed by its length
(4 bytes, big-endian). Both ends are guti's own code from the same installation, so
pickle's trust in its input is the same trust as importing the module. The messages:

guti to the referee process
    ``("setup", RunSpec, name, cpus)`` first, once; ``("check",)``;
    ``("play", ScheduledGame)``; ``("cancel", game_id)``; ``("abort",)``; ``("close",)``.
the referee process to guti
    ``("checked", error)`` (``""``: every engine started); ``("result", GameOutcome)``;
    ``("failed", game_id, text)`` (a bug: the game raised);
    ``("closed", cpu_seconds, start_cpu_seconds)`` just before it exits: its own CPU
    (engines not counted) since ``setup``, and before it (Python's start and the imports).

End of input on either side means the other is gone.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct(">I")
#: A message larger than this is a broken link, not a message (a game record with every
#: info line and the traffic of a long game stays far below it).
MAX_MESSAGE = 256 * 1024 * 1024

Message = tuple[Any, ...]


def frame(message: Message) -> bytes:
    """``message`` as bytes on the pipe."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


async def read_message(reader: asyncio.StreamReader) -> Message | None:
    """The next message; None at end of input (or a frame cut short: the writer died)."""
    try:
        head = await reader.readexactly(_LENGTH.size)
        (size,) = _LENGTH.unpack(head)
        if size > MAX_MESSAGE:
            return None
        message: Message = pickle.loads(await reader.readexactly(size))
    except asyncio.IncompleteReadError:
        return None
    return message
