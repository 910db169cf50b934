"""``guti match``: one match between two engine executables, cutechess-cli style.

Example::

    guti match -engine cmd=./a.out name=A option.Hash=16 \\
               -engine cmd=python3 args="-m mybot --fast" name=B dir=bots \\
               -each tc=5+0.05 timemargin=50 -game pretwa -games 10 \\
               -pdnout file=out.pdn -log file=traffic.log -openings file=book.txt order=random

Options (each also with two dashes):

- ``-engine KEY=VALUE...`` (twice): ``cmd``, ``args``, ``name``, ``dir``,
  ``option.NAME``, ``stderr=FILE``, ``restart=on|off`` and the limits below;
- ``-each KEY=VALUE...``: applied to both engines first;
- limits: ``tc=[MOVES/]BASE[+INC]`` seconds, ``st=S``, ``depth=N``,
  ``nodes=N``, ``timemargin=MS``;
- ``-game NAME`` (``-variant`` is the same): any game of the rules core (egara-guti,
  pretwa, lau-kata-kati, dash-guti, gol-skuish, alquerque, butterfly), ``-games N``;
- ``-fen FEN`` or ``-openings file=F [order=random|sequential] [plies=N]``
  (``file=random:K`` or no ``file=``: random openings of K / ``plies`` plies
  from the start, seeded by ``-srand``), ``-srand N``;
- ``-pdnout [file=]F``, ``-log [file=]F``, ``-event TEXT``, ``-site TEXT``;
- ``-handshake-timeout S`` (10), ``-move-timeout S`` (60, moves without a
  clock), ``-stall-timeout S`` (2: grace after the time is gone).

Prints one line per game and the final score. Exit status 0 when the match
was played, 2 for a command-line mistake or an engine that cannot start
(one line on stderr), 130 when interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable

from engine.rules import GAMES, RulesError
from referee.cli.args import CliError, Kind, OptionSpec, ParsedArgs, parse_cli, usage
from referee.game.openings import OpeningsError, load_openings, opening_sequence, random_openings
from referee.game.record import GameRecord
from referee.game.runner import start_board
from referee.process.engine_process import EngineStartError
from referee.process.traffic_log import TrafficLog
from referee.tournament.match import MatchScore, MatchSettings, run_match
from referee.ugi.engine_config import (
    EngineConfig,
    EngineConfigError,
    check_keys,
    engine_config_from_tokens,
    make_names_unique,
)

#: The options every cutechess-style command here accepts; the tournament
#: command extends this list (``MATCH_OPTIONS + [...]``).
MATCH_OPTIONS: list[OptionSpec] = [
    OptionSpec("engine", Kind.TOKENS, repeatable=True, help="define an engine (cmd=... name=...)"),
    OptionSpec("each", Kind.TOKENS, help="settings applied to every engine"),
    OptionSpec("game", Kind.VALUE, help=f"one of {', '.join(GAMES)} (default egara-guti)"),
    OptionSpec("variant", Kind.VALUE, help="same as -game"),
    OptionSpec("games", Kind.VALUE, help="number of games (default 2)"),
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
    OptionSpec("handshake-timeout", Kind.VALUE, help="seconds (default 10)"),
    OptionSpec("move-timeout", Kind.VALUE, help="seconds per move without a clock (default 60)"),
    OptionSpec("stall-timeout", Kind.VALUE, help="seconds past the time before 'stalled' (default 2)"),
    OptionSpec("recover", Kind.FLAG, help="accepted for cutechess compatibility (always on)"),
    OptionSpec("help", Kind.FLAG, help="show this help"),
]


def game_name(args: ParsedArgs) -> str:
    """The ``-game``/``-variant`` value, checked against the known games."""
    name = args.value("game") or args.value("variant") or "egara-guti"
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


async def run_until_signalled(settings: MatchSettings) -> MatchScore:
    """Run the match; SIGTERM/SIGHUP cancel it like Ctrl-C, so engines are still reaped."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, task.cancel)
    return await run_match(settings, _print_game(settings.games))


def start_openings(args: ParsedArgs, game: str, seed: int | None, games: int):
    """(start_fen, openings) from ``-fen`` / ``-openings`` (CliError on mistakes)."""
    fen = args.value("fen")
    spec = args.token_dict("openings")
    if fen and spec:
        raise CliError("-fen and -openings cannot be used together")
    if fen:
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


def build_settings(args: ParsedArgs) -> MatchSettings:
    """Check the whole command line and turn it into :class:`MatchSettings`."""
    game = game_name(args)
    configs = engine_configs(args)
    if len(configs) != 2:
        raise CliError(f"a match needs exactly two -engine definitions, got {len(configs)}")
    check_limits(configs)
    games = args.int_value("games", 2, minimum=1)
    seed = args.int_value("srand", 0) if args.has("srand") else None
    start_fen, openings = start_openings(args, game, seed, games)
    pdn = args.token_dict("pdnout").get("file") or args.token_dict("pgnout").get("file")
    for path in [pdn, args.token_dict("log").get("file")]:
        if path:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise CliError(f"cannot write {path}: no such directory {folder}")
    return MatchSettings(
        first=configs[0],
        second=configs[1],
        game=game,
        games=games,
        openings=openings,
        start_fen=start_fen,
        handshake_timeout=args.float_value("handshake-timeout", 10.0),
        move_timeout=args.float_value("move-timeout", 60.0),
        stall_grace=args.float_value("stall-timeout", 2.0),
        event=args.value("event") or "?",
        site=args.value("site") or "?",
        pdn_path=pdn or None,
    )


def _print_game(total: int) -> Callable[[int, GameRecord], None]:
    def show(index: int, record: GameRecord) -> None:
        print(f"Game {index + 1}/{total}: {record.summary()}", flush=True)

    return show


def main(argv: list[str]) -> int:
    """Entry point of ``guti match``; returns the exit status."""
    try:
        args = parse_cli(argv, MATCH_OPTIONS)
        if args.has("help"):
            print(usage("guti match", MATCH_OPTIONS))
            return 0
        settings = build_settings(args)
        log_path = args.token_dict("log").get("file")
        traffic = TrafficLog(log_path) if log_path else None
    except CliError as exc:
        print(f"guti match: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"guti match: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    settings.traffic = traffic
    try:
        score = asyncio.run(run_until_signalled(settings))
    except EngineStartError as exc:
        print(f"guti match: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"guti match: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("guti match: interrupted", file=sys.stderr)
        return 130
    finally:
        if traffic is not None:
            traffic.close()
    print(score.line(), flush=True)
    return 0
