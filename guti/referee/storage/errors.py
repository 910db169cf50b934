"""The errors of the tournament database: :class:`StoreError`, one line for the user.

Why a module of its own: the store and the checks of what it reads
(:mod:`guti.referee.storage.integrity`) both raise it, and every command that reads a
database turns it into its one line (exit 2; exit 1 for a :class:`StorageFault`, the
disk's) without knowing which of them failed.
"""

from __future__ import annotations


class StoreError(Exception):
    """The database cannot be used (not a guti database, unreadable, full, read-only,
    damaged, ...); one line."""

    #: The machine failed under the database (a full disk, an I/O error), not the user:
    #: a command ends with exit status 1 (it can be run again once that is fixed), not 2.
    machine_fault = False


class StorageFault(StoreError):
    """The disk under the database failed: full, or an I/O error."""

    machine_fault = True


class DatabaseGone(StoreError):
    """The file at the database's path is no longer the one a run writes (deleted, or
    another file moved there): what it stored went with the old file, so no game of the
    run may be called safe."""


class DamagedGame(StoreError):
    """A stored game that cannot be read back (changed or damaged outside guti): the
    games before it read well, so a reader that follows a database (the live page) can
    show them and say this one line."""


def damaged_game(path: str, number: str, what: str) -> DamagedGame:
    """The error for game ``number`` stored damaged: ``what`` is wrong with it."""
    return DamagedGame(f"{path}: game {number} is stored damaged ({what})")


def damaged(path: str, where: str, what: str) -> StoreError:
    """The error for a database whose content is not what guti wrote: the file, where in
    it (a table, and the row or game), and what is wrong there."""
    return StoreError(f"{path}: {where}: {what} (the database was changed or damaged "
                      "outside guti)")
