"""Maximum-likelihood ratings of a whole field, the way Ordo and BayesElo compute them.

The per-engine Elo of :mod:`guti.referee.stats.stats` is each engine's
performance against the opponents it happened to meet. A rating list of a
field instead fits one number per engine to *every* game at once: the
Bradley-Terry model, in which engine ``i`` scores against engine ``j`` with
the logistic Elo expectation ``1 / (1 + 10 ** ((r_j - r_i) / 400))``. The
ratings are the maximum-likelihood estimate of that model. Pure functions
on result counts: no I/O, no printing, only the standard library (a field is
a few dozen engines at most, so plain Python Newton steps are instant).

Choices, and why:

- **Draw model.** ``half`` (default, Ordo's default): a draw counts as half a
  win and half a loss, so the likelihood of a pair is
  ``p ** s * (1 - p) ** (n - s)`` with ``s`` the points scored; the fitted
  ratings then reproduce every engine's points exactly (virtual games of the
  prior below included). ``davidson``
  (Davidson 1970) gives draws their own probability:
  ``P(win) : P(draw) : P(loss) = 10 ** (d / 800) : nu : 10 ** (-d / 800)`` for
  a rating difference ``d``, with one draw parameter ``nu`` fitted to the
  data. Under it, ``d`` is the Elo of the win/loss odds (``P(win) / P(loss) =
  10 ** (d / 400)``), and the fitted ratings reproduce every engine's points
  and the total number of draws.
- **Whitewashes.** An engine that won (or lost) every game has no finite
  maximum-likelihood rating. As BayesElo does, we add a weak prior of
  virtual draws: each engine brings :data:`PRIOR_DRAWS` virtual draws,
  spread evenly over the opponents it met, so a pair ``(i, j)`` gets
  ``PRIOR_DRAWS / 2 * (1 / k_i + 1 / k_j)`` virtual draws, ``k`` being the
  number of distinct opponents; each counts as half a win and half a loss,
  so under ``davidson`` it does not raise the draw parameter (``davidson``
  on a field without a single draw fits ``nu = 0``: plain Bradley-Terry).
  Every pair that met then has points both ways, and the estimate is finite
  whenever the field is connected. The pull towards equality is that of two
  drawn games, small beside a tournament.
- **Separate groups.** Engines that never met, directly or through others,
  cannot be compared; :func:`rate` then raises :class:`RatingError` naming
  the groups instead of printing numbers that mean nothing.
- **Anchor.** Ratings are shifted so that their average is 0, or so that one
  named engine has a given rating (``anchor=(name, elo)``).
- **Intervals** come from the Hessian of the log-likelihood at the estimate
  (the observed information, inverted; with the Davidson ``nu`` as a
  nuisance parameter). For the ``half`` model the covariance is scaled by
  the observed dispersion of game scores (see :func:`~guti.referee.stats.rating_fit.dispersion`), since a
  draw varies less than the coin flip the model takes it for. The interval
  of an engine is that of its rating *relative to the anchor*: the average
  of the field, or the anchor engine (which then has no uncertainty of its
  own), as Ordo reports it. This is the normal approximation BayesElo also
  uses; it is deterministic and costs one matrix inversion, where a
  bootstrap would repeat the fit hundreds of times at every standings
  print. ``tests/test_ratings.py`` checks on simulated round-robins that the
  95 % intervals cover the true ratings.
- **Solver.** Newton's method on the log-likelihood (concave in the
  ratings), with one rating held at 0 and step halving whenever a step does
  not increase the likelihood; it converges in a handful of steps.
  ``tests/test_ratings.py`` checks the result against Hunter's MM iteration,
  written separately there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from guti.referee.stats.defaults import DEFAULT_DRAW_MODEL
from guti.referee.stats.rating_fit import (
    Pair,
    RatingError,
    dispersion,
    newton,
    relative_variances,
)
from guti.referee.stats.stats import Z95

__all__ = [
    "DRAW_MODELS",
    "ELO_PER_NAT",
    "PRIOR_DRAWS",
    "Rating",
    "RatingError",
    "RatingList",
    "RatingOptions",
    "rate",
]

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of the win odds (the logistic Elo scale)."""

PRIOR_DRAWS = 2.0
"""Virtual draws each engine brings, spread evenly over the opponents it met."""

DRAW_MODELS = ("half", "davidson")


@dataclass(frozen=True)
class RatingOptions:
    """How to rate a field: draw model, anchor (``(name, elo)`` or None: average 0), prior."""

    draw_model: str = DEFAULT_DRAW_MODEL
    anchor: tuple[str, float] | None = None
    prior: float = PRIOR_DRAWS


@dataclass(frozen=True)
class Rating:
    """One engine's rating: Elo, half-width of its 95 % interval, and what it is based on."""

    name: str
    elo: float
    margin: float
    games: int
    points: float
    opponents: float
    """Average rating of the opponents, one term per game played."""


@dataclass(frozen=True)
class RatingList:
    """The ratings of every engine that played (best first) and how they were computed."""

    ratings: list[Rating]
    options: RatingOptions
    draw_nu: float | None = None
    """The fitted Davidson draw parameter ``nu`` (None for the ``half`` model)."""


# --------------------------------------------------------------------------- #
# Public entry point
# --------------------------------------------------------------------------- #
def rate(
    names: Sequence[str],
    results: Mapping[tuple[int, int], Sequence[float]],
    options: RatingOptions | None = None,
) -> RatingList:
    """Maximum-likelihood ratings of a field.

    ``results[(i, j)] = (wins, draws, losses)`` of engine ``names[i]`` against
    ``names[j]`` (real games only; either order of a pair, or both, may be
    given). Engines without games are left out of the list. Raises
    :class:`RatingError` for an unknown draw model or anchor, a negative prior,
    or a field that falls into groups that never met.
    """
    opts = options or RatingOptions()
    _check_options(names, opts)
    played, real = _collect(len(names), results)
    if len(played) < 2:
        return RatingList([], opts)
    compact = {engine: k for k, engine in enumerate(played)}
    if opts.anchor is not None and opts.anchor[0] not in {names[e] for e in played}:
        raise RatingError(f"anchor {opts.anchor[0]!r} has played no games")
    pairs = [
        Pair(compact[i], compact[j], *counts) for (i, j), counts in sorted(real.items())
    ]
    groups = _groups(len(played), pairs)
    if len(groups) > 1:
        listed = "; ".join(", ".join(names[played[k]] for k in g) for g in groups)
        raise RatingError(
            f"the engines fall into {len(groups)} groups that never met, directly or "
            f"through others ({listed}): their ratings cannot be compared"
        )
    _add_prior(len(played), pairs, opts.prior)
    # Davidson with no draw at all is Bradley-Terry with nu = 0 (its estimate).
    davidson = opts.draw_model == "davidson" and any(p.draws > 0 for p in pairs)
    theta, kappa, info, _steps = newton(len(played), pairs, davidson)
    variances = relative_variances(info, len(played), _anchor_index(names, played, opts))
    if opts.draw_model == "half":
        spread = dispersion(pairs, theta)
        variances = [v * spread for v in variances]
    ratings = _rating_rows(names, played, real, theta, variances, opts)
    nu = None if opts.draw_model == "half" else math.exp(kappa) if davidson else 0.0
    return RatingList(ratings, opts, nu)


def _check_options(names: Sequence[str], opts: RatingOptions) -> None:
    if opts.draw_model not in DRAW_MODELS:
        raise RatingError(
            f"draw model {opts.draw_model!r}: use one of {', '.join(DRAW_MODELS)}"
        )
    if not (opts.prior >= 0.0 and math.isfinite(opts.prior)):
        raise RatingError(f"prior {opts.prior!r} must be a finite number >= 0")
    if opts.anchor is not None:
        name, elo = opts.anchor
        if name not in names:
            raise RatingError(f"anchor {name!r} is not one of the engines ({', '.join(names)})")
        if not math.isfinite(elo):
            raise RatingError(f"anchor rating {elo!r} must be finite")


def _collect(
    count: int, results: Mapping[tuple[int, int], Sequence[float]]
) -> tuple[list[int], dict[tuple[int, int], list[float]]]:
    """Engines with games (ascending) and W/D/L per unordered pair, from the lower index's view."""
    real: dict[tuple[int, int], list[float]] = {}
    for (i, j), counts in results.items():
        if not (0 <= i < count and 0 <= j < count) or i == j:
            raise RatingError(f"result key {(i, j)!r} does not name two different engines")
        w, d, lo = (float(c) for c in counts)
        if min(w, d, lo) < 0 or not all(map(math.isfinite, (w, d, lo))):
            raise RatingError(f"results {tuple(counts)!r} of pair {(i, j)!r} are not counts")
        if i > j:
            i, j, w, lo = j, i, lo, w
        cell = real.setdefault((i, j), [0.0, 0.0, 0.0])
        cell[0] += w
        cell[1] += d
        cell[2] += lo
    real = {key: cell for key, cell in real.items() if sum(cell) > 0}
    played = sorted({e for key in real for e in key})
    return played, real


def _groups(count: int, pairs: list[Pair]) -> list[list[int]]:
    """Connected groups of engines (compact indices), by who met whom."""
    parent = list(range(count))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[int, list[int]] = {}
    for k in range(count):
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())


def _add_prior(count: int, pairs: list[Pair], prior: float) -> None:
    """Virtual draws: ``prior / 2 * (1/k_a + 1/k_b)`` per pair that met (see module
    docstring), each added as half a win and half a loss: the same thing under the
    ``half`` model, and under ``davidson`` they pull ratings together without
    inventing draws that would inflate ``nu``."""
    opponents = [0] * count
    for p in pairs:
        opponents[p.a] += 1
        opponents[p.b] += 1
    for p in pairs:
        virtual = prior / 2.0 * (1.0 / opponents[p.a] + 1.0 / opponents[p.b])
        p.wins += virtual / 2.0
        p.losses += virtual / 2.0


def _anchor_index(names: Sequence[str], played: list[int], opts: RatingOptions) -> int | None:
    if opts.anchor is None:
        return None
    return [names[e] for e in played].index(opts.anchor[0])


# --------------------------------------------------------------------------- #
# Likelihood, derivatives and Newton's method
# --------------------------------------------------------------------------- #
def _rating_rows(
    names: Sequence[str],
    played: list[int],
    real: dict[tuple[int, int], list[float]],
    theta: list[float],
    variances: list[float],
    opts: RatingOptions,
) -> list[Rating]:
    """Ratings in Elo, shifted to the anchor, with games, points and average opponent."""
    if opts.anchor is not None:
        shift = opts.anchor[1] - ELO_PER_NAT * theta[_anchor_index(names, played, opts) or 0]
    else:
        shift = -ELO_PER_NAT * sum(theta) / len(theta)
    elo = [ELO_PER_NAT * t + shift for t in theta]
    compact = {engine: k for k, engine in enumerate(played)}
    games = [0.0] * len(played)
    points = [0.0] * len(played)
    opposed = [0.0] * len(played)
    for (i, j), (w, d, lo) in real.items():
        a, b = compact[i], compact[j]
        n = w + d + lo
        games[a] += n
        games[b] += n
        points[a] += w + d / 2.0
        points[b] += lo + d / 2.0
        opposed[a] += n * elo[b]
        opposed[b] += n * elo[a]
    rows = [
        Rating(
            names[engine],
            elo[k],
            Z95 * ELO_PER_NAT * math.sqrt(variances[k]),
            int(round(games[k])),
            points[k],
            opposed[k] / games[k],
        )
        for k, engine in enumerate(played)
    ]
    # by the rating as shown (one decimal): engines the fit rates equal are equal, in name
    # order, whatever noise its last digits carry
    return sorted(rows, key=lambda r: (-round(r.elo, 1), r.name))
