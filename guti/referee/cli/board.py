"""``guti board [-game G] [-fen F] [-moves M...] [-nonumbers] -svg FILE``: one board picture.

The position is ``-fen`` (default: the game's start) after ``-moves`` (each checked by the
rules core; move numbers such as ``1.`` are left out, as in an openings line or a PDN
game); the last move's path and the pieces it took are marked. The picture is written
whole (``FILE.tmp`` renamed over ``FILE``), as every output guti writes whole.
"""

from __future__ import annotations

from guti.referee.cli.common import fail, os_failed
from guti.referee.config.args import CliError, Kind, OptionSpec, parse_cli, usage
from guti.referee.game.defaults import DEFAULT_GAME
from guti.referee.process.text import visible
from guti.rules.names import GAME_NAMES, canonical_game_name, unknown_game

BOARD_OPTIONS = [
    OptionSpec("game", Kind.VALUE, help=f"one of {', '.join(GAME_NAMES)} (default {DEFAULT_GAME})"),
    OptionSpec("fen", Kind.TEXT, help="the position (default: the game's start)"),
    OptionSpec("moves", Kind.TEXT, help="moves played from it, e.g. 17-12 8x17 (move "
                                        "numbers such as 1. are left out)"),
    OptionSpec("svg", Kind.VALUE, help="write the picture to this file"),
    OptionSpec("nonumbers", Kind.FLAG, help="leave the point numbers out"),
    OptionSpec("help", Kind.FLAG, help="show this help"),
]


def main(argv: list[str]) -> int:
    """Entry point of ``guti board``."""
    try:
        args = parse_cli(argv, BOARD_OPTIONS)
        if args.has("help"):
            print(usage("guti board", BOARD_OPTIONS))
            return 0
        # Here, not at the top: the help above needs neither (start-up time).
        from guti.referee.game.output_paths import write_whole
        from guti.referee.game.pdn_reader import move_words
        from guti.referee.web.svg import Marks, board_svg, replay
        from guti.rules import RulesError

        typed = args.value("game", DEFAULT_GAME) or DEFAULT_GAME
        game = canonical_game_name(typed) or ""  # any case: -game Pretwa is pretwa
        if not game:
            raise CliError(f"-game: {unknown_game(typed)}")
        path = args.value("svg")
        if not path:
            raise CliError("give -svg FILE to say where the picture goes")
        moves = move_words((args.value("moves") or "").split())
        try:
            board, last = replay(game, args.value("fen"), moves)
        except RulesError as exc:
            raise CliError(str(exc)) from None
        marks = Marks(last.path if last else (), last.captured if last else (),
                      numbers=not args.has("nonumbers"))
        text = board_svg(game, board.fen(), marks, title=f"{game}: {board.fen()}")
        write_whole(path, lambda fh: fh.write(text), "board -svg")
    except CliError as exc:
        return fail("board", str(exc))
    except BrokenPipeError:  # the output's reader is gone: exit 141 (guti.cli)
        raise
    except OSError as exc:
        return os_failed("board", exc)
    print(visible(f"{board.fen()} written to {path}"))
    return 0
