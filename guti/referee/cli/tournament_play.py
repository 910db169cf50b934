"""``guti tournament``'s run, once :mod:`guti.referee.cli.tournament_run` has checked its
options: the games with their progress on the terminal (and the live page of ``-serve``),
then the standings, what the engines used, and ``-report``. Exit status: see
:mod:`guti.referee.cli.tournament_run`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from typing import TYPE_CHECKING

from guti.referee.cli.common import fail, os_failed, run_failed
from guti.referee.cli.elapsed import Stopwatch
from guti.referee.cli.progress import TournamentDisplay
from guti.referee.cli.resources_view import print_resources, resources_from_store
from guti.referee.cli.standings_view import make_console, print_standings
from guti.referee.cli.web import run_with_live_page, write_tournament_report
from guti.referee.execution.executor import prepared
from guti.referee.process import event_loop
from guti.referee.process.errors import EngineStartError
from guti.referee.process.text import visible
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.run import TournamentError, run_tournament, standings_from_store

if TYPE_CHECKING:
    from guti.referee.execution.executor import ExecutionPlan
    from guti.referee.tournament.settings import TournamentSettings


def play_tournament(settings: TournamentSettings, plan: ExecutionPlan) -> int:
    """Play the tournament ``settings`` describe, where ``plan`` says; the exit status."""
    console = make_console(sys.stdout)
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
    elif not os.path.exists(settings.db_path):  # before the database was made, or in memory
        print("guti tournament: interrupted", file=sys.stderr, flush=True)
        return 130
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


def _report(settings: TournamentSettings) -> int:
    """``-report FILE``: write it and print its path as the very last line."""
    try:
        path = write_tournament_report(settings)
    except StoreError as exc:
        return fail("tournament", f"report not written: {exc}")
    except OSError as exc:
        return os_failed("tournament", exc, "report not written: ")
    if path is not None:
        print("report written; open it in a browser:", flush=True)
        print(path, flush=True)
    return 0
