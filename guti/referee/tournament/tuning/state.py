"""The state of a tuning run, rebuilt from its stored results alone.

Several iterations are in flight at once (as on fishtest), yet the run must be a
function of its seed and its games' results, so that a run killed and resumed ends where
an uninterrupted one would. Two rules make it so:

- updates are applied in iteration order: an iteration that ends before an earlier one
  waits for it (a game pair's update is applied as soon as every earlier one is);
- iteration ``k`` plays around ``theta`` as it is after iterations ``0 .. k - lag - 1``
  (``lag``, fixed when the run is created, is how many iterations may be in flight
  besides the oldest), so it may start only once those are applied.

The history of ``theta`` (after every applied iteration) is kept for the report's chart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from guti.rules.result import white_points

if TYPE_CHECKING:
    from guti.referee.tournament.tuning.spsa import Spsa, Trial



def plus_score(result: str, plus_is_white: bool) -> int:
    """The plus engine's wins minus losses in one game (``*``, unfinished: 0)."""
    points = white_points(result)
    score = 0 if points is None else round(2 * points - 1)
    return score if plus_is_white else -score


class TuneState:
    """``theta`` after every applied iteration, and the results waiting to be applied."""

    def __init__(self, spsa: Spsa, games_per_iteration: int, lag: int) -> None:
        self.spsa = spsa
        self.games_per_iteration = games_per_iteration
        self.lag = lag
        self.history: list[tuple[float, ...]] = [spsa.start()]
        self.scores: dict[int, int] = {}  # iteration -> plus's wins minus losses so far
        self.counts: dict[int, int] = {}  # iteration -> games stored

    @property
    def applied(self) -> int:
        """How many iterations have moved ``theta``."""
        return len(self.history) - 1

    @property
    def theta(self) -> tuple[float, ...]:
        return self.history[-1]

    def ready(self, k: int) -> bool:
        """Whether iteration ``k``'s values are known (every iteration it waits for is
        applied)."""
        return self.applied >= max(0, k - self.lag)

    def trial(self, k: int) -> Trial:
        """Iteration ``k``'s values (only when :meth:`ready`)."""
        if not self.ready(k):
            raise ValueError(f"iteration {k + 1} waits for iteration {k - self.lag}")
        return self.spsa.trial(k, self.history[max(0, k - self.lag)])

    def add(self, k: int, score: int) -> list[int]:
        """One stored game of iteration ``k`` (``score``: :func:`plus_score`); the
        iterations this lets apply, in order."""
        self.scores[k] = self.scores.get(k, 0) + score
        self.counts[k] = self.counts.get(k, 0) + 1
        done = []
        while self.counts.get(self.applied, 0) >= self.games_per_iteration:
            j = self.applied
            self.history.append(self.spsa.step(self.theta, j, self.scores.pop(j)))
            del self.counts[j]
            done.append(j)
        return done


def replay_results(spsa: Spsa, games_per_iteration: int, lag: int,
                   results: Iterable[tuple[int, int, int, int, str, str | None, str | None]],
                   plus: int = 0) -> TuneState:
    """The state that stored results make (``TournamentStore.results`` rows; engine
    ``plus`` is the plus side), in whatever order they come."""
    state = TuneState(spsa, games_per_iteration, lag)
    for game_id, _pair, white, _black, result, _reason, _fault in results:
        state.add(game_id // games_per_iteration, plus_score(result, white == plus))
    return state
