"""``guti tune``: tune an engine's options by self-play (SPSA).

Example::

    guti tune -engine cmd=./myengine -param Reduction=20,0,100,8,0.002 \\
              -iterations 200 -pairs 4 -each tc=2+0.02 -openings file=book.txt -db t.db

Prints the values after every iteration, and at the end the tuned values as
``option.NAME=VALUE`` flags and as a TOML snippet. Exit status: 0 when every iteration
ran, 2 for a mistake on the command line or in the config file (one line each, a bad
``-param`` included), a parameter the engine does not take, a database that holds
another run or an engine that cannot start, 1 when storing failed, 130 when interrupted
(continue with the same command and ``-resume``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sqlite3
import sys

from guti.referee.cli.common import fail, run_failed
from guti.referee.config.args import CliError, option_name, usage
from guti.referee.config.option_specs import TUNE_OPTIONS
from guti.referee.process.text import visible

#: Not ``typing.TYPE_CHECKING``: ``--help`` should not pay for importing ``typing`` either.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from guti.referee.tournament.tuning.run import TuneOutcome
    from guti.referee.tournament.tuning.settings import TuneSettings


def main(argv: list[str]) -> int:
    """Entry point of ``guti tune``."""
    if any(option_name(word) in ("help", "h") for word in argv):
        print(usage("guti tune [FILE.toml]", TUNE_OPTIONS))
        return 0
    from guti.referee.config.engine_build import build_engines
    from guti.referee.config.tune import read_tune_options, tune_settings

    try:
        given = read_tune_options(argv)
        engines, setups = build_engines(given.engines, lambda line: print(line, flush=True),
                                        on_cluster=given.has("cluster"))
        settings = tune_settings(given.with_engines(engines), setups)
    except CliError as exc:
        return fail("tune", str(exc))
    return _run(settings)


def _run(settings: TuneSettings) -> int:
    from guti.referee.cli.elapsed import Stopwatch
    from guti.referee.cli.progress import say_trouble
    from guti.referee.cli.standings_view import make_console
    from guti.referee.cli.tune_view import TuneDisplay, values_text
    from guti.referee.process import event_loop
    from guti.referee.process.errors import EngineStartError
    from guti.referee.process.forked import start_lifeline
    from guti.referee.storage.store import StoreError
    from guti.referee.tournament.tuning.run import TuneError, TuneListener, run_tune

    s = settings
    display = TuneDisplay(make_console(sys.stdout), s)
    # on a cluster the games at once are its workers' (told once it is reached)
    where = f"cluster {s.cluster.text}" if s.cluster is not None else f"concurrency {s.concurrency}"
    display.say(f"tuning {s.engine.name}: {values_text(s, s.spsa().start())}; {s.iterations} "
                f"iterations of {s.pairs} game pair(s) ({s.total_games} games), "
                f"{where}, db {s.db_path}")
    watch = Stopwatch()
    start_lifeline()  # before the loop: the watcher of the engines' process groups
    try:
        display.start()
        with contextlib.closing(display):
            outcome = event_loop.run(run_tune(s, TuneListener(display.say, display.iteration,
                                                              say_trouble)))
    except BrokenPipeError:
        raise  # stdout closed by its reader: guti's main ends the run quietly
    except (TuneError, StoreError, EngineStartError, sqlite3.Error, OSError) as exc:
        return run_failed("tune", exc, s.db_path)
    except KeyboardInterrupt:  # before the run's own signal handling began, or after it
        resumable = os.path.exists(s.db_path)  # (none before the database is made)
        print("guti tune: interrupted" + ("; continue with the same command and -resume"
                                          if resumable else ""), file=sys.stderr, flush=True)
        return 130
    if outcome.failed:
        fail("tune", outcome.failed)
        return 1
    if outcome.finished:  # values no game has moved are no result
        _print_values(s, outcome, values_text(s, outcome.theta))
    print(watch.line(), flush=True)
    if outcome.interrupted:
        print("guti tune: interrupted; continue with the same command and -resume",
              file=sys.stderr, flush=True)
        return 130
    return 0


def _print_values(s: TuneSettings, outcome: TuneOutcome, values: str) -> None:
    """The values as flags for ``guti match``/``tournament`` and as a TOML snippet."""
    from guti.referee.tournament.tuning.run import tuned_options

    applied = len(outcome.history) - 1
    print(f"{outcome.finished}/{outcome.total} games stored in {s.db_path}; "
          f"values after {applied}/{s.iterations} iterations: {values}",
          flush=True)
    options = tuned_options(s.params, outcome.theta, outcome.rounded)
    print("as flags:", visible(" ".join(shlex.quote(f"option.{k}={v}") for k, v in options.items())))
    print("as TOML (in the engine's [[engine]] table):")
    toml = ", ".join(f"{_toml_key(k)} = {v if k in outcome.rounded else repr(v)}"
                     for k, v in options.items())
    print(visible(f"options = {{ {toml} }}"), flush=True)


def _toml_key(name: str) -> str:
    """An option name as a TOML key: bare when it can be, else quoted."""
    bare = name.replace("-", "").replace("_", "").isalnum() and name.isascii()
    return name if bare else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
