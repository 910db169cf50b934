"""The rules core: geometry, positions, moves, FEN, end rules and perft for the guti games.

Pure computation: nothing here knows of processes, protocols or search.

The names below are loaded when first asked for (PEP 562), not when the package is.
What that buys: ``guti match --help`` and the other help texts need only
:mod:`guti.rules.names`, and importing a submodule runs this file first; with plain
imports here every help text would load the board, the move generator and every
game's tables, which about doubles the time ``guti match --help`` takes (some 45 ms
on a 2-core machine; ``tests/test_startup.py`` checks the help path stays without them).
"""

from __future__ import annotations

import importlib

#: The type checker's view of the names below (mypy treats a module-level
#: ``TYPE_CHECKING = False`` as ``typing.TYPE_CHECKING``; the help path imports no ``typing``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .board import Board
    from .errors import RulesError
    from .games import GAMES, Game, get_game
    from .move import Move
    from .perft_tree import PerftStopped, divide, perft
    from .result import Outcome, Result, Side, Termination

#: name -> the module of this package that defines it.
_HOMES = {
    "Board": "board", "RulesError": "errors", "GAMES": "games", "Game": "games",
    "get_game": "games", "Move": "move", "divide": "perft_tree", "perft": "perft_tree",
    "PerftStopped": "perft_tree",
    "Outcome": "result", "Result": "result", "Side": "result", "Termination": "result",
}

__all__ = [
    "Board", "Outcome", "Result", "Side", "Termination", "RulesError", "GAMES", "Game", "get_game",
    "Move", "perft", "divide", "PerftStopped",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next look-up is an ordinary one
    return value
