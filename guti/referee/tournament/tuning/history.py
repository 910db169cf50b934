"""The values of a stored tuning run, iteration by iteration: what the report charts.

Rebuilt from the database alone (the run's settings and its results), by the same state
the run itself keeps (:mod:`~guti.referee.tournament.tuning.state`), so the chart shows
exactly the values the run moved through.
"""

from __future__ import annotations

from typing import Any

from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.tuning.settings import PLUS
from guti.referee.tournament.tuning.spsa import ParamSpecError, Spsa, parse_param
from guti.referee.tournament.tuning.state import replay_results


def tuning_history(store: TournamentStore) -> dict[str, Any] | None:
    """``{"params": [{name, min, max}], "history": [[value per parameter] per applied
    iteration, the start first], "iterations": N}``; None when the database holds no
    tuning run (or one whose settings cannot be read). StoreError for counts no run has
    (iterations or pairs below 1, a negative lag: a damaged database)."""
    settings = store.settings()
    tune = settings.get("tune")
    if settings.get("format") != "tune" or not isinstance(tune, dict):
        return None
    try:
        params = tuple(parse_param(text) for text in tune["params"])
        iterations, pairs, lag = int(tune["iterations"]), int(tune["pairs"]), int(tune["lag"])
        seed = int(settings["seed"])
    except (KeyError, TypeError, ValueError, ParamSpecError):
        return None
    if iterations < 1 or pairs < 1 or lag < 0:
        raise StoreError(f"{store.path}: its tuning run's settings are damaged (iterations "
                         f"{iterations}, pairs {pairs}, lag {lag})")
    spsa = Spsa(params, iterations, seed)
    state = replay_results(spsa, 2 * pairs, lag, store.results(), PLUS)
    return {
        "params": [{"name": p.name, "min": p.minimum, "max": p.maximum} for p in params],
        "history": [[round(v, 4) for v in theta] for theta in state.history],
        "iterations": iterations,
    }
