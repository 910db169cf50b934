"""What a tournament database must hold before guti believes it: the checks of what is read.

Why: the database is a file anyone can open with ``sqlite3`` (or a disk can damage), and
everything guti reads from it ends up in a computation that was written for the rows
guti itself stored: an ``elapsed_ms`` that is not a list, a schedule naming engine 99 or
an opening that is not legal would surface as a traceback deep in the report, the export
or a resumed run. So every command that reads a database checks it first
(:meth:`TournamentStore.check <guti.referee.storage.store.TournamentStore.check>`, which
calls :func:`check_database`), and what it reads row by row is checked where it is read
(:func:`settings_from_text`, :func:`engine_from_text` here,
:func:`~guti.referee.storage.rows.row_to_record` for a game). Anything else than what
guti writes is one :class:`~guti.referee.storage.errors.StoreError` naming the file, the
table and the row or game, and what is wrong there.

What the whole-database check costs: the tables and columns (``PRAGMA table_info``), the
settings and the engines (a handful of rows), one SQL scan of ``schedule`` and one of
``games`` that checks types, ranges, the vocabulary of results and reasons and the shape
of the JSON columns inside SQLite (a 10,000-game database in a fraction of a second), and
each *distinct* scheduled opening replayed once with the rules core.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from guti.referee.game.defaults import DEFAULT_GAME
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import Limits
from guti.referee.game.openings import Opening
from guti.referee.game.reasons import Reason
from guti.referee.storage.errors import StoreError, damaged
from guti.referee.storage.rows import read_json
from guti.rules import GAMES, Board, RulesError, Side, get_game
from guti.rules.names import canonical_game_name

#: The columns every command relies on, per table (``games.search``, ``cpu_ms``, ``worker``
#: and ``resources``, added later, may be missing: they are read as NULL then).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "engines": ("idx", "name", "config"),
    "schedule": ("game_id", "pair_id", "round", "white", "black", "opening_fen",
                 "opening_moves", "opening_source"),
    "games": ("seq", "game_id", "pair_id", "round", "white_idx", "black_idx", "white", "black",
              "result", "reason", "detail", "fault", "game", "start_fen", "first_side",
              "final_fen", "moves", "opening_plies", "elapsed_ms", "clock_ms", "date",
              "start_time", "time_control", "event", "site", "round_tag", "finished_at"),
}

#: What ``meta.settings`` may name as its format: the tournament formats and ``guti tune``.
TOURNAMENT_FORMATS = ("roundrobin", "gauntlet", "knockout", "tune")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_SPRT_NUMBERS = ("elo0", "elo1", "alpha", "beta")
_SETTINGS = "table meta, row settings"


def _sql_list(values: tuple[str, ...] | list[str]) -> str:
    """``('a','b')`` for an SQL ``IN``: the values are guti's own constants, quoted."""
    return "(" + ",".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def _json_value(path: str, where: str, text: object) -> Any:
    if not isinstance(text, str | bytes):
        raise damaged(path, where, f"{type(text).__name__} where JSON text belongs")
    try:
        return read_json(text)
    except ValueError as exc:
        raise damaged(path, where, f"not JSON guti writes ({exc})") from None


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "object", list: "list", str: "string"}
    return names.get(type(value), type(value).__name__)


def settings_damaged(path: str, what: str) -> StoreError:
    """The error for stored settings that a reader above the storage finds unusable
    (``what``: why, e.g. an SPRT no test can run)."""
    return damaged(path, _SETTINGS, what)


def settings_from_text(path: str, text: object) -> dict[str, Any]:
    """The tournament's settings (``meta.settings``): a JSON object whose game, format,
    PDN fields and SPRT are what guti writes."""
    settings = _json_value(path, _SETTINGS, text)
    if not isinstance(settings, dict):
        raise damaged(path, _SETTINGS, f"a JSON {_kind(settings)}, not an object")
    game = settings.get("game", DEFAULT_GAME)
    try:
        get_game(game)
    except RulesError:
        raise damaged(path, _SETTINGS, f"game {game!r} is not a game guti plays") from None
    fmt = settings.get("format", "roundrobin")
    if fmt not in TOURNAMENT_FORMATS:
        raise damaged(path, _SETTINGS, f"format {fmt!r} is not one of "
                                       f"{', '.join(TOURNAMENT_FORMATS)}")
    fields = settings.get("pdnfields") or []
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise damaged(path, _SETTINGS, f"pdnfields {fields!r} is not a list of names")
    for key in ("event", "site"):
        if not isinstance(settings.get(key, ""), str | None):
            raise damaged(path, _SETTINGS, f"{key} {settings[key]!r} is not text")
    sprt = settings.get("sprt")
    if sprt is not None and not (
            isinstance(sprt, dict) and set(sprt) <= {*_SPRT_NUMBERS, "model"}
            and all(isinstance(sprt.get(k, 0), int | float) for k in _SPRT_NUMBERS)
            and isinstance(sprt.get("model", ""), str)):
        raise damaged(path, _SETTINGS, f"sprt {sprt!r} is not elo0, elo1, alpha, beta, model")
    return settings


def _optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def engine_from_text(path: str, idx: int, text: object) -> EngineConfig:
    """Engine ``idx`` (0-based) as stored in ``engines.config`` (what the report shows of
    it), every field what guti writes."""
    where = f"table engines, engine {idx + 1}"
    data = _json_value(path, where, text)
    if not isinstance(data, dict):
        raise damaged(path, where, f"config is a JSON {_kind(data)}, not an object")
    argv: Any = data.get("argv")
    limits, options = data.get("limits"), data.get("options") or {}
    problem = None
    if not isinstance(data.get("name"), str):
        problem = "config has no name"
    elif not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        problem = f"config argv {argv!r} is not a command line"
    elif not (_optional_text(data.get("cwd")) and _optional_text(data.get("stderr_path"))):
        problem = "config cwd or stderr_path is not text"
    elif not isinstance(options, dict):
        problem = f"config options {options!r} is not an object"
    elif limits is not None and not (
            isinstance(limits, dict) and set(limits) <= set(Limits.__dataclass_fields__)
            and all(v is None or isinstance(v, int | float) for v in limits.values())):
        problem = f"config limits {limits!r} is not a time control"
    if problem is not None:
        raise damaged(path, where, problem)
    return EngineConfig(
        name=data["name"], argv=list(argv), cwd=data.get("cwd"), options=dict(options),
        restart=bool(data.get("restart")),
        limits=Limits(**limits) if limits is not None else None,
        stderr_path=data.get("stderr_path"))


def check_database(conn: sqlite3.Connection, path: str) -> None:
    """Check the whole database (see the module docstring); StoreError if anything is
    not what guti writes, or the file cannot be read."""
    try:
        _check_tables(conn, path)
        row = conn.execute("SELECT value FROM meta WHERE key='settings'").fetchone()
        if row is None:
            raise StoreError(f"{path}: no tournament in this database")
        named = str(settings_from_text(path, row[0]).get("game", DEFAULT_GAME))
        game = canonical_game_name(named) or named
        engines = _check_engines(conn, path)
        _check_schedule(conn, path, engines, game)
        _check_games(conn, path, engines, game)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: {exc} (the file is damaged)") from None


def _check_tables(conn: sqlite3.Connection, path: str) -> None:
    """Every table with its columns, and no trigger (guti makes none): one could drop or
    change what a run stores while the run says it stored it."""
    extra = conn.execute("SELECT type, name FROM sqlite_master WHERE type = 'trigger' "
                         "ORDER BY name").fetchone()
    if extra is not None:
        raise damaged(path, f"{extra[0]} {extra[1]}", "guti makes none")
    for table, columns in REQUIRED_COLUMNS.items():
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not have:
            raise damaged(path, f"table {table}", "missing")
        missing = [c for c in columns if c not in have]
        if missing:
            raise damaged(path, f"table {table}", f"column {missing[0]} missing")


def _check_engines(conn: sqlite3.Connection, path: str) -> int:
    """Every engine's config; returns how many engines there are (numbered 0..n-1)."""
    rows = conn.execute("SELECT idx, name, config FROM engines ORDER BY idx").fetchall()
    for n, (idx, name, config) in enumerate(rows):
        if idx != n:
            raise damaged(path, "table engines", f"engine {n + 1} is missing (idx {idx!r} "
                                                  f"where {n} belongs)")
        if engine_from_text(path, n, config).name != name:
            raise damaged(path, f"table engines, engine {n + 1}",
                          f"config names another engine than {name!r}")
    if len(rows) < 2:
        raise damaged(path, "table engines", f"{len(rows)} engines, a tournament has 2 or more")
    return len(rows)


def _game(game_id: object) -> str:
    return f"game {game_id + 1}" if isinstance(game_id, int) else f"game id {game_id!r}"


def _first_problem(conn: sqlite3.Connection, sql: str, last: int,
                   game: str = DEFAULT_GAME) -> tuple | None:
    """The first row the checking query ``sql`` finds wrong: ``(game_id, problem)``;
    ``:last`` in it is the last engine index, ``:game`` the tournament's game."""
    return conn.execute(sql, {"last": last, "game": game}).fetchone()


_INTEGER = "typeof({}) != 'integer'"


def _check_schedule(conn: sqlite3.Connection, path: str, engines: int, game: str) -> None:
    ints = " OR ".join(_INTEGER.format(c) for c in ("game_id", "pair_id", "round", "white", "black"))
    bad = _first_problem(conn, f"""
        SELECT game_id, CASE
          WHEN {ints} THEN 'game_id, pair_id, round, white, black are not all whole numbers'
          WHEN white NOT BETWEEN 0 AND :last OR black NOT BETWEEN 0 AND :last
            THEN 'engine index ' || (CASE WHEN white NOT BETWEEN 0 AND :last THEN white
                                     ELSE black END)
                 || ', but the engines are numbered 0 to ' || :last
          WHEN white = black THEN 'an engine plays itself'
          WHEN game_id < 0 OR round < 0 OR pair_id < 0 THEN 'a negative id or round'
          WHEN (opening_fen IS NOT NULL AND typeof(opening_fen) != 'text')
               OR typeof(opening_moves) != 'text' OR typeof(opening_source) != 'text'
            THEN 'opening_fen, opening_moves or opening_source is not text'
        END AS problem FROM schedule WHERE problem IS NOT NULL ORDER BY rowid LIMIT 1""",
        engines - 1)
    if bad is not None:
        raise damaged(path, f"table schedule, {_game(bad[0])}", bad[1])
    openings = conn.execute(
        "SELECT opening_fen, opening_moves, MIN(game_id) FROM schedule"
        " WHERE opening_fen IS NOT NULL OR opening_moves != '' GROUP BY 1, 2")
    for fen, moves, game_id in openings:
        try:
            Opening(fen, tuple(moves.split())).board(game)
        except (RulesError, ValueError) as exc:
            raise damaged(path, f"table schedule, {_game(game_id)}",
                          f"opening is not one of {game}: {exc}") from None


def _json_list_of_numbers(column: str) -> str:
    """SQL: true when ``column`` is not a JSON list of finite numbers and nulls."""
    return (f"json_valid({column}) = 0 OR json_type({column}) != 'array' OR EXISTS (SELECT 1"
            f" FROM json_each(games.{column}) WHERE type NOT IN ('integer', 'real', 'null')"
            " OR abs(value) > 1e300)")  # (1e400, or 400 digits, is read as infinity)


def _check_games(conn: sqlite3.Connection, path: str, engines: int, game: str) -> None:
    ints = " OR ".join(_INTEGER.format(c) for c in (
        "game_id", "pair_id", "round", "white_idx", "black_idx", "opening_plies"))
    texts = " OR ".join(f"typeof({c}) != 'text'" for c in (
        "white", "black", "detail", "moves", "final_fen", "date", "start_time",
        "time_control", "event", "site", "round_tag"))
    have = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    search = ("WHEN search IS NOT NULL AND (json_valid(search) = 0 OR json_type(search) != 'array')"
              " THEN 'search is not a JSON list'") if "search" in have else ""
    resources = ("WHEN resources IS NOT NULL AND (json_valid(resources) = 0"
                 " OR json_type(resources) != 'object') THEN 'resources is not a JSON object'"
                 ) if "resources" in have else ""
    cpu = (f"WHEN cpu_ms IS NOT NULL AND ({_json_list_of_numbers('cpu_ms')})"
           " THEN 'cpu_ms is not a list of finite numbers'") if "cpu_ms" in have else ""
    reasons = _sql_list([str(r) for r in Reason])
    sides = _sql_list([str(s) for s in Side])
    bad = _first_problem(conn, f"""
        SELECT game_id, CASE
          WHEN {ints} THEN 'ids, round, engines or opening_plies are not whole numbers'
          WHEN white_idx NOT BETWEEN 0 AND :last OR black_idx NOT BETWEEN 0 AND :last
            THEN 'engine indices ' || white_idx || ' and ' || black_idx
                 || ', but the engines are numbered 0 to ' || :last
          WHEN {texts} THEN 'a text column holds something else'
          WHEN game_id < 0 OR round < 0 OR pair_id < 0 THEN 'a negative id or round'
          WHEN white != (SELECT name FROM engines WHERE idx = white_idx)
               OR black != (SELECT name FROM engines WHERE idx = black_idx)
            THEN 'engine names ' || quote(white) || ' and ' || quote(black)
                 || ' are not those of engines ' || white_idx || ' and ' || black_idx
          WHEN result NOT IN {_sql_list(RESULTS)} THEN 'result ' || quote(result)
               || ' is not one of {", ".join(RESULTS)}'
          WHEN reason IS NOT NULL AND reason NOT IN {reasons}
            THEN 'unknown reason ' || quote(reason)
          WHEN fault IS NOT NULL AND fault NOT IN {sides} THEN 'fault ' || quote(fault)
               || ' is not a side'
          WHEN first_side NOT IN {sides} THEN 'first_side ' || quote(first_side)
               || ' is not a side'
          WHEN lower(trim(game)) NOT IN {_sql_list(list(GAMES))} THEN 'game ' || quote(game)
               || ' is not a game guti plays'
          WHEN lower(trim(game)) != :game THEN 'game ' || quote(game)
               || ' in a tournament of ' || :game
          WHEN start_fen IS NOT NULL AND typeof(start_fen) != 'text' THEN 'start_fen is not text'
          WHEN moves GLOB '*[^0-9x -]*' THEN 'moves ' || quote(substr(moves, 1, 40))
               || ' are not moves'
          WHEN opening_plies < 0 THEN 'opening_plies ' || opening_plies || ' is negative'
          WHEN opening_plies > (CASE WHEN trim(moves) = '' THEN 0 ELSE
               length(trim(moves)) - length(replace(trim(moves), ' ', '')) + 1 END)
            THEN 'opening_plies ' || opening_plies || ', more than the moves stored'
          WHEN final_fen GLOB '*[^0-9A-Za-z/ -]*' THEN 'final_fen ' || quote(substr(final_fen, 1, 40))
               || ' is not a FEN'
          WHEN {_json_list_of_numbers("elapsed_ms")} THEN 'elapsed_ms is not a list of finite numbers'
          WHEN {_json_list_of_numbers("clock_ms")} THEN 'clock_ms is not a list of finite numbers'
          {search}
          {resources}
          {cpu}
          WHEN NOT EXISTS (SELECT 1 FROM schedule s WHERE s.game_id = games.game_id)
            THEN 'not in the schedule'
          WHEN NOT EXISTS (SELECT 1 FROM schedule s WHERE s.game_id = games.game_id
                           AND s.white = white_idx AND s.black = black_idx)
            THEN 'engines ' || white_idx || ' and ' || black_idx
                 || ' are not the ones the schedule gives this game'
        END AS problem FROM games WHERE problem IS NOT NULL ORDER BY seq LIMIT 1""",
        engines - 1, game)
    if bad is not None:
        raise damaged(path, f"table games, {_game(bad[0])}", bad[1])
    starts = conn.execute("SELECT start_fen, game, MIN(seq), MIN(game_id) FROM games"
                          " WHERE start_fen IS NOT NULL GROUP BY 1, 2")
    for fen, game, _seq, game_id in starts:
        try:
            Board.from_fen(game, fen)
        except RulesError as exc:
            raise damaged(path, f"table games, {_game(game_id)}",
                          f"start_fen is not one of {game}: {exc}") from None
