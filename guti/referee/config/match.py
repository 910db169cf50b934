"""What a match is: :class:`~guti.referee.tournament.settings.MatchSettings` from the options
given on its command line (:class:`~guti.referee.config.given.GivenOptions`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.config.args import CliError
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
from guti.referee.config.outputs import check_outputs, openings_input
from guti.referee.tournament.settings import MatchSettings

if TYPE_CHECKING:
    from guti.referee.config.given import GivenOptions


def match_settings(given: GivenOptions) -> MatchSettings:
    """Check every option of ``guti match`` and turn them into :class:`MatchSettings`."""
    game = game_name(given)
    configs = engine_configs(given)
    if len(configs) != 2:
        raise CliError(f"a match needs exactly two -engine definitions, got {len(configs)}")
    check_limits(configs)
    games = games_count(given)
    seed = given.whole("srand", 0) if given.has("srand") else None
    pdn = pdn_path(given)
    log = given.table("log").get("file")
    records = record_outputs(given)
    cluster = cluster_address(given)
    stderr = [] if cluster is not None else [c.stderr_path for c in configs]  # else workers'
    check_writable([pdn, log, records.epd_path, *stderr])
    check_outputs([openings_input(given), ("-pdnout", pdn), ("-log", log),
                   ("-epdout", records.epd_path), *(("stderr", c.stderr_path) for c in configs)])
    settings = game_settings(given, game, seed, games, default_event="?")
    return MatchSettings(
        first=configs[0], second=configs[1], game=settings, games=games, pdn_path=pdn,
        cluster=cluster, scheduling=scheduling(given), records=records,
    )
