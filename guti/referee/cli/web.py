"""``guti report DB -html FILE``, ``guti serve DB [-port N] [-host H]`` and the live page of
``guti tournament ... -serve [HOST:]PORT``.

The report needs nothing beyond guti itself; serving needs aiohttp (the ``web`` extra),
imported only when a server is asked for, with a one-line error naming the extra.
"""

from __future__ import annotations

import contextlib
import os
import signal

from guti.referee.cli.common import (
    complain,
    database_and_rest,
    fail,
    failed,
    os_failed,
    status_stream,
)
from guti.referee.config.args import CliError, Kind, OptionSpec, parse_cli, usage
from guti.referee.config.option_specs import SPRT_OPTION

#: Not ``typing.TYPE_CHECKING``: ``--help`` should not pay for importing ``typing`` either.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

REPORT_OPTIONS = [
    OptionSpec("html", Kind.VALUE, help="write the report to this HTML file"),
    SPRT_OPTION,
    OptionSpec("help", Kind.FLAG, help="show this help"),
]
SERVE_OPTIONS = [
    OptionSpec("port", Kind.VALUE, help="TCP port (default 8080; 0: any free port)"),
    OptionSpec("host", Kind.VALUE, help="address to bind (default 127.0.0.1, loopback only)"),
    OptionSpec("commands", Kind.FLAG, help="show the engines' command lines on the page"),
    SPRT_OPTION,
    OptionSpec("help", Kind.FLAG, help="show this help"),
]
NO_AIOHTTP = "serving pages needs aiohttp: pip install 'guti[web]'"




def main_report(argv: list[str]) -> int:
    """Entry point of ``guti report``."""
    if any(w in ("-help", "--help", "-h") for w in argv):
        print(usage("guti report DB", REPORT_OPTIONS))
        return 0
    # Here, not at the top: the help above needs none of it (start-up time).
    from guti.referee.config.outputs import check_outputs
    from guti.referee.config.sprt_args import check_stored_pairs, sprt_from_args
    from guti.referee.process.text import visible
    from guti.referee.storage.store import StoreError, TournamentStore
    from guti.referee.web.report import write_report

    try:
        path, rest = database_and_rest("report", argv)
        args = parse_cli(rest, REPORT_OPTIONS)
        html = args.value("html")
        if not html:
            raise CliError("give -html FILE to say where the report goes")
        check_outputs([("database", path), ("-html", html)])
        out = status_stream(html)  # before the file is replaced
        sprt = sprt_from_args(args)
        with TournamentStore.checked(path) as store:
            if sprt is not None:
                check_stored_pairs([store])
            games = write_report(store, html, sprt, "-html")
    except (CliError, StoreError) as exc:
        return failed("report", exc)
    except BrokenPipeError:  # the output's reader is gone: exit 141 (guti.cli)
        raise
    except OSError as exc:
        return os_failed("report", exc)
    print(f"{games} games in the report; open it in a browser:", flush=True, file=out)
    print(visible(html), flush=True, file=out)
    return 0


def main_serve(argv: list[str]) -> int:
    """Entry point of ``guti serve``: the live page of a database, read-only, until Ctrl-C."""
    if any(w in ("-help", "--help", "-h") for w in argv):
        print(usage("guti serve DB", SERVE_OPTIONS))
        return 0
    import asyncio

    from guti.referee.config.given import GivenOptions
    from guti.referee.config.sprt_args import sprt_from_args
    from guti.referee.storage.store import StoreError, TournamentStore
    from guti.referee.web.data import report_data

    try:
        path, rest = database_and_rest("serve", argv)
        args = parse_cli(rest, SERVE_OPTIONS)
        port = GivenOptions.from_flags(args).whole("port", 8080, minimum=0)
        if port > 65535:
            raise CliError(f"-port: {port} is more than 65535")
        host = args.value("host", "127.0.0.1") or "127.0.0.1"
        sprt = sprt_from_args(args)
        with TournamentStore.checked(path) as store:
            # the page read once: a damaged database is one line now, not a broken page later
            report_data(store, sprt)
    except (CliError, StoreError) as exc:
        return failed("serve", exc)
    try:
        from guti.referee.web.live import LiveHub
        from guti.referee.web.server import listen_error, serving
    except ModuleNotFoundError:
        return fail("serve", NO_AIOHTTP)

    stopped_by: list[int] = []  # the signal that stopped the server

    async def serve() -> None:
        # Stop on Ctrl-C, SIGTERM or SIGHUP by handlers of our own, so the server stops
        # even when it was started with SIGINT ignored (as a background job, or by a
        # parent that ignores it): the page is read-only, nothing is left half-done.
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def stop(signo: int) -> None:
            stopped_by.append(signo)
            task.cancel()

        for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signo, stop, signo)
        hub = LiveHub(path, sprt, show_commands=args.has("commands"),
                      warn=lambda text: complain("serve", text))
        try:
            with contextlib.suppress(asyncio.CancelledError):
                hub.check_state()
                await hub.refresh()  # every stored game, read once, before the first page
                async with serving(hub, host, port) as url:
                    print(f"serving {path} at {url} (read-only; Ctrl-C to stop)", flush=True)
                    await hub.watch()
        finally:
            hub.close()

    try:
        asyncio.run(serve())
    except OSError as exc:
        return fail("serve", f"cannot listen on {host}:{port}: {listen_error(exc)}")
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    # As a shell reports a command a signal ended: 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP).
    return 128 + stopped_by[0] if stopped_by else 0


async def run_with_live_page(settings: Any, run: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run the tournament (``run(observer)``) with its live page served, if ``-serve`` asks:
    by a process of its own (:mod:`guti.referee.web.feed`), so no browser can slow a game."""
    if not settings.serve:
        return await run(None)
    from guti.referee.execution.stopping import ABORT_GRACE
    from guti.referee.web.feed import LiveServerError, start_live_server
    from guti.referee.web.server import parse_address

    host, port = parse_address(settings.serve)
    try:
        feed, url = await start_live_server(settings.db_path, host, port, settings.sprt)
    except LiveServerError as exc:
        from guti.referee.tournament.run import TournamentError

        raise TournamentError(f"-serve {settings.serve}: {exc}") from None
    print(f"live page: {url}", flush=True)
    outcome = None
    try:
        outcome = await run(feed)
        return outcome
    finally:
        stopped = "interrupted" if outcome is None else (outcome.stopped or "")
        report = (settings.report_path if outcome is not None and not outcome.failed
                  and outcome.stopped != "interrupted" else None)
        # after an abort the process ends within ABORT_BOUND s: the server gets a part
        aborted = outcome is None or outcome.interrupted
        await feed.close(stopped, os.path.abspath(report) if report else None,
                         within=ABORT_GRACE if aborted else None)


def write_tournament_report(settings: Any) -> str | None:
    """Write ``-report FILE`` after a tournament; returns the path, or None if not asked."""
    if not settings.report_path:
        return None
    from guti.referee.storage.store import TournamentStore
    from guti.referee.web.report import write_report

    # Opened as the run opened it, not read-only: SQLite's side files (the write-ahead
    # log) go with the last connection that may write, and this is the run's own file.
    with TournamentStore(settings.db_path) as store:
        write_report(store, settings.report_path, settings.sprt)
    return str(settings.report_path)
