"""Game-tree search for the reference engine: iterative deepening alpha-beta over bitmasks.

Knows the rules (through ``guti.rules``) but nothing of UGI: the front end hands it a
``Board`` and :class:`SearchLimits`, gets :class:`Iteration` reports through a callback and
a :class:`SearchResult` at the end.
"""

from .limits import SearchLimits
from .scores import Score, describe_score
from .searcher import Iteration, Searcher, SearchResult

__all__ = ["SearchLimits", "Score", "describe_score", "Iteration", "Searcher", "SearchResult"]
