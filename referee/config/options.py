"""The cutechess-style options a match and a tournament share, and their readers.

Each reader turns part of a parsed command line into a piece of the settings
model (:mod:`referee.game.settings`, :mod:`referee.tournament.settings`) and
raises :class:`~referee.config.args.CliError` with a one-line message for a
mistake. Defaults come from the settings model; the help texts show them.
"""

from __future__ import annotations

import dataclasses

from engine.rules import GAMES, RulesError
from referee.config.args import CliError, Kind, OptionSpec, ParsedArgs
from referee.game.openings import (
    Opening,
    OpeningsError,
    load_openings,
    opening_sequence,
    random_openings,
)
from referee.game.output_paths import create_parent_dirs
from referee.game.settings import (
    DEFAULT_GAME,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
    GameSettings,
    Timeouts,
)
from referee.tournament.cluster_address import ClusterAddress, ClusterAddressError, parse_cluster
from referee.tournament.settings import DEFAULT_GAMES
from referee.ugi.engine_config import (
    EngineConfig,
    EngineConfigError,
    check_keys,
    engine_config_from_tokens,
    make_names_unique,
)

#: The keys of ``-engine`` and ``-each``, one help line each (shown by ``--help``).
ENGINE_KEY_HELP: tuple[tuple[str, str], ...] = (
    ("cmd=PATH", "the engine's program (looked up in dir=, else on PATH)"),
    ("args=TEXT", "its arguments, split as a shell would (args=\"-x --threads 2\")"),
    ("name=N", "its name in results (default: the program's name)"),
    ("dir=D", "its working directory"),
    ("tc=T", "time control [MOVES/]BASE[+INC] in seconds, or inf"),
    ("st=S", "fixed seconds per move (go movetime)"),
    ("depth=N", "search depth per move (go depth)"),
    ("nodes=N", "nodes per move (go nodes)"),
    ("timemargin=MS", "ms an engine may overstep its time before it loses"),
    ("option.X=V", "setoption name X value V, checked against the engine's option list"),
    ("restart=on|off", "a fresh process for every game (default off)"),
    ("stderr=FILE", "write the engine's stderr to FILE"),
    ("proto=ugi", "the protocol (ugi is the only one)"),
)

#: The options every cutechess-style command here accepts; the tournament
#: command extends this list (``MATCH_OPTIONS + [...]``).
MATCH_OPTIONS: list[OptionSpec] = [
    OptionSpec("engine", Kind.TOKENS, repeatable=True, key_help=ENGINE_KEY_HELP,
               help="define an engine (twice or more), with these keys:"),
    OptionSpec("each", Kind.TOKENS, help="settings applied to every engine (same keys)"),
    OptionSpec("game", Kind.VALUE, help=f"one of {', '.join(GAMES)} (default {DEFAULT_GAME})"),
    OptionSpec("variant", Kind.VALUE, help="same as -game"),
    OptionSpec("games", Kind.VALUE, help=f"number of games (default {DEFAULT_GAMES})"),
    OptionSpec("fen", Kind.TEXT, help="start every game from this FEN"),
    OptionSpec(
        "openings",
        Kind.TOKENS,
        keys=frozenset({"file", "order", "plies", "format"}),
        bare_key="file",
        help="file=F|random:K order=random|sequential plies=N",
    ),
    OptionSpec("srand", Kind.VALUE, help="random seed (openings)"),
    OptionSpec("pdnout", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file", help="file=F"),
    OptionSpec("pgnout", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file", help="same as -pdnout"),
    OptionSpec("log", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file", help="file=F traffic log"),
    OptionSpec("event", Kind.TEXT, help="PDN Event tag"),
    OptionSpec("site", Kind.TEXT, help="PDN Site tag"),
    OptionSpec("handshake-timeout", Kind.VALUE,
               help=f"seconds (default {DEFAULT_HANDSHAKE_TIMEOUT:g})"),
    OptionSpec("move-timeout", Kind.VALUE,
               help=f"seconds per move without a clock (default {DEFAULT_MOVE_TIMEOUT:g})"),
    OptionSpec("stall-timeout", Kind.VALUE,
               help=f"seconds past the time before 'stalled' (default {DEFAULT_STALL_GRACE:g})"),
    OptionSpec("cluster", Kind.VALUE,
               help="play on Dask: tcp://HOST:PORT (a running scheduler) or local:N workers"),
    OptionSpec("recover", Kind.FLAG, help="accepted for cutechess compatibility (always on)"),
    OptionSpec("help", Kind.FLAG, help="show this help"),
]


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


def pdn_path(args: ParsedArgs) -> str | None:
    """``-pdnout`` (or ``-pgnout``) file."""
    return args.token_dict("pdnout").get("file") or args.token_dict("pgnout").get("file") or None


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
        from referee.game.runner import start_board  # here: the game loop pulls in asyncio

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
    try:
        if "file" in spec:
            found = load_openings(spec["file"], game, plies)
        elif plies is not None:
            found = random_openings(game, plies, max(1, (games + 1) // 2), seed)
        else:
            raise CliError("-openings needs file=F or plies=N")
        stream = opening_sequence(found, order, seed)
        return None, [next(stream) for _ in range(max(1, (games + 1) // 2))]
    except OpeningsError as exc:
        raise CliError(str(exc)) from None


def game_settings(args: ParsedArgs, game: str, seed: int | None, games: int,
                  default_event: str) -> GameSettings:
    """The :class:`GameSettings` of a command line: ``game`` (from :func:`game_name`),
    start or openings for ``games`` games, timeouts, PDN tags. The shared ``limits``
    stay empty: every engine brings its own (``-engine``/``-each tc=...``)."""
    start_fen, openings = start_openings(args, game, seed, games)
    return GameSettings(
        name=game,
        timeouts=timeouts(args),
        start_fen=start_fen,
        openings=openings,
        event=args.value("event") or default_event,
        site=args.value("site") or "?",
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
