"""``guti match``: one match between two engine executables, cutechess-cli style.

Example::

    guti match -engine cmd=./a.out name=A option.Hash=16 \\
               -engine cmd=python3 args="-m mybot --fast" name=B dir=bots \\
               -each tc=5+0.05 timemargin=50 -game pretwa -games 10 \\
               -pdnout file=out.pdn -log file=traffic.log -openings file=book.txt order=random

Options (each also with two dashes):

- ``-engine KEY=VALUE...`` (twice): ``cmd``, ``args``, ``name``, ``dir``,
  ``option.NAME``, ``stderr=FILE``, ``restart=on|off``, the resource limits
  ``limits.memory=SIZE``, ``limits.processes=N``, ``limits.network=off``,
  ``limits.files=private``, ``limits.cpus=N``, ``limits.ponder=off``,
  ``limits.offmove_cpu=S``, ``limits.required=true`` (:mod:`guti.referee.process.sandbox`) and the limits below;
- ``-each KEY=VALUE...``: applied to both engines first;
- limits: ``tc=[MOVES/]BASE[+INC]`` seconds, ``st=S``, ``depth=N``,
  ``nodes=N``, ``timemargin=MS``;
- ``-game NAME`` (``-variant`` is the same): any game of the rules core (egara-guti,
  pretwa, lau-kata-kati, dash-guti, gol-skuish, alquerque, butterfly), ``-games N``;
- ``-fen FEN`` or ``-openings file=F [order=random|sequential] [plies=N]
  [format=epd|pdn]`` (a file of FEN or move lines, or of PDN games: ``.pdn`` and ``.pgn``
  files are PDN unless ``format=`` says otherwise; ``file=random:K`` or no ``file=``:
  random openings of K / ``plies`` plies from the start, seeded by ``-srand``;
  ``start=N``: from the file's N-th opening),
  ``-srand N``;
- ``-noswap``, ``-reverse``, ``-wait MS``, ``-use-affinity [CPUS]`` (fastchess's options,
  see :mod:`guti.referee.config.options`);
- ``-pdnout [file=]F [nodes=true seldepth=true nps=true timeleft=true latency=true]``,
  ``-epdout [file=]F``, ``-show-latency``, ``-show-resources``, ``-log [file=]F``, ``-event TEXT``, ``-site TEXT``;
- ``-handshake-timeout S``, ``-move-timeout S`` (moves without a clock),
  ``-stall-timeout S`` (grace after the time is gone); the defaults are in
  :mod:`guti.referee.game.defaults` and ``guti match -help``.

Prints one line per game, the final score and the time the match took. Exit status 0 when the match
was played, 2 for a command-line mistake or an engine that cannot start
(one line on stderr), 130 when interrupted.
"""

from __future__ import annotations

import sys

from guti.referee.config.args import CliError, parse_cli, usage
from guti.referee.config.option_specs import MATCH_OPTIONS
from guti.referee.process.text import visible

#: Not ``typing.TYPE_CHECKING``: ``--help`` should not pay for importing ``typing`` either.
TYPE_CHECKING = False
if TYPE_CHECKING:  # the match machinery is imported when a match runs, not for --help
    from collections.abc import Callable

    from guti.referee.execution.stopping import RunControl
    from guti.referee.game.record import GameRecord
    from guti.referee.process.traffic_log import TrafficLog
    from guti.referee.stats.resources import ResourceTable
    from guti.referee.tournament.match import MatchScore
    from guti.referee.tournament.settings import MatchSettings


async def run_until_signalled(settings: MatchSettings, control: RunControl,
                              used: ResourceTable) -> MatchScore:
    """Run the match under the signal rules of :mod:`guti.referee.execution.stopping`
    (the same as a tournament's); what the engines used goes into ``used``."""
    from guti.referee.tournament.match import run_match

    def say(text: str) -> None:
        print(visible(text), flush=True)

    def warn(text: str) -> None:
        print(visible(text), file=sys.stderr, flush=True)

    return await run_match(settings, _print_game(settings, used), control, say, warn)


def _print_game(settings: MatchSettings, used: ResourceTable
                ) -> Callable[[int, GameRecord], None]:
    """Each game's line (and latency lines); what its engines used goes into ``used``."""
    from guti.referee.game.latency import latency_lines

    def show(index: int, record: GameRecord) -> None:
        for note in record.notes:  # what the referee met in the game (a move voided, ...)
            print(visible(f"guti: {note}"), file=sys.stderr, flush=True)
        print(visible(f"Game {index + 1}/{settings.games}: {record.summary()}"), flush=True)
        if settings.records.show_latency:
            for line in latency_lines(record):
                print(visible(line), flush=True)
        used.add(record.white, record.black, record.resources)

    return show


def main(argv: list[str]) -> int:
    """Entry point of ``guti match``; returns the exit status."""
    locks = None
    try:
        args = parse_cli(argv, MATCH_OPTIONS)
        if args.has("help"):
            print(usage("guti match", MATCH_OPTIONS))
            return 0
        from guti.referee.config.given import GivenOptions
        from guti.referee.config.match import match_settings

        settings = match_settings(GivenOptions.from_flags(args))
        _report_limits(settings)
        from guti.referee.game.file_lock import FileLocks
        from guti.referee.process.forked import start_lifeline
        from guti.referee.process.traffic_log import TrafficLog

        log_path = args.token_dict("log").get("file")
        start_lifeline()  # before the loop: the watcher of the engines' groups, forked
        # One run per output file, by any of its names (guti.referee.game.file_lock); taken
        # after the fork above, so the watcher holds none of the locks.
        locks = FileLocks()
        local = settings.cluster is None  # a cluster's workers write the engines' stderr
        locks.acquire([("-pdnout", settings.pdn_path), ("-epdout", settings.records.epd_path),
                       ("-log", log_path),
                       *((("stderr", c.stderr_path) for c in (settings.first, settings.second))
                         if local else ())])
        traffic = TrafficLog(log_path) if log_path else None
    except CliError as exc:
        print(visible(f"guti match: {exc}"), file=sys.stderr)
        return 2
    except OSError as exc:
        from guti.faults import exit_status
        from guti.referee.game.file_lock import lock_failure

        if locks is not None:
            locks.release(discard_created=True)
        print(visible(f"guti match: {lock_failure(exc)}"), file=sys.stderr)
        return exit_status(exc)
    with locks:
        return _play(settings, traffic)


def _report_limits(settings: MatchSettings) -> None:
    """The engines' resource limits: how they are enforced here, and what is not (one
    line each); CliError when one that is required cannot be."""
    from guti.referee.process.sandbox import SandboxError, report_lines

    engines = [(c.name, c.sandbox) for c in (settings.first, settings.second) if c.sandbox]
    try:
        lines = report_lines(engines)
    except SandboxError as exc:
        raise CliError(str(exc)) from None
    for line in lines:
        print(visible(line), flush=True)


def _play(settings: MatchSettings, traffic: TrafficLog | None) -> int:
    """The match itself, once its options are checked and its files locked."""
    import asyncio
    import contextlib

    from guti.referee.cli.elapsed import Stopwatch
    from guti.referee.execution.stopping import RunControl
    from guti.referee.process import event_loop
    from guti.referee.process.errors import EngineStartError
    from guti.referee.stats.resources import ResourceTable

    settings.traffic = traffic
    watch = Stopwatch()
    control = RunControl()
    used = ResourceTable([settings.first.name, settings.second.name])
    try:
        score = event_loop.run(run_until_signalled(settings, control, used))
        if traffic is not None:
            traffic.close()  # here, so that a log that cannot be written is told as below
    except BrokenPipeError:
        raise  # stdout closed by its reader: guti's main ends the run quietly
    except (EngineStartError, OSError) as exc:
        from guti.referee.cli.common import run_failed

        return run_failed("match", exc, "")
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("guti match: interrupted", file=sys.stderr)
        return 130
    finally:
        if traffic is not None:
            with contextlib.suppress(OSError):  # told above, or another error is
                traffic.close()
    print(visible(score.line()), flush=True)
    if settings.records.show_resources:
        from guti.referee.cli.resources_view import print_resources
        from guti.referee.cli.standings_view import make_console

        print_resources(used, make_console(sys.stdout))
    print(watch.line(), flush=True)
    if control.stopping:
        print("guti match: interrupted", file=sys.stderr, flush=True)
        return 130
    return 0
