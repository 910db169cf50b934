"""Where guti's own options end and the engine's command starts, for ``guti console``
and ``guti check`` (``guti check [--game G] -- ENGINE_CMD [ARGS...]``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from guti.referee.config.args import did_you_mean
from guti.rules.names import canonical_game_name, unknown_game

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


def split_engine_argv(
    argv: list[str], valued: tuple[str, ...] = ("-game", "--game")
) -> tuple[list[str], list[str]]:
    """Split ``[OPTIONS...] -- ENGINE_CMD [ARGS...]`` into (options, engine argv).

    Without ``--`` the engine command starts at the first word that is neither an
    option nor the value of one of the ``valued`` options, so ``guti check ./bot``
    works too; ``--`` is needed only when the engine's own arguments look like ours.
    """
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in valued:
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            break
    return argv[:i], argv[i:]


def game_argument(text: str) -> str:
    """A ``--game`` value in any case, as the game's own name (``Pretwa`` is ``pretwa``);
    an unknown name is refused in the words every command uses."""
    game = canonical_game_name(text)
    if game is None:
        raise argparse.ArgumentTypeError(unknown_game(text))
    return game


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose mistakes are one line on stderr (``guti check: ...``) and
    exit status 2, as every guti command says them; argparse's own prints its usage first.
    Every option is taken with one dash as with two (``-game`` or ``--game``, ``-help``),
    as ``guti match`` and the other commands take theirs."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        """The help text, written as any output is: argparse's own drops a write that
        fails, so ``--help`` to a full disk would exit 0 having written nothing."""
        (file or sys.stdout).write(self.format_help())

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        words = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args([self._two_dashes(word) for word in words], namespace)

    def _two_dashes(self, word: str) -> str:
        """``-game`` as ``--game`` (``-game=x`` too) when ``--game`` is an option here."""
        name = word.partition("=")[0]
        if word.startswith("-") and not word.startswith("--") and len(name) > 2 and (
                f"-{name}" in self._option_string_actions):
            return f"-{word}"
        return word


def parse_options(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """``parser.parse_args(words)``, but a mistyped option names the nearest known one
    (``unknown option '--gmae' (did you mean --game?)``, exit 2) as every guti command does."""
    opts, unknown = parser.parse_known_args(words)
    for word in unknown:
        if word.startswith("-"):
            known = [s for s in parser._option_string_actions if s.startswith("--")]
            parser.error(f"unknown option {word!r}{did_you_mean(word, known)}")
    if unknown:
        parser.error(f"unexpected arguments: {' '.join(unknown)}")
    return opts
