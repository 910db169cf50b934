"""Writing a tournament database out as PDN or JSON, streaming and safely.

Both writers read the games in game-number order in batches
(:meth:`~guti.referee.storage.store.TournamentStore.records_by_game`), so exporting 10,000 games
holds one batch in memory, and write the file by the rules of
:mod:`guti.referee.game.output_paths` (``FILE.tmp`` renamed over ``FILE``: a reader never
sees a half-written export, and a kill during the export leaves the previous file as it
was; a device or a FIFO written into; a symlink written through).

:func:`sync_pdn` is how the live PDN file of a tournament is kept equal to
the database after a kill: the database commits a game first and the PDN
append follows, so after a SIGKILL the PDN file may lack the last game or
end in a partial one; on resume it is made to hold the database's games. If the
old file holds anything the database does not (it is not a prefix of the
export), a copy of it is kept as ``FILE.bak`` first. The live file is changed in place,
never renamed or replaced: it keeps its inode, so the run's lock on it
(:mod:`guti.referee.game.file_lock`) holds, and a second run can never move it aside under
the first. The live EPD file (``-epdout``) is kept equal the same way (:func:`sync_epd`).
A device or a FIFO is left as it is (nothing to read back).
:func:`open_game_files` opens those live files for a match or a tournament.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from guti.referee.game.epd import EpdWriter, format_epd
from guti.referee.game.output_paths import (
    check_side_file,
    copy_into,
    kind,
    write_target,
    write_whole,
)
from guti.referee.game.pdn import NO_FIELDS, PdnFields, PdnWriter, format_game
from guti.rules import Board, Side

if TYPE_CHECKING:
    from guti.referee.game.game_file import GameFileWriter
    from guti.referee.game.record import GameRecord
    from guti.referee.storage.store import TournamentStore

_CHUNK = 1 << 16  # bytes compared at a time


def game_json(info: dict[str, Any], record: GameRecord) -> dict[str, Any]:
    """One game as a JSON object (the fields documented in the README). ``game_id`` is
    the 1-based game number (the database keeps 0-based ids: converted here, at the edge)."""
    return {
        "game_id": info["game_id"] + 1,
        "round": info["round"],
        "pair": info["pair_id"],
        "game": record.game,
        "white": record.white,
        "black": record.black,
        "result": record.result,
        "reason": str(record.reason) if record.reason is not None else None,
        "detail": record.detail,
        "start_fen": record.start_fen or Board(record.game).fen(),
        "opening_plies": record.opening_plies,
        "moves": record.moves,
        "elapsed_ms": record.elapsed_ms,
        "clock_ms": record.clock_ms,
        "search": [None if info is None else info.to_json() for info in record.search],
        "cpu_ms": record.cpu_ms,
        "resources": {("white" if side is Side.WHITE else "black"): use.to_json()
                      for side, use in record.resources.items()},
        "final_fen": record.final_fen,
        "time_control": record.time_control,
        "date": record.date,
        "time": record.start_time,
    }


def _write_games(
    games_in_order: Iterator[tuple[dict[str, Any], GameRecord]],
    fh: TextIO,
    render: Callable[[int, dict[str, Any], GameRecord], str],
    head: str = "",
    tail: str = "",
) -> int:
    """Write ``head``, ``render(n, info, record)`` for every game given, then ``tail``, to
    ``fh``; returns the number of games. Each record gets its 1-based game number (the
    PDN ``Game`` tag) from its stored 0-based id."""
    games = 0
    fh.write(head)
    for n, (info, record) in enumerate(games_in_order):
        record.number = info["game_id"] + 1
        fh.write(render(n, info, record))
        games = n + 1
    fh.write(tail)
    return games


def _pdn(fields: PdnFields) -> Callable[[int, dict[str, Any], GameRecord], str]:
    """One game as PDN with ``fields``, separated from the one before as
    :class:`~guti.referee.game.pdn.PdnWriter` does."""
    return lambda n, _info, record: ("\n" if n else "") + format_game(record, fields)


def _epd(_n: int, _info: dict[str, Any], record: GameRecord) -> str:
    return format_epd(record)


def stored_pdn_fields(store: TournamentStore) -> PdnFields:
    """The ``-pdnout`` switches the tournament in ``store`` was started with."""
    names = store.settings().get("pdnfields") or []
    return PdnFields.of([str(name) for name in names] if isinstance(names, list) else [])


def _json(n: int, info: dict[str, Any], record: GameRecord) -> str:
    return ("," if n else "") + "\n  " + json.dumps(game_json(info, record))


def export_pdn(store: TournamentStore, path: str, fields: PdnFields | None = None) -> int:
    """Every stored game as PDN, with ``fields`` (default: the switches the tournament
    was started with); returns the number of games written."""
    return write_whole(path, lambda fh: write_pdn(store, fh, fields), "-pdn")


def write_pdn(store: TournamentStore, fh: TextIO, fields: PdnFields | None = None) -> int:
    """:func:`export_pdn` into an open text file (the live page's download)."""
    fields = stored_pdn_fields(store) if fields is None else fields
    return _write_games(store.records_by_game(), fh, _pdn(fields))


def pdn_records(store: TournamentStore, fields: PdnFields | None = None) -> Iterator[tuple[int, str]]:
    """Each stored game's PDN record in game-number order, as (game number, text): the
    records :func:`write_pdn` writes, which joined by ``"\n"`` are its whole file (the
    report embeds them so that a page opened from disk can give the same PDN)."""
    fields = stored_pdn_fields(store) if fields is None else fields
    for info, record in store.records_by_game():
        record.number = info["game_id"] + 1
        yield record.number, format_game(record, fields)


def game_pdn(store: TournamentStore, number: int, fields: PdnFields | None = None) -> str | None:
    """Game ``number``'s (1-based) PDN record, as :func:`pdn_records` gives it; None when
    that game is not stored."""
    found = store.record_of_game(number - 1)
    if found is None:
        return None
    _info, record = found
    record.number = number
    return format_game(record, stored_pdn_fields(store) if fields is None else fields)


def export_epd(store: TournamentStore, path: str) -> int:
    """Every stored game's final position (the ``-epdout`` line); returns the number."""
    return write_whole(path, lambda fh: _write_games(store.records_by_game(), fh, _epd), "-epd")


def export_json(store: TournamentStore, path: str) -> int:
    """Every stored game as a JSON list of objects; returns the number of games."""
    return write_whole(path, lambda fh: _write_games(store.records_by_game(), fh, _json,
                                                     head="[", tail="\n]\n"), "-json")


def open_game_files(
    pdn_path: str | None, pdn_fields: PdnFields = NO_FIELDS, epd_path: str | None = None
) -> list[GameFileWriter]:
    """The live per-game files, opened for appending: ``-pdnout`` (with its ``pdn_fields``)
    and ``-epdout``. If one cannot be opened, those already open are closed again."""
    writers: list[GameFileWriter] = []
    try:
        if pdn_path:
            writers.append(PdnWriter(pdn_path, pdn_fields))
        if epd_path:
            writers.append(EpdWriter(epd_path))
    except BaseException:
        for writer in writers:
            writer.close()
        raise
    return writers


def _is_prefix(old: str, new: str) -> bool:
    """True when file ``old`` is a byte prefix of file ``new``."""
    if os.path.getsize(old) > os.path.getsize(new):
        return False
    with open(old, "rb") as a, open(new, "rb") as b:
        while True:
            chunk = a.read(_CHUNK)
            if not chunk:
                return True
            if b.read(len(chunk)) != chunk:
                return False


def sync_pdn(store: TournamentStore, path: str, fields: PdnFields = NO_FIELDS) -> str | None:
    """Make the PDN file hold exactly the database's games (written with ``fields``);
    returns a one-line note when an old file had to be kept aside (None otherwise)."""
    return _sync(store, path, _pdn(fields))


def sync_epd(store: TournamentStore, path: str) -> str | None:
    """:func:`sync_pdn` for the ``-epdout`` file: one final position per stored game."""
    return _sync(store, path, _epd)


def _sync(
    store: TournamentStore, path: str, render: Callable[[int, dict[str, Any], GameRecord], str]
) -> str | None:
    target = write_target(path)
    if kind(target) not in (None, "file"):
        return None  # a device or a FIFO: nothing to read back, appended to as it is
    fresh = f"{target}.sync"
    check_side_file(fresh, path)
    try:
        with open(fresh, "w", encoding="utf-8") as fh:
            _write_games(store.records(), fh, render)  # the live file is in finishing order
            fh.flush()
            os.fsync(fh.fileno())
        note = None
        keep = 0  # bytes of the live file that are already right
        if os.path.exists(target) and os.path.getsize(target):
            if _is_prefix(target, fresh):
                keep = os.path.getsize(target)
            else:
                backup = _free_backup_name(target)
                copy_into(target, backup)
                note = (f"{path} differs from the database's games as written now (games the "
                        f"database lacks, or other comments); kept it as {backup}")
        copy_into(fresh, target, keep)
    except OSError as exc:  # a full disk names no file: the output it was for is named
        if exc.filename == fresh:  # (a folder that takes no new file, such as /proc)
            raise OSError(exc.errno, f"{exc.strerror} (writing {fresh} beside it)",
                          path) from None
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(fresh)
    return note


def _free_backup_name(target: str) -> str:
    """Where an output file's games that the database lacks are kept: ``FILE.bak``, or
    ``FILE.bak.2``, ``.3``, ... when that is taken (an earlier backup is never
    overwritten: its games may be in no other file)."""
    backup, number = f"{target}.bak", 1
    while os.path.lexists(backup):
        number += 1
        backup = f"{target}.bak.{number}"
    return backup
