"""What a tuning run is: the engine, the parameters, the iterations and how they are played.

The *fingerprint* is a hash of everything that decides the games and the values they are
played with (engine, parameters, iterations, pairs, game, limits, openings, seed, lag);
``-resume`` refuses a database whose fingerprint differs. The concurrency is not in it:
how many games run at once changes nothing the run computes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guti.referee.game.scheduled import ScheduledGame
from guti.referee.storage.rows import engine_to_dict
from guti.referee.tournament.tuning.spsa import Param, Spsa

if TYPE_CHECKING:
    from guti.referee.execution.cluster_address import ClusterAddress, EngineSetup
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.settings import GameSettings

#: The engine list a tuning database holds: the values ``theta + c_k * flip`` play as
#: engine 0, ``theta - c_k * flip`` as engine 1.
PLUS, MINUS = 0, 1


@dataclass
class TuneSettings:
    """One tuning run (see the module docstring). ``lag``: the iterations that may be in
    flight besides the oldest (:mod:`~guti.referee.tournament.tuning.state`)."""

    engine: EngineConfig
    params: tuple[Param, ...]
    iterations: int
    pairs: int
    game: GameSettings
    db_path: str
    seed: int
    lag: int
    concurrency: int = 1
    resume: bool = False
    quiet: bool = False
    seed_given: bool = True  # False: a resume takes the stored run's seed
    cluster: ClusterAddress | None = None  # -cluster: the games are played on Dask
    setups: tuple[EngineSetup, ...] = ()  # the engine's requirements and build, per worker

    def adopt(self, stored: dict[str, Any]) -> None:
        """A resume goes on as the stored run was made: with its lag (which the
        concurrency chose then) and, unless ``-srand`` was given, its seed. ValueError
        when what is stored is not such a run's settings (a damaged database)."""
        tune = stored.get("tune", {})
        lag = tune.get("lag", self.lag) if isinstance(tune, dict) else None
        seed = stored.get("seed", self.seed)
        for name, value in (("tune.lag", lag), ("seed", seed)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"its stored {name} is {value!r}, not a whole number")
        assert isinstance(lag, int) and isinstance(seed, int)
        self.lag = lag
        if not self.seed_given:
            self.seed = seed

    @property
    def games_per_iteration(self) -> int:
        return 2 * self.pairs

    @property
    def total_games(self) -> int:
        return self.iterations * self.games_per_iteration

    def spsa(self) -> Spsa:
        return Spsa(self.params, self.iterations, self.seed)

    def side_names(self) -> tuple[str, str]:
        """The names the two sides are stored under."""
        return f"{self.engine.name}+", f"{self.engine.name}-"

    def describe(self) -> dict[str, Any]:
        """The settings stored in the database (JSON-able); the report reads ``tune``."""
        openings = self.game.schedule_openings() or []
        return {
            "format": "tune",
            "game": self.game.name,
            "engine": engine_to_dict(self.engine),
            "tune": {
                "params": [p.spec() for p in self.params],
                "iterations": self.iterations,
                "pairs": self.pairs,
                "lag": self.lag,
            },
            "openings": [[o.fen, list(o.moves)] for o in openings],
            "seed": self.seed,
            "event": self.game.event,
            "adjudication": repr(self.game.adjudication),
        }

    def fingerprint(self) -> str:
        """The hash a resume is checked against; the openings are left out (the stored
        schedule holds them: a resume plays its games with their own)."""
        data = {k: v for k, v in self.describe().items() if k != "openings"}
        text = json.dumps(data, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def schedule(self) -> Iterator[ScheduledGame]:
        """Every game: iteration ``k`` is round ``k + 1``; each of its pairs plays one
        opening twice, the plus engine White first."""
        openings = self.game.schedule_openings()
        game_id = 0
        for k in range(self.iterations):
            for j in range(self.pairs):
                pair_id = k * self.pairs + j
                opening = openings[pair_id % len(openings)] if openings else None
                for white, black in ((PLUS, MINUS), (MINUS, PLUS)):
                    yield ScheduledGame(game_id, pair_id, k + 1, white, black, opening)
                    game_id += 1
