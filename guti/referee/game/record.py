"""The record of one finished (or aborted) game, as the referee saw it.

A :class:`GameRecord` is what :func:`guti.referee.game.runner.play_game` returns
and what the PDN writer, the tournament database and the terminal summary
consume. Everything in it was decided by the referee itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from guti.referee.game.reasons import Reason
from guti.referee.ugi.search_info import Score as Score  # a record's scores, for its readers
from guti.rules.result import Result, Side

if TYPE_CHECKING:
    from guti.referee.game.resources import EngineUse
    from guti.referee.ugi.search_info import SearchInfo


@dataclass
class GameRecord:
    """One game.

    ``moves`` holds every ply from ``start_fen`` (None: the game's standard start),
    opening (book) plies first: ``opening_plies`` of them. ``elapsed_ms[i]`` is the
    time the engine took for ply i (None for book plies); ``clock_ms[i]`` the time
    left on its clock after ply i, increment included (None without a clock).
    ``search[i]`` is what the engine reported with ply i (its last ``info`` line with
    search fields before ``bestmove``; None for book plies and silent engines).
    ``cpu_ms[i]`` is the CPU time the engine used from ``go`` to its move (all its threads,
    and all its processes when it has limits; to 10 ms; a move that showed none gets what
    the engine used until its next ``go``, see :mod:`guti.referee.game.resources`; None for
    book plies and unknown; games stored before it was measured have none).
    ``resources`` holds, per side, what its engine used in the game (its CPU in all, on
    and off its move, its peak memory: :class:`~guti.referee.game.resources.EngineUse`);
    empty for games stored before it was measured.
    ``result`` is a :class:`~guti.rules.result.Result` (``1-0``/``0-1``/``1/2-1/2``/``*``);
    ``reason`` from the one vocabulary; ``detail`` a one-line human explanation (the
    illegal move and the FEN, exit code or signal, ...). ``fault`` is the
    :class:`~guti.rules.result.Side` that lost by an engine fault (reason not decided
    by the rules), else None. The enums are strings, stored and written as their values.
    """

    game: str
    white: str
    black: str
    start_fen: str | None = None
    moves: list[str] = field(default_factory=list)
    elapsed_ms: list[float | None] = field(default_factory=list)
    clock_ms: list[float | None] = field(default_factory=list)
    search: list[SearchInfo | None] = field(default_factory=list)
    cpu_ms: list[float | None] = field(default_factory=list)
    resources: dict[Side, EngineUse] = field(default_factory=dict)
    opening_plies: int = 0
    result: Result = Result.UNFINISHED
    reason: Reason | None = None
    detail: str = ""
    fault: Side | None = None
    round: str = "1"
    #: The game's number in its match or tournament, 1-based as everywhere a person reads
    #: it (terminal, PDN ``Game`` tag, JSON); None for a game played on its own.
    number: int | None = None
    date: str = "????.??.??"
    start_time: str = ""
    event: str = "?"
    site: str = "?"
    time_control: str = "-"
    final_fen: str = ""
    first_side: Side = Side.WHITE  # side to move at start_fen
    #: The cluster worker that played the game (its name, else its address); None: played
    #: by this machine.
    worker: str | None = None
    #: What the referee met in the game that its user should hear of, a line each (a move
    #: voided for the referee's own lateness): told when the game is reported, not stored.
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Records are also built from stored text (database rows, tests): read the
        # spellings back into the enums here, once, so every consumer sees the types.
        # (Only where they are text: the referee makes its records with the enums.)
        if type(self.result) is not Result:
            self.result = Result(self.result)
        if type(self.first_side) is not Side:
            self.first_side = Side(self.first_side)
        if self.fault is not None and type(self.fault) is not Side:
            self.fault = Side(self.fault)

    @property
    def plies(self) -> int:
        return len(self.moves)

    def latency_ms(self, ply: int) -> float | None:
        """The time the referee measured for ``ply`` minus the ``time`` the engine reported
        with it (its last ``info ... time MS`` before ``bestmove``): what the move cost
        beyond the engine's own count (pipes, scheduling, the engine's output and
        start-up of the search). None for book plies and when the engine sent no ``time``."""
        info = self.search[ply] if ply < len(self.search) else None
        elapsed = self.elapsed_ms[ply] if ply < len(self.elapsed_ms) else None
        if info is None or info.time is None or elapsed is None:
            return None
        return elapsed - info.time

    @property
    def winner(self) -> str | None:
        """The winning engine's name, None for a draw or unfinished game."""
        side = self.result.winner
        if side is None:
            return None
        return self.white if side is Side.WHITE else self.black

    def summary(self) -> str:
        """One terminal line: ``A vs B: 1-0 (no legal move, 57 plies)`` [+ the detail of a
        fault or an adjudication]."""
        why = str(self.reason) if self.reason is not None else "unfinished"
        text = f"{self.white} vs {self.black}: {self.result} ({why}, {self.plies} plies)"
        if self.detail and (self.fault is not None or self.reason is Reason.ADJUDICATION):
            text += f" - {self.detail.splitlines()[0]}"  # the rest: stderr lines, kept in files
        return text
