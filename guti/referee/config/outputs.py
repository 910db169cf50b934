"""Output files of a run (or of ``guti export``/``guti report``) checked before anything
is written: none is a directory (or a block device or a socket), the database is a
regular file, and no two are the same file, nor any of them the database.

Why: unchecked, ``-pdnout`` equal to ``-db`` would turn the database into PDN text,
``-report`` equal to ``-db`` into HTML, ``-log`` equal to ``-db`` would lose the traffic
log, and a ``-report`` naming a directory would fail only after every game was played. Files that exist are compared by
device and inode (every name of a file: symlinks, hard links, ``./x`` and ``x``); files
that do not exist yet by their resolved path (``realpath``: symlinks, ``..``). The side
files guti writes next to an output (the database's ``-wal``/``-shm``, the PDN's
``.sync``/``.bak``/``.tmp``, the report's ``.tmp``; next to a symlink's target) count as
that output's. Engines' ``stderr=`` files may be shared between engines (each appends),
but not with any other output. A character device (``/dev/null``) may take several
outputs: nothing written there can be lost. The openings file, read by the run, may be
none of its outputs either (a ``-pdnout`` that is also the book would rewrite the book
the run's resume checks it by). No output may be a database's side file, nor, unless it
is a database itself, a database: another run's files are not known to this run's
checks, and writing them would damage that tournament.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from guti.referee.config.args import CliError
from guti.referee.game.output_paths import check_side_file, kind, unusable, write_target

if TYPE_CHECKING:
    from guti.referee.config.given import GivenOptions

_DATABASE_SIDE = ("-wal", "-shm", "-journal")
_SIDE_NAMES = {"-wal": "write-ahead log", "-shm": "shared-memory file", "-journal": "journal"}
_SIDE_FILES = {"-db": _DATABASE_SIDE, "database": _DATABASE_SIDE,
               "-pdnout": (".sync", ".bak", ".tmp"), "-epdout": (".sync", ".bak"),
               "-report": (".tmp",), "-html": (".tmp",), "-pdn": (".tmp",),
               "-json": (".tmp",), "-epd": (".tmp",)}
_DATABASES = ("-db", "database")


def output_identity(path: str) -> tuple[object, ...]:
    """The file ``path`` names: its device and inode when it exists, else its resolved
    path."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


#: What names a file the run reads, not writes (its kind is the reader's to judge).
OPENINGS = "-openings file="


def _named(what: str, path: str) -> str:
    """``-pdnout g.pdn``, ``-openings file=g.pdn``: a file as the option that names it."""
    return f"{what}{path}" if what.endswith("=") else f"{what} {path}"


def openings_input(given: GivenOptions) -> tuple[str, str | None]:
    """The run's openings file as :func:`check_outputs` takes it (None: no file)."""
    return OPENINGS, given.table("openings").get("file") or None


_SQLITE_HEADER = b"SQLite format 3\x00"


def _is_database(path: str) -> bool:
    """Whether ``path`` is a regular file that starts as every SQLite database does."""
    if kind(path) != "file":  # never opened: a FIFO would wait for a writer
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False


def _check_not_a_database(what: str, path: str) -> None:
    """CliError when ``path`` is a database's own side file (its write-ahead log, its
    shared memory, its journal: another run may be writing it), or, for an output that is
    no database, a database: writing it would damage a tournament, this run's or another's
    (whose files this run's checks know nothing of)."""
    target = write_target(path)
    for name in dict.fromkeys((path, target)):
        for side in _DATABASE_SIDE:
            if name.endswith(side) and _is_database(name[:-len(side)]):
                raise CliError(f"{_named(what, path)}: is the {_SIDE_NAMES[side]} of the "
                               f"database {name[:-len(side)]}")
    if what not in _DATABASES and what != OPENINGS and _is_database(target):
        raise CliError(f"{_named(what, path)}: is a database (SQLite), which this output "
                       "would overwrite: give another file")


#: A run's outputs that it rewrites (brought in line with the database, or written whole
#: and renamed), while it prints its own lines; ``-log`` and ``stderr=`` only append.
_RUN_OUTPUTS = ("-pdnout", "-epdout", "-report")


def _check_not_own_output(what: str, path: str) -> None:
    """CliError for a run's output that is the regular file guti's own standard output
    or error already goes to (``-pdnout file=/dev/stdout > games.txt``): guti's lines and
    the games would be written over each other, and the file would be renamed away as an
    older output. Through a pipe or on a terminal, ``/dev/stdout`` is a stream, and fine."""
    if what not in _RUN_OUTPUTS or kind(path) != "file":
        return
    st = os.stat(path)
    for fd, name in ((1, "output"), (2, "error")):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            raise CliError(f"{_named(what, path)}: is the file guti's standard {name} goes "
                           "to, where its own lines would be written over the games: name "
                           "another file")


def _check_kind(what: str, path: str) -> None:
    if what == OPENINGS:
        return
    if what in _DATABASES and kind(path) not in (None, "file"):
        reason: str | None = f"is a {kind(path)}, not a database file"
    else:
        reason = unusable(path)
    if reason:
        raise CliError(f"{what} {path}: {reason}")


def check_outputs(outputs: list[tuple[str, str | None]]) -> None:
    """``outputs``: ``(what, path)`` pairs such as ``("-db", "guti.db")``; an engine's
    stderr file is ``("stderr", path)``, the database read by ``guti export`` is
    ``("database", path)``. CliError (one line, exit 2) on a clash."""
    seen: list[tuple[str, str, str, tuple[object, ...]]] = []  # what, path, file, identity
    for what, path in outputs:
        if not path or path == ":memory:":
            continue
        _check_kind(what, path)
        if kind(path) == "character device":
            continue  # /dev/null takes any number of outputs
        target = write_target(path)
        names = [path] + [target + suffix for suffix in _SIDE_FILES.get(what, ())]
        mine = [(name, output_identity(name)) for name in names]
        for name, identity in mine:
            for other_what, other, other_file, other_identity in seen:
                if what == other_what == "stderr" and name == path:
                    continue
                if identity == other_identity:
                    # a database's side file (-wal, -shm, -journal) named as its own
                    mine_part = f" (its {name})" if name != path else ""
                    part = f" (its {other_file})" if other_file != other else ""
                    raise CliError(f"{_named(what, path)}{mine_part} and "
                                   f"{_named(other_what, other)}{part} are the same file")
        seen += [(what, path, name, identity) for name, identity in mine]
    for what, path in outputs:  # after the clashes among them, which say more
        if path and path != ":memory:":
            _check_not_a_database(what, path)
            _check_not_own_output(what, path)
            for suffix in set(_SIDE_FILES.get(what, ())) & {".tmp", ".sync"}:
                try:  # found now, not when the run ends and writes its report
                    check_side_file(write_target(path) + suffix, path)
                except OSError as exc:
                    raise CliError(f"{_named(what, path)}: {exc.strerror}") from None
