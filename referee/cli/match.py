"""``guti match``: one match between two engine executables, cutechess-cli style.

Example::

    guti match -engine cmd=./a.out name=A option.Hash=16 \\
               -engine cmd=python3 args="-m mybot --fast" name=B dir=bots \\
               -each tc=5+0.05 timemargin=50 -game pretwa -games 10 \\
               -pdnout file=out.pdn -log file=traffic.log -openings file=book.txt order=random

Options (each also with two dashes):

- ``-engine KEY=VALUE...`` (twice): ``cmd``, ``args``, ``name``, ``dir``,
  ``option.NAME``, ``stderr=FILE``, ``restart=on|off`` and the limits below;
- ``-each KEY=VALUE...``: applied to both engines first;
- limits: ``tc=[MOVES/]BASE[+INC]`` seconds, ``st=S``, ``depth=N``,
  ``nodes=N``, ``timemargin=MS``;
- ``-game egara-guti|pretwa`` (``-variant`` is the same), ``-games N``;
- ``-fen FEN`` or ``-openings file=F [order=random|sequential] [plies=N]``
  (``file=random:K`` or no ``file=``: random openings of K / ``plies`` plies
  from the start, seeded by ``-srand``), ``-srand N``;
- ``-pdnout [file=]F``, ``-log [file=]F``, ``-event TEXT``, ``-site TEXT``;
- ``-handshake-timeout S``, ``-move-timeout S`` (moves without a clock),
  ``-stall-timeout S`` (grace after the time is gone); the defaults are in
  :mod:`referee.game.settings` and ``guti match -help``.

Prints one line per game and the final score. Exit status 0 when the match
was played, 2 for a command-line mistake or an engine that cannot start
(one line on stderr), 130 when interrupted.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from referee.config.args import CliError, parse_cli, usage
from referee.config.options import MATCH_OPTIONS

if TYPE_CHECKING:  # the match machinery is imported when a match runs, not for --help
    from referee.game.record import GameRecord
    from referee.tournament.match import MatchScore
    from referee.tournament.settings import MatchSettings


async def run_until_signalled(settings: MatchSettings) -> MatchScore:
    """Run the match; SIGTERM/SIGHUP cancel it like Ctrl-C, so engines are still reaped."""
    import asyncio
    import signal

    from referee.tournament.match import run_match

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, task.cancel)
    return await run_match(settings, _print_game(settings.games))


def _print_game(total: int) -> Callable[[int, GameRecord], None]:
    def show(index: int, record: GameRecord) -> None:
        print(f"Game {index + 1}/{total}: {record.summary()}", flush=True)

    return show


def main(argv: list[str]) -> int:
    """Entry point of ``guti match``; returns the exit status."""
    try:
        args = parse_cli(argv, MATCH_OPTIONS)
        if args.has("help"):
            print(usage("guti match", MATCH_OPTIONS))
            return 0
        import asyncio

        from referee.config.match import match_settings
        from referee.process import event_loop
        from referee.process.engine_process import EngineStartError
        from referee.process.traffic_log import TrafficLog

        settings = match_settings(args)
        log_path = args.token_dict("log").get("file")
        traffic = TrafficLog(log_path) if log_path else None
    except CliError as exc:
        print(f"guti match: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"guti match: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    settings.traffic = traffic
    try:
        score = event_loop.run(run_until_signalled(settings))
    except EngineStartError as exc:
        print(f"guti match: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"guti match: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("guti match: interrupted", file=sys.stderr)
        return 130
    finally:
        if traffic is not None:
            traffic.close()
    print(score.line(), flush=True)
    return 0
