"""The operating system's errors that end a command, and their one line: an output that
could not be written (a full disk) or a limit of the machine reached (open files). Both
are faults of the machine, exit status 1, never a usage mistake; the entry point and the
referee's commands word them alike, and the process layer tells them from an engine's
own failure to start."""

from __future__ import annotations

import errno

#: The errors of writing an output that end a command in one line (exit status 1).
OUTPUT_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)
#: Limits of the machine that end a run in one line (exit status 1): open files, memory,
#: processes. Met by guti itself (no filename: not an engine's file), they are never an
#: engine's fault.
LIMIT_FAULTS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN)
#: The errors of the limit of open files (the process's, the system's), and what is said.
OPEN_FILE_LIMITS = (errno.EMFILE, errno.ENFILE)
OPEN_FILES_REACHED = ("the machine's limit of open files was reached (raise it, ulimit -n, "
                      "or lower -concurrency)")


def exit_status(exc: OSError) -> int:
    """The exit status of a command ended by ``exc``: 1 when the machine failed under it
    (:data:`OUTPUT_FAULTS`, :data:`LIMIT_FAULTS`), else 2 (a path the user gave that
    cannot be used)."""
    return 1 if exc.errno in OUTPUT_FAULTS + LIMIT_FAULTS else 2


def os_error_text(exc: OSError) -> str:
    """The one line for an OSError that ended a command: the file it names and why; else
    an output that could not be written, or the machine's limit that was reached."""
    if exc.errno in OPEN_FILE_LIMITS:  # whichever file it was: the limit's
        named = f"{exc.filename}: " if exc.filename else ""
        return f"{named}{exc.strerror}: {OPEN_FILES_REACHED}"
    if exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    if exc.errno in OUTPUT_FAULTS:
        return f"cannot write its output: {exc.strerror}"
    return str(exc.strerror or exc)
