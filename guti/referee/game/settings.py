"""How every game of a match or a tournament is played: the one settings model for a game.

:class:`GameSettings` is what the referee needs to play any one game: which game (``name``),
the time control (shared, unless an engine brings its own), the referee's
:class:`Timeouts`, where games start (a FEN or a list of openings) and the PDN
``Event``/``Site`` tags. A match's and a tournament's settings
(:mod:`guti.referee.tournament.settings`) hold one; the command line and TOML readers
(:mod:`guti.referee.config`) build it. Each default is written here and nowhere else.

:class:`GameSpec` is one game of those, described whole (its start, each side's limits, its
round): what :func:`~guti.referee.game.runner.play_game` is given.
:meth:`GameSettings.spec_for` makes it for a scheduled game, so the rule of which limits a
side plays with is written once.

The adjudication rules (:class:`Adjudication`: ``-draw``, ``-resign``, ``-maxmoves``, with
cutechess-cli's spellings) are off by default; :mod:`guti.referee.game.adjudication` applies them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from guti.referee.game.defaults import (
    DEFAULT_GAME,
    DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_MAXMOVES,
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_STALL_GRACE,
)
from guti.referee.game.limits import Limits
from guti.referee.game.openings import Opening
from guti.rules import Side

if TYPE_CHECKING:
    from guti.referee.game.scheduled import ScheduledGame


@dataclass(frozen=True)
class Timeouts:
    """The referee's bounds on every wait for an engine (seconds)."""

    handshake: float = DEFAULT_HANDSHAKE_TIMEOUT
    move: float = DEFAULT_MOVE_TIMEOUT
    stall_grace: float = DEFAULT_STALL_GRACE


@dataclass(frozen=True)
class DrawRule:
    """``-draw movenumber=N movecount=C score=S``: a draw once at least ``movenumber`` full
    moves are played and both engines' scores stayed within ``score`` centipieces of zero
    for ``movecount`` consecutive moves each (2 * ``movecount`` plies, a capture restarting
    the count)."""

    movenumber: int
    movecount: int
    score: int


@dataclass(frozen=True)
class ResignRule:
    """``-resign movecount=C score=S [twosided=true]``: an engine whose score stayed at or
    below ``-score`` for ``movecount`` consecutive moves of its own loses; with
    ``twosided`` only when its opponent's last ``movecount`` scores were all at least
    ``+score``."""

    movecount: int
    score: int
    twosided: bool = False


@dataclass(frozen=True)
class Adjudication:
    """Which adjudication rules are on: None (and ``maxmoves`` 0) is off."""

    draw: DrawRule | None = None
    resign: ResignRule | None = None
    maxmoves: int = DEFAULT_MAXMOVES  # full moves; a draw after this many

    @property
    def active(self) -> bool:
        return self.draw is not None or self.resign is not None or self.maxmoves > 0

    def describe(self) -> dict[str, object]:
        """The rules that are on, as plain data (database settings, fingerprint)."""
        out: dict[str, object] = {}
        if self.draw is not None:
            out["draw"] = asdict(self.draw)
        if self.resign is not None:
            out["resign"] = asdict(self.resign)
        if self.maxmoves:
            out["maxmoves"] = self.maxmoves
        return out


@dataclass
class GameSettings:
    """Everything about how each game is played, the same for a match and a tournament.

    ``limits`` is the shared time control; an engine's own (``-engine tc=...``) wins
    over it (:meth:`limits_for`). ``start_fen`` and ``openings`` are exclusive: a fixed
    start for every game, or openings handed out by the scheduler (None and None: the
    game's standard start)."""

    name: str = DEFAULT_GAME  # which game: a key of guti.rules.GAMES
    limits: Limits = field(default_factory=Limits)
    timeouts: Timeouts = field(default_factory=Timeouts)
    start_fen: str | None = None
    openings: list[Opening] | None = None
    event: str = "?"
    site: str = "?"
    adjudication: Adjudication = field(default_factory=Adjudication)

    def limits_for(self, engine_limits: Limits | None) -> Limits:
        """The limits one side plays with: its engine's own, else the shared ones."""
        return engine_limits or self.limits

    def spec_for(self, job: ScheduledGame, white_limits: Limits | None,
                 black_limits: Limits | None) -> GameSpec:
        """The description of ``job``: its opening, its round, these settings' tags, timeouts
        and adjudication; each side plays with its engine's own limits (``white_limits``,
        ``black_limits``), else the shared ones."""
        opening = job.opening
        return GameSpec(
            self.name,
            start_fen=opening.fen if opening else None,
            opening_moves=opening.moves if opening else (),
            white_limits=self.limits_for(white_limits),
            black_limits=self.limits_for(black_limits),
            round_tag=str(job.round),
            event=self.event,
            site=self.site,
            timeouts=self.timeouts,
            adjudication=self.adjudication,
        )

    def schedule_openings(self) -> list[Opening] | None:
        """The openings the scheduler hands out: the list, or the fixed start as one."""
        if self.openings is None and self.start_fen is not None:
            return [Opening(self.start_fen, (), "fen")]
        return self.openings


@dataclass(frozen=True)
class GameSpec:
    """One game to play, described whole (the engines that play it aside).

    ``game`` names the rules (a key of ``guti.rules.GAMES``); the game starts from
    ``start_fen`` (None: the game's standard start), then ``opening_moves`` are played for
    it before the engines move. Each side plays under its own limits (:meth:`with_limits`
    gives both the same). ``round_tag``, ``event`` and ``site`` are the PDN tags of its
    record; ``timeouts`` bound the referee's waits; ``adjudication`` may end it early (off
    by default). Nothing here is checked until the game is played: a bad FEN or opening
    move is the caller's input, and :func:`~guti.referee.game.runner.play_game` refuses it
    before any engine is touched."""

    game: str = DEFAULT_GAME
    start_fen: str | None = None
    opening_moves: tuple[str, ...] = ()
    white_limits: Limits = field(default_factory=Limits)
    black_limits: Limits = field(default_factory=Limits)
    round_tag: str = "1"
    event: str = "?"
    site: str = "?"
    timeouts: Timeouts = field(default_factory=Timeouts)
    adjudication: Adjudication = field(default_factory=Adjudication)

    def with_limits(self, limits: Limits) -> GameSpec:
        """This game with ``limits`` for both sides."""
        return replace(self, white_limits=limits, black_limits=limits)

    def limits_of(self, side: Side) -> Limits:
        """The limits ``side`` plays under."""
        return self.white_limits if side is Side.WHITE else self.black_limits
