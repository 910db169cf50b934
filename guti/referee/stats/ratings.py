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
  virtual draws: each engine gets :data:`PRIOR_DRAWS` virtual draws in all,
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
  the observed dispersion of game scores (see :func:`_dispersion`), since a
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
"""Virtual draws each engine gets in all, spread over the opponents it met."""

DRAW_MODELS = ("half", "davidson")

_Z95 = 1.959964
_TOLERANCE = 1e-10  # largest Newton step (natural units) at which we stop
_MAX_STEPS = 200
_MIN_DISPERSION = 0.25


class RatingError(ValueError):
    """Ratings cannot be computed as asked; one line, shown as is."""


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
    steps: int = 0


@dataclass
class _Pair:
    """Results of engine ``a`` against engine ``b`` (compact indices), virtual draws included."""

    a: int
    b: int
    wins: float
    draws: float
    losses: float

    @property
    def games(self) -> float:
        return self.wins + self.draws + self.losses


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
        _Pair(compact[i], compact[j], *counts) for (i, j), counts in sorted(real.items())
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
    theta, kappa, info, steps = _newton(len(played), pairs, davidson)
    variances = _relative_variances(info, len(played), _anchor_index(names, played, opts))
    if opts.draw_model == "half":
        spread = _dispersion(pairs, theta)
        variances = [v * spread for v in variances]
    ratings = _rating_rows(names, played, real, theta, variances, opts)
    nu = None if opts.draw_model == "half" else math.exp(kappa) if davidson else 0.0
    return RatingList(ratings, opts, nu, steps)


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


def _groups(count: int, pairs: list[_Pair]) -> list[list[int]]:
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


def _add_prior(count: int, pairs: list[_Pair], prior: float) -> None:
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
def _log_sum_exp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _log_sigmoid(x: float) -> float:
    """``log(1 / (1 + exp(-x)))`` without overflow."""
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _pair_terms(p: _Pair, delta: float, kappa: float, davidson: bool) -> tuple[float, ...]:
    """Log-likelihood of one pair and its derivatives in the rating difference
    ``delta`` (natural units) and the log draw parameter ``kappa``:
    ``(ll, d_delta, d_kappa, i_dd, i_dk, i_kk)`` with ``i_*`` the information
    (minus the second derivatives)."""
    n = p.games
    if not davidson:
        prob = math.exp(_log_sigmoid(delta))
        points = p.wins + p.draws / 2.0
        ll = points * _log_sigmoid(delta) + (n - points) * _log_sigmoid(-delta)
        return ll, points - n * prob, 0.0, n * prob * (1.0 - prob), 0.0, 0.0
    log_z = _log_sum_exp((delta / 2.0, -delta / 2.0, kappa))
    pw, pl, pd = (math.exp(v - log_z) for v in (delta / 2.0, -delta / 2.0, kappa))
    ll = (p.wins - p.losses) * delta / 2.0 + p.draws * kappa - n * log_z
    return (
        ll,
        (p.wins - p.losses) / 2.0 - n * (pw - pl) / 2.0,
        p.draws - n * pd,
        n * ((pw + pl) - (pw - pl) ** 2) / 4.0,
        -n * pd * (pw - pl) / 2.0,
        n * pd * (1.0 - pd),
    )


def _log_likelihood(pairs: list[_Pair], theta: list[float], kappa: float, davidson: bool) -> float:
    return sum(_pair_terms(p, theta[p.a] - theta[p.b], kappa, davidson)[0] for p in pairs)


def _gradient_information(
    count: int, pairs: list[_Pair], theta: list[float], kappa: float, davidson: bool
) -> tuple[list[float], list[list[float]]]:
    """Gradient and information matrix over ``theta`` (and ``kappa`` last, for Davidson)."""
    size = count + (1 if davidson else 0)
    grad = [0.0] * size
    info = [[0.0] * size for _ in range(size)]
    k = count  # index of kappa
    for p in pairs:
        _, g_d, g_k, i_dd, i_dk, i_kk = _pair_terms(p, theta[p.a] - theta[p.b], kappa, davidson)
        a, b = p.a, p.b
        grad[a] += g_d
        grad[b] -= g_d
        info[a][a] += i_dd
        info[b][b] += i_dd
        info[a][b] -= i_dd
        info[b][a] -= i_dd
        if davidson:
            grad[k] += g_k
            info[a][k] += i_dk
            info[k][a] += i_dk
            info[b][k] -= i_dk
            info[k][b] -= i_dk
            info[k][k] += i_kk
    return grad, info


def _initial_kappa(pairs: list[_Pair]) -> float:
    """``log nu`` that fits the overall draw rate ``f`` between equals: ``nu = 2f / (1 - f)``."""
    games = sum(p.games for p in pairs)
    rate_ = min(max(sum(p.draws for p in pairs) / games, 1e-6), 1.0 - 1e-6)
    return math.log(2.0 * rate_ / (1.0 - rate_))


def _newton(
    count: int, pairs: list[_Pair], davidson: bool
) -> tuple[list[float], float, list[list[float]], int]:
    """Maximize the log-likelihood with engine 0's rating held at 0.

    Returns ``(theta, kappa, information, steps)``; the information matrix is
    the full one at the optimum (its reduced form is what the intervals need).
    """
    theta = [0.0] * count
    kappa = _initial_kappa(pairs) if davidson else 0.0
    current = _log_likelihood(pairs, theta, kappa, davidson)
    for steps in range(1, _MAX_STEPS + 1):
        grad, info = _gradient_information(count, pairs, theta, kappa, davidson)
        free = list(range(1, len(grad)))
        move = _solve([[info[r][c] for c in free] for r in free], [grad[r] for r in free])
        step = 1.0
        while True:
            trial = [0.0] + [t + step * m for t, m in zip(theta[1:], move, strict=False)]
            trial_kappa = kappa + step * move[-1] if davidson else 0.0
            value = _log_likelihood(pairs, trial, trial_kappa, davidson)
            if value >= current - 1e-12 * abs(current) or step < 1e-9:
                break
            step /= 2.0
        theta, kappa, current = trial, trial_kappa, value
        if max((abs(step * m) for m in move), default=0.0) < _TOLERANCE:
            _, info = _gradient_information(count, pairs, theta, kappa, davidson)
            return theta, kappa, info, steps
    raise RatingError(f"the rating fit did not converge in {_MAX_STEPS} Newton steps")


def _dispersion(pairs: list[_Pair], theta: list[float]) -> float:
    """Observed per-game score variance over the ``half`` model's ``p (1 - p)``.

    The ``half`` model scores a draw as half a win, as if every game were a
    coin flip with variance ``p (1 - p)``; a draw's score varies less, so with
    draws the plain Hessian interval is too wide (99 % instead of 95 % at a
    third of games drawn). Scaling the covariance by the Pearson dispersion
    ``sum (score - p)^2 / sum p (1 - p)`` over all games (quasi-likelihood)
    corrects that; with no draws it is about 1. It is never taken below
    :data:`_MIN_DISPERSION`, so an all-drawn field does not show ``± 0``.
    """
    observed = expected = 0.0
    for p in pairs:
        prob = math.exp(_log_sigmoid(theta[p.a] - theta[p.b]))
        observed += (p.wins * (1.0 - prob) ** 2 + p.draws * (0.5 - prob) ** 2
                     + p.losses * prob**2)
        expected += p.games * prob * (1.0 - prob)
    return max(_MIN_DISPERSION, observed / expected)


# --------------------------------------------------------------------------- #
# Linear algebra (small dense matrices)
# --------------------------------------------------------------------------- #
def _eliminate(matrix: list[list[float]], right: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan elimination with partial pivoting: ``X`` with ``matrix @ X = right``
    (``right`` holds one row per matrix row, any number of columns)."""
    n = len(matrix)
    width = len(right[0]) if right else 0
    rows = [list(row) + list(extra) for row, extra in zip(matrix, right, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-300:
            raise RatingError("the rating fit met a singular information matrix")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        lead = rows[col]
        scale = lead[col]
        for c in range(col, n + width):
            lead[c] /= scale
        for r in range(n):
            factor = rows[r][col] if r != col else 0.0
            if factor:
                target = rows[r]
                for c in range(col, n + width):
                    target[c] -= factor * lead[c]
    return [row[n:] for row in rows]


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve ``matrix @ x = rhs``."""
    return [row[0] for row in _eliminate(matrix, [[value] for value in rhs])]


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    n = len(matrix)
    return _eliminate(matrix, [[1.0 if r == c else 0.0 for c in range(n)] for r in range(n)])


def _relative_variances(info: list[list[float]], count: int, anchor: int | None) -> list[float]:
    """Variance of each rating relative to the anchor engine, or to the field's average.

    The likelihood does not change when every rating moves by the same amount,
    so the information matrix is singular; holding engine 0 at 0 removes that
    direction. Inverting the rest gives the covariance of ``theta_i - theta_0``
    (with the Davidson parameter marginalized out by taking its block of the
    inverse); any other reference is a linear function of those.
    """
    free = list(range(1, len(info)))
    reduced = _inverse([[info[r][c] for c in free] for r in free])
    cov = [[0.0] * count for _ in range(count)]
    for r in range(1, count):
        for c in range(1, count):
            cov[r][c] = reduced[r - 1][c - 1]
    if anchor is not None:
        return [max(0.0, cov[i][i] + cov[anchor][anchor] - 2.0 * cov[i][anchor])
                for i in range(count)]
    row_means = [sum(row) / count for row in cov]
    grand = sum(row_means) / count
    return [max(0.0, cov[i][i] - 2.0 * row_means[i] + grand) for i in range(count)]


# --------------------------------------------------------------------------- #
# Result rows
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
            _Z95 * ELO_PER_NAT * math.sqrt(variances[k]),
            int(round(games[k])),
            points[k],
            opposed[k] / games[k],
        )
        for k, engine in enumerate(played)
    ]
    return sorted(rows, key=lambda r: (-r.elo, r.name))
