"""What ``guti standings DB...`` does once :mod:`guti.referee.cli.tournament` has seen it
is not asked for its help: standings, ratings, crosstable and pairs of tournament
databases.

It reads databases: none of the tournament's settings model, engines or event loop is
loaded. Exit status: 0 when done, 2 for a mistake on the command line or a database that
cannot be read as a tournament's (one line on stderr).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import sys

from guti.referee.cli.common import fail, failed
from guti.referee.cli.resources_view import print_resources, resources_from_store
from guti.referee.cli.standings_view import make_console, print_standings
from guti.referee.config.args import CliError, ParsedArgs
from guti.referee.config.outputs import output_identity
from guti.referee.config.sprt_args import check_stored_pairs, sprt_from_args
from guti.referee.stats.defaults import DEFAULT_DRAW_MODEL
from guti.referee.stats.ratings import DRAW_MODELS, RatingOptions
from guti.referee.stats.sprt import DECISION_KEY, SprtSpec, kept_decision
from guti.referee.stats.standings import Standings
from guti.referee.storage.integrity import settings_damaged
from guti.referee.storage.store import StoreError, TournamentStore
from guti.rules.numbers import decimal_number

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
    read = decimal_number(number)
    elo = math.nan if read is None else read
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
        if args.has("sprt") and len(names) != 2:  # as the tournament refuses it
            raise CliError(f"-sprt: an SPRT tests one pair of engines, got {len(names)} "
                           "engines")
        if args.has("sprt"):
            check_stored_pairs(stores)
        if options.anchor is not None and options.anchor[0] not in names:
            raise CliError(f"-anchor: no engine named {options.anchor[0]!r} in "
                           f"{', '.join(paths)} (engines: {', '.join(names)})")
        table = Standings(names, sprt=sprt,
                          gauntlet=formats == {"gauntlet"}, rating_options=options)
        if len(stores) == 1:  # the decision its run took, for the SPRT it ran
            table.sprt_decided = kept_decision(stores[0].meta(DECISION_KEY))
        finished = total = 0
        for k, store in enumerate(stores):
            index = [names.index(n) for n in store.engine_names()]
            with store.snapshot():  # the count below is of the games in the table
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
        return failed("standings", exc)
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
            return failed("standings", exc)
    print(f"{finished}/{total} games played", flush=True)
    return 0
