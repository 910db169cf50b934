"""The cutechess-style options a match and a tournament share, and their readers.

Each reader turns part of a parsed command line into a piece of the settings
model (:mod:`guti.referee.game.settings`, :mod:`guti.referee.tournament.settings`) and
raises :class:`~guti.referee.config.args.CliError` with a one-line message for a
mistake. Defaults come from where they are defined (the ``defaults`` modules beside
the settings model); the options themselves and their help texts are in
:mod:`guti.referee.config.option_specs`.
"""

from __future__ import annotations

import dataclasses
import itertools

from guti.referee.config.args import CliError, ParsedArgs
from guti.referee.config.option_specs import ENGINE_KEY_HELP as ENGINE_KEY_HELP
from guti.referee.config.option_specs import MATCH_OPTIONS as MATCH_OPTIONS
from guti.referee.game.defaults import (
    DEFAULT_GAME,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_MAXMOVES,
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
)
from guti.referee.game.engine_config import (
    EngineConfig,
    EngineConfigError,
    check_keys,
    engine_config_from_tokens,
    make_names_unique,
)
from guti.referee.game.openings import (
    Opening,
    OpeningsError,
    load_openings,
    opening_sequence,
    random_openings,
)
from guti.referee.game.output_paths import create_parent_dirs
from guti.referee.game.pdn import PdnFields
from guti.referee.game.settings import (
    Adjudication,
    DrawRule,
    GameSettings,
    ResignRule,
    Timeouts,
)
from guti.referee.process import affinity
from guti.referee.tournament.cluster_address import (
    ClusterAddress,
    ClusterAddressError,
    parse_cluster,
)
from guti.referee.tournament.defaults import DEFAULT_GAMES, DEFAULT_WAIT_MS
from guti.referee.tournament.settings import RecordOutputs, Scheduling
from guti.rules import GAMES, RulesError


def game_name(args: ParsedArgs) -> str:
    """The ``-game``/``-variant`` value, checked against the known games."""
    name = args.value("game") or args.value("variant") or DEFAULT_GAME
    if name not in GAMES:
        raise CliError(f"-game: unknown game {name!r} (known: {', '.join(sorted(GAMES))})")
    return name


def engine_configs(args: ParsedArgs) -> list[EngineConfig]:
    """All ``-engine`` definitions with ``-each`` applied; names made unique."""
    each = args.token_groups("each")
    each_pairs = each[-1] if each else []
    try:
        check_keys(each_pairs)
    except EngineConfigError as exc:
        raise CliError(f"-each: {exc}") from None
    configs = []
    for i, group in enumerate(args.token_groups("engine"), 1):
        try:
            configs.append(engine_config_from_tokens(group, each_pairs, default_name=None))
        except EngineConfigError as exc:
            raise CliError(f"-engine #{i}: {exc}") from None
    make_names_unique(configs)
    return configs


def check_limits(configs: list[EngineConfig]) -> None:
    """Every engine needs some limit, or ``go infinite`` would only end by timeout."""
    for cfg in configs:
        if cfg.limits is None or cfg.limits.is_unlimited():
            raise CliError(
                f"engine {cfg.name} has no time control: give -each tc=... (or st=, depth=, nodes=)"
            )


def games_count(args: ParsedArgs) -> int:
    """``-games N`` (at least 1)."""
    return args.int_value("games", DEFAULT_GAMES, minimum=1)


def timeouts(args: ParsedArgs) -> Timeouts:
    """``-handshake-timeout``, ``-move-timeout`` and ``-stall-timeout``."""
    return Timeouts(
        handshake=args.float_value("handshake-timeout", DEFAULT_HANDSHAKE_TIMEOUT),
        move=args.float_value("move-timeout", DEFAULT_MOVE_TIMEOUT),
        stall_grace=args.float_value("stall-timeout", DEFAULT_STALL_GRACE),
    )


def adjudication(args: ParsedArgs) -> Adjudication:
    """``-draw``, ``-resign`` and ``-maxmoves``: every key needed but ``twosided``."""
    draw, resign = args.token_dict("draw"), args.token_dict("resign")
    twosided = resign.get("twosided", "false").lower()
    if twosided not in ("true", "false"):
        raise CliError(f"-resign twosided={resign['twosided']}: expected true or false")
    return Adjudication(
        draw=DrawRule(**_counts("draw", draw, ("movenumber", "movecount", "score")))
        if draw else None,
        resign=ResignRule(**_counts("resign", resign, ("movecount", "score")),
                          twosided=twosided == "true") if resign else None,
        maxmoves=args.int_value("maxmoves", DEFAULT_MAXMOVES, minimum=0),
    )


def _counts(flag: str, spec: dict[str, str], keys: tuple[str, ...]) -> dict[str, int]:
    """The whole numbers of ``keys`` in ``-flag``'s settings (``movecount`` at least 1)."""
    numbers = {}
    for key in keys:
        if key not in spec:
            raise CliError(f"-{flag}: missing {key}=N")
        text = spec[key]
        if not (text.isascii() and text.lstrip("+").isdigit()):
            raise CliError(f"-{flag} {key}={text}: not a whole number >= 0")
        least = 1 if key == "movecount" else 0
        if int(text) < least:
            raise CliError(f"-{flag} {key}={text}: must be at least {least}")
        numbers[key] = int(text)
    return numbers


def pdn_path(args: ParsedArgs) -> str | None:
    """``-pdnout`` (or ``-pgnout``) file."""
    return args.token_dict("pdnout").get("file") or args.token_dict("pgnout").get("file") or None


def record_outputs(args: ParsedArgs) -> RecordOutputs:
    """``-pdnout``'s field switches, ``-epdout`` and ``-show-latency``."""
    option = "pdnout" if args.has("pdnout") else "pgnout"
    switches = {k: v for k, v in args.token_dict(option).items() if k != "file"}
    fields: dict[str, bool] = {}
    for key, value in switches.items():
        if value not in ("true", "false"):
            raise CliError(f"-{option} {key}={value}: expected true or false")
        fields[key] = value == "true"
    if fields and pdn_path(args) is None:
        raise CliError(f"-{option}: {', '.join(fields)} without file=F")
    return RecordOutputs(pdn_fields=PdnFields(**fields),
                         epd_path=args.token_dict("epdout").get("file") or None,
                         show_latency=args.has("show-latency"))


def start_openings(
    args: ParsedArgs, game: str, seed: int | None, games: int
) -> tuple[str | None, list[Opening] | None]:
    """(start_fen, openings) from ``-fen`` / ``-openings`` (CliError on mistakes);
    ``games`` is how many games the openings are for (one opening per pair)."""
    fen = args.value("fen")
    spec = args.token_dict("openings")
    if fen and spec:
        raise CliError("-fen and -openings cannot be used together")
    if fen:
        from guti.referee.game.runner import start_board  # here: the game loop pulls in asyncio

        try:
            return start_board(game, fen).fen(), None
        except RulesError as exc:
            raise CliError(f"-fen: {exc}") from None
    if not spec:
        return None, None
    if spec.get("file", "").startswith("random:"):  # random:K == K random plies
        spec = {k: v for k, v in spec.items() if k != "file"} | {"plies": spec["file"][7:]}
    plies = None
    if "plies" in spec:
        try:
            plies = int(spec["plies"])
        except ValueError:
            raise CliError(f"-openings plies={spec['plies']}: not a whole number") from None
        if plies < 0:
            raise CliError(f"-openings plies={plies}: must be >= 0")
    order = spec.get("order", "sequential")
    if order not in ("sequential", "random"):
        raise CliError(f"-openings order={order}: expected sequential or random")
    start = _opening_start(spec)
    try:
        if "file" in spec:
            found = load_openings(spec["file"], game, plies)
        elif plies is not None:
            found = random_openings(game, plies, max(1, (games + 1) // 2), seed)
        else:
            raise CliError("-openings needs file=F or plies=N")
        if start > len(found):
            raise CliError(f"-openings start={start}: {spec['file']} has {len(found)} "
                           "usable opening(s)")
        stream = opening_sequence(found, order, seed)
        skipped = itertools.islice(stream, start - 1, None)  # fastchess: start at the N-th
        return None, [next(skipped) for _ in range(max(1, (games + 1) // 2))]
    except OpeningsError as exc:
        raise CliError(str(exc)) from None


def _opening_start(spec: dict[str, str]) -> int:
    """``-openings ... start=N``: 1-based, as fastchess; only with a file."""
    text = spec.get("start", "1")
    if not text.isdigit() or int(text) < 1:
        raise CliError(f"-openings start={text}: expected a whole number from 1")
    if "start" in spec and not spec.get("file"):
        raise CliError(f"-openings start={text}: needs file=F (an openings file)")
    return int(text)


def scheduling(args: ParsedArgs, concurrency: int = 1) -> Scheduling:
    """``-noswap``, ``-reverse``, ``-wait MS`` and ``-use-affinity [CPUS]`` for
    ``concurrency`` game slots. Affinity needs at least one CPU per slot: fewer is a
    usage mistake (games sharing cores is what pinning is meant to prevent)."""
    wait_ms = args.int_value("wait", DEFAULT_WAIT_MS, minimum=0)
    cpus = None
    if args.has("use-affinity"):
        cpus = affinity_cpus(args.value("use-affinity") or "", concurrency)
    for name in ("wait", "use-affinity"):
        if args.has(name) and args.has("cluster"):
            raise CliError(f"-{name} cannot be used with -cluster (it is about this "
                           "machine's game slots)")
    return Scheduling(noswap=args.has("noswap"), reverse=args.has("reverse"),
                      wait_ms=wait_ms, cpus=cpus)


def affinity_cpus(text: str, concurrency: int) -> tuple[int, ...]:
    """The CPUs of ``-use-affinity [CPUS]`` (all usable ones when none are listed),
    checked against those this process may use and against ``concurrency``."""
    if not affinity.supported():
        raise CliError("-use-affinity: not supported on this system (needs Linux)")
    usable = affinity.available_cpus()
    try:
        cpus = affinity.parse_cpu_list(text) if text else usable
    except affinity.CpuListError as exc:
        raise CliError(f"-use-affinity {text}: {exc}") from None
    for cpu in cpus:
        if cpu not in usable:
            shown = ",".join(map(str, usable))
            raise CliError(f"-use-affinity: CPU {cpu} is not one guti may use ({shown})")
    if len(cpus) < concurrency:
        raise CliError(f"-use-affinity: {len(cpus)} CPU(s) for {concurrency} concurrent "
                       "games; each game needs its own (list more or lower -concurrency)")
    return cpus


def game_settings(args: ParsedArgs, game: str, seed: int | None, games: int,
                  default_event: str) -> GameSettings:
    """The :class:`GameSettings` of a command line: ``game`` (from :func:`game_name`),
    start or openings for ``games`` games, timeouts, PDN tags. The shared ``limits``
    stay empty: every engine brings its own (``-engine``/``-each tc=...``); adjudication
    from ``-draw``/``-resign``/``-maxmoves``."""
    start_fen, openings = start_openings(args, game, seed, games)
    return GameSettings(
        name=game,
        timeouts=timeouts(args),
        start_fen=start_fen,
        openings=openings,
        event=args.value("event") or default_event,
        site=args.value("site") or "?",
        adjudication=adjudication(args),
    )


def check_writable(paths: list[str | None]) -> None:
    """Each output file's folders exist: missing ones are created (README, "Output
    files"); one that cannot be made is a usage mistake, not a crash later."""
    for path in paths:
        if path:
            try:
                create_parent_dirs(path)
            except OSError as exc:
                raise CliError(f"{exc.strerror} ({exc.filename})") from None


def cluster_address(args: ParsedArgs) -> ClusterAddress | None:
    """``-cluster tcp://HOST:PORT`` or ``local:N`` (None: games are played here); a
    ``-concurrency`` given with it is the games at once on each worker."""
    text = args.value("cluster")
    if not text:
        return None
    try:
        address = parse_cluster(text)
    except ClusterAddressError as exc:
        raise CliError(str(exc)) from None
    per_worker = args.int_value("concurrency", 0, minimum=1)
    return dataclasses.replace(address, per_worker=per_worker) if per_worker else address
