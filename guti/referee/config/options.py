"""The readers of the options a match and a tournament share.

Each reader turns part of the options given (:class:`~guti.referee.config.given.GivenOptions`,
from the command line or a TOML file alike) into a piece of the settings model
(:mod:`guti.referee.game.settings`, :mod:`guti.referee.tournament.settings`) and raises
:class:`~guti.referee.config.args.CliError` with a one-line message naming the flag or
the file's key for a mistake: this is where every value is checked. Defaults come from where they are defined (the ``defaults`` modules beside
the settings model); the options themselves and their help texts are in
:mod:`guti.referee.config.option_specs`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
from typing import TYPE_CHECKING

from guti.referee.config.args import CliError
from guti.referee.execution.cluster_address import (
    ClusterAddress,
    ClusterAddressError,
    parse_cluster,
)
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
from guti.referee.game.game_start import start_board
from guti.referee.game.limits import LIMIT_KEYS, TimeControlError, parse_limits
from guti.referee.game.openings import (
    Opening,
    OpeningsError,
    load_openings,
    opening_sequence,
)
from guti.referee.game.output_paths import create_parent_dirs
from guti.referee.game.pdn import PdnFields
from guti.referee.game.random_openings import random_openings
from guti.referee.game.settings import (
    Adjudication,
    DrawRule,
    GameSettings,
    ResignRule,
    Timeouts,
)
from guti.referee.process import affinity
from guti.referee.process.sandbox import SANDBOX_KEYS, SandboxError, parse_sandbox
from guti.referee.tournament.defaults import DEFAULT_GAMES, DEFAULT_WAIT_MS
from guti.referee.tournament.settings import RecordOutputs, Scheduling
from guti.rules import RulesError
from guti.rules.names import canonical_game_name, unknown_game
from guti.rules.numbers import whole_number

if TYPE_CHECKING:
    from guti.referee.config.given import GivenOptions


def game_name(given: GivenOptions) -> str:
    """The ``-game``/``-variant`` value, checked against the known games."""
    name = given.text("game") or given.text("variant") or DEFAULT_GAME
    known = canonical_game_name(name)  # any case: -game Pretwa is pretwa
    if known is None:
        where = given.where("game" if given.has("game") else "variant")
        raise CliError(f"{where}: {unknown_game(name)}")
    return known


def engine_configs(given: GivenOptions) -> list[EngineConfig]:
    """All engines with ``-each`` applied; names made unique. On a cluster the workers
    look up ``cmd`` and ``dir`` (they are the workers' paths)."""
    each_pairs = given.table_pairs("each")
    try:
        check_keys(each_pairs)
        # -each's own limit values are checked here, so a bad one is reported as -each's,
        # not as the first engine's (limit keys are read one by one, never across keys).
        parse_limits({key: value for key, value in each_pairs if key in LIMIT_KEYS})
        parse_sandbox({key: value for key, value in each_pairs if key in SANDBOX_KEYS})
    except (EngineConfigError, TimeControlError, SandboxError) as exc:
        raise CliError(f"{given.where('each')}: {exc}") from None
    configs = []
    for entry in given.engines:
        try:
            configs.append(engine_config_from_tokens(entry.settings, each_pairs,
                                                     here=not given.has("cluster")))
        except EngineConfigError as exc:
            raise CliError(f"{entry.where}: {exc}") from None
    make_names_unique(configs)
    return configs


def check_limits(configs: list[EngineConfig]) -> None:
    """Every engine needs some limit, or ``go infinite`` would only end by timeout."""
    for cfg in configs:
        if cfg.limits is None or cfg.limits.is_unlimited():
            raise CliError(
                f"engine {cfg.name} has no limit on its moves: give -each tc=BASE[+INC], st=, depth= "
                "or nodes= (tc=inf only beside depth=, nodes= or st=)"
            )


def games_count(given: GivenOptions) -> int:
    """``-games N`` (at least 1)."""
    return given.whole("games", DEFAULT_GAMES, minimum=1)


def timeouts(given: GivenOptions) -> Timeouts:
    """``-handshake-timeout``, ``-move-timeout`` and ``-stall-timeout``."""
    return Timeouts(
        handshake=given.number("handshake-timeout", DEFAULT_HANDSHAKE_TIMEOUT),
        move=given.number("move-timeout", DEFAULT_MOVE_TIMEOUT),
        stall_grace=given.number("stall-timeout", DEFAULT_STALL_GRACE),
    )


def adjudication(given: GivenOptions) -> Adjudication:
    """``-draw``, ``-resign`` and ``-maxmoves``: every key needed but ``twosided``."""
    draw, resign = given.table("draw"), given.table("resign")
    twosided = resign.get("twosided", "false").lower()
    if twosided not in ("true", "false"):
        raise CliError(f"{given.where('resign')} twosided={resign['twosided']}: "
                       "expected true or false")
    return Adjudication(
        draw=DrawRule(**_counts(given.where("draw"), draw, ("movenumber", "movecount", "score")))
        if draw else None,
        resign=ResignRule(**_counts(given.where("resign"), resign, ("movecount", "score")),
                          twosided=twosided == "true") if resign else None,
        maxmoves=given.whole("maxmoves", DEFAULT_MAXMOVES, minimum=0),
    )


def _counts(where: str, spec: dict[str, str], keys: tuple[str, ...]) -> dict[str, int]:
    """The whole numbers of ``keys`` in the settings given at ``where`` (``movecount`` at
    least 1)."""
    numbers = {}
    for key in keys:
        if key not in spec:
            raise CliError(f"{where}: missing {key}=N")
        text = spec[key]
        number = whole_number(text[1:] if text.startswith("+") else text)
        if number is None:
            raise CliError(f"{where} {key}={text}: not a whole number >= 0")
        least = 1 if key == "movecount" else 0
        if number < least:
            raise CliError(f"{where} {key}={text}: must be at least {least}")
        numbers[key] = number
    return numbers


def pdn_path(given: GivenOptions) -> str | None:
    """``-pdnout`` (or ``-pgnout``) file."""
    return given.table("pdnout").get("file") or given.table("pgnout").get("file") or None


def record_outputs(given: GivenOptions) -> RecordOutputs:
    """``-pdnout``'s field switches, ``-epdout``, ``-show-latency`` and ``-show-resources``."""
    option = "pdnout" if given.has("pdnout") else "pgnout"
    switches = {k: v for k, v in given.table(option).items() if k != "file"}
    fields: dict[str, bool] = {}
    for key, value in switches.items():
        if value not in ("true", "false"):
            raise CliError(f"{given.where(option)} {key}={value}: expected true or false")
        fields[key] = value == "true"
    if fields and pdn_path(given) is None:
        raise CliError(f"{given.where(option)}: {', '.join(fields)} without file=F")
    return RecordOutputs(pdn_fields=PdnFields(**fields),
                         epd_path=given.table("epdout").get("file") or None,
                         show_latency=given.has("show-latency"),
                         show_resources=given.has("show-resources"))


def openings_digest(given: GivenOptions) -> str | None:
    """The SHA-256 (hex) of the ``-openings file=F`` read, when F is a regular file; None
    for random openings, none at all, or a pipe (read once, nothing to compare)."""
    path = given.table("openings").get("file", "")
    if not path or path.startswith("random:") or not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as source:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None  # reading the openings said what is wrong
    return digest.hexdigest()


def start_openings(
    given: GivenOptions, game: str, seed: int | None, games: int, read: bool = True
) -> tuple[str | None, list[Opening] | None]:
    """(start_fen, openings) from ``-fen`` / ``-openings`` (CliError on mistakes);
    ``games`` is how many games the openings are for (one opening per pair). ``read``
    False: the ``-openings`` options are checked, but no opening is read or made (a
    resumed tournament plays the openings its schedule holds): the openings are None."""
    fen = given.text("fen")
    spec = given.table("openings")
    where = given.where("openings")
    if fen and spec:
        raise CliError("-fen and -openings cannot be used together")
    if fen:
        try:
            board = start_board(game, fen)
        except RulesError as exc:
            raise CliError(f"{given.where('fen')}: {exc}") from None
        if board.is_game_over():  # every game would end before a move, and be scored
            raise CliError(f"{given.where('fen')}: the game is already over in this position")
        return board.fen(), None
    if not spec:
        return None, None
    typed = "plies"  # what the user wrote the count as, for the messages below
    if spec.get("file", "").startswith("random:"):  # random:K == K random plies
        if "plies" in spec:
            raise CliError(f"{where} file={spec['file']} plies={spec['plies']}: give the "
                           "plies once (random:K is K random plies)")
        typed = "random"  # written -openings random:K or file=random:K
        spec = {k: v for k, v in spec.items() if k != "file"} | {"plies": spec["file"][7:]}
    plies = None
    if "plies" in spec:
        shown = f"{where} {typed}{':' if typed != 'plies' else '='}{spec['plies']}"
        try:
            plies = int(spec["plies"])
        except ValueError:
            raise CliError(f"{shown}: not a whole number") from None
        if plies < 0:
            raise CliError(f"{shown}: must be >= 0")
    order = spec.get("order", "sequential")
    if order not in ("sequential", "random"):
        raise CliError(f"{where} order={order}: expected sequential or random")
    start = _opening_start(spec, where)
    needed = max(1, (games + 1) // 2)
    if "format" in spec and "file" not in spec:
        raise CliError(f"{where} format={spec['format']}: needs file=F (an openings file)")
    if not read:
        return None, None
    try:
        if "file" in spec:
            # only as many as the run takes: a file of millions of lines is not read whole
            found = load_openings(spec["file"], game, plies, fmt=spec.get("format"),
                                  wanted=start - 1 + needed, order=order, seed=seed)
        elif plies is not None:
            found = random_openings(game, plies, needed, seed)
        else:
            raise CliError(f"{where} needs file=F or plies=N")
        if start > len(found):
            raise CliError(f"{where} start={start}: {spec['file']} has {len(found)} "
                           "usable opening(s)")
        stream = opening_sequence(found, order, seed)
        skipped = itertools.islice(stream, start - 1, None)  # fastchess: start at the N-th
        return None, [next(skipped) for _ in range(needed)]
    except OpeningsError as exc:
        raise CliError(str(exc)) from None


def _opening_start(spec: dict[str, str], where: str) -> int:
    """``-openings ... start=N``: 1-based, as fastchess; only with a file."""
    text = spec.get("start", "1")
    start = whole_number(text)
    if start is None or start < 1:
        raise CliError(f"{where} start={text}: expected a whole number from 1")
    if "start" in spec and not spec.get("file"):
        raise CliError(f"{where} start={text}: needs file=F (an openings file)")
    return start


def scheduling(given: GivenOptions, concurrency: int = 1) -> Scheduling:
    """``-noswap``, ``-reverse``, ``-wait MS`` and ``-use-affinity [CPUS]`` for
    ``concurrency`` game slots. Affinity needs at least one CPU per slot: fewer is a
    usage mistake (games sharing cores is what pinning is meant to prevent)."""
    wait_ms = given.whole("wait", DEFAULT_WAIT_MS, minimum=0)
    cpus = None
    if given.has("use-affinity"):
        cpus = affinity_cpus(given.text("use-affinity") or "", concurrency,
                             given.where("use-affinity"))
    for name in ("wait", "use-affinity"):
        if given.has(name) and given.has("cluster"):
            raise CliError(f"-{name} cannot be used with -cluster (it is about this "
                           "machine's game slots)")
    return Scheduling(noswap=given.has("noswap"), reverse=given.has("reverse"),
                      wait_ms=wait_ms, cpus=cpus)


def affinity_cpus(text: str, concurrency: int,
                  where: str = "-use-affinity") -> tuple[int, ...]:
    """The CPUs of ``-use-affinity [CPUS]`` (all usable ones when none are listed),
    checked against those this process may use and against ``concurrency``."""
    if not affinity.supported():
        raise CliError(f"{where}: not supported on this system (needs Linux)")
    usable = affinity.available_cpus()
    try:
        cpus = affinity.parse_cpu_list(text) if text else usable
    except affinity.CpuListError as exc:
        raise CliError(f"{where} {text}: {exc}") from None
    for cpu in cpus:
        if cpu not in usable:
            shown = ",".join(map(str, usable))
            raise CliError(f"{where}: CPU {cpu} is not one guti may use ({shown})")
    if len(cpus) < concurrency:
        raise CliError(f"-use-affinity: {len(cpus)} CPU(s) for {concurrency} concurrent "
                       "games; each game needs its own (list more or lower -concurrency)")
    return cpus


def game_settings(given: GivenOptions, game: str, seed: int | None, games: int,
                  default_event: str, read_openings: bool = True) -> GameSettings:
    """The :class:`GameSettings` of the options given: ``game`` (from :func:`game_name`),
    start or openings for ``games`` games (``read_openings``: see :func:`start_openings`),
    timeouts, PDN tags. The shared ``limits`` stay empty: every engine brings its own
    (``-engine``/``-each tc=...``); adjudication from ``-draw``/``-resign``/``-maxmoves``."""
    start_fen, openings = start_openings(given, game, seed, games, read_openings)
    return GameSettings(
        name=game,
        timeouts=timeouts(given),
        start_fen=start_fen,
        openings=openings,
        event=given.text("event") or default_event,
        site=given.text("site") or "?",
        adjudication=adjudication(given),
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


def cluster_address(given: GivenOptions) -> ClusterAddress | None:
    """``-cluster tcp://HOST:PORT`` or ``local:N`` (None: games are played here); a
    ``-concurrency`` given with it is the games at once on each worker."""
    text = given.text("cluster")
    if not text:
        return None
    try:
        address = parse_cluster(text)
    except ClusterAddressError as exc:
        raise CliError(str(exc)) from None
    per_worker = given.whole("concurrency", 0, minimum=1)
    return dataclasses.replace(address, per_worker=per_worker) if per_worker else address
