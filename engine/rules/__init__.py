"""The rules core: geometry, positions, moves, FEN, end rules and perft for the guti games.

Pure computation: nothing here knows of processes, protocols or search.
"""

from .board import Board, Outcome
from .errors import RulesError
from .games import GAMES, Game, get_game
from .move import Move
from .perft import divide, perft

__all__ = ["Board", "Outcome", "RulesError", "GAMES", "Game", "get_game", "Move", "perft", "divide"]
