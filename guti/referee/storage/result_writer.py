"""Storing finished games off the event loop: one thread that commits each game to the
database and appends it to the game files (PDN, EPD), in the order the games ended.

Why a thread: a game is committed with ``synchronous=FULL`` and each game file entry is
fsynced, so storing a game waits for the disk (0.2-0.5 ms on this project's test machine,
tens of milliseconds on a slow disk or a network file system). Done on the event loop,
that wait froze every other running game: an engine's reply that came in meanwhile was
read late, and the wait was charged to that engine's clock. In this thread the loop goes
on refereeing the other games while one is stored.

What does not change (:mod:`guti.referee.tournament.run` owns these rules):

- a game is committed first, then appended to each game file; the caller awaits both
  before the game counts anywhere (standings, progress, SPRT, a knockout's bracket);
  the game slot that played it may start its next game meanwhile only where no result
  can change what is played next (``ahead`` of :meth:`GameSlots.run
  <guti.referee.execution.slots.GameSlots.run>`);
- games are stored one at a time, first in first out: ``seq`` is still the order in which
  they ended;
- a store that has begun is never cut short: an abort (or a cancelled caller) waits for it.

Only the work that waits for the disk runs in the thread
(:meth:`TournamentStore.insert_game_row`, :meth:`GameFileWriter.append`, which let go of
Python's lock while they wait); the row and the entries are made by the caller, so the
thread holds that lock as little as it can. The thread has a database connection of its own: in WAL mode the loop's
reads (the schedule) never wait for its commit.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

from guti.referee.storage.errors import DatabaseGone, StoreError
from guti.referee.storage.rows import GameRow, game_row
from guti.referee.storage.store import TournamentStore

if TYPE_CHECKING:
    from guti.referee.game.game_file import GameFileWriter
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame


class Stored(NamedTuple):
    """What became of one finished game: whether the database has it, and the one line
    saying what failed and what is safe (None: it is in every game file too)."""

    in_database: bool
    failed: str | None = None


class ResultWriter:
    """Stores finished games in the database of ``store`` and appends them to ``files``
    (see the module docstring). The store and the files stay the caller's to close, after
    :meth:`close`."""

    def __init__(self, store: TournamentStore, files: list[GameFileWriter]) -> None:
        self.files = files
        self._thread: ThreadPoolExecutor | None = None
        self._store = store
        if store.in_memory:
            # ``-db :memory:``: the database is the caller's connection's own (another
            # connection would open another, empty one), and there is no disk to wait for
            return
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="guti-store")
        # The connection is made (and later closed) in the thread that uses it; an error
        # opening it is the caller's StoreError, now, not after the first game.
        try:
            self._store = self._thread.submit(TournamentStore, store.path).result()
        except BaseException:
            self._thread.shutdown(wait=True)
            raise

    async def store(self, job: ScheduledGame, record: GameRecord) -> Stored:
        """Commit the game, then append it to every game file (nothing more of it is
        written after a failure)."""
        row = game_row(job, record)
        entries = [(file, file.render(record)) for file in self.files]
        if self._thread is None:
            return _write(self._store, row, entries, job, record)
        work = asyncio.get_running_loop().run_in_executor(
            self._thread, _write, self._store, row, entries, job, record)
        # shielded: a store that has begun ends as it would have (the thread cannot be
        # stopped halfway anyway); a cancelled caller just does not wait for it
        return await asyncio.shield(work)

    async def keep_meta(self, key: str, value: str) -> None:
        """Store one meta row, after the games asked for before it (an SPRT's decision,
        the moment it is taken). StoreError as the store says it."""
        if self._thread is None:
            self._store.keep_meta(key, value)
            return
        await asyncio.shield(asyncio.get_running_loop().run_in_executor(
            self._thread, self._store.keep_meta, key, value))

    def close(self) -> None:
        """Wait for every store asked for, then close the thread's connection."""
        if self._thread is None:
            return
        try:
            self._thread.submit(self._store.close).result()
        finally:
            self._thread.shutdown(wait=True)


def _write(store: TournamentStore, row: GameRow, entries: list[tuple[GameFileWriter, str]],
           job: ScheduledGame, record: GameRecord) -> Stored:
    """In the thread: :meth:`ResultWriter.store`'s disk work and its failure line."""
    number = job.game_id + 1
    try:
        store.insert_game_row(row)
    except DatabaseGone as exc:
        return Stored(False, str(exc))
    except StoreError as exc:
        return Stored(False, f"{exc}; game {number} ({record.white} vs {record.black}) is "
                             "lost and is played again on -resume; every game stored before is safe")
    for file, text in entries:
        try:
            file.append(text)
        except OSError as exc:
            return Stored(True, f"{file.kind} file {exc.filename}: {exc.strerror}; game "
                                f"{number} is stored in the database, and -resume rewrites "
                                f"the {file.kind} file from it")
    return Stored(True)
