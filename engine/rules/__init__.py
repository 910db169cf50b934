"""The rules core: geometry, positions, moves, FEN, end rules and perft for the guti games.

Pure computation: nothing here knows of processes, protocols or search.
"""

from .board import Board
from .errors import RulesError
from .games import GAMES, Game, get_game
from .move import Move
from .perft import divide, perft
from .result import Outcome, Result, Side, Termination

__all__ = [
    "Board", "Outcome", "Result", "Side", "Termination", "RulesError", "GAMES", "Game", "get_game",
    "Move", "perft", "divide",
]
