"""What ``guti tune`` runs: :class:`~guti.referee.tournament.tuning.settings.TuneSettings`
from its flags and TOML file.

The parameters are ``-param NAME=START,MIN,MAX,C_END,R_END`` (several in one ``-param``,
or ``-param`` repeated), in a file a table ``[param]`` of ``NAME = "START,MIN,MAX,C_END,R_END"``.
Each is checked here on its own (one line naming it); against what the engine declares
when its first process starts (:func:`~guti.referee.tournament.tuning.run.check_params`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from guti.referee.config.args import CliError, parse_cli
from guti.referee.config.given import GivenOptions
from guti.referee.config.option_specs import TUNE_OPTIONS
from guti.referee.config.options import (
    check_limits,
    cluster_address,
    engine_configs,
    game_name,
    game_settings,
)
from guti.referee.config.outputs import check_outputs, openings_input
from guti.referee.config.toml_file import read_toml
from guti.referee.config.tournament import MAX_CONCURRENCY, split_config
from guti.referee.tournament.defaults import (
    DEFAULT_ITERATIONS,
    DEFAULT_PAIRS,
    DEFAULT_TUNE_DB,
    MAX_GAMES,
)
from guti.referee.tournament.tuning.settings import TuneSettings
from guti.referee.tournament.tuning.spsa import Param, ParamSpecError, parse_param

if TYPE_CHECKING:
    from guti.referee.execution.cluster_address import EngineSetup

#: The longest lag allowed: iterations in flight besides the oldest.
MAX_LAG = 64


def read_tune_options(argv: list[str]) -> GivenOptions:
    """The options of ``guti tune [FILE.toml] [flags]`` (every ``-param`` kept)."""
    config, flags = split_config(argv)
    args = parse_cli(flags, TUNE_OPTIONS)
    groups = args.tokens.get("param")
    if groups:
        args.tokens["param"] = [[pair for group in groups for pair in group]]
    given = GivenOptions.from_flags(args)
    return read_toml(config, TUNE_OPTIONS).overridden_by(given) if config else given


def read_params(given: GivenOptions) -> tuple[Param, ...]:
    """The ``-param`` specs, each checked on its own."""
    pairs = given.table_pairs("param")
    if not pairs:
        raise CliError("nothing to tune: give -param NAME=START,MIN,MAX,C_END,R_END")
    params: list[Param] = []
    for name, text in pairs:
        try:
            param = parse_param(f"{name}={text}")
        except ParamSpecError as exc:
            raise CliError(f"{given.where('param')}: {exc}") from None
        # option names compare without case (protocol.md), so EvalX and evalx are one
        if any(p.name.lower() == param.name.lower() for p in params):
            raise CliError(f"{given.where('param')}: {param.name} is given twice")
        params.append(param)
    return tuple(params)


def tune_settings(given: GivenOptions, setups: tuple[EngineSetup, ...] = ()) -> TuneSettings:
    """Check every option given and build the settings; ``setups``: the engine's build and
    requirements every worker of a cluster sees to."""
    game = game_name(given)
    configs = engine_configs(given)
    if len(configs) != 1:
        raise CliError(f"guti tune tunes one engine: give -engine once (got {len(configs)})")
    check_limits(configs)
    engine = configs[0]
    params = read_params(given)
    for p in params:
        also = [name for name in engine.options if name.lower() == p.name.lower()]
        if also:
            raise CliError(f"-param {p.name}: also set by option.{also[0]}= (drop one)")
    iterations = given.whole("iterations", DEFAULT_ITERATIONS, minimum=1)
    pairs = given.whole("pairs", DEFAULT_PAIRS, minimum=1)
    if 2 * iterations * pairs > MAX_GAMES:
        raise CliError(f"-iterations {iterations} of -pairs {pairs}: "
                       f"{2 * iterations * pairs:,} games is more than a run schedules "
                       f"({MAX_GAMES:,})")
    seed = given.whole("srand", 0) if given.has("srand") else int.from_bytes(os.urandom(4), "little")
    address = cluster_address(given)
    concurrency = given.whole("concurrency", os.cpu_count() or 1, minimum=1)
    if address is not None:  # the games at once on the cluster, as far as known here
        concurrency = (address.local or 1) * (address.per_worker or 1)
    if concurrency > MAX_CONCURRENCY:
        raise CliError(f"{given.where('concurrency')}: {concurrency} is more than "
                       f"{MAX_CONCURRENCY} games at once")
    db_path = given.text("db", DEFAULT_TUNE_DB) or DEFAULT_TUNE_DB
    check_outputs([openings_input(given), ("-db", db_path), ("stderr", engine.stderr_path)])
    settings = game_settings(given, game, seed, 2 * iterations * pairs, default_event="guti tune")
    return TuneSettings(
        engine=engine, params=params, iterations=iterations, pairs=pairs, game=settings,
        db_path=db_path, seed=seed, lag=tuning_lag(concurrency, pairs),
        concurrency=concurrency, resume=given.has("resume"), quiet=given.has("quiet"),
        seed_given=given.has("srand"), cluster=address, setups=setups,
    )


def tuning_lag(concurrency: int, pairs: int) -> int:
    """Iterations in flight besides the oldest: enough to keep ``concurrency`` game slots
    busy with ``2 * pairs`` games per iteration; none for one slot (plain SPSA)."""
    return 0 if concurrency == 1 else min(MAX_LAG, -(-concurrency // (2 * pairs)))

