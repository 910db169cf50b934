"""The defaults of a match's and a tournament's settings, each written once here.

Why apart from the settings model (:mod:`guti.referee.tournament.settings`): ``--help``
shows these defaults and should not import the model to print them (start-up
time). This module imports nothing.
"""

from __future__ import annotations

#: Games per encounter (per round) when ``-games`` is not given; also a match's length.
DEFAULT_GAMES = 2
#: Extra game pairs a tied knockout encounter plays at most before the higher seed advances.
DEFAULT_TIEBREAK = 2
#: Rounds of a tournament (``-rounds``).
DEFAULT_ROUNDS = 1
#: The results database (``-db``).
DEFAULT_DB = "guti.db"
#: A gauntlet's seeds: its first N engines play every engine after them (``-seeds``).
DEFAULT_SEEDS = 1
#: Milliseconds each game slot waits between its games (``-wait``).
DEFAULT_WAIT_MS = 0
#: Processes that referee a tournament's game slots (``-referees``): 0, ``auto``, chosen by
#: guti (:func:`guti.referee.execution.referee_choice.referee_count`).
DEFAULT_REFEREES = 0
#: A tuning run's SPSA iterations (``guti tune -iterations``).
DEFAULT_ITERATIONS = 100
#: Game pairs per tuning iteration (``guti tune -pairs``).
DEFAULT_PAIRS = 1
#: A tuning run's database (``guti tune -db``).
DEFAULT_TUNE_DB = "guti-tune.db"
#: The most games one tournament or tuning run schedules: its whole schedule is written to
#: its database before the first game (so a resume plays exactly what is missing), and a
#: million rows take seconds; more is a mistyped number or several runs' worth.
MAX_GAMES = 1_000_000
