"""What ``guti tournament`` does once :mod:`guti.referee.cli.tournament` has seen it is not
asked for its help: read and check the options, get the engines ready, say what will be
played; then :mod:`guti.referee.cli.tournament_play` plays it. A mistake in the options is
told before the event loop, the engines' process layer or the terminal display is loaded.

Exit status: 0 when the tournament ran (all scheduled games stored, or an
SPRT decided), 2 for a mistake on the command line, in the config file, a
database that does not match or is in use by another guti, or an engine that
cannot start (one line on stderr), 1 when storing failed (disk full, damaged
database: one line naming what is lost), 130 when interrupted (the database is
resumable: run the same command with ``-resume``).
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from typing import TYPE_CHECKING

from guti.referee.cli.common import fail
from guti.referee.config.args import CliError
from guti.referee.config.tournament import settings_from_argv
from guti.referee.process.sandbox import SandboxError, report_lines
from guti.referee.process.text import visible
from guti.referee.storage.store import StoreError, TournamentStore

if TYPE_CHECKING:
    from guti.referee.execution.executor import ExecutionPlan
    from guti.referee.tournament.settings import TournamentSettings


def run_tournament_command(argv: list[str]) -> int:
    """``guti tournament`` (its help aside)."""
    try:
        settings = settings_from_argv(argv, lambda line: print(line, flush=True))
    except CliError as exc:
        return fail("tournament", str(exc))
    # the run's modules load before the header: a Ctrl-C meanwhile ends the command as an
    # interrupted start (guti's own "interrupted"), with nothing said about a run
    from guti.referee.cli.tournament_play import play_tournament

    plan = settings.execution_plan(_games_left(settings))
    print(_header(settings, plan), flush=True)
    try:
        for line in report_lines((c.name, c.sandbox) for c in settings.engines if c.sandbox):
            print(line, flush=True)
    except SandboxError as exc:
        return fail("tournament", str(exc))
    if settings.serve and importlib.util.find_spec("aiohttp") is None:
        return fail("tournament", "-serve needs aiohttp: pip install 'guti[web]'")
    return play_tournament(settings, plan)


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
