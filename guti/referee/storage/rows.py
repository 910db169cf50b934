"""A finished game and an engine as the tournament database stores them, and back.

:func:`game_row` makes the ``games`` row of a finished game (its JSON columns encoded:
CPU work, done apart from the write that waits for the disk), :func:`row_to_record`
rebuilds the :class:`~guti.referee.game.record.GameRecord` from a row; the engines are
stored as JSON (:func:`engine_to_dict`, what the report shows of them).
The database itself, its schema and its transactions are
:mod:`guti.referee.storage.store`'s.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.resources import EngineUse
from guti.referee.ugi.search_info import Score, SearchInfo
from guti.rules import Board, Side, get_game

if TYPE_CHECKING:
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.scheduled import ScheduledGame


# --------------------------------------------------------------------------- #
# Engine configurations as JSON (what the report shows of them)
# --------------------------------------------------------------------------- #
def engine_to_dict(cfg: EngineConfig) -> dict[str, Any]:
    return {
        "name": cfg.name,
        "argv": list(cfg.argv),
        "cwd": cfg.cwd,
        "options": dict(cfg.options),
        "restart": cfg.restart,
        "limits": asdict(cfg.limits) if cfg.limits is not None else None,
        "stderr_path": cfg.stderr_path,
    }


#: One finished game: the values of :data:`INSERT_GAME`, in its order.
GameRow = tuple[Any, ...]

INSERT_GAME = (
    "INSERT INTO games(game_id, pair_id, round, white_idx, black_idx, white, black,"
    " result, reason, detail, fault, game, start_fen, first_side, final_fen, moves,"
    " opening_plies, elapsed_ms, clock_ms, date, start_time, time_control, event,"
    " site, round_tag, finished_at, search, cpu_ms, worker, resources)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def game_row(job: ScheduledGame, record: GameRecord) -> GameRow:
    """The ``games`` row of a finished game (the JSON columns encoded: CPU work, done
    apart from the write that waits for the disk)."""
    r = record
    return (
        job.game_id, job.pair_id, job.round, job.white, job.black, r.white, r.black,
        r.result, str(r.reason) if r.reason is not None else None, r.detail, r.fault,
        r.game, r.start_fen, r.first_side, r.final_fen, " ".join(r.moves),
        r.opening_plies, json.dumps(r.elapsed_ms), json.dumps(r.clock_ms), r.date,
        r.start_time, r.time_control, r.event, r.site, r.round, time.time(),
        search_json(r.search), json.dumps(r.cpu_ms), r.worker, resources_json(r),
    )


#: The integer fields of a ply's entry in the ``search`` column, after the score's kind
#: and value: ``[kind, value, depth, seldepth, nodes, nps, time]`` (``null`` where absent).
_SEARCH_INTS = ("depth", "seldepth", "nodes", "nps", "time")


def search_json(search: list[SearchInfo | None]) -> str:
    """The ``search`` column: a JSON list with, per ply, ``null`` (book ply, nothing
    reported) or ``[kind, value, depth, seldepth, nodes, nps, time]`` (``null`` for a field
    not reported). Positional, not objects: a third of the size, and a long game has
    hundreds of plies (the JSON export spells the fields out)."""
    rows: list[list[Any] | None] = []
    for info in search:
        if info is None:
            rows.append(None)
            continue
        score = [info.score.kind, info.score.value] if info.score is not None else [None, None]
        rows.append(score + [getattr(info, name) for name in _SEARCH_INTS])
    return json.dumps(rows, separators=(",", ":"))


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:20]} is not a finite number")
    return number


def _bounded(text: str) -> int:
    number = int(text)
    if not -(1 << 63) <= number < 1 << 63:
        raise ValueError(f"{text[:20]}... is past any number guti stores")
    return number


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number guti stores")


def read_json(text: str | bytes) -> Any:
    """A JSON column read back, refusing what guti never writes and later arithmetic would
    trip on: numbers that are not finite (``1e400``, ``Infinity``, ``NaN``) and whole
    numbers past 64 bits (ValueError: the caller names the damaged game)."""
    return json.loads(text, parse_float=_finite, parse_int=_bounded,
                      parse_constant=_no_constant)


def search_from_json(text: str | None) -> list[SearchInfo | None]:
    """The inverse of :func:`search_json`; a game stored before the column existed
    (NULL) has none. A damaged entry raises ValueError/TypeError (the caller names the game)."""
    if text is None:
        return []
    rows = read_json(text)
    if not isinstance(rows, list):
        raise TypeError(f"search is a {type(rows).__name__}, not a list")
    search: list[SearchInfo | None] = []
    for row in rows:
        if row is None:
            search.append(None)
            continue
        if not isinstance(row, list) or len(row) != 2 + len(_SEARCH_INTS):
            raise ValueError(f"search entry {row!r} is not [kind, value, {', '.join(_SEARCH_INTS)}]")
        kind, value, *numbers = row
        score = Score(str(kind), int(value)) if kind is not None else None
        fields = {name: int(n) for name, n in zip(_SEARCH_INTS, numbers, strict=True)
                  if n is not None}
        search.append(SearchInfo(score=score, **fields))
    return search


def _numbers(column: str, text: str) -> list[float | None]:
    """A per-ply JSON column: a list of numbers (null for a ply with none); ValueError if
    it is anything else (the caller names the game)."""
    values = read_json(text)
    if not isinstance(values, list) or not all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in values):
        raise ValueError(f"{column} is not a list of numbers")
    return values


def cpu_from_json(text: str | None) -> list[float | None]:
    """The ``cpu_ms`` column read back (see :func:`_numbers`); ``[]`` for a game stored
    before it was measured."""
    return _numbers("cpu_ms", text) if text else []


def resources_json(record: GameRecord) -> str | None:
    """The ``resources`` column: ``{"w": {...}, "b": {...}}``, per side what its engine used
    (:meth:`EngineUse.to_json <guti.referee.game.resources.EngineUse.to_json>`); NULL when
    nothing was measured."""
    if not record.resources:
        return None
    return json.dumps({str(side): use.to_json() for side, use in record.resources.items()},
                      separators=(",", ":"))


def resources_from_json(text: str | None) -> dict[Side, EngineUse]:
    """The ``resources`` column read back ({} for a game stored before it existed);
    ValueError when it is not what :func:`resources_json` writes."""
    if not text:
        return {}
    data = read_json(text)
    if not isinstance(data, dict):
        raise ValueError(f"resources {text[:40]!r} is not an object")
    return {Side(side): EngineUse.from_json(use) for side, use in data.items()}


def row_to_record(row: tuple) -> tuple[dict[str, Any], GameRecord]:
    """The game of a ``games`` row (the columns of ``TournamentStore._RECORD_COLUMNS``);
    ValueError/TypeError (RulesError included) where a column is not what guti writes: an
    unknown game or reason, a start FEN that is not one of the game, a per-ply list that is
    not one (the caller names the game)."""
    (seq, game_id, pair_id, rnd, white, black, result, reason, detail, fault, game, start_fen,
     first_side, final_fen, moves, opening_plies, elapsed, clocks, date, start_time, tc, event,
     site, round_tag, search, cpu, worker, resources) = row
    if start_fen is not None:
        Board.from_fen(game, start_fen)  # also: RulesError for a game guti does not play
    else:
        get_game(game)
    record = GameRecord(
        game=game,
        white=white,
        black=black,
        start_fen=start_fen,
        moves=moves.split(),
        elapsed_ms=_numbers("elapsed_ms", elapsed),
        clock_ms=_numbers("clock_ms", clocks),
        search=search_from_json(search),
        cpu_ms=cpu_from_json(cpu),
        resources=resources_from_json(resources),
        opening_plies=opening_plies,
        result=result,
        reason=Reason.parse(reason) if reason is not None else None,
        detail=detail,
        fault=fault,
        round=round_tag,
        date=date,
        start_time=start_time,
        event=event,
        site=site,
        time_control=tc,
        final_fen=final_fen,
        first_side=first_side,
        worker=worker,
    )
    for name, number in (("seq", seq), ("game_id", game_id), ("pair_id", pair_id),
                         ("round", rnd)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ValueError(f"{name} {str(number)[:20]!r} is not a whole number >= 0")
    return {"seq": seq, "game_id": game_id, "pair_id": pair_id, "round": rnd}, record
