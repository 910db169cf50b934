"""What a match is: :class:`~guti.referee.tournament.settings.MatchSettings` from a command line."""

from __future__ import annotations

from guti.referee.config.args import CliError, ParsedArgs
from guti.referee.config.options import (
    check_limits,
    check_writable,
    cluster_address,
    engine_configs,
    game_name,
    game_settings,
    games_count,
    pdn_path,
    record_outputs,
    scheduling,
)
from guti.referee.config.outputs import check_outputs
from guti.referee.tournament.settings import MatchSettings


def match_settings(args: ParsedArgs) -> MatchSettings:
    """Check the whole ``guti match`` command line and turn it into :class:`MatchSettings`."""
    game = game_name(args)
    configs = engine_configs(args)
    if len(configs) != 2:
        raise CliError(f"a match needs exactly two -engine definitions, got {len(configs)}")
    check_limits(configs)
    games = games_count(args)
    seed = args.int_value("srand", 0) if args.has("srand") else None
    settings = game_settings(args, game, seed, games, default_event="?")
    pdn = pdn_path(args)
    log = args.token_dict("log").get("file")
    records = record_outputs(args)
    check_writable([pdn, log, records.epd_path])
    check_outputs([("-pdnout", pdn), ("-log", log), ("-epdout", records.epd_path),
                   *(("stderr", c.stderr_path) for c in configs)])
    return MatchSettings(
        first=configs[0], second=configs[1], game=settings, games=games, pdn_path=pdn,
        cluster=cluster_address(args), scheduling=scheduling(args), records=records,
    )
