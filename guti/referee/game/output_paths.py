"""One behaviour for every file guti writes (``-pdnout``, ``-db``, ``-log``, ``-report``,
``export -pdn/-json``): what may be written, where, and how, without ever replacing what
is not a regular file of guti's own.

- Missing parent folders are created, as cutechess-cli does for ``-pgnout``.
- A symlink is written through: the file it points to gets the data (and the side files,
  ``.tmp``/``.sync``/``.bak``, go next to that file); the link itself is never replaced.
- A character device or a FIFO (``/dev/null``, a pipe a reader waits on) is written into,
  never replaced, and never fsynced (a device has nothing to make durable and refuses).
- A directory, a block device or a socket is no output: refused (:func:`unusable`).
- A whole-file write (:func:`write_whole`) goes to ``FILE.tmp`` renamed over the file, so a
  reader never sees half of it and a kill leaves the old file as it was; a file with other
  hard links is instead rewritten in place, so that every name keeps seeing it.

Why one module: every output then creates folders, refuses what is not a file and writes
whole files the same way; renaming over whatever is at a path would turn ``/dev/null``
into a file and a symlink into a copy.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable
from typing import TextIO, TypeVar

from guti.referee.game.file_lock import FileBusy, FileLocks

T = TypeVar("T")

#: What may stand at an output path besides a regular file: written into as it is.
STREAMS = ("character device", "FIFO")


def create_parent_dirs(path: str) -> list[str]:
    """Create the folders ``path`` needs (OSError, with the folder as ``filename``,
    when one cannot be made, e.g. a file is in the way); the folders it made, outermost
    first (:func:`remove_made_dirs` takes them back)."""
    wanted = os.path.dirname(os.path.abspath(path))
    made: list[str] = []  # outermost first
    folder = wanted
    while not os.path.lexists(folder):
        made.insert(0, folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(wanted, exist_ok=True)
    except OSError as exc:
        remove_made_dirs(made)
        # a file where a folder is needed: makedirs says "File exists" or "Not a directory"
        why = (f"{folder} is not a folder" if exc.errno in (errno.EEXIST, errno.ENOTDIR)
               and not os.path.isdir(folder) else exc.strerror)
        raise OSError(exc.errno, f"cannot create the folder for {path}: {why}",
                      wanted) from None
    return made


def remove_made_dirs(folders: list[str]) -> None:
    """Remove ``folders`` (made by :func:`create_parent_dirs`), innermost first, each only
    while it is empty: a run that was refused leaves no folder behind."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def kind(path: str) -> str | None:
    """What is at ``path``, links followed: ``"file"``, ``"directory"``, ``"character
    device"``, ``"FIFO"``, ``"block device"``, ``"socket"``; None when nothing is."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISFIFO, "FIFO"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "socket"


def unusable(path: str) -> str | None:
    """Why ``path`` cannot be an output (``"is a directory, not a file"``), None if it
    can."""
    found = kind(path)
    if found in (None, "file", *STREAMS):
        return None
    return f"is a {found}, not a file"


def write_target(path: str) -> str:
    """The name data for ``path`` is written under: the file a symlink points to (so the
    link stays a link), else ``path`` itself, also when the link leads to a pipe or a
    device (``/dev/stdout``: opened through the link, as its target has no name)."""
    if not os.path.islink(path) or kind(path) in STREAMS:
        return path
    return os.path.realpath(path)


def is_stream(fd: int) -> bool:
    """True for a character device or a FIFO: written into as it is, never fsynced."""
    return not stat.S_ISREG(os.fstat(fd).st_mode)


def check_side_file(name: str, output: str) -> None:
    """OSError (naming ``output``) when something other than a regular file is at
    ``name``, a file guti writes next to an output (``FILE.tmp``, ``FILE.sync``): a
    symlink there would be written through, into whatever it points at, and a FIFO would
    hold the write for ever. A regular file there is a leftover of guti's own (a killed
    run), and is written over."""
    try:
        mode = os.lstat(name).st_mode
    except OSError:  # nothing there (or no folder yet: writing the output says why)
        return
    if stat.S_ISREG(mode):
        return
    found = "symlink" if stat.S_ISLNK(mode) else kind(name) or "special file"
    raise OSError(errno.EEXIST, f"{name} is in the way (a {found} where guti writes a file "
                  "of its own): remove it", output)


def write_whole(path: str, write: Callable[[TextIO], T], what: str = "output") -> T:
    """Write a whole file at ``path`` with ``write(fh)`` (its result returned), made
    durable, by the rules of the module docstring; ``what`` names the output in a
    :class:`~guti.referee.game.file_lock.FileBusy` (a running guti writes that file)."""
    create_parent_dirs(path)
    target = write_target(path)
    reason = unusable(target)
    if reason:
        raise OSError(errno.EINVAL, reason, path)
    if kind(target) in STREAMS:
        try:
            with open(target, "w", encoding="utf-8") as fh:
                return write(fh)
        except OSError as exc:  # /dev/full, a reader gone: name the output
            raise OSError(exc.errno, exc.strerror, path) from None
    with FileLocks() as locks:
        locks.acquire([(what, target)], create=False)
        tmp = f"{target}.tmp"
        check_side_file(tmp, path)
        try:  # two writers of a file not there yet would otherwise share its FILE.tmp
            locks.acquire([(what, tmp)])
        except FileBusy as exc:
            raise FileBusy(path, what, exc.pid) from None
        except OSError as exc:  # the folder takes no file: name the output, not FILE.tmp
            raise OSError(exc.errno, exc.strerror, path) from None
        try:
            try:
                with open(tmp, "w", encoding="utf-8") as fh:
                    result = write(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:  # a full disk: name the output, not FILE.tmp or nothing
                if exc.filename is not None and exc.filename != tmp:
                    raise
                raise OSError(exc.errno, exc.strerror, path) from None
            if _hard_linked(target):
                copy_into(tmp, target)
            else:
                os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    return result


def _hard_linked(path: str) -> bool:
    try:
        return os.stat(path).st_nlink > 1
    except FileNotFoundError:
        return False


def copy_into(source: str, target: str, offset: int = 0) -> None:
    """Make ``target`` hold ``source``'s bytes, in place (its inode, links and locks
    kept): from byte ``offset`` on, the target is cut there and the rest of ``source``
    appended; durable when it returns."""
    with open(source, "rb") as src, open(target, "r+b" if os.path.exists(target) else "wb") as dst:
        dst.truncate(offset)
        dst.seek(offset)
        src.seek(offset)
        shutil.copyfileobj(src, dst)
        dst.flush()
        os.fsync(dst.fileno())
