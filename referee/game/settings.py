"""How every game of a match or a tournament is played: the one settings model for a game.

:class:`GameSettings` is what the referee needs to play any one game: which game (``name``),
the time control (shared, unless an engine brings its own), the referee's
:class:`Timeouts`, where games start (a FEN or a list of openings) and the PDN
``Event``/``Site`` tags. A match's and a tournament's settings
(:mod:`referee.tournament.settings`) hold one; the command line and TOML readers
(:mod:`referee.config`) build it. Each default is written here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.game.openings import Opening
from referee.game.timecontrol import Limits

#: Seconds for ``ugi``/``uginewgame`` + ``isready`` to be answered (``-handshake-timeout``).
DEFAULT_HANDSHAKE_TIMEOUT = 10.0
#: Seconds for a move without a clock or ``st`` (depth/nodes limits only; ``-move-timeout``).
DEFAULT_MOVE_TIMEOUT = 60.0
#: Seconds past an engine's time before its silence is ``stalled`` (``-stall-timeout``).
DEFAULT_STALL_GRACE = 2.0
#: The game played when none is named.
DEFAULT_GAME = "egara-guti"


@dataclass(frozen=True)
class Timeouts:
    """The referee's bounds on every wait for an engine (seconds)."""

    handshake: float = DEFAULT_HANDSHAKE_TIMEOUT
    move: float = DEFAULT_MOVE_TIMEOUT
    stall_grace: float = DEFAULT_STALL_GRACE


@dataclass
class GameSettings:
    """Everything about how each game is played, the same for a match and a tournament.

    ``limits`` is the shared time control; an engine's own (``-engine tc=...``) wins
    over it (:meth:`limits_for`). ``start_fen`` and ``openings`` are exclusive: a fixed
    start for every game, or openings handed out by the scheduler (None and None: the
    game's standard start)."""

    name: str = DEFAULT_GAME  # which game: a key of engine.rules.GAMES
    limits: Limits = field(default_factory=Limits)
    timeouts: Timeouts = field(default_factory=Timeouts)
    start_fen: str | None = None
    openings: list[Opening] | None = None
    event: str = "?"
    site: str = "?"

    def limits_for(self, engine_limits: Limits | None) -> Limits:
        """The limits one side plays with: its engine's own, else the shared ones."""
        return engine_limits or self.limits

    def schedule_openings(self) -> list[Opening] | None:
        """The openings the scheduler hands out: the list, or the fixed start as one."""
        if self.openings is None and self.start_fen is not None:
            return [Opening(self.start_fen, (), "fen")]
        return self.openings
