"""What a tournament is: settings from cutechess-style flags or a TOML file.

A TOML file is simply the command line written down: every top-level key is
the option of the same name (``rounds = 2`` is ``-rounds 2``), tables are
``key=value`` options (``[each] tc = "5+0.05"`` is ``-each tc=5+0.05``) and
``[[engine]]`` entries are ``-engine`` definitions. Options given on the
command line override the file's, option by option (``-engine`` replaces
the file's whole engine list). So there is one meaning for every setting,
whichever way it was given. An option whose value may be left out takes
``true`` for that (``use-affinity = true`` is ``-use-affinity``, ``"0-3"`` the list).

TOML-only engine keys, for bundles of engines that may not all be
installable on every machine:

- ``requires = ["node"]``: programs that must be on ``PATH``; if one is
  missing the engine is skipped with one line saying why;
- ``build = ["make", "-C", "c"]``: a command run (no shell, in the engine's
  ``dir``, else the file's folder) before the tournament; if it fails the
  engine is skipped;
- ``cmd = "{python}"`` is the Python running guti; relative ``cmd`` paths
  with a ``/`` and ``dir`` are relative to the TOML file's folder;
- ``args`` may be a list (joined with POSIX quoting) or a string;
- ``options = { Level = 5 }`` is ``option.Level=5``.

The *fingerprint* of a tournament is a hash of everything that decides
which games are played and how (engines, game, limits, format, rounds,
games, openings, seed; seeds, noswap and reverse when given). ``-resume``
refuses a database whose fingerprint differs, so a resume with the same
command can never mix two tournaments.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from typing import Any

from guti.referee.config.args import CliError, Kind, ParsedArgs, parse_cli
from guti.referee.config.option_specs import SPRT_OPTION as SPRT_OPTION
from guti.referee.config.option_specs import TOURNAMENT_OPTIONS as TOURNAMENT_OPTIONS
from guti.referee.config.options import (
    check_limits,
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
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.settings import GameSettings
from guti.referee.tournament import knockout
from guti.referee.tournament.cluster_address import EngineSetup
from guti.referee.tournament.defaults import (
    DEFAULT_DB,
    DEFAULT_REFEREES,
    DEFAULT_ROUNDS,
    DEFAULT_SEEDS,
    DEFAULT_TIEBREAK,
)
from guti.referee.tournament.knockout import KNOCKOUT
from guti.referee.tournament.scheduler import FORMATS, opening_slots
from guti.referee.tournament.settings import TournamentSettings
from guti.referee.tournament.stats import SprtModel, SprtSpec

#: Most games at once (each is two engine processes); more is a mistake, not a plan.
MAX_CONCURRENCY = 1024

#: Keys of an ``[[engine]]`` table besides the ``-engine`` tokens.
TOML_ENGINE_KEYS = frozenset({"requires", "build", "options"})


# --------------------------------------------------------------------------- #
# TOML -> argv
# --------------------------------------------------------------------------- #
def _scalar(value: Any, where: str) -> str:
    if isinstance(value, bool):  # protocol.md: a check option takes true|false
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise CliError(f"{where}: expected a string or number, got {type(value).__name__}")


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def _words(value: Any, where: str) -> list[str]:
    """A string, or a list of strings (``requires``, ``build``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return value
    raise CliError(f"{where}: expected a string or a list of strings, got {_shown(value)}")


def _table_tokens(table: dict[str, Any], where: str) -> list[str]:
    return [f"{key}={_scalar(value, f'{where}.{key}')}" for key, value in table.items()]


def _engine_tokens(
    entry: dict[str, Any], base: str, where: str, report: Callable[[str], None],
    setups: list[EngineSetup] | None = None,
) -> list[str] | None:
    """One ``[[engine]]`` table as ``-engine`` tokens; None when it is skipped. With
    ``setups`` (a tournament on a cluster) the build is not run here but added to it,
    with the requirements: both are seen to on every worker, where the engine runs."""
    name = str(entry.get("name") or entry.get("cmd") or where)
    requires = _words(entry.get("requires", []), f"{where}.requires")
    build = entry.get("build")
    if build is not None:
        _words(build, f"{where}.build")
    for tool in requires:
        if shutil.which(tool) is None:
            report(f"skipping engine {name}: {tool} is not installed (not found on PATH)")
            return None
    argv: list[str] = []
    if isinstance(build, list):
        argv = [_scalar(w, f"{where}.build") for w in build]
    elif build:
        argv = shlex.split(_scalar(build, f"{where}.build"))
    where_to = os.path.join(base, str(entry["dir"])) if "dir" in entry else base
    if setups is not None:
        if argv or requires:
            setups.append((name, tuple(argv), where_to, tuple(requires)))
        build = None
    if build:
        try:
            done = subprocess.run(argv, cwd=where_to, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            report(f"skipping engine {name}: build {shlex.join(argv)} failed: {exc}")
            return None
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            report(f"skipping engine {name}: build {shlex.join(argv)} failed: {last[0]}")
            return None
    tokens: list[str] = []
    for key, value in entry.items():
        if key in ("requires", "build"):
            continue
        if key == "options":
            if not isinstance(value, dict):
                raise CliError(f"{where}.options: expected a table such as {{ Hash = 16 }}")
            tokens += [f"option.{k}={_scalar(v, f'{where}.options.{k}')}" for k, v in value.items()]
        elif key == "args":
            words = value if isinstance(value, list) else None
            text = (shlex.join(_scalar(w, f"{where}.args") for w in words) if words is not None
                    else _scalar(value, f"{where}.args"))
            tokens.append(f"args={text}")
        elif key == "cmd":
            cmd = _scalar(value, f"{where}.cmd").replace("{python}", sys.executable)
            if os.sep in cmd and not os.path.isabs(cmd) and "dir" not in entry:
                cmd = os.path.join(base, cmd)
            tokens.append(f"cmd={cmd}")
        elif key == "dir":
            tokens.append(f"dir={os.path.join(base, _scalar(value, f'{where}.dir'))}")
        else:
            tokens.append(f"{key}={_scalar(value, f'{where}.{key}')}")
    return tokens


def toml_argv(
    path: str,
    report: Callable[[str], None],
    setups: list[EngineSetup] | None = None,
    on_cluster: bool = False,
) -> list[str]:
    """The command line a TOML tournament file stands for. On a cluster (``on_cluster``,
    or a ``cluster`` key in the file) engine builds are not run here but added to
    ``setups``, with the requirements, for every worker (see :func:`_engine_tokens`)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise CliError(f"config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"config {path}: {exc}") from None
    base = os.path.dirname(os.path.abspath(path))
    known = {spec.name: spec for spec in TOURNAMENT_OPTIONS}
    argv: list[str] = []
    for key, value in data.items():
        spec = known.get(key)
        where = f"{path}: {key}"
        if spec is None or key == "config":
            raise CliError(f"config {path}: unknown setting {key!r}")
        if spec.kind is Kind.OPTIONAL and isinstance(value, bool):
            argv += [f"-{key}"] if value else []  # use-affinity = true: no CPU list
            continue
        if spec.kind is Kind.FLAG:
            if not isinstance(value, bool):
                raise CliError(f"{where}: expected true or false, got {_shown(value)}")
            if value:
                argv.append(f"-{key}")
            continue
        if key == "engine":
            if not isinstance(value, list):
                raise CliError(f"{where}: use [[engine]] tables")
            for n, entry in enumerate(value, 1):
                if not isinstance(entry, dict):
                    raise CliError(f"{where} #{n}: expected a table")
                deferred = setups if on_cluster or "cluster" in data else None
                tokens = _engine_tokens(entry, base, f"{path}: engine #{n}", report, deferred)
                if tokens is not None:
                    argv += ["-engine", *tokens]
        elif spec.kind is Kind.TOKENS:
            if isinstance(value, str) and spec.bare_key is not None:
                value = {spec.bare_key: value}  # pdnout = "out.pdn" == -pdnout file=out.pdn
            if not isinstance(value, dict):
                raise CliError(f"{where}: expected a table of key = value")
            if key == "openings" and "file" in value and not str(value["file"]).startswith("random:"):
                value = {**value, "file": os.path.join(base, str(value["file"]))}
            argv += [f"-{key}", *_table_tokens(value, where)]
        else:
            argv += [f"-{key}", _scalar(value, where)]
    return argv


def merge_argv(file_argv: list[str], cli_argv: list[str]) -> list[str]:
    """File options first, minus those the command line gives again (CLI wins)."""
    cli = parse_cli(cli_argv, TOURNAMENT_OPTIONS)
    out: list[str] = []
    skipping = False
    for word in file_argv:
        if word.startswith("-") and word[1:2].isalpha():
            name = word.lstrip("-")
            skipping = cli.has(name) or (name == "variant" and cli.has("game"))
        if not skipping:
            out.append(word)
    return out + cli_argv


# --------------------------------------------------------------------------- #
# argv -> settings
# --------------------------------------------------------------------------- #
def sprt_from_args(args: ParsedArgs) -> SprtSpec | None:
    """The ``-sprt`` settings, checked (None when not given)."""
    spec = args.token_dict("sprt")
    if not spec:
        return None
    numbers: dict[str, float] = {}
    for key in ("elo0", "elo1", "alpha", "beta"):
        if key in spec:
            try:
                numbers[key] = float(spec[key])
            except ValueError:
                raise CliError(f"-sprt {key}={spec[key]}: not a number") from None
    model = spec.get("model", "normalized")
    if model not in _SPRT_MODELS:
        raise CliError(f"-sprt model={model}: expected normalized or logistic")
    sprt = SprtSpec(**numbers, model=_SPRT_MODELS[model])
    if not (0 < sprt.alpha < 1 and 0 < sprt.beta < 1) or sprt.elo1 <= sprt.elo0:
        raise CliError("-sprt: need 0 < alpha, beta < 1 and elo0 < elo1")
    sprt.evaluate(wdl=(0, 0, 0))
    return sprt


_SPRT_MODELS: dict[str, SprtModel] = {"normalized": "normalized", "logistic": "logistic"}


def split_config(argv: list[str]) -> tuple[str | None, list[str]]:
    """``guti tournament FILE.toml [flags]`` or ``-config FILE``: (config path, flags)."""
    if argv and not argv[0].startswith("-"):
        return argv[0], argv[1:]
    rest = list(argv)
    for i, word in enumerate(rest):
        if word in ("-config", "--config") and i + 1 < len(rest):
            return rest[i + 1], rest[:i] + rest[i + 2 :]
    return None, rest


def settings_from_argv(argv: list[str], report: Callable[[str], None]) -> TournamentSettings:
    """Check the command line (and config file) and build the settings."""
    config, flags = split_config(argv)
    setups: list[EngineSetup] = []
    on_cluster = parse_cli(flags, TOURNAMENT_OPTIONS).has("cluster")
    full = merge_argv(toml_argv(config, report, setups, on_cluster), flags) if config else flags
    args = parse_cli(full, TOURNAMENT_OPTIONS)
    game = game_name(args)
    configs = engine_configs(args)
    fmt = args.value("tournament", "roundrobin") or "roundrobin"
    if fmt not in (*FORMATS, KNOCKOUT):
        raise CliError(f"-tournament: unknown format {fmt!r} "
                       "(expected roundrobin, gauntlet or knockout)")
    if len(configs) < 2:
        raise CliError(f"a tournament needs at least two engines, got {len(configs)}")
    check_limits(configs)
    rounds = args.int_value("rounds", DEFAULT_ROUNDS, minimum=1)
    games = games_count(args)
    seed = args.int_value("srand", 0) if args.has("srand") else None
    spec = args.token_dict("openings")
    randomized = spec.get("order") == "random" or spec.get("file", "random:").startswith("random:")
    if seed is None and spec and randomized:
        seed = int.from_bytes(os.urandom(4), "little")  # stored, so a resume replays it
    concurrency = args.int_value("concurrency", os.cpu_count() or 1, minimum=1)
    if concurrency > MAX_CONCURRENCY:
        raise CliError(f"-concurrency: {concurrency} is more than {MAX_CONCURRENCY} games at once")
    referees = referee_processes(args, concurrency)
    db_path = args.value("db", DEFAULT_DB) or DEFAULT_DB
    pdn = pdn_path(args)
    log = args.token_dict("log").get("file") or None
    records = record_outputs(args)
    check_outputs([("-db", db_path), ("-pdnout", pdn), ("-log", log),
                   ("-epdout", records.epd_path), *(("stderr", c.stderr_path) for c in configs)])
    tiebreak = knockout_tiebreak(args, fmt, games)
    seeds = seeds_count(args, fmt)
    rules = scheduling(args, concurrency)
    slots = (knockout.opening_slots(len(configs), games, tiebreak) if fmt == KNOCKOUT
             else opening_slots(rounds, games))
    settings = game_settings(args, game, seed, 2 * slots, default_event="guti tournament")
    fingerprint = resume_fingerprint(args, configs, settings, fmt, rounds, games, spec,
                                     tiebreak, seeds)
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
        resume=args.has("resume"),
        pdn_path=pdn,
        log_path=log,
        rating_interval=args.int_value("ratinginterval", 0, minimum=0),
        sprt=sprt_from_args(args),
        quiet=args.has("quiet"),
        cluster=cluster_address(args),
        setups=tuple(setups),
        fingerprint_data=fingerprint,
        report_path=args.value("report"),
        serve=serve_address(args.value("serve")),
        tiebreak=tiebreak,
        seeds=seeds,
        scheduling=rules,
        records=records,
    )


def referee_processes(args: ParsedArgs, concurrency: int) -> int:
    """``-referees N``: at least 1, at most one per game slot, not with ``-cluster``
    (whose workers referee the games)."""
    referees = args.int_value("referees", DEFAULT_REFEREES, minimum=1)
    if referees > 1 and args.has("cluster"):
        raise CliError("-referees cannot be used with -cluster (the cluster's workers "
                       "referee the games)")
    if referees > concurrency:
        raise CliError(f"-referees {referees}: more referee processes than -concurrency "
                       f"{concurrency} (each referees at least one game slot)")
    return referees


def resume_fingerprint(
    args: ParsedArgs, configs: list[EngineConfig], settings: GameSettings, fmt: str,
    rounds: int, games: int, spec: dict[str, str], tiebreak: int, seeds: int,
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
        "fen": args.value("fen"),
        "openings": dict(sorted(spec.items())),
        "srand": args.value("srand"),
        **({"tiebreak": tiebreak} if fmt == KNOCKOUT else {}),
        **({"seeds": seeds} if seeds != DEFAULT_SEEDS else {}),
        **{name: True for name in ("noswap", "reverse") if args.has(name)},
    }
    if settings.adjudication.active:  # only then: older databases keep their fingerprint
        fingerprint["adjudication"] = settings.adjudication.describe()
    return fingerprint


def knockout_tiebreak(args: ParsedArgs, fmt: str, games: int) -> int:
    """``-tiebreak N`` of a knockout, with what a knockout does not allow (an odd
    ``-games``, ``-rounds``, ``-sprt``, ``-noswap``, ``-reverse``) as one-line mistakes."""
    if fmt != KNOCKOUT:
        if args.has("tiebreak"):
            raise CliError("-tiebreak: only for -tournament knockout")
        return DEFAULT_TIEBREAK
    if games % 2:
        raise CliError(f"-games: a knockout encounter is game pairs (colours reversed), "
                       f"so -games must be even, got {games}")
    for option, why in (("rounds", "a knockout is played once"),
                        ("sprt", "a knockout has no single pair of engines to test"),
                        ("noswap", "an encounter's game pairs reverse colours"),
                        ("reverse", "the higher seed takes White first")):
        if args.has(option) and (option != "rounds" or args.value("rounds") != "1"):
            raise CliError(f"-{option}: not with -tournament knockout ({why})")
    return args.int_value("tiebreak", DEFAULT_TIEBREAK, minimum=0)


def seeds_count(args: ParsedArgs, fmt: str) -> int:
    """``-seeds N`` (gauntlet only; more than the engines after them is clamped by the
    scheduler, as fastchess does)."""
    if args.has("seeds") and fmt != "gauntlet":
        raise CliError(f"-seeds: only with -tournament gauntlet (this is {fmt})")
    return args.int_value("seeds", DEFAULT_SEEDS, minimum=1)


def serve_address(text: str | None) -> str | None:
    """``-serve [HOST:]PORT``, checked; None when not given."""
    if text is None:
        return None
    _, _, port = text.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise CliError(f"-serve: {text!r} is not [HOST:]PORT with PORT 0..65535")
    return text
