"""What a match and a tournament are: engines, how many games, and the one game settings.

Both hold a :class:`~guti.referee.game.settings.GameSettings` (game, time control,
timeouts, start or openings, PDN tags): a match is played exactly like a
tournament's games, by the same scheduler and executor. The readers in
:mod:`guti.referee.config` build these from the command line or a TOML file; the
runners in this package only read them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from guti.referee.game.pdn import PdnFields
from guti.referee.game.settings import GameSettings
from guti.referee.tournament.defaults import (
    DEFAULT_DB,
    DEFAULT_GAMES,
    DEFAULT_REFEREES,
    DEFAULT_ROUNDS,
    DEFAULT_SEEDS,
    DEFAULT_TIEBREAK,
    DEFAULT_WAIT_MS,
)
from guti.referee.tournament.knockout import KNOCKOUT, minimum_games
from guti.referee.tournament.scheduler import ScheduleError, total_games

if TYPE_CHECKING:  # types only: importing them at run time would slow `guti ... --help`
    from guti.referee.execution.cluster_address import ClusterAddress, EngineSetup
    from guti.referee.execution.executor import ExecutionPlan
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.process.engine_process import TrafficHook
    from guti.referee.stats.sprt import SprtSpec



@dataclass(frozen=True)
class Scheduling:
    """fastchess's options on colours, spacing and placement of games, the same for a
    match and a tournament: ``noswap`` (no colour swap within a pair), ``reverse``
    (colours reversed: the second engine is White first), ``wait_ms`` (pause of each
    game slot between its games, ``-wait``) and ``cpus`` (``-use-affinity``: the CPUs
    split among the game slots; None: engines are not pinned)."""

    noswap: bool = False
    reverse: bool = False
    wait_ms: int = DEFAULT_WAIT_MS
    cpus: tuple[int, ...] | None = None


@dataclass(frozen=True)
class RecordOutputs:
    """What each game's records carry beyond the PDN file itself: fastchess's optional
    per-move PDN fields (``-pdnout ... nodes=true ...``), the final positions file
    (``-epdout``), the latency lines after each game (``-show-latency``) and the table of
    what each engine used after the standings (``-show-resources``)."""

    pdn_fields: PdnFields = PdnFields()
    epd_path: str | None = None
    show_latency: bool = False
    show_resources: bool = False


@dataclass
class MatchSettings:
    """A match: ``games`` games between two engines (see :mod:`guti.referee.tournament.match`)."""

    first: EngineConfig
    second: EngineConfig
    game: GameSettings = field(default_factory=GameSettings)
    games: int = DEFAULT_GAMES
    pdn_path: str | None = None
    traffic: TrafficHook | None = None
    cluster: ClusterAddress | None = None  # -cluster: played by Dask workers
    scheduling: Scheduling = field(default_factory=Scheduling)
    records: RecordOutputs = RecordOutputs()


@dataclass
class TournamentSettings:
    """A whole tournament, checked; built by :func:`guti.referee.config.tournament.tournament_settings`.

    The *fingerprint* is a hash of ``fingerprint_data``: everything that decides which
    games are played and how (engines, game, limits, format, rounds, games, openings,
    seed); ``-resume`` refuses a database whose fingerprint differs."""

    engines: list[EngineConfig]
    game: GameSettings = field(default_factory=GameSettings)
    fmt: str = "roundrobin"
    rounds: int = DEFAULT_ROUNDS
    games: int = DEFAULT_GAMES
    seed: int | None = None
    concurrency: int = 1
    referees: int = DEFAULT_REFEREES  # -referees: processes that referee the slots (0: auto)
    db_path: str = DEFAULT_DB
    resume: bool = False
    pdn_path: str | None = None
    log_path: str | None = None
    rating_interval: int = 0
    sprt: SprtSpec | None = None
    quiet: bool = False
    cluster: ClusterAddress | None = None  # -cluster: played by Dask workers
    setups: tuple[EngineSetup, ...] = ()  # builds and requirements, run on every worker
    fingerprint_data: dict[str, Any] = field(default_factory=dict)
    #: The openings were not read: the run resumes a tournament whose schedule holds them.
    openings_from_store: bool = False
    #: The SHA-256 of the openings file read for this run (None: none was read), stored
    #: so that a resume that reads it again (a knockout's later rounds) sees a changed file.
    openings_digest: str | None = None
    report_path: str | None = None  # HTML report written at the end
    serve: str | None = None  # [HOST:]PORT of the live page
    tiebreak: int = DEFAULT_TIEBREAK  # knockout: extra game pairs of a tied encounter
    seeds: int = DEFAULT_SEEDS  # -seeds: a gauntlet's first N engines play everyone after them
    scheduling: Scheduling = field(default_factory=Scheduling)
    records: RecordOutputs = RecordOutputs()

    @property
    def knockout(self) -> bool:
        return self.fmt == KNOCKOUT

    @property
    def total_games(self) -> int:
        """Games to play (a knockout: the least, without tie-break pairs)."""
        if self.knockout:
            return minimum_games(len(self.engines), self.games)
        return total_games(self.fmt, len(self.engines), self.rounds, self.games, self.seeds)

    def execution_plan(self, games_left: int | None = None) -> ExecutionPlan:
        """How the games are played: in this process, referee processes or a cluster.
        ``games_left``: how many games a resumed run has still to play, when known (fewer
        games at once than the whole tournament's may need fewer referee processes)."""
        from guti.referee.execution.executor import ExecutionPlan  # not for `--help`

        try:
            games: int | None = self.total_games
        except ScheduleError:  # a format whose size is not known ahead: concurrency decides
            games = None
        if games_left is not None:
            games = games_left if games is None else min(games, games_left)
        return ExecutionPlan(
            self.engines, self.game, self.concurrency, self.referees, self.cluster, self.setups,
            self.scheduling.wait_ms, self.scheduling.cpus, games=games,
            live=self.serve is not None,
        )

    def fingerprint(self) -> str:
        import hashlib  # here, not at the top: `guti ... --help` imports this module

        text = json.dumps(self.fingerprint_data, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """The settings stored in the database (JSON-able)."""
        return {
            **self.fingerprint_data,
            "concurrency": self.concurrency,
            "pdnout": self.pdn_path,
            "pdnfields": self.records.pdn_fields.names(),
            "epdout": self.records.epd_path,
            "event": self.game.event,
            "site": self.game.site,
            "sprt": asdict(self.sprt) if self.sprt is not None else None,
            **({"openings_digest": self.openings_digest} if self.openings_digest else {}),
        }
