"""``guti tournament``, ``guti standings DB...`` and ``guti export DB -pdn F -json F``:
their options and help; what they do is in :mod:`guti.referee.cli.tournament_run`,
:mod:`guti.referee.cli.standings_run` and :mod:`guti.referee.cli.export_run`.

Why apart: ``--help`` prints plain data, and importing the tournament machinery
(settings model, rules core, store, asyncio) would take most of its start-up time.
Exit status: see those modules.
"""

from __future__ import annotations

import itertools

from guti.referee.cli.common import fail
from guti.referee.config.args import CliError, Kind, OptionSpec, option_name, parse_cli, usage
from guti.referee.config.option_specs import (
    SHOW_RESOURCES_OPTION,
    SPRT_OPTION,
    TOURNAMENT_OPTIONS,
)
from guti.referee.stats.defaults import DEFAULT_DRAW_MODEL


def main_tournament(argv: list[str]) -> int:
    """Entry point of ``guti tournament``."""
    if any(option_name(word) in ("help", "h") for word in argv):
        print(usage("guti tournament [FILE.toml]", TOURNAMENT_OPTIONS))
        return 0
    from guti.referee.cli.tournament_run import run_tournament_command

    return run_tournament_command(argv)


STANDINGS_OPTIONS = [
    SPRT_OPTION,
    OptionSpec("drawmodel", Kind.VALUE,
               help="ratings: 'half' (a draw is half a win) or 'davidson' "
                    f"(default {DEFAULT_DRAW_MODEL})"),
    OptionSpec("anchor", Kind.VALUE,
               help="ratings: NAME=ELO fixes one engine's rating (default: average 0)"),
    SHOW_RESOURCES_OPTION,
    OptionSpec("help", Kind.FLAG, help="show this help"),
]


def main_standings(argv: list[str]) -> int:
    """Entry point of ``guti standings DB [DB...]``."""
    paths = list(itertools.takewhile(lambda word: option_name(word) is None, argv))
    try:
        args = parse_cli(argv[len(paths):], STANDINGS_OPTIONS)
    except CliError as exc:
        return fail("standings", str(exc))
    if args.has("help"):
        print(usage("guti standings DB [DB...]", STANDINGS_OPTIONS))
        return 0
    from guti.referee.cli.standings_run import standings_command

    return standings_command(paths, args)


EXPORT_OPTIONS = [
    OptionSpec("pdn", Kind.VALUE, help="write every game as PDN to this file"),
    OptionSpec("json", Kind.VALUE, help="write every game as a JSON list to this file"),
    OptionSpec("epd", Kind.VALUE, help="write every game's final position (one line each, "
                                       "as -epdout) to this file"),
    OptionSpec("help", Kind.FLAG, help="show this help"),
]


def main_export(argv: list[str]) -> int:
    """Entry point of ``guti export DB -pdn FILE -json FILE -epd FILE``."""
    if any(option_name(word) in ("help", "h") for word in argv):
        print(usage("guti export DB", EXPORT_OPTIONS))
        return 0
    from guti.referee.cli.export_run import export_command

    return export_command(argv, EXPORT_OPTIONS)
