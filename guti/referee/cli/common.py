"""Small pieces every ``guti`` subcommand module shares: the one-line error (untrusted
text escaped, exit 2) and the leading ``DB`` argument, written once so that every
command escapes and checks them alike.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from guti.faults import exit_status, os_error_text
from guti.referee.config.args import CliError
from guti.referee.process.text import visible


def fail(prog: str, text: str) -> int:
    """Print ``guti PROG: TEXT`` on stderr (:func:`complain`); return 2."""
    complain(prog, text)
    return 2


def complain(prog: str, text: str) -> None:
    """Print ``guti PROG: TEXT`` on stderr, control characters escaped."""
    print(f"guti {prog}: {visible(text)}", file=sys.stderr, flush=True)


def run_failed(prog: str, exc: Exception, db_path: str) -> int:
    """Report an error that ended a run's games (the run's own errors, the database's, the
    system's) as one line on stderr; the exit status: 1 when the database or the machine
    failed under the run (a full disk: it can be resumed once fixed), else 2."""
    import sqlite3  # here: the commands' --help should not pay for it

    if isinstance(exc, sqlite3.Error):  # the database failed under us (damaged, ...)
        fail(prog, f"{db_path}: {exc}; resume with -resume once it is fixed")
        return 1
    if isinstance(exc, OSError):
        return os_failed(prog, exc)
    return failed(prog, exc)


def failed(prog: str, exc: Exception) -> int:
    """Report ``exc`` (a usage mistake, a database that cannot be used) in one line; the
    exit status: 1 when the disk failed under the database (a StoreError's
    ``machine_fault``), else 2."""
    fail(prog, str(exc))
    return 1 if getattr(exc, "machine_fault", False) else 2


def os_failed(prog: str, exc: OSError, before: str = "") -> int:
    """Report an OSError that ended a command in one line (``before`` put first); its
    :func:`~guti.faults.exit_status`."""
    fail(prog, before + os_error_text(exc))
    return exit_status(exc)


def database_and_rest(prog: str, argv: list[str]) -> tuple[str, list[str]]:
    """The leading ``DB`` argument of ``guti PROG DB [options]``, and the options."""
    if not argv or argv[0].startswith("-"):
        raise CliError(f"usage: guti {prog} DB [options] (-help for the options)")
    return argv[0], argv[1:]


def status_stream(*outputs: str) -> TextIO:
    """Where a command's "N games written to F" lines go: stderr when one of ``outputs``
    is the command's own stdout (``-json /dev/stdout | jq``, or ``> f`` with ``-json f``),
    so that the data comes out clean; else stdout."""
    try:
        ours = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return sys.stdout
    for path in outputs:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == (ours.st_dev, ours.st_ino):
            return sys.stderr
    return sys.stdout
