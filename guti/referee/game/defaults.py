"""The defaults of a game's settings (:mod:`guti.referee.game.settings`), each written once here.

Why apart from the settings model: ``--help`` shows these defaults, and it should not
import the model (dataclasses, openings, time controls) to print them (start-up
time). This module imports nothing but the game's default, which is the rules' own.
"""

from __future__ import annotations

#: The game played when none is named.
from guti.rules.names import DEFAULT_GAME as DEFAULT_GAME

#: Seconds for ``ugi``/``uginewgame`` + ``isready`` to be answered (``-handshake-timeout``).
DEFAULT_HANDSHAKE_TIMEOUT = 10.0
#: Seconds for a move without a clock or ``st`` (depth/nodes limits only; ``-move-timeout``).
DEFAULT_MOVE_TIMEOUT = 60.0
#: Seconds past an engine's time before its silence is ``stalled`` (``-stall-timeout``).
DEFAULT_STALL_GRACE = 2.0
#: ``-maxmoves``: 0 is no limit (cutechess-cli's spelling of "off").
DEFAULT_MAXMOVES = 0
