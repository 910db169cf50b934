"""One guti per file: exclusive locks on the files a run writes, keyed on the file itself.

A run holds an ``fcntl.flock(LOCK_EX | LOCK_NB)`` on its database and on each of its output
files (``-pdnout``, ``-epdout``, ``-log``, ``-report``, the engines' ``stderr=`` files) from before
anything is written until it ends; a whole-file write (``-report``, ``guti export``, ``guti
report``) holds one on the file it replaces, and on its ``FILE.tmp``, while it writes. A second guti naming any of
them, by any name, gets :class:`FileBusy`: one line naming the holder's pid.

Why on the file itself: a lock is then keyed on the file's device and inode, so it holds
for every name of the file (a hard link, a symlink, ``./x.db`` beside ``x.db``); a lock file
named after the path (``DB.lock``) would let two runs use one database through two
names. The kernel drops a flock when its holder dies, however it dies, so nothing stale
is ever left to take over. A flock never conflicts with SQLite's own (``fcntl``) locks.
The holder's pid, for the message, is read from ``/proc/locks`` (Linux; elsewhere the
message says "another guti").

Only regular files are locked: a character device or a FIFO (``/dev/null``, a pipe to a
reader) may be shared, and is written into, never replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Collection

from guti.faults import os_error_text


class FileBusy(OSError):
    """Another guti holds the file: one line (exit 2)."""

    def __init__(self, path: str, what: str, pid: int | None) -> None:
        who = f"guti pid {pid}" if pid else "another guti"
        super().__init__(errno.EBUSY, f"in use by {who}: wait for it to finish or stop it, "
                                      f"or give another {what}", path)
        self.path, self.what, self.pid = path, what, pid

    def __str__(self) -> str:
        return f"{self.path} ({self.what}) is {self.strerror}"


def lock_failure(exc: OSError) -> str:
    """The one line a run that could not lock its files says: who holds a file in use
    (:class:`FileBusy`), else the file and the system's words."""
    return str(exc) if isinstance(exc, FileBusy) else os_error_text(exc)


class FileLocks:
    """Exclusive flocks on a set of files, at most one per file (by device and inode).

    ``with FileLocks() as locks: locks.acquire([("-db", "t.db"), ...])``."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, int], int] = {}
        self._created: list[tuple[str, tuple[int, int]]] = []

    def acquire(self, files: list[tuple[str, str | None]], create: bool = True) -> None:
        """Lock every ``(what, path)`` given (None and ``:memory:`` are skipped). Files that
        exist are locked first, so a busy one is found before anything is created; then a
        missing file is created empty (``create``) and locked, else skipped. On any
        failure (:class:`FileBusy`, an ``OSError`` naming the file) nothing stays locked
        and the files created here are removed again."""
        wanted = [(what, path) for what, path in files if path and path != ":memory:"]
        wanted.sort(key=lambda item: not os.path.lexists(item[1]))
        try:
            for what, path in wanted:
                self._lock(what, path, create)
        except BaseException:
            self.release(discard_created=True)
            raise

    def _lock(self, what: str, path: str, create: bool) -> None:
        for _ in range(10):
            opened = _open_regular(path, create)
            if opened is None:
                return
            fd, created = opened
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if key in self._held:  # one file under two names of ours (engines' stderr)
                os.close(fd)
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise FileBusy(path, what, lock_owner(st)) from None
            except OSError as exc:
                os.close(fd)
                raise OSError(exc.errno, f"cannot lock it ({exc.strerror})", path) from None
            if file_identity(path) != key:  # replaced under us after we opened it: again
                os.close(fd)
                continue
            self._held[key] = fd
            if created:
                self._created.append((path, key))
            return
        raise OSError(errno.EBUSY, "cannot lock it: it keeps being replaced", path)

    def release(self, discard_created: bool = False, discard: Collection[str] = ()) -> None:
        """Let go of every lock; ``discard_created``: first remove the files this object
        created that are still empty (a run refused before it wrote anything); ``discard``:
        those of them named there, whatever happened (a report written only after the
        run, by a whole-file write of its own)."""
        for path, key in self._created:
            if discard_created or path in discard:
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    if (st.st_dev, st.st_ino) == key and st.st_size == 0:
                        os.unlink(path)
        self._created.clear()
        for fd in self._held.values():
            os.close(fd)
        self._held.clear()

    def __enter__(self) -> FileLocks:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        self.release(discard_created=kind is not None)


def file_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, links followed; None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _open_regular(path: str, create: bool) -> tuple[int, bool] | None:
    """``(fd, created)`` for the regular file at ``path`` (links followed); None when it
    is not a regular file, or is missing and not to be ``create``\\ d. Opened read-only
    when it exists (a flock needs no more, and read-only storage still locks), never
    blocking (a FIFO)."""
    flags = os.O_CLOEXEC | os.O_NONBLOCK
    try:
        try:
            fd = os.open(path, os.O_RDONLY | flags)
        except PermissionError:
            fd = os.open(path, os.O_WRONLY | flags)
        created = False
    except FileNotFoundError:
        if not create:
            return None
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | flags, 0o644)
            created = True
        except FileExistsError:  # a dangling symlink (or a file just made): its target
            fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
            created = False
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd, created


def lock_owner(st: os.stat_result) -> int | None:
    """The pid holding a flock on the file of ``st``, from ``/proc/locks`` (None if not
    known)."""
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == wanted:
            with contextlib.suppress(ValueError):
                return int(fields[4])
    return None
