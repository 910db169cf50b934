"""The options of the cutechess-style commands (``guti match``, ``guti tournament``) as
plain data: each flag's name, kind, help text and allowed keys.

Why apart from their readers (:mod:`guti.referee.config.options`,
:mod:`guti.referee.config.tournament`): ``--help`` prints these and nothing else, and the
readers import the whole settings model and the rules core. Kept light, the help (and a
mistyped flag's "did you mean") starts in a fraction of the time. So this module
imports only plain-data modules: the defaults it shows come from where they are defined
(:mod:`guti.referee.game.defaults`, :mod:`guti.referee.tournament.defaults`), the games' names from
:mod:`guti.rules.names`.

A TOML tournament file's keys are these same names (:mod:`guti.referee.config.toml_file`),
so every option is defined here once, for the flags and the file alike.
"""

from __future__ import annotations

from guti.referee.config.args import Kind, OptionSpec
from guti.referee.execution.referee_choice import GAMES_PER_REFEREE
from guti.referee.game.defaults import (
    DEFAULT_GAME,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_MAXMOVES,
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
)
from guti.referee.tournament.defaults import (
    DEFAULT_DB,
    DEFAULT_GAMES,
    DEFAULT_ITERATIONS,
    DEFAULT_PAIRS,
    DEFAULT_ROUNDS,
    DEFAULT_SEEDS,
    DEFAULT_TIEBREAK,
    DEFAULT_TUNE_DB,
    DEFAULT_WAIT_MS,
)
from guti.rules.names import GAME_NAMES

#: The keys of ``-engine`` and ``-each``, one help line each (shown by ``--help``).
ENGINE_KEY_HELP: tuple[tuple[str, str], ...] = (
    ("cmd=PATH", "the engine's program (with a /: relative to dir=; a bare name: on PATH)"),
    ("args=TEXT", "its arguments, split as a shell would (args=\"-x --threads 2\")"),
    ("name=N", "its name in results (default: the program's name)"),
    ("dir=D", "its working directory"),
    ("tc=T", "time control [MOVES/]BASE[+INC] in seconds or M:SS (5:00 is 300, 1:30+1), or inf"),
    ("st=S", "fixed seconds per move (go movetime)"),
    ("depth=N", "search depth per move (go depth)"),
    ("nodes=N", "nodes per move (go nodes)"),
    ("timemargin=MS", "ms an engine may overstep its time before it loses"),
    ("option.X=V", "setoption name X value V, checked against the engine's option list"),
    ("restart=on|off", "a fresh process for every game (default off)"),
    ("stderr=FILE", "write the engine's stderr to FILE"),
    ("proto=ugi", "the protocol (ugi is the only one)"),
    ("limits.memory=SIZE", "memory of the engine and all it starts (512M, 2G)"),
    ("limits.processes=N", "processes and threads it may have at once"),
    ("limits.network=off", "no network at all (a network namespace of its own)"),
    ("limits.files=private", "read-only system, only its dir= and a private /tmp writable"),
    ("limits.cpus=N", "cores it may use on average during its moves (a move over it loses)"),
    ("limits.ponder=off", "no CPU off its move: past limits.offmove_cpu in a game it loses"),
    ("limits.offmove_cpu=S", "CPU seconds it may use off its moves in a game (default 0.25)"),
    ("limits.required=true", "refuse to run when one of its limits cannot be enforced"),
)

#: The per-move field switches of ``-pdnout``, one help line each.
PDNOUT_KEY_HELP: tuple[tuple[str, str], ...] = (
    ("file=F", "the PDN file (a match appends; a tournament's holds its database's games, "
               "an older file kept as F.bak); each engine move's comment starts with "
               "score/depth time (+0.25/12 0.012s)"),
    ("nodes=true", "and n=NODES"),
    ("seldepth=true", "and sd=SELDEPTH"),
    ("nps=true", "and nps=NPS"),
    ("timeleft=true", "and tl=S, the clock after the move"),
    ("latency=true", "and latency=S: time measured minus the time the engine reported"),
)

#: The keys of ``-openings``, one help line each.
OPENINGS_KEY_HELP: tuple[tuple[str, str], ...] = (
    ("file=F", "an openings file: FEN or move lines (epd), or PDN games (pdn), each "
               "game's FEN tag and moves being one opening"),
    ("format=epd|pdn", "the file's format (default: pdn for a .pdn or .pgn file, else epd)"),
    ("plies=N", "at most N plies of each opening (default all); without file=, random "
                "openings of N plies"),
    ("file=random:K", "random openings of K plies from the start (seeded by -srand)"),
    ("order=O", "sequential (default) or random"),
    ("start=N", "begin at the file's N-th opening (1-based)"),
)

#: The keys of ``-pdnout``: the file and fastchess's optional per-move fields, as their
#: help lines name them (a test checks they are ``guti.referee.game.pdn.PDN_FIELD_NAMES``).
PDNOUT_KEYS = frozenset(key.partition("=")[0] for key, _ in PDNOUT_KEY_HELP)

#: ``-show-resources`` (``guti match``, ``guti tournament`` and ``guti standings``).
SHOW_RESOURCES_OPTION = OptionSpec(
    "show-resources", Kind.FLAG,
    help="after the standings, per engine its peak memory, its CPU per move and the CPU it"
         " used off its moves")

#: The options every cutechess-style command here accepts; the tournament
#: command extends this list (``MATCH_OPTIONS + [...]``).
MATCH_OPTIONS: list[OptionSpec] = [
    OptionSpec("engine", Kind.TOKENS, repeatable=True, key_help=ENGINE_KEY_HELP,
               help="define an engine (twice or more), with these keys:"),
    OptionSpec("each", Kind.TOKENS, help="settings applied to every engine (same keys)"),
    OptionSpec("game", Kind.VALUE, help=f"one of {', '.join(GAME_NAMES)} (default {DEFAULT_GAME})"),
    OptionSpec("variant", Kind.VALUE, help="same as -game"),
    OptionSpec("games", Kind.VALUE, help=f"number of games (default {DEFAULT_GAMES})"),
    OptionSpec("fen", Kind.TEXT, help="start every game from this FEN"),
    OptionSpec(
        "openings",
        Kind.TOKENS,
        keys=frozenset({"file", "order", "plies", "format", "start"}),
        bare_key="file",
        key_help=OPENINGS_KEY_HELP,
        help="where games start, with these keys:",
    ),
    OptionSpec("srand", Kind.VALUE, help="random seed (openings)"),
    # -- game records (README "Game records"): one block, read by record_outputs() --
    OptionSpec("pdnout", Kind.TOKENS, keys=PDNOUT_KEYS, bare_key="file",
               key_help=PDNOUT_KEY_HELP, help="the games as PDN, with these keys:"),
    OptionSpec("pgnout", Kind.TOKENS, keys=PDNOUT_KEYS, bare_key="file", help="same as -pdnout"),
    OptionSpec("epdout", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file",
               help="file=F: each game's final position, one FEN line with result and "
                    "termination"),
    OptionSpec("show-latency", Kind.FLAG,
               help="after each game, per engine the mean and max of measured time minus "
                    "the time the engine reported"),
    SHOW_RESOURCES_OPTION,
    OptionSpec("log", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file", help="file=F traffic log"),
    OptionSpec("event", Kind.TEXT, help="PDN Event tag"),
    OptionSpec("site", Kind.TEXT, help="PDN Site tag"),
    OptionSpec("handshake-timeout", Kind.VALUE,
               help=f"seconds (default {DEFAULT_HANDSHAKE_TIMEOUT:g})"),
    OptionSpec("move-timeout", Kind.VALUE,
               help=f"seconds per move without a clock (default {DEFAULT_MOVE_TIMEOUT:g})"),
    OptionSpec("stall-timeout", Kind.VALUE,
               help=f"seconds past the time before 'stalled' (default {DEFAULT_STALL_GRACE:g})"),
    # Adjudication, cutechess-cli's spellings and meaning (guti.referee.game.adjudication).
    OptionSpec("draw", Kind.TOKENS, keys=frozenset({"movenumber", "movecount", "score"}),
               help="movenumber=N movecount=C score=S: a draw once N moves are played and"
                    " both engines' scores stayed within S cp for C moves each (default off)"),
    OptionSpec("resign", Kind.TOKENS, keys=frozenset({"movecount", "score", "twosided"}),
               help="movecount=C score=S [twosided=true]: an engine whose score stayed at or"
                    " below -S for C moves loses (twosided: and its opponent's at or above +S;"
                    " default off)"),
    OptionSpec("maxmoves", Kind.VALUE,
               help=f"a draw after V full moves (default {DEFAULT_MAXMOVES}: no limit)"),
    OptionSpec("cluster", Kind.VALUE,
               help="play on Dask: tcp://HOST:PORT (a running scheduler) or local:N workers"),
    OptionSpec("wait", Kind.VALUE,
               help=f"ms each game slot waits between its games (default {DEFAULT_WAIT_MS})"),
    OptionSpec("noswap", Kind.FLAG, help="no colour swap: an encounter's first engine is "
               "White in every game"),
    OptionSpec("reverse", Kind.FLAG, help="colours reversed: the second engine is White first"),
    OptionSpec("use-affinity", Kind.OPTIONAL, help="pin each game slot's engines to its own "
               "CPUs, V a list such as 0,2-5 (default: every usable CPU)"),
    OptionSpec("recover", Kind.FLAG, help="accepted for cutechess compatibility (always on)"),
    OptionSpec("help", Kind.FLAG, help="show this help"),
]

SPRT_OPTION = OptionSpec(
    "sprt",
    Kind.TOKENS,
    keys=frozenset({"elo0", "elo1", "alpha", "beta", "model"}),
    help="elo0=0 elo1=10 alpha=0.05 beta=0.05 [model=normalized|logistic]",
)

TOURNAMENT_OPTIONS: list[OptionSpec] = [
    *MATCH_OPTIONS,
    OptionSpec("config", Kind.VALUE, help="TOML file with the tournament (flags override it)"),
    OptionSpec("tournament", Kind.VALUE,
               help="roundrobin (default), gauntlet (-seeds) or knockout"),
    OptionSpec("seeds", Kind.VALUE, help="gauntlet: the first N engines play every engine "
               f"after them (default {DEFAULT_SEEDS})"),
    OptionSpec("tiebreak", Kind.VALUE,
               help=f"knockout: extra game pairs of a tied encounter, then the higher seed "
                    f"advances (default {DEFAULT_TIEBREAK})"),
    OptionSpec("rounds", Kind.VALUE, help=f"rounds (default {DEFAULT_ROUNDS}); -games per encounter per round"),
    OptionSpec("concurrency", Kind.VALUE,
               help="games at once (default: number of cores); with -cluster: per worker"),
    OptionSpec("referees", Kind.VALUE,
               help="auto (default) or N: processes that referee the game slots; auto: this "
                    f"process up to {GAMES_PER_REFEREE} games at once, then one per "
                    f"{GAMES_PER_REFEREE} games, at most one per core"),
    OptionSpec("db", Kind.VALUE, help=f"SQLite results database (default {DEFAULT_DB})"),
    OptionSpec("resume", Kind.FLAG, help="continue the tournament stored in -db"),
    OptionSpec("ratinginterval", Kind.VALUE, help="print standings every N games (0: at the end)"),
    SPRT_OPTION,
    OptionSpec("quiet", Kind.FLAG, help="no per-game lines"),
    OptionSpec("report", Kind.VALUE, help="write the HTML report to this file at the end"),
    OptionSpec("serve", Kind.VALUE,
               help="[HOST:]PORT: serve the live page while it runs (host 127.0.0.1 unless given)"),
]

#: The options shared with a match that a tuning run takes too (the engine, the game and
#: its openings, the timeouts, adjudication, the seed and the help).
_TUNE_SHARED = ("each", "game", "variant", "fen", "openings", "srand", "handshake-timeout",
                "move-timeout", "stall-timeout", "draw", "resign", "maxmoves", "event", "site",
                "cluster", "help")

#: The options of ``guti tune`` (``guti.referee.cli.tune``); a TOML file's keys are these.
TUNE_OPTIONS: list[OptionSpec] = [
    OptionSpec("engine", Kind.TOKENS, repeatable=True, key_help=ENGINE_KEY_HELP,
               help="the engine to tune (once), with the keys of guti match's -engine:"),
    *(spec for spec in MATCH_OPTIONS if spec.name in _TUNE_SHARED),
    OptionSpec("param", Kind.TOKENS, repeatable=True,
               help="NAME=START,MIN,MAX,C_END,R_END: an engine option to tune (one or more; "
                    "C_END: the perturbation at the end, R_END: the learning rate there)"),
    OptionSpec("iterations", Kind.VALUE, help=f"SPSA iterations (default {DEFAULT_ITERATIONS})"),
    OptionSpec("pairs", Kind.VALUE, help=f"game pairs per iteration (default {DEFAULT_PAIRS})"),
    OptionSpec("config", Kind.VALUE, help="TOML file with the run (flags override it)"),
    OptionSpec("concurrency", Kind.VALUE,
               help="games at once (default: number of cores); with -cluster: per worker"),
    OptionSpec("db", Kind.VALUE, help="SQLite database of every game and the values "
               f"(default {DEFAULT_TUNE_DB})"),
    OptionSpec("resume", Kind.FLAG, help="continue the run stored in -db"),
    OptionSpec("quiet", Kind.FLAG, help="only the values at the end"),
]
