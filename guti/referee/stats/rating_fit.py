"""The fit behind :mod:`guti.referee.stats.ratings`: the likelihood of the results of a
field under the Bradley-Terry model (draws as half points, or Davidson's draw
parameter), maximised by Newton's method, and the observed information that gives the
intervals. Pure arithmetic on compact result counts (:class:`Pair`), only the standard
library: a field is a few dozen engines at most, so plain Python is instant. The choices
(draw models, prior, anchor, intervals) are explained in the ratings module.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Largest Newton step (natural units) at which the solver stops, and its step limit.
_TOLERANCE = 1e-10
_MAX_STEPS = 200
#: The least dispersion factor applied to the ``half`` model's covariance.
_MIN_DISPERSION = 0.25


class RatingError(ValueError):
    """Ratings cannot be computed as asked; one line, shown as is."""


@dataclass
class Pair:
    """Results of engine ``a`` against engine ``b`` (compact indices), virtual draws included."""

    a: int
    b: int
    wins: float
    draws: float
    losses: float

    @property
    def games(self) -> float:
        return self.wins + self.draws + self.losses


def _log_sum_exp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _log_sigmoid(x: float) -> float:
    """``log(1 / (1 + exp(-x)))`` without overflow."""
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _pair_terms(p: Pair, delta: float, kappa: float, davidson: bool) -> tuple[float, ...]:
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


def _log_likelihood(pairs: list[Pair], theta: list[float], kappa: float, davidson: bool) -> float:
    return sum(_pair_terms(p, theta[p.a] - theta[p.b], kappa, davidson)[0] for p in pairs)


def _gradient_information(
    count: int, pairs: list[Pair], theta: list[float], kappa: float, davidson: bool
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


def _initial_kappa(pairs: list[Pair]) -> float:
    """``log nu`` that fits the overall draw rate ``f`` between equals: ``nu = 2f / (1 - f)``."""
    games = sum(p.games for p in pairs)
    rate_ = min(max(sum(p.draws for p in pairs) / games, 1e-6), 1.0 - 1e-6)
    return math.log(2.0 * rate_ / (1.0 - rate_))


def newton(
    count: int, pairs: list[Pair], davidson: bool
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


def dispersion(pairs: list[Pair], theta: list[float]) -> float:
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


def relative_variances(info: list[list[float]], count: int, anchor: int | None) -> list[float]:
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
