"""What a crashed engine's stderr says, in one line and in a bounded tail.

Why not simply the last line: a Rust panic ends in ``note: run with `RUST_BACKTRACE=1`
environment variable to display a backtrace``, which hides the panic message above it,
and a C++ abort or a Go panic end in similar boilerplate. :func:`telling_line` skips such
notes and joins a panic's location with its message; :func:`tail_lines` keeps the last
lines (at most :data:`TAIL_LINES`, of the 4 KiB the process keeps) for the game's record.
"""

from __future__ import annotations

import re

#: Lines of a crashed engine's stderr kept in the game's detail.
TAIL_LINES = 20

#: Lines that explain how to get more output rather than what went wrong.
_BOILERPLATE = re.compile(
    r"^(note: run with `?RUST_BACKTRACE|note: Some details are omitted|stack backtrace:"
    r"|\s*at \S+:\d+|\s*\d+: |goroutine \d+ \[|Aborted \(core dumped\))"
)
_PANIC = re.compile(r"panicked at (?!')")  # Rust >= 1.73: "panicked at FILE:L:C:" + message


def tail_lines(text: str, limit: int = TAIL_LINES) -> list[str]:
    """The last ``limit`` non-empty lines of ``text`` (each cut at 300 characters)."""
    lines = [line.rstrip()[:300] for line in text.splitlines() if line.strip()]
    return lines[-limit:]


def telling_line(lines: list[str]) -> str:
    """The line that best says why the engine died (``""`` for no stderr at all)."""
    useful = [line for line in lines if not _BOILERPLATE.match(line)]
    if not useful:
        return lines[-1][:200] if lines else ""
    for i in range(len(useful) - 1, -1, -1):
        if _PANIC.search(useful[i]) and useful[i].rstrip().endswith(":") and i + 1 < len(useful):
            return f"{useful[i].rstrip()} {useful[i + 1].strip()}"[:300]
    return useful[-1][:200]
