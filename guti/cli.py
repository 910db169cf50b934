"""``guti``: one command, many subcommands, each a module with ``main(argv) -> int``.

Subcommand modules are imported only when used, so ``guti perft`` does not
pay for the referee and ``guti engine`` starts fast. The dispatcher stands above the
three parts: it names the referee's commands and the engine's (``engine``, ``bench``),
which never import each other.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

from guti.faults import OUTPUT_FAULTS, os_error_text

#: Exit status when stdout's reader went away (``guti ... | head``): 128 + SIGPIPE, what a
#: shell reports for a program killed by the signal, as cutechess-cli would be.
EXIT_BROKEN_PIPE = 141

#: The commands that run games: SIGTERM and SIGHUP interrupt them as Ctrl-C does.
RUNS = frozenset({"tournament", "match", "tune"})

COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module, function, one-line help)
    "tournament": ("guti.referee.cli.tournament", "main_tournament", "run a tournament (round-robin, gauntlet or knockout)"),
    "match": ("guti.referee.cli.match", "main", "play games between two engines"),
    "tune": ("guti.referee.cli.tune", "main", "tune an engine's options by self-play (SPSA)"),
    "standings": ("guti.referee.cli.tournament", "main_standings", "standings of a tournament database"),
    "export": ("guti.referee.cli.tournament", "main_export", "export a tournament database to PDN, EPD or JSON"),
    "report": ("guti.referee.cli.web", "main_report", "write a tournament database as one HTML report"),
    "serve": ("guti.referee.cli.web", "main_serve", "serve a tournament database's live pages (read-only)"),
    "board": ("guti.referee.cli.board", "main", "draw a position as SVG: board [-game G] [-fen F] [-moves M...] -svg FILE"),
    "console": ("guti.referee.cli.console", "main", "talk to an engine by hand"),
    "check": ("guti.referee.cli.check", "main", "check an engine against protocol.md"),
    "engine": ("guti.engine.ugi_main", "main", "run the reference engine (UGI on stdin/stdout)"),
    "bench": ("guti.engine.bench", "main", "search benchmark of the reference engine"),
    "perft": ("guti.referee.cli.perft", "main", "count move sequences: perft GAME DEPTH [--fen F] [--divide]"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: guti COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, _, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        try:
            print(usage(), flush=True)
        except OSError as exc:  # a closed pipe: nothing more to say; a full disk: one line
            _stdout_to_devnull()
            if isinstance(exc, BrokenPipeError):
                return EXIT_BROKEN_PIPE
            print(f"guti: {os_error_text(exc)}", file=sys.stderr)
            return 1
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"guti: unknown command {name!r} (try 'guti --help')", file=sys.stderr)
        return 2
    module_name, function, _ = COMMANDS[name]
    if name != "engine":  # (the engine ends on its input; a command with a loop sets its own)
        ended = _interrupted if name in RUNS else _ended_by_signal
        for signo in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signo, ended)
    try:
        try:  # a Ctrl-C while the command's modules load is an interrupt like any other
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                print(f"guti: command {name!r} is not available in this build",
                      file=sys.stderr)
                return 2
            raise
        try:
            code = int(getattr(module, function)(rest) or 0)
        except SystemExit as exc:  # argparse's --help and usage errors end this way
            if not isinstance(exc.code, int | None):
                raise
            code = exc.code or 0
        # what is still buffered is written here, where a stdout that cannot take it is
        # said in one line below; at the interpreter's exit it would be lost in silence
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        print(f"guti {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Nobody reads stdout any more: the run stopped (games already stored stay
        # stored, the running ones were aborted like on a signal). Point stdout at
        # /dev/null so the interpreter's final flush does not print a traceback.
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE
    except RuntimeError as exc:
        # Python's word for a thread the system would not start: memory (ulimit -v) or
        # processes (ulimit -u) ran out. A limit of the machine, as for open files.
        if "can't start new thread" not in str(exc):
            raise
        print(f"guti {name}: cannot start a thread: the machine's limit of memory or "
              "processes was reached (ulimit -v, ulimit -u)", file=sys.stderr)
        return 1
    except OSError as exc:
        # An output the command could not write, stdout most often (a full disk,
        # /dev/full): one line, and the exit status of a failed store, not a traceback.
        # Any other OSError here is a fault of guti's own, and keeps its traceback.
        if exc.errno not in OUTPUT_FAULTS:
            raise
        _stdout_to_devnull()
        print(f"guti {name}: {os_error_text(exc)}", file=sys.stderr)
        return 1


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, when what it was cannot be written any more (a closed
    pipe, a full disk): the interpreter's final flush then cannot fail with a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _interrupted(_signo: int, _frame: object) -> None:
    """SIGTERM or SIGHUP to a run outside its games' own handling of signals (an openings
    book read, engines built; the standings or report written at the end): an interrupt,
    as the run itself treats them, so exit status 130."""
    raise KeyboardInterrupt


def _ended_by_signal(signo: int, _frame: object) -> None:
    """SIGTERM or SIGHUP: the command ends as on an error, its ``finally`` blocks run (an
    export's ``FILE.tmp`` is removed, the file it replaces left as it was), with the exit
    status of that signal. The signal's default action would end it at once."""
    raise SystemExit(128 + signo)


if __name__ == "__main__":
    sys.exit(main())
