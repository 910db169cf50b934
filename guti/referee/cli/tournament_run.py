"""What ``guti tournament``, ``guti standings DB...`` and ``guti export DB -pdn F -json F``
do once :mod:`guti.referee.cli.tournament` has seen they are not asked for their help.

Apart from the entry points so that ``--help`` imports none of this (start-up time).
Exit status: 0 when the tournament ran (all scheduled games stored, or an
SPRT decided), 2 for a mistake on the command line, in the config file, a
database that does not match or is in use by another guti, or an engine that
cannot start (one line on stderr), 1 when storing failed (disk full, damaged
database: one line naming what is lost), 130 when interrupted (the database is
resumable: run the same command with ``-resume``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import sqlite3
import sys

from guti.referee.cli.common import database_and_rest, fail, run_failed
from guti.referee.cli.elapsed import Stopwatch
from guti.referee.cli.progress import TournamentDisplay
from guti.referee.cli.resources_view import print_resources, resources_from_store
from guti.referee.cli.standings_view import make_console, print_standings
from guti.referee.cli.web import run_with_live_page, write_tournament_report
from guti.referee.config.args import CliError, OptionSpec, ParsedArgs, parse_cli
from guti.referee.config.outputs import check_outputs, output_identity
from guti.referee.config.tournament import settings_from_argv, sprt_from_args
from guti.referee.execution.executor import ExecutionPlan, prepared
from guti.referee.process import event_loop
from guti.referee.process.errors import EngineStartError
from guti.referee.process.sandbox import SandboxError, report_lines
from guti.referee.process.text import visible
from guti.referee.stats.defaults import DEFAULT_DRAW_MODEL
from guti.referee.stats.ratings import DRAW_MODELS, RatingOptions
from guti.referee.stats.sprt import SprtSpec
from guti.referee.stats.standings import Standings
from guti.referee.storage.export import export_epd, export_json, export_pdn
from guti.referee.storage.integrity import settings_damaged
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.run import TournamentError, run_tournament, standings_from_store
from guti.referee.tournament.settings import TournamentSettings


def run_tournament_command(argv: list[str]) -> int:
    """``guti tournament`` (its help aside)."""
    console = make_console(sys.stdout)
    try:
        settings = settings_from_argv(argv, lambda line: print(line, flush=True))
    except CliError as exc:
        return fail("tournament", str(exc))
    plan = settings.execution_plan(_games_left(settings))
    print(_header(settings, plan), flush=True)
    try:
        for line in report_lines((c.name, c.sandbox) for c in settings.engines if c.sandbox):
            print(line, flush=True)
    except SandboxError as exc:
        return fail("tournament", str(exc))
    if settings.serve and importlib.util.find_spec("aiohttp") is None:
        return fail("tournament", "-serve needs aiohttp: pip install 'guti[web]'")
    watch = Stopwatch()
    try:
        # -referees: the referee processes are forked now, before the loop, ready at once;
        # else this process starts the engines, and the watcher of their groups is forked
        display = TournamentDisplay(console, settings)
        with prepared(plan) as execution, contextlib.closing(display):
            outcome = event_loop.run(run_with_live_page(settings, lambda observer: run_tournament(
                settings, display, observer=observer, execution=execution)))
    except BrokenPipeError:
        raise  # stdout closed by its reader: guti's main ends the run quietly
    except (TournamentError, StoreError, EngineStartError, sqlite3.Error, OSError) as exc:
        return run_failed("tournament", exc, settings.db_path)
    except KeyboardInterrupt:  # before or after the games, outside the signal handlers
        outcome = None
    if outcome is not None:
        table, finished, total = outcome.standings, outcome.finished, outcome.total
    else:
        try:
            with TournamentStore(settings.db_path, create=False) as store:
                table = standings_from_store(
                    store, store.engine_names(), settings.fmt, settings.sprt
                )
                finished, total = store.count_finished(), store.count_scheduled()
        except StoreError as exc:
            return fail("tournament", str(exc))
    if outcome is not None and outcome.failed:
        fail("tournament", outcome.failed)
        return 1
    print_standings(table, console)
    if settings.records.show_resources:
        try:
            with TournamentStore(settings.db_path, create=False) as store:
                print_resources(resources_from_store([store]), console)
        except StoreError as exc:
            return fail("tournament", str(exc))
    print(visible(f"{finished}/{total} games stored in {settings.db_path}"), flush=True)
    print(watch.line(), flush=True)
    if outcome is None or outcome.stopped == "interrupted":
        print(
            "guti tournament: interrupted; continue with the same command and -resume",
            file=sys.stderr,
            flush=True,
        )
        return 130
    if outcome.stopped:
        print(outcome.stopped, flush=True)
    return _report(settings)


def _games_left(settings: TournamentSettings) -> int | None:
    """The games a ``-resume`` still has to play, as its database says (None: not a
    resume, or the database cannot tell; the run itself reports what is wrong with it)."""
    if not settings.resume or not os.path.exists(settings.db_path):
        return None
    try:
        with TournamentStore(settings.db_path, create=False) as store:
            if not store.has_tournament():
                return None
            return max(0, store.count_scheduled() - store.count_finished())
    except (StoreError, sqlite3.Error):
        return None


def _header(settings: TournamentSettings, plan: ExecutionPlan) -> str:
    """The run's first line: format, engines, game, games, where they are played."""
    names = visible(", ".join(c.name for c in settings.engines))
    # on a cluster the games at once are its workers' (told once it is reached)
    referees = plan.referee_processes()
    where = (f"cluster {settings.cluster.text}" if settings.cluster is not None
             else f"concurrency {settings.concurrency}"
             + (f" on {referees} referee processes" if referees else ""))
    return (f"{settings.fmt} of {len(settings.engines)} engines ({names}): "
            f"{settings.game.name}, {'at least ' if settings.knockout else ''}"
            f"{settings.total_games} games, {where}, db {settings.db_path}")


def _report(settings: TournamentSettings) -> int:
    """``-report FILE``: write it and print its path as the very last line."""
    try:
        path = write_tournament_report(settings)
    except StoreError as exc:
        return fail("tournament", f"report not written: {exc}")
    except OSError as exc:
        return fail("tournament", f"report not written: {exc.filename or ''}: "
                                  f"{exc.strerror or exc}")
    if path is not None:
        print("report written; open it in a browser:", flush=True)
        print(path, flush=True)
    return 0


#: The largest ``|ELO|`` of ``-anchor NAME=ELO``: far past any rating scale, and small
#: enough that the ratings shifted by it keep their differences in a float.
MAX_ANCHOR_ELO = 100_000


def _rating_options(args: ParsedArgs) -> RatingOptions:
    """``-drawmodel`` and ``-anchor NAME=ELO`` (the name may itself hold ``=``)."""
    model = args.value("drawmodel") or DEFAULT_DRAW_MODEL
    if model not in DRAW_MODELS:
        raise CliError(f"-drawmodel: {model!r} is not one of {', '.join(DRAW_MODELS)}")
    text = args.value("anchor")
    if text is None:
        return RatingOptions(draw_model=model)
    name, eq, number = text.rpartition("=")
    try:
        elo = float(number)
    except ValueError:
        elo = float("nan")
    if not eq or not name or not math.isfinite(elo):
        raise CliError(f"-anchor: {text!r} is not of the form NAME=ELO")
    if abs(elo) > MAX_ANCHOR_ELO:  # past it every rating prints the same, or inf
        raise CliError(f"-anchor: {number} is out of range (at most {MAX_ANCHOR_ELO} "
                       "either side of 0)")
    return RatingOptions(draw_model=model, anchor=(name, elo))


def _run_identity(store: TournamentStore) -> tuple[object, ...]:
    """What tells one run's database from another's: its run id (a copy of the file has
    the same), or, in a database made before run ids, its fingerprint, creation time and
    first game."""
    run_id = store.meta("run_id")
    if run_id is not None:
        return ("run", run_id)
    first = next(iter(store.records_after(0)), None)
    return (store.meta("fingerprint"), store.meta("created"),
            None if first is None else (first[1].start_time, tuple(first[1].moves)))


def _merged_standings(paths: list[str], args: ParsedArgs) -> tuple[Standings, int, int]:
    """Standings of every game of every database, engines matched by name.

    Game pair ids are made unique across databases (``pair * len(paths) + k``)
    so pairs of different tournaments never merge.
    """
    options = _rating_options(args)
    sprt = sprt_from_args(args)
    seen: set[tuple[object, ...]] = set()
    for path in paths:  # one file under two names (a link, a hard link) is given twice too
        key = output_identity(path)
        if key in seen:
            raise CliError(f"{path} is given twice: its games would count twice")
        seen.add(key)
    stores: list[TournamentStore] = []
    try:
        copies: dict[tuple[object, ...], str] = {}
        for path in paths:
            store = TournamentStore.checked(path)
            stores.append(store)
            key = _run_identity(store)
            if key in copies:
                raise CliError(f"{copies[key]} and {path} hold the same tournament (one is a "
                               "copy of the other): its games would count twice")
            copies[key] = path
        names: list[str] = []
        formats = set()
        for store in stores:
            formats.add(store.settings().get("format", "roundrobin"))
            names += [n for n in store.engine_names() if n not in names]
        if sprt is None and len(stores) == 1:  # the SPRT the tournament ran, as its report
            try:
                sprt = SprtSpec.of_settings(stores[0].settings())
            except ValueError as exc:
                raise settings_damaged(stores[0].path, str(exc)) from None
        if options.anchor is not None and options.anchor[0] not in names:
            raise CliError(f"-anchor: no engine named {options.anchor[0]!r} in "
                           f"{', '.join(paths)} (engines: {', '.join(names)})")
        table = Standings(names, sprt=sprt,
                          gauntlet=formats == {"gauntlet"}, rating_options=options)
        finished = total = 0
        for k, store in enumerate(stores):
            index = [names.index(n) for n in store.engine_names()]
            for _gid, pair, white, black, result, reason, fault in store.results():
                table.add(index[white], index[black], result, reason, fault,
                          pair * len(stores) + k)
            finished += store.count_finished()
            total += store.count_scheduled()
    finally:
        for store in stores:
            store.close()
    if options.anchor is not None and not table.lines[names.index(options.anchor[0])].games:
        raise CliError(f"-anchor: {options.anchor[0]!r} has played no games")
    return table, finished, total


def standings_command(paths: list[str], args: ParsedArgs) -> int:
    """``guti standings DB [DB...]`` (its help aside): standings, ratings, crosstable and
    pairs of one tournament database, or of several merged by engine name."""
    try:
        if not paths:
            raise CliError("usage: guti standings DB [DB...] [options]")
        table, finished, total = _merged_standings(paths, args)
    except (CliError, StoreError) as exc:
        return fail("standings", str(exc))
    except sqlite3.Error as exc:
        return fail("standings", f"{' '.join(paths)}: {exc}")
    console = make_console(sys.stdout)
    print_standings(table, console)
    if args.has("show-resources"):
        try:
            with contextlib.ExitStack() as stack:
                stores = [stack.enter_context(TournamentStore.checked(p)) for p in paths]
                print_resources(resources_from_store(stores), console)
        except StoreError as exc:
            return fail("standings", str(exc))
    print(f"{finished}/{total} games played", flush=True)
    return 0


def export_command(argv: list[str], options: list[OptionSpec]) -> int:
    """``guti export DB -pdn FILE -json FILE -epd FILE`` (its help aside), ``options``
    being its option list."""
    try:
        path, rest = database_and_rest("export", argv)
        args = parse_cli(rest, options)
        if not (args.has("pdn") or args.has("json") or args.has("epd")):
            raise CliError("nothing to do: give -pdn FILE, -json FILE and/or -epd FILE")
        check_outputs([("database", path), *((f"-{out}", args.value(out))
                                              for out in ("pdn", "json", "epd"))])
        with TournamentStore.checked(path) as store:
            if args.has("pdn"):
                n = export_pdn(store, args.value("pdn") or "")
                print(visible(f"{n} games written to {args.value('pdn')}"), flush=True)
            if args.has("json"):
                n = export_json(store, args.value("json") or "")
                print(visible(f"{n} games written to {args.value('json')}"), flush=True)
            if args.has("epd"):
                n = export_epd(store, args.value("epd") or "")
                print(visible(f"{n} games written to {args.value('epd')}"), flush=True)
    except (CliError, StoreError) as exc:
        return fail("export", str(exc))
    except sqlite3.Error as exc:
        return fail("export", f"{argv[0]}: {exc}")
    except OSError as exc:
        return fail("export", f"{exc.filename or ''}: {exc.strerror or exc}")
    return 0
