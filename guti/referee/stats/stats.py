"""Match statistics: Elo estimates, LOS, draw ratio and pentanomial (the SPRT is
:mod:`guti.referee.stats.sprt`'s).

Pure functions on result counts; no I/O and only the standard library, so the
referee can report a match the way the chess testing tools do and a reader can
compare our numbers with cutechess-cli, fastchess or fishtest output.

Formulas follow the published methods (re-derived here, not translated code):

* Elo from score fraction ``s`` is the logistic model ``-400 * log10(1/s - 1)``.
* The 95% interval of a W/D/L result is cutechess-cli's: the per-game score has
  trinomial variance ``var = w(1-s)^2 + d(1/2-s)^2 + l(0-s)^2`` (fractions), the
  score interval is ``s -/+ 1.959964 * sqrt(var / n)`` and both ends are mapped
  through the Elo function; the reported margin is half the mapped width.
* The pentanomial interval is fastchess's: the same construction over game
  *pairs*, with pair score in {0, 1/4, 1/2, 3/4, 1} and ``n`` = number of pairs.
  Pairs are the right unit when each opening is played twice with colours
  reversed, since the two games of a pair are correlated.
* Normalized Elo (``nElo``) is ``(s - 1/2) / sigma * 800/ln(10)`` with ``sigma``
  the per-game standard deviation (``sqrt(2 * var_pair)`` for pairs), as in
  fastchess and fishtest.
* The SPRT log-likelihood ratio is the generalized SPRT (GSPRT) of Michel Van den
  Bergh used by fishtest (``LLRcalc.LLR_logistic`` / ``LLR_normalized``) and
  fastchess: the LLR of the maximum-likelihood distributions constrained to the
  two hypotheses, given the empirical (regularized) distribution.

Conventions: arguments are always ordered ``wins, draws, losses`` from the point
of view of the player whose Elo is reported; pentanomial counts are ordered
``[LL, LD, DD+WL, WD, WW]`` (pair score 0 .. 2), the order of fishtest's and
fastchess's "Ptnml(0-2)" lines.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real

__all__ = [
    "Z95",
    "NELO_PER_T",
    "EloEstimate",
    "draw_ratio",
    "elo_to_score",
    "format_elo",
    "los",
    "pentanomial_elo",
    "pair_bin",
    "score_elo",
    "score_to_elo",
]

Z95 = 1.959964
"""Two-sided 95% standard normal quantile (Phi^-1(0.975)), as cutechess/fastchess."""

NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value ((mu - 1/2) / sigma): 347.4355855..."""



# --------------------------------------------------------------------------- #
# Input checks
# --------------------------------------------------------------------------- #
def _count(name: str, value: object) -> int:
    """Return ``value`` as an int, or raise a one-line ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _wdl(wins: object, draws: object, losses: object) -> tuple[int, int, int]:
    return _count("wins", wins), _count("draws", draws), _count("losses", losses)


def _penta(pentanomial: Sequence[object]) -> list[int]:
    if isinstance(pentanomial, (str, bytes)) or not isinstance(pentanomial, Sequence):
        raise ValueError(
            f"pentanomial must be a sequence of 5 counts [LL, LD, DD+WL, WD, WW], got {pentanomial!r}"
        )
    if len(pentanomial) != 5:
        raise ValueError(
            f"pentanomial must have 5 counts [LL, LD, DD+WL, WD, WW], got {len(pentanomial)}"
        )
    names = ("LL", "LD", "DD+WL", "WD", "WW")
    return [_count(f"pentanomial[{i}] ({names[i]})", v) for i, v in enumerate(pentanomial)]


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(float(value)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


# --------------------------------------------------------------------------- #
# Elo <-> score
# --------------------------------------------------------------------------- #
def score_to_elo(score: float) -> float:
    """Logistic Elo difference for an expected score in [0, 1].

    A score of exactly 0 or 1 has no finite Elo; we return -inf / +inf rather
    than raising, because a short match can legitimately be a whitewash.
    """
    if math.isnan(score):
        return math.nan
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def elo_to_score(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger (inverse of score_to_elo)."""
    if elo == math.inf:
        return 1.0
    if elo == -math.inf:
        return 0.0
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class EloEstimate:
    """An Elo point estimate with its 95% confidence interval.

    ``margin`` is half the width of the Elo interval, the "+/-" figure cutechess
    and fastchess print; the interval itself is not symmetric in Elo
    (``lower``/``upper`` are the exact mapped ends). ``nelo``/``nelo_margin``
    are the normalized-Elo counterparts. Every field is ``nan`` when there are
    no games, and infinite when the score (or an interval end) is 0% or 100%.
    """

    elo: float
    margin: float
    lower: float
    upper: float
    score: float
    nelo: float
    nelo_margin: float
    n: int
    """Number of sampling units: games (trinomial) or game pairs (pentanomial)."""


def _estimate(values: Sequence[float], counts: Sequence[int], per_game_scale: float) -> EloEstimate:
    """Elo interval for a discrete per-unit score distribution.

    ``values`` are the unit scores scaled to [0, 1]; ``per_game_scale`` converts
    the unit variance to a per-game variance for normalized Elo (1 for games, 2
    for pairs, since a pair score is the mean of two game scores).
    """
    n = sum(counts)
    if n == 0:
        nan = math.nan
        return EloEstimate(nan, nan, nan, nan, nan, nan, nan, 0)
    freqs = [c / n for c in counts]
    score = sum(f * v for f, v in zip(freqs, values, strict=True))
    var = sum(f * (v - score) ** 2 for f, v in zip(freqs, values, strict=True))
    half = Z95 * math.sqrt(var / n)
    s_lo, s_hi = max(0.0, score - half), min(1.0, score + half)

    elo = score_to_elo(score)
    lower, upper = score_to_elo(s_lo), score_to_elo(s_hi)
    margin = (upper - lower) / 2.0 if math.isfinite(lower) and math.isfinite(upper) else math.inf

    sigma = math.sqrt(per_game_scale * var)
    if sigma > 0.0:
        nelo = (score - 0.5) / sigma * NELO_PER_T
        nelo_margin = half / sigma * NELO_PER_T
    else:
        # Zero variance: every unit had the same score. Normalized Elo is 0/0
        # for an all-drawn match and +/-inf for a whitewash.
        nelo = 0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5)
        nelo_margin = math.inf
    if n == 1:  # one unit has no spread to measure: no interval (cutechess: "+/- nan")
        margin = nelo_margin = math.nan
    return EloEstimate(elo, margin, lower, upper, score, nelo, nelo_margin, n)


def score_elo(wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo difference of a W/D/L result with cutechess-cli's 95% interval.

    See the module docstring for the formula. Example: 60 wins, 20 draws, 20
    losses is a 70% score, +147.2 Elo.
    """
    w, d, lo = _wdl(wins, draws, losses)
    return _estimate((1.0, 0.5, 0.0), (w, d, lo), per_game_scale=1.0)


def los(wins: int, draws: int, losses: int) -> float:
    """Likelihood of superiority, as a fraction in [0, 1].

    cutechess-cli's formula ``0.5 * (1 + erf((w - l) / sqrt(2 (w + l))))``: the
    normal approximation to the probability that the player is the stronger,
    given that draws carry no information. With no decisive games the evidence
    is symmetric, so we return 0.5 instead of cutechess's 0/0. ``draws`` is
    accepted (and validated) so all functions share one signature.
    """
    w, _, lo = _wdl(wins, draws, losses)
    if w + lo == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((w - lo) / math.sqrt(2.0 * (w + lo))))


def draw_ratio(wins: int, draws: int, losses: int) -> float:
    """Fraction of games drawn; ``nan`` when no games have been played."""
    w, d, lo = _wdl(wins, draws, losses)
    n = w + d + lo
    return d / n if n else math.nan


# --------------------------------------------------------------------------- #
# Pentanomial
# --------------------------------------------------------------------------- #
_PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)


def pair_bin(pair_score: float) -> int:
    """The pentanomial bin (``[LL, LD, DD+WL, WD, WW]``: 0 to 4) of a game pair's score.

    The score is the points one player scored over the two games of a pair (colours
    reversed, same opening): 0, 0.5, 1, 1.5 or 2. A drawn pair and a win+loss pair both
    score 1 and share a bin, as in fishtest and fastchess. ValueError for anything else.
    """
    if not isinstance(pair_score, bool) and isinstance(pair_score, Real):
        with contextlib.suppress(ValueError):
            return _PAIR_SCORES.index(float(pair_score))
    raise ValueError(f"a pair score is one of 0, 0.5, 1, 1.5, 2, not {pair_score!r}")


def pentanomial_elo(pentanomial: Sequence[int]) -> EloEstimate:
    """Elo of pentanomial counts with fastchess's 95% interval over pairs.

    The point estimate equals the W/D/L estimate of the same games; the interval
    is usually narrower because paired openings cancel much of the opening bias.
    ``n`` in the result is the number of pairs.
    """
    counts = _penta(pentanomial)
    return _estimate((0.0, 0.25, 0.5, 0.75, 1.0), counts, per_game_scale=2.0)


# --------------------------------------------------------------------------- #
# Formatting
# --------------------------------------------------------------------------- #
def _signed(x: float, digits: int) -> str:
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if abs(x) < 0.5 * 10.0**-digits:
        x = 0.0  # never print "-0.0"
    return f"{x:+.{digits}f}"


def format_elo(elo: float, margin: float, digits: int = 1) -> str:
    """Table cell for an Elo estimate, e.g. ``"+35.2 ± 20.1"``.

    Infinite values print as ``+inf``/``-inf``/``inf`` and missing ones (no
    games) as ``n/a`` so a table never shows a Python repr.
    """
    head = _signed(elo, digits)
    if math.isnan(elo):
        return head
    if math.isnan(margin):
        tail = "n/a"
    elif math.isinf(margin):
        tail = "inf"
    else:
        tail = f"{abs(margin):.{digits}f}"
    return f"{head} ± {tail}"
