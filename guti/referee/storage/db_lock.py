"""One guti per tournament database: an exclusive lock on ``DB.lock``.

Why: two ``-resume`` runs of one database at once would both play the pending games;
SQLite keeps each commit whole, but the second copy of a game dies on the UNIQUE game
id, and the two PDN rewrites race (games missing, a ``.pdn.sync`` renamed away under
the other). So a run takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``DB.lock`` and writes
its pid there; a second run gets :class:`DatabaseBusy` (one line naming the owner's pid).

The kernel drops a flock when its holder dies, however it dies, so a lock file left by
a killed guti is *stale* and simply taken over. The file is removed on release while
still locked, and a taker checks that the file it locked is still the one at the path
(else it retries), so removing it never lets two owners in.
"""

from __future__ import annotations

import contextlib
import fcntl
import os


class DatabaseBusy(Exception):
    """Another guti holds the database (or no lock can be taken); one line, exit 2."""


class DatabaseLock:
    """``with DatabaseLock(db_path): ...`` (raises :class:`DatabaseBusy` if in use)."""

    def __init__(self, db_path: str) -> None:
        self.path = f"{db_path}.lock"
        self.db_path = db_path
        self.fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise DatabaseBusy(
                    f"{self.db_path}: cannot write its lock file {self.path}: {exc.strerror} "
                    "(a run needs the database's folder writable)"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _read_pid(fd)
                os.close(fd)
                who = f"guti pid {owner}" if owner else "another guti"
                raise DatabaseBusy(
                    f"{self.db_path} is in use by {who} (lock {self.path}): wait for it to "
                    "finish or stop it, or give another -db"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # removed by its last owner after we opened it: start over
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self.fd = fd
            return
        raise DatabaseBusy(f"{self.db_path}: cannot take the lock {self.path}")

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> DatabaseLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(os.pread(fd, 32, 0).split()[0])
    return None
