"""The tournament database: one SQLite file that is the single source of truth.

Why SQLite: embedded, one file, and its transactions make "a game is either
completely stored or not at all" true across SIGINT, SIGKILL and power cuts
(WAL journal, ``synchronous=FULL``: a commit is on disk when it returns).

Its tables and their columns are described, beside their definitions, in
:mod:`guti.referee.storage.sqlite_file`.

Nothing here holds more than a batch of rows: pending games and finished
games are read in id/seq ranges (:meth:`TournamentStore.pending`,
:meth:`TournamentStore.records`), so memory does not grow with the number
of games.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from guti.referee.game.file_lock import file_identity
from guti.referee.game.openings import Opening
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.storage.errors import DatabaseGone, StoreError, damaged, damaged_game
from guti.referee.storage.integrity import (
    RESULTS,
    check_database,
    engine_from_text,
    settings_from_text,
)
from guti.referee.storage.rows import (
    INSERT_GAME,
    GameRow,
    engine_to_dict,
    game_row,
    resources_from_json,
    row_to_record,
)
from guti.referee.storage.sqlite_file import (
    ADDED_COLUMNS,
    SCHEMA_VERSION,
    Transaction,
    open_database,
    snapshot,
    sqlite_message,
    store_error,
)

if TYPE_CHECKING:
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.resources import EngineUse
    from guti.rules import Side

__all__ = ["BATCH", "SCHEMA_VERSION", "StoreError", "TournamentStore"]

_RESULTS = frozenset(RESULTS)
BATCH = 256
#: How long a run's last step waits for a reader's read to end (see
#: :meth:`TournamentStore.close`), in milliseconds.
CLOSE_CHECKPOINT_MS = 500


def stored_settings(path: str) -> dict[str, Any] | None:
    """The settings of the tournament in the database ``path``; None when there is no
    such database or tournament, or it cannot be read (opening it for the run says why)."""
    if not os.path.isfile(path):
        return None
    try:
        with TournamentStore(path, create=False) as store:
            return store.settings() if store.has_tournament() else None
    except StoreError:
        return None


def _number(game_id: object) -> str:
    """A game's number as guti shows it (ids are 0-based, numbers 1-based)."""
    return str(game_id + 1) if isinstance(game_id, int) else repr(game_id)


class TournamentStore:
    """One open tournament database (``with TournamentStore(path) as db: ...``).

    Every read turns an SQLite error (a table dropped, a damaged page) into a
    :class:`StoreError` naming the file; :meth:`check` checks the whole database is what
    guti writes (:mod:`guti.referee.storage.integrity`), and :meth:`checked` opens a
    database for a command that reads it, checked."""

    def __init__(self, path: str, create: bool = True) -> None:
        """``create=True``: open for a run (created if missing, must be writable);
        ``create=False``: open an existing database read-only (standings, export), also
        on read-only storage."""
        self.path = path
        self.conn, self._added = open_database(path, create)
        #: The file written to (device, inode), for a run: a database deleted or replaced
        #: while the run writes it is found at the next game stored (:meth:`_still_there`).
        self._identity = file_identity(path) if create and not self.in_memory else None
        #: Its write-ahead log's (made by the first read): see :meth:`_still_there`.
        self._wal_identity = file_identity(f"{path}-wal") if self._identity else None

    @classmethod
    def checked(cls, path: str) -> TournamentStore:
        """Open the existing database ``path`` read-only and :meth:`check` it: what every
        command that reads a tournament does first (standings, report, export, serve)."""
        store = cls(path, create=False)
        try:
            store.check()
        except BaseException:
            store.close()
            raise
        return store

    def check(self) -> None:
        """The whole database is what guti writes (tables, settings, engines, schedule,
        games; see :func:`~guti.referee.storage.integrity.check_database`), else a
        StoreError naming the table and the row."""
        check_database(self.conn, self.path)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """An SQLite error while reading is a StoreError naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise store_error(f"{self.path}: {sqlite_message(exc)}", exc) from None

    @property
    def in_memory(self) -> bool:
        """The database is this connection's own, in memory (``:memory:``; SQLite's
        ``""`` is a temporary file, just as private): nothing else can open it."""
        return self.path in (":memory:", "")

    # -- meta ----------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        with self._reading():
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def keep_meta(self, key: str, value: str) -> None:
        """Store one meta row (a run's SPRT decision, as it took it)."""
        try:
            with self._transaction():
                self._put_meta({key: value})
        except sqlite3.Error as exc:
            raise store_error(f"{self.path}: {sqlite_message(exc)}", exc) from None

    def _put_meta(self, items: dict[str, str]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(items.items())
        )

    # -- tournament ----------------------------------------------------------
    def has_tournament(self) -> bool:
        """Whether a tournament was created here; StoreError for engines or games without
        the settings they were created with (a row deleted outside guti): a run would
        otherwise create the tournament again over them."""
        if self.meta("settings") is not None:
            return True
        with self._reading():
            rows = self.conn.execute("SELECT EXISTS (SELECT 1 FROM engines) OR EXISTS "
                                     "(SELECT 1 FROM games)").fetchone()[0]
        if rows:
            raise damaged(self.path, "table meta, row settings",
                          "missing, though the database holds engines or games")
        return False

    def settings(self) -> dict[str, Any]:
        text = self.meta("settings")
        if text is None:
            raise StoreError(f"{self.path}: no tournament in this database")
        return settings_from_text(self.path, text)

    def create(
        self,
        settings: dict[str, Any],
        fingerprint: str,
        engines: list[EngineConfig],
        jobs: Iterable[ScheduledGame],
    ) -> None:
        """Write settings, engines and the whole schedule in one transaction."""
        with self._transaction():
            self._put_meta(
                {
                    "settings": json.dumps(settings, sort_keys=True),
                    "fingerprint": fingerprint,
                    "created": time.strftime("%Y-%m-%d %H:%M:%S"),
                    "run_id": uuid.uuid4().hex,  # this run's own: a copy of the file has it too
                }
            )
            self.conn.executemany(
                "INSERT INTO engines(idx, name, config) VALUES (?, ?, ?)",
                [(i, e.name, json.dumps(engine_to_dict(e))) for i, e in enumerate(engines)],
            )
            self._insert_jobs(jobs)

    def add_jobs(self, jobs: Iterable[ScheduledGame]) -> None:
        """Add games to the schedule in one transaction (a knockout's later rounds and
        tie-breaks, known only once earlier games are stored)."""
        try:
            with self._transaction():
                self._insert_jobs(jobs)
        except sqlite3.Error as exc:
            raise store_error(f"{self.path}: games not scheduled: {sqlite_message(exc)}",
                              exc) from None

    def _insert_jobs(self, jobs: Iterable[ScheduledGame]) -> None:
        self.conn.executemany(
            "INSERT INTO schedule VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    j.game_id, j.pair_id, j.round, j.white, j.black,
                    j.opening.fen if j.opening else None,
                    " ".join(j.opening.moves) if j.opening else "",
                    j.opening.source if j.opening else "",
                )
                for j in jobs
            ),
        )

    def scheduled_games(self) -> list[tuple[int, int, int, int, int]]:
        """Every scheduled game as ``(game_id, pair_id, round, white, black)``, by id."""
        with self._reading():
            return self.conn.execute(
                "SELECT game_id, pair_id, round, white, black FROM schedule ORDER BY game_id"
            ).fetchall()

    def engines(self) -> list[EngineConfig]:
        with self._reading():
            rows = self.conn.execute("SELECT config FROM engines ORDER BY idx").fetchall()
        return [engine_from_text(self.path, n, r[0]) for n, r in enumerate(rows)]

    def engine_names(self) -> list[str]:
        with self._reading():
            return [r[0] for r in self.conn.execute("SELECT name FROM engines ORDER BY idx")]

    def count_scheduled(self) -> int:
        with self._reading():
            return self.conn.execute("SELECT COUNT(*) FROM schedule").fetchone()[0]

    def count_finished(self) -> int:
        with self._reading():
            return self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def pending(self) -> Iterator[ScheduledGame]:
        """Scheduled games not yet stored, in id order, read in batches. A game
        stored while this runs is skipped if not yet reached."""
        last = -1
        while True:
            with self._reading():
                rows = self.conn.execute(
                    "SELECT game_id, pair_id, round, white, black, opening_fen, opening_moves,"
                    " opening_source FROM schedule s WHERE game_id > ? AND NOT EXISTS (SELECT"
                    " 1 FROM games g WHERE g.game_id = s.game_id) ORDER BY game_id LIMIT ?",
                    (last, BATCH),
                ).fetchall()
            if not rows:
                return
            for gid, pid, rnd, w, b, fen, moves, source in rows:
                last = gid
                if self.is_finished(gid):
                    continue
                opening = None
                if fen is not None or moves:
                    opening = Opening(fen, tuple(moves.split()), source)
                yield ScheduledGame(gid, pid, rnd, w, b, opening)

    def is_finished(self, game_id: int) -> bool:
        with self._reading():
            row = self.conn.execute("SELECT 1 FROM games WHERE game_id=?", (game_id,)).fetchone()
        return row is not None

    # -- games ---------------------------------------------------------------
    def record_game(self, job: ScheduledGame, record: GameRecord) -> int:
        """Store one finished game in its own transaction; returns its ``seq``.
        A second store of the same game id raises StoreError (UNIQUE)."""
        return self.insert_game_row(game_row(job, record))

    def insert_game_row(self, row: GameRow) -> int:
        """:meth:`record_game` for a row made by :func:`game_row`: only the database's
        work, which waits for the disk (a thread can do it; see
        :mod:`guti.referee.storage.result_writer`)."""
        try:
            with self._transaction():
                cur = self.conn.execute(INSERT_GAME, row)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"{self.path}: game {row[0]} not stored: {exc}") from None
        except sqlite3.Error as exc:  # full, read-only, damaged: the caller names the game
            raise store_error(f"{self.path}: {sqlite_message(exc)}", exc) from None
        self._still_there()
        return int(cur.lastrowid or 0)

    def _still_there(self) -> None:
        """StoreError when the file at the database's path is no longer the one this run
        writes (deleted, or another file moved there): the games stored went into a file
        nobody can open any more, and the run must not say they are stored (one
        ``stat`` a game)."""
        if self._identity is not None and file_identity(self.path) != self._identity:
            # The log is found by name, next to whatever file is at the path now: emptied
            # into the old file, so that its pages are never read as the new file's.
            if file_identity(f"{self.path}-wal") == self._wal_identity:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            raise DatabaseGone(f"{self.path} was deleted or replaced while the run wrote it: "
                               "the games it stored are not in the file there now")

    _RECORD_COLUMNS = (
        "seq, game_id, pair_id, round, white, black, result, reason, detail, fault, game,"
        " start_fen, first_side, final_fen, moves, opening_plies, elapsed_ms, clock_ms, date,"
        " start_time, time_control, event, site, round_tag"
    )

    @property
    def _record_columns(self) -> str:
        """:attr:`_RECORD_COLUMNS` and the added ones (NULL where an unmigrated database
        opened read-only lacks one)."""
        return self._RECORD_COLUMNS + "".join(
            f", {name}" if name in self._added else ", NULL" for name in ADDED_COLUMNS
        )

    def records(self) -> Iterator[tuple[dict[str, Any], GameRecord]]:
        """Every stored game in finishing order as (row info, GameRecord), in batches."""
        return self._records("seq", 0, 0)

    def records_after(self, seq: int) -> Iterator[tuple[dict[str, Any], GameRecord]]:
        """The games stored after the one numbered ``seq`` in finishing order (``info["seq"]``):
        what a reader that has seen up to ``seq`` has not read yet, without re-reading the rest."""
        return self._records("seq", 0, seq)

    def records_by_game(self) -> Iterator[tuple[dict[str, Any], GameRecord]]:
        """Every stored game in game-id order (how exports list them), in batches."""
        return self._records("game_id", 1, -1)

    def record_of_game(self, game_id: int) -> tuple[dict[str, Any], GameRecord] | None:
        """The stored game with the 0-based ``game_id`` as (row info, GameRecord); None when
        that game is not stored."""
        for info, record in self._records("game_id", 1, game_id - 1):
            return (info, record) if info["game_id"] == game_id else None
        return None

    def _records(
        self, order: str, key_index: int, start: int
    ) -> Iterator[tuple[dict[str, Any], GameRecord]]:
        """Rows ordered by ``order`` (a column of :attr:`_RECORD_COLUMNS`, at ``key_index``),
        read in batches after ``start``; a row that cannot be read back is a StoreError
        naming the game, never a traceback."""
        last = start
        while True:
            with self._reading():
                rows = self.conn.execute(
                    f"SELECT {self._record_columns} FROM games WHERE {order} > ?"
                    f" ORDER BY {order} LIMIT ?",
                    (last, BATCH),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                last = row[key_index]
                try:
                    yield row_to_record(row)
                except (ValueError, TypeError, KeyError, AttributeError) as exc:
                    raise damaged_game(self.path, _number(row[1]),
                                       f"{type(exc).__name__}: {exc}") from None

    def results(self) -> Iterator[tuple[int, int, int, int, str, str | None, str | None]]:
        """Light rows for standings, in finishing order:
        ``(game_id, pair_id, white_idx, black_idx, result, reason, fault)``."""
        engines = len(self.engine_names())
        last = 0
        while True:
            with self._reading():
                rows = self.conn.execute(
                    "SELECT seq, game_id, pair_id, white_idx, black_idx, result, reason, fault"
                    " FROM games WHERE seq > ? ORDER BY seq LIMIT ?",
                    (last, BATCH * 4),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                last = row[0]
                if not all(isinstance(i, int) and 0 <= i < engines for i in row[3:5]) \
                        or row[5] not in _RESULTS:
                    raise damaged_game(self.path, _number(row[1]), f"engines {row[3]!r}, "
                                       f"{row[4]!r}, result {row[5]!r}")
                yield row[1:]

    def resource_uses(self) -> Iterator[tuple[str, str, dict[Side, EngineUse]]]:
        """Per game, in finishing order, its engines' names and what they used (games
        stored without it are left out), in batches."""
        if "resources" not in self._added:
            return
        last = 0
        while True:
            with self._reading():
                rows = self.conn.execute(
                    "SELECT seq, game_id, white, black, resources FROM games WHERE seq > ?"
                    " AND resources IS NOT NULL ORDER BY seq LIMIT ?", (last, BATCH * 4),
                ).fetchall()
            if not rows:
                return
            for seq, game_id, white, black, text in rows:
                last = seq
                try:
                    yield white, black, resources_from_json(text)
                except (ValueError, TypeError) as exc:
                    raise damaged_game(self.path, _number(game_id),
                                       f"{type(exc).__name__}: {exc}") from None

    # -- plumbing ------------------------------------------------------------
    def _transaction(self) -> Transaction:
        return Transaction(self.conn)

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """Reads in the block all see the games stored when it began (see
        :func:`~guti.referee.storage.sqlite_file.snapshot`)."""
        return snapshot(self.conn)

    def close(self) -> None:
        """Close the connection; a run's first folds its write-ahead log into the database
        file. SQLite does that only for the last connection to close, and a reader that
        outlives the run (the live page's server, ``guti serve``) opens the file read-only
        and cannot: the games would stay in the ``-wal`` file, and the database file copied
        alone would hold none of them. The wait for a reader's read to end is short: at
        worst the log is folded in by the next run that opens the file."""
        if self._identity is not None:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute(f"PRAGMA busy_timeout={CLOSE_CHECKPOINT_MS}")
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()

    def __enter__(self) -> TournamentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

