"""``guti console [--game GAME] -- ENGINE_CMD [ARGS...]``: its options, and the exit status.

What the console does is :mod:`guti.referee.tools.console`. Exit status 0 when the
console ended (``/quit`` or end of input), 1 when the engine plays no game guti knows, 2
for a command-line mistake or an engine that cannot be started (one ``guti console:``
line on stderr, as ``guti check`` and ``guti match`` say it), 130 when interrupted.
"""

from __future__ import annotations

import asyncio
import sys

from guti.referee.cli.common import fail
from guti.referee.cli.engine_argv import (
    OneLineParser,
    game_argument,
    parse_options,
    split_engine_argv,
)
from guti.referee.tools.console import run_console
from guti.referee.tools.console_session import ConsoleStartError


def main(argv: list[str]) -> int:
    """Entry point of ``guti console``."""
    ap = OneLineParser(
        prog="guti console",
        description="Talk to an engine by hand: raw UGI lines plus /commands (/help).",
        usage="guti console [--game GAME] -- ENGINE_CMD [ARGS...]",
    )
    ap.add_argument("--game", type=game_argument, help="game to start with "
                    "(default: the engine's UGI_Variant default)")
    opts_argv, cmd = split_engine_argv(argv)
    opts = parse_options(ap, opts_argv)
    if not cmd:
        ap.error("no engine command: give it after '--', e.g. guti console -- python -m guti.engine")
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        return asyncio.run(run_console(cmd, opts.game, tty))
    except ConsoleStartError as exc:
        return fail("console", str(exc))
    except KeyboardInterrupt:
        return 130
