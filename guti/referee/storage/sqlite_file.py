"""The tournament database's file: its tables, opening it for a run or read-only, the
columns older databases gain on open, and transactions. :mod:`guti.referee.storage.store`
reads and writes the tournament through it.

Tables:

- ``meta(key, value)``: schema version, the tournament settings (JSON), the
  settings fingerprint a resume is checked against, timestamps, the run's own id (a copy
  of the file is the same run);
- ``engines(idx, name, config)``: the engines as they were started (JSON);
- ``schedule(game_id, pair_id, round, white, black, opening_*)``: every game
  the tournament consists of, written once when the tournament is created,
  so a resume plays exactly the games that are missing, whatever the seed;
- ``games(seq, game_id UNIQUE, ...)``: every finished game with all it takes
  to rebuild its :class:`~guti.referee.game.record.GameRecord` (moves, per-ply
  times and clocks, what the engine reported with each move, result, reason,
  detail, start FEN, round, pair). ``game_id`` is UNIQUE, so no game can be
  stored twice; ``seq`` is the order games finished in (the PDN file's order).

Columns added after schema 1 was released (``games.search``: per ply the
engine's last ``info`` fields as JSON, see :func:`~guti.referee.storage.rows.search_json`;
``games.worker``: the cluster worker that played the game, NULL on this machine;
``games.cpu_ms``: per ply the CPU time of the move; ``games.resources``: per engine its CPU
on and off its move and its peak memory, see :func:`~guti.referee.storage.rows.resources_json`)
are nullable and added by ``ALTER TABLE`` when a run opens an older database, so the
schema version stays 1: an old database keeps working (``-resume`` included), and an
older guti still reads a newer database (it names its columns). Read-only opens of an
unmigrated database read the missing columns as NULL.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator

from guti.faults import OPEN_FILE_LIMITS, OPEN_FILES_REACHED
from guti.referee.game.output_paths import kind
from guti.referee.storage.errors import StorageFault, StoreError

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS engines (
    idx INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS schedule (
    game_id INTEGER PRIMARY KEY, pair_id INTEGER NOT NULL, round INTEGER NOT NULL,
    white INTEGER NOT NULL, black INTEGER NOT NULL,
    opening_fen TEXT, opening_moves TEXT NOT NULL DEFAULT '', opening_source TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS games (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL UNIQUE REFERENCES schedule(game_id),
    pair_id INTEGER NOT NULL, round INTEGER NOT NULL,
    white_idx INTEGER NOT NULL, black_idx INTEGER NOT NULL,
    white TEXT NOT NULL, black TEXT NOT NULL,
    result TEXT NOT NULL, reason TEXT, detail TEXT NOT NULL, fault TEXT,
    game TEXT NOT NULL, start_fen TEXT, first_side TEXT NOT NULL, final_fen TEXT NOT NULL,
    moves TEXT NOT NULL, opening_plies INTEGER NOT NULL,
    elapsed_ms TEXT NOT NULL, clock_ms TEXT NOT NULL,
    date TEXT NOT NULL, start_time TEXT NOT NULL, time_control TEXT NOT NULL,
    event TEXT NOT NULL, site TEXT NOT NULL, round_tag TEXT NOT NULL,
    finished_at REAL NOT NULL, search TEXT, cpu_ms TEXT, worker TEXT, resources TEXT);
"""

#: Columns of ``games`` newer than schema 1 (see the module docstring): name -> type.
ADDED_COLUMNS = {"search": "TEXT", "cpu_ms": "TEXT", "worker": "TEXT", "resources": "TEXT"}


#: SQLite's primary result codes of a disk that failed under it: SQLITE_IOERR, SQLITE_FULL.
_DISK_FAULTS = (10, 13)


def store_error(text: str, exc: sqlite3.Error) -> StoreError:
    """The StoreError ``text``, a :class:`StorageFault` when SQLite's error ``exc`` is the
    disk's (full, an I/O error)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF == sqlite3.SQLITE_CANTOPEN and _no_descriptor_left():
        return StorageFault(f"{text}: {OPEN_FILES_REACHED}")
    faulted = code is not None and (code & 0xFF) in _DISK_FAULTS
    return StorageFault(text) if faulted else StoreError(text)


def sqlite_message(exc: sqlite3.Error) -> str:
    """SQLite's message, with what it means for the user when that is not obvious."""
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return f"{text} (the database or its folder is read-only)"
    if "malformed" in text or "not a database" in text:
        return f"{text} (the file is damaged)"
    return text


def remove_database(path: str) -> None:
    """Remove the SQLite file ``path`` and its side files (write-ahead log, shared
    memory, rollback journal), those that exist."""
    for name in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def _open_read_only(path: str) -> sqlite3.Connection:
    """Read-only; on storage where not even SQLite's side files can be made (read-only
    medium), as an immutable file."""
    found = kind(path)
    if found is None:
        raise StoreError(f"{path}: no such database")
    if found != "file":  # a directory, /dev/zero, a FIFO: worded as for every command
        raise StoreError(f"{path}: is a {found}, not a database file")
    quoted = urllib.parse.quote(os.path.abspath(path))
    conn = sqlite3.connect(f"file:{quoted}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    # Read as an immutable file, SQLite ignores the write-ahead log: games a killed run
    # stored there would be left out without a word.
    with contextlib.suppress(OSError):
        if os.path.getsize(f"{path}-wal") > 0:
            raise StoreError(f"{path}: its write-ahead log {path}-wal may hold games not yet "
                             "in the file, which SQLite cannot read on this read-only storage "
                             "(it needs to make the -shm file): copy both files to storage "
                             "that can be written")
    return sqlite3.connect(f"file:{quoted}?mode=ro&immutable=1", uri=True, isolation_level=None)


#: Descriptors a database may need at once (the file, its log, its shared memory, and
#: one to spare): fewer left means the limit of open files is why SQLite could not open.
_DESCRIPTORS_NEEDED = 4


def _no_descriptor_left() -> bool:
    """Whether this process is at (or a few files from) its limit of open files: what
    SQLite's "unable to open database file" then means, without a word of it (it closes
    what it opened before the file it could not)."""
    opened: list[int] = []
    try:
        for _ in range(_DESCRIPTORS_NEEDED):
            opened.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        return exc.errno in OPEN_FILE_LIMITS
    finally:
        for fd in opened:
            os.close(fd)
    return False


def _check_one_name(path: str) -> None:
    """StoreError when the database file has other names (hard links): SQLite finds its
    write-ahead log by the name it is opened under, so a run under another name than the
    one a killed run used would not see the games that run stored (and play them again),
    and its own log would later be laid over the file under the first name."""
    try:
        names = os.stat(path).st_nlink
    except OSError:
        return  # a new database (or one that cannot be read: opening it says why)
    if names > 1:
        raise StoreError(f"{path}: the database file has {names} names (hard links); SQLite "
                         "keeps its log by name, so a tournament is run under one name only: "
                         "remove the other names")


def open_database(path: str, create: bool) -> tuple[sqlite3.Connection, set[str]]:
    """The connection to the tournament database ``path`` and the added columns its
    ``games`` table has. ``create=True``: for a run (created if missing, must be writable,
    older databases gain the added columns); ``create=False``: an existing database,
    read-only (standings, export), also on read-only storage. StoreError says what is
    wrong with the file."""
    conn: sqlite3.Connection | None = None
    try:
        if create:
            _check_one_name(path)
            # ./: a name SQLite could read as a URI (file:x.db) is the file of that name
            conn = sqlite3.connect(os.path.join(".", path) if path.startswith("file:") else path,
                                   isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        else:
            conn = _open_read_only(path)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError(f"{path}: not a guti tournament database")
        if not tables:
            if not create:
                raise StoreError(f"{path}: empty database, no tournament in it")
            # Tables and version in one transaction: a kill in between leaves an
            # empty file (created again), never tables without a version.
            conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}INSERT INTO meta(key, value) "
                f"VALUES ('schema', '{SCHEMA_VERSION}');COMMIT;"
            )
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        version = row[0] if row else None
        if version != SCHEMA_VERSION:
            raise StoreError(f"{path}: database schema {version!r}, this guti reads {SCHEMA_VERSION!r}")
        added = _added_columns(conn, create)
        if create:  # find out now, not after a whole game, that it cannot be written
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('opened', ?)",
                         (time.strftime("%Y-%m-%d %H:%M:%S"),))
        return conn, added
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise store_error(f"{path}: {sqlite_message(exc)}", exc) from None
    except StoreError:
        if conn is not None:
            conn.close()
        raise


def _added_columns(conn: sqlite3.Connection, migrate: bool) -> set[str]:
    """The columns of :data:`ADDED_COLUMNS` the ``games`` table has; with ``migrate``
    the missing ones are added first (each ``ALTER TABLE`` is atomic; a second guti
    that added it meanwhile is no error)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    for name, column_type in ADDED_COLUMNS.items():
        if name not in have and migrate:
            try:
                conn.execute(f"ALTER TABLE games ADD COLUMN {name} {column_type}")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):
                    raise
            have.add(name)
    return have & set(ADDED_COLUMNS)


@contextlib.contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Every read of ``conn`` in the block sees the database as it was at the first one (a
    read transaction): what several reads make together (the PDN, the JSON and the table
    of one export or report) holds the same games while a tournament stores more. Inside
    a snapshot already, the block is part of it."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")  # nothing was written: the snapshot is let go


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
