"""The rules core: geometry, positions, moves, FEN, end rules and perft for the guti games.

Pure computation: nothing here knows of processes, protocols or search.

The names below are loaded when first asked for (PEP 562), not when the package is: a
module that needs only :mod:`guti.rules.names` (a ``--help`` text) then does not pay
for building every game's tables at start-up.
"""

from __future__ import annotations

import importlib

#: Not ``typing.TYPE_CHECKING``: importing ``typing`` would cost start-up time too.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .board import Board
    from .errors import RulesError
    from .games import GAMES, Game, get_game
    from .move import Move
    from .perft_tree import divide, perft
    from .result import Outcome, Result, Side, Termination

#: name -> the module of this package that defines it.
_HOMES = {
    "Board": "board", "RulesError": "errors", "GAMES": "games", "Game": "games",
    "get_game": "games", "Move": "move", "divide": "perft_tree", "perft": "perft_tree",
    "Outcome": "result", "Result": "result", "Side": "result", "Termination": "result",
}

__all__ = [
    "Board", "Outcome", "Result", "Side", "Termination", "RulesError", "GAMES", "Game", "get_game",
    "Move", "perft", "divide",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next look-up is an ordinary one
    return value
