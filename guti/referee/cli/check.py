"""``guti check [--game GAME] -- ENGINE_CMD [ARGS...]``: its options, and the exit status.

What the check does is :mod:`guti.referee.tools.check`. Exit status 0 when no item
FAILed (the engine conforms to UGI), 1 when one did, 2 for a command-line mistake or an
engine that cannot be started at all (one "cannot start" line, as ``guti match`` says it),
130 when interrupted.
"""

from __future__ import annotations

import asyncio
import sys

from guti.referee.cli.engine_argv import (
    OneLineParser,
    game_argument,
    parse_options,
    split_engine_argv,
)
from guti.referee.process.errors import EngineStartError
from guti.referee.process.text import visible
from guti.referee.tools.check import run_check
from guti.referee.tools.check_session import said


def main(argv: list[str]) -> int:
    """Entry point of ``guti check``."""
    ap = OneLineParser(
        prog="guti check",
        description="Check an engine against protocol.md, one PASS/FAIL/WARN/SKIP line per "
        "item. FAIL: UGI requires it of every engine; WARN: a guti extension (d, go perft, "
        "the wording of error lines) or debugging text on stdout. Exit status 0 when no "
        "item FAILed (the engine conforms to UGI).",
        usage="guti check [--game GAME] -- ENGINE_CMD [ARGS...]",
    )
    ap.add_argument("--game", action="append", type=game_argument,
                    help="check only this game (repeatable; default: every game it declares)")
    opts_argv, cmd = split_engine_argv(argv)
    opts = parse_options(ap, opts_argv)
    if not cmd:
        ap.error("no engine command: give it after '--', e.g. guti check -- python -m guti.engine")

    def emit(line: str) -> None:
        print(visible(line), flush=True)

    try:
        games = list(dict.fromkeys(opts.game)) if opts.game else None  # each once
        failures = asyncio.run(run_check(cmd, games, emit))  # UGI failures only
    except EngineStartError as exc:  # nothing to check: one line, as guti match says it
        print(visible(f"guti check: {said(exc)}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("guti check: interrupted", file=sys.stderr)
        return 130
    return 1 if failures else 0
