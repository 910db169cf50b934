"""What a tournament is: :class:`TournamentSettings` from cutechess-style flags and a TOML file.

Three steps, each its own function, which ``guti tournament`` runs in turn:
:func:`read_tournament_options` reads the flags and the file (if one is named) into one
model of the options given (:mod:`guti.referee.config.given`; the file's format is in
:mod:`guti.referee.config.toml_file`), running nothing;
:func:`guti.referee.config.engine_build.build_engines` sees to the file's engines'
requirements and builds; :func:`tournament_settings` checks every option and builds the
settings. :func:`settings_from_argv` is the three in one, for programs and tests.

The *fingerprint* of a tournament is a hash of everything that decides
which games are played and how (engines, game, limits, format, rounds,
games, openings, seed; seeds, noswap and reverse when given). ``-resume``
refuses a database whose fingerprint differs, so a resume with the same
command can never mix two tournaments.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from guti.referee.config.args import CliError, parse_cli
from guti.referee.config.engine_build import build_engines
from guti.referee.config.given import EngineEntry, GivenOptions
from guti.referee.config.option_specs import TOURNAMENT_OPTIONS
from guti.referee.config.options import (
    check_limits,
    cluster_address,
    engine_configs,
    game_name,
    game_settings,
    games_count,
    openings_digest,
    pdn_path,
    record_outputs,
    scheduling,
)
from guti.referee.config.outputs import check_outputs, openings_input
from guti.referee.config.sprt_args import PAIRS_RULE, read_sprt, unpaired
from guti.referee.config.toml_file import read_toml
from guti.referee.execution.referee_choice import AUTO_REFEREES
from guti.referee.storage.store import stored_settings
from guti.referee.tournament import knockout
from guti.referee.tournament.defaults import (
    DEFAULT_DB,
    DEFAULT_REFEREES,
    DEFAULT_ROUNDS,
    DEFAULT_SEEDS,
    DEFAULT_TIEBREAK,
    MAX_GAMES,
)
from guti.referee.tournament.formats import FORMATS
from guti.referee.tournament.knockout import KNOCKOUT
from guti.referee.tournament.scheduler import opening_slots, total_games
from guti.referee.tournament.settings import TournamentSettings
from guti.rules.numbers import whole_number

if TYPE_CHECKING:
    from guti.referee.execution.cluster_address import EngineSetup
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.settings import GameSettings

#: Most games at once (each is two engine processes); more is a mistake, not a plan.
MAX_CONCURRENCY = 1024


def split_config(argv: list[str]) -> tuple[str | None, list[str]]:
    """``guti tournament FILE.toml [flags]`` or ``-config FILE``: (config path, flags).
    One config file at most: a second is a mistake, as any option given twice is."""
    config, rest = (argv[0], argv[1:]) if argv and not argv[0].startswith("-") else (None, argv)
    flags: list[str] = []
    i = 0
    while i < len(rest):
        if rest[i] in ("-config", "--config") and i + 1 < len(rest):
            if config is not None:
                raise CliError(f"a second config file {rest[i + 1]!r} after {config!r}: "
                               "give one (its options can be overridden by flags)")
            config = rest[i + 1]
            i += 2
            continue
        flags.append(rest[i])
        i += 1
    return config, flags


def read_tournament_options(argv: list[str]) -> GivenOptions:
    """The options of ``guti tournament [FILE.toml] [flags]``: the file's, overridden
    option by option by the flags'. Nothing is run and nothing is checked beyond each
    value's form: :func:`tournament_settings` checks the whole."""
    config, flags = split_config(argv)
    given = GivenOptions.from_flags(parse_cli(flags, TOURNAMENT_OPTIONS))
    return read_toml(config, TOURNAMENT_OPTIONS).overridden_by(given) if config else given


def settings_from_argv(argv: list[str], report: Callable[[str], None]) -> TournamentSettings:
    """Read the options, get the engines ready (skipped ones go to ``report``) and check
    the whole: the steps of ``guti tournament`` before it plays."""
    given = read_tournament_options(argv)
    engines, setups = build_engines(given.engines, report, on_cluster=given.has("cluster"))
    _check_gauntlet_kept(given, engines)
    return tournament_settings(given.with_engines(engines), setups)


def _check_gauntlet_kept(given: GivenOptions, kept: tuple[EngineEntry, ...]) -> None:
    """A gauntlet is about its first engines (``-seeds``, as many as leave one opponent):
    one of them skipped, or so many of the others that fewer of them are seeds, would
    make it another tournament in silence, so the run is refused instead."""
    if (given.text("tournament") or "") != "gauntlet" or len(kept) == len(given.engines):
        return
    count = min(seeds_count(given, "gauntlet"), len(given.engines) - 1)
    seeds = given.engines[:count]
    about = "engine" if count == 1 else f"{count} engines"
    for entry in seeds:
        if all(entry is not other for other in kept):
            raise CliError(f"engine {entry.name} was skipped, and a gauntlet is about its "
                           f"first {about}; the run is not started")
    if len(kept) - 1 < count:
        raise CliError(f"too many engines were skipped for a gauntlet of its first {about} "
                       "against the others; the run is not started")


# --------------------------------------------------------------------------- #
# options -> settings
# --------------------------------------------------------------------------- #
def tournament_settings(
    given: GivenOptions, setups: tuple[EngineSetup, ...] = (),
) -> TournamentSettings:
    """Check every option given and build the settings; ``setups``: the engines' builds
    and requirements every worker of a cluster sees to."""
    game = game_name(given)
    configs = engine_configs(given)
    fmt = given.text("tournament", "roundrobin") or "roundrobin"
    if fmt not in FORMATS:
        raise CliError(f"{given.where('tournament')}: unknown format {fmt!r} "
                       f"(expected {', '.join(FORMATS)})")
    if len(configs) < 2:
        raise CliError(f"a tournament needs at least two engines, got {len(configs)}")
    check_limits(configs)
    rounds = given.whole("rounds", DEFAULT_ROUNDS, minimum=1)
    games = games_count(given)
    db_path = given.text("db", DEFAULT_DB) or DEFAULT_DB
    resumed = stored_settings(db_path) if given.has("resume") else None  # read once
    seed = openings_seed(given, resumed)
    concurrency = _concurrency(given)
    referees = referees_option(given, concurrency)
    pdn = pdn_path(given)
    log = given.table("log").get("file") or None
    records = record_outputs(given)
    check_outputs([openings_input(given), ("-db", db_path), ("-pdnout", pdn), ("-log", log),
                   ("-epdout", records.epd_path), ("-report", given.text("report")),
                   *(("stderr", c.stderr_path) for c in configs)])
    _check_readers_of(db_path, given)
    tiebreak = knockout_tiebreak(given, fmt, games)
    if given.has("sprt") and fmt != KNOCKOUT:  # (a knockout refuses it above)
        _check_sprt_pairs(given, len(configs), games)
    seeds = seeds_count(given, fmt)
    scheduled = (knockout.minimum_games(len(configs), games) if fmt == KNOCKOUT
                 else total_games(fmt, len(configs), rounds, games, seeds))
    if scheduled > MAX_GAMES:
        raise CliError(f"{given.where('games')}: {scheduled:,} games is more than a tournament "
                       f"schedules ({MAX_GAMES:,}); play it as several tournaments")
    rules = scheduling(given, concurrency)
    slots = (knockout.opening_slots(len(configs), games, tiebreak) if fmt == KNOCKOUT
             else opening_slots(rounds, games))
    if 2 * slots > MAX_GAMES:  # (the tie-breaks of a knockout: its games are checked above)
        raise CliError(f"{given.where('tiebreak')}: {2 * slots:,} openings is more than a "
                       f"tournament schedules ({MAX_GAMES:,} games)")
    stored = openings_stored(fmt, resumed)
    settings = game_settings(given, game, seed, 2 * slots, "guti tournament", not stored)
    fingerprint = resume_fingerprint(given, configs, settings, fmt, rounds, games, tiebreak,
                                     seeds)
    return TournamentSettings(
        engines=configs,
        game=settings,
        fmt=fmt,
        rounds=rounds,
        games=games,
        seed=seed,
        concurrency=concurrency,
        referees=referees,
        db_path=db_path,
        resume=given.has("resume"),
        pdn_path=pdn,
        log_path=log,
        rating_interval=given.whole("ratinginterval", 0, minimum=0),
        sprt=read_sprt(given.table("sprt"), given.where("sprt")),
        quiet=given.has("quiet"),
        cluster=cluster_address(given),
        setups=setups,
        fingerprint_data=fingerprint,
        openings_from_store=stored, openings_digest=(  # read again only by a knockout's resume
            openings_digest(given) if fmt == KNOCKOUT and not stored else None),
        report_path=given.text("report"),
        serve=serve_address(given.text("serve"), given.where("serve")),
        tiebreak=tiebreak, seeds=seeds,
        scheduling=rules,
        records=records,
    )


def openings_stored(fmt: str, resumed: dict[str, Any] | None) -> bool:
    """Whether this run, a round-robin or gauntlet, resumes a tournament already stored
    (``resumed``: its stored settings, None without ``-resume`` or such a tournament): it
    plays the openings its schedule holds, so the file they came from is not read again
    (it may be gone). A knockout draws its later rounds' openings from it as the bracket
    advances. (A database of another format or a tuning run is refused when the run opens
    it, before any opening is needed.)"""
    return fmt != KNOCKOUT and resumed is not None


def referees_option(given: GivenOptions, concurrency: int) -> int:
    """``-referees auto|N``: ``auto`` (the default, :data:`AUTO_REFEREES`) lets guti choose
    from the games at once and the cores; N is at least 1, at most one per game slot, and
    more than 1 is refused with ``-cluster`` (whose workers referee the games)."""
    if given.text("referees") == "auto":
        return AUTO_REFEREES
    referees = given.whole("referees", DEFAULT_REFEREES, minimum=1)
    if referees > 1 and given.has("cluster"):
        raise CliError("-referees cannot be used with -cluster (the cluster's workers "
                       "referee the games)")
    if referees > concurrency:
        raise CliError(f"-referees {referees}: more referee processes than -concurrency "
                       f"{concurrency} (each referees at least one game slot)")
    return referees


def _concurrency(given: GivenOptions) -> int:
    """``-concurrency N``: games at once, from 1 to :data:`MAX_CONCURRENCY` (default: one
    a core)."""
    concurrency = given.whole("concurrency", os.cpu_count() or 1, minimum=1)
    if concurrency > MAX_CONCURRENCY:
        raise CliError(f"{given.where('concurrency')}: {concurrency} is more than "
                       f"{MAX_CONCURRENCY} games at once")
    return concurrency


def _check_readers_of(db_path: str, given: GivenOptions) -> None:
    """``-report`` and ``-serve`` open the database again, apart from the run: a database
    in memory (``-db :memory:``) cannot be read so, and is refused with them."""
    for option in ("report", "serve"):
        if db_path == ":memory:" and given.has(option):
            raise CliError(f"{given.where(option)}: needs -db FILE: a database in memory "
                           "(-db :memory:) is the run's alone, and ends with it")


def resume_fingerprint(
    given: GivenOptions, configs: list[EngineConfig], settings: GameSettings, fmt: str,
    rounds: int, games: int, tiebreak: int, seeds: int,
) -> dict[str, object]:
    """What a ``-resume`` must find unchanged in the database. Options added later enter
    it only when given, so tournaments stored before them resume unchanged."""
    game = settings.name
    fingerprint: dict[str, object] = {
        "engines": [
            {"name": c.name, "argv": c.argv, "cwd": c.cwd, "options": c.options,
             "limits": c.limits.describe() if c.limits else None, "restart": c.restart}
            for c in configs
        ],
        "game": game,
        "format": fmt,
        "rounds": rounds,
        "games": games,
        "fen": given.text("fen"),
        "openings": dict(sorted(given.table("openings").items())),
        "srand": given.text("srand"),
        **({"tiebreak": tiebreak} if fmt == KNOCKOUT else {}),
        **({"seeds": seeds} if seeds != DEFAULT_SEEDS else {}),
        **{name: True for name in ("noswap", "reverse") if given.has(name)},
    }
    if settings.adjudication.active:  # only then: older databases keep their fingerprint
        fingerprint["adjudication"] = settings.adjudication.describe()
    return fingerprint


def openings_seed(given: GivenOptions, resumed: dict[str, Any] | None) -> int | None:
    """``-srand``; without it, for openings drawn at random, a seed drawn now and stored,
    or the stored one on ``-resume`` (``resumed``: the stored settings), so that a resume
    replays the same openings (a knockout draws its later rounds' openings as the bracket
    advances)."""
    if given.has("srand"):
        return given.whole("srand", 0)
    spec = given.table("openings")
    if not spec or not (spec.get("order") == "random"
                        or spec.get("file", "random:").startswith("random:")):
        return None
    seed = (resumed or {}).get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    return int.from_bytes(os.urandom(4), "little")


def _check_sprt_pairs(given: GivenOptions, engines: int, games: int) -> None:
    """CliError unless ``-sprt`` has one pair of engines playing game pairs with the
    colours reversed: an odd ``-games`` leaves a pair unfinished, and ``-noswap`` would
    test who moves first."""
    where = given.where("sprt")
    if engines != 2:
        raise CliError(f"{where}: an SPRT tests one pair of engines, got {engines} engines")
    # (a tournament begun with -noswap before this was refused may finish as it began)
    why = unpaired(games, given.has("noswap") and not given.has("resume"))
    if why is not None:
        raise CliError(f"{where}: not with {why} ({PAIRS_RULE})")


def knockout_tiebreak(given: GivenOptions, fmt: str, games: int) -> int:
    """``-tiebreak N`` of a knockout, with what a knockout does not allow (an odd
    ``-games``, ``-rounds``, ``-sprt``, ``-noswap``, ``-reverse``) as one-line mistakes."""
    if fmt != KNOCKOUT:
        if given.has("tiebreak"):
            raise CliError("-tiebreak: only for -tournament knockout")
        return DEFAULT_TIEBREAK
    if games % 2:
        raise CliError(f"-games: a knockout encounter is game pairs (colours reversed), "
                       f"so -games must be even, got {games}")
    for option, why in (("rounds", "a knockout is played once"),
                        ("sprt", "a knockout has no single pair of engines to test"),
                        ("noswap", "an encounter's game pairs reverse colours"),
                        ("reverse", "the higher seed takes White first")):
        if given.has(option) and (option != "rounds" or given.text("rounds") != "1"):
            raise CliError(f"-{option}: not with -tournament knockout ({why})")
    return given.whole("tiebreak", DEFAULT_TIEBREAK, minimum=0)


def seeds_count(given: GivenOptions, fmt: str) -> int:
    """``-seeds N`` (gauntlet only; more than the engines after them is clamped by the
    scheduler, as fastchess does)."""
    if given.has("seeds") and fmt != "gauntlet":
        raise CliError(f"-seeds: only with -tournament gauntlet (this is {fmt})")
    return given.whole("seeds", DEFAULT_SEEDS, minimum=1)


def serve_address(text: str | None, where: str = "-serve") -> str | None:
    """``-serve [HOST:]PORT`` given at ``where``, checked; None when not given."""
    if text is None:
        return None
    _, _, port = text.rpartition(":")
    number = whole_number(port, 5)
    if number is None or number > 65535:
        raise CliError(f"{where}: {text!r} is not [HOST:]PORT with PORT 0..65535")
    return text
