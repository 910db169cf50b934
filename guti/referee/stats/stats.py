"""Match statistics: Elo estimates, LOS, draw ratio, pentanomial and SPRT.

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

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Literal

__all__ = [
    "Z95",
    "NELO_PER_T",
    "EloEstimate",
    "SprtModel",
    "SprtSpec",
    "SprtState",
    "draw_ratio",
    "elo_to_score",
    "format_elo",
    "los",
    "pentanomial_elo",
    "pentanomial_from_pairs",
    "score_elo",
    "score_to_elo",
    "sprt_bounds",
    "sprt_decision",
    "sprt_llr",
]

Z95 = 1.959964
"""Two-sided 95% standard normal quantile (Phi^-1(0.975)), as cutechess/fastchess."""

NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value ((mu - 1/2) / sigma): 347.4355855..."""

_REGULARIZE = 1e-3
"""Stand-in for an empty outcome class in the SPRT (fishtest and fastchess use 1e-3):
keeps every log-probability finite so an early, lopsided result cannot crash."""

SprtModel = Literal["normalized", "logistic"]
Decision = Literal["H0", "H1"]


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


def pentanomial_from_pairs(pair_scores: Iterable[float]) -> list[int]:
    """Count game-pair scores into ``[LL, LD, DD+WL, WD, WW]``.

    Each element is the points one player scored over the two games of a pair
    (colours reversed, same opening): 0, 0.5, 1, 1.5 or 2. A drawn pair and a
    win+loss pair both score 1 and share a bin, as in fishtest and fastchess.
    """
    counts = [0, 0, 0, 0, 0]
    for i, raw in enumerate(pair_scores):
        if isinstance(raw, bool) or not isinstance(raw, Real):
            raise ValueError(f"pair score #{i} must be one of 0, 0.5, 1, 1.5, 2, got {raw!r}")
        try:
            counts[_PAIR_SCORES.index(float(raw))] += 1
        except ValueError:
            raise ValueError(
                f"pair score #{i} must be one of 0, 0.5, 1, 1.5, 2, got {raw!r}"
            ) from None
    return counts


def pentanomial_elo(pentanomial: Sequence[int]) -> EloEstimate:
    """Elo of pentanomial counts with fastchess's 95% interval over pairs.

    The point estimate equals the W/D/L estimate of the same games; the interval
    is usually narrower because paired openings cancel much of the opening bias.
    ``n`` in the result is the number of pairs.
    """
    counts = _penta(pentanomial)
    return _estimate((0.0, 0.25, 0.5, 0.75, 1.0), counts, per_game_scale=2.0)


# --------------------------------------------------------------------------- #
# SPRT
# --------------------------------------------------------------------------- #
def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR stopping bounds ``(log(beta/(1-alpha)), log((1-beta)/alpha))``.

    alpha is the false-positive rate (accepting H1 when elo = elo0), beta the
    false-negative rate. alpha = beta = 0.05 gives (-2.944, +2.944).
    """
    a, b = _real("alpha", alpha), _real("beta", beta)
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if not 0.0 < b < 1.0:
        raise ValueError(f"beta must be strictly between 0 and 1, got {beta!r}")
    if a + b >= 1.0:
        raise ValueError(f"alpha + beta must be less than 1, got {alpha!r} + {beta!r}")
    return math.log(b / (1.0 - a)), math.log((1.0 - b) / a)


def sprt_decision(llr: float, alpha: float, beta: float) -> Decision | None:
    """``"H1"`` once the LLR reaches the upper bound, ``"H0"`` at the lower, else None.

    H1 ("elo = elo1", the change gains) is accepted at the upper bound; H0
    ("elo = elo0") at the lower bound. None means: keep playing.
    """
    lower, upper = sprt_bounds(alpha, beta)
    if math.isnan(llr):
        return None
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None


def _root(f, lo: float, hi: float) -> float:
    """Root of a strictly decreasing ``f`` on the open interval (lo, hi).

    ``f`` tends to +inf at ``lo`` and -inf at ``hi`` (poles of the secular
    equation), so plain bisection on the open interval always converges; 200
    halvings reach floating-point resolution for any sane interval.
    """
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        val = f(mid)
        if val == 0.0:
            return mid
        if val > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _secular(weights: Sequence[float], phi: Sequence[float]) -> float:
    """Solve ``sum_i w_i phi_i / (1 + x phi_i) = 0`` for x.

    This is the Lagrange condition of both constrained MLEs (Van den Bergh,
    "Comments on normalized Elo", eq. 1.3 and 4.9). Requires min(phi) < 0 <
    max(phi); x then lies in (-1/max(phi), -1/min(phi)).
    """
    u, v = min(phi), max(phi)
    if not (u < 0.0 < v):
        raise ValueError("SPRT hypothesis lies outside the range of possible scores")

    def f(x: float) -> float:
        return sum(w * p / (1.0 + x * p) for w, p in zip(weights, phi, strict=True))

    return _root(f, -1.0 / v, -1.0 / u)


def _mle_expected(values: Sequence[float], phat: Sequence[float], s: float) -> list[float]:
    """Most likely distribution with expected score ``s`` given empirical ``phat``."""
    phi = [a - s for a in values]
    x = _secular(phat, phi)
    return [p / (1.0 + x * d) for p, d in zip(phat, phi, strict=True)]


def _mle_t_value(values: Sequence[float], phat: Sequence[float], t: float) -> list[float]:
    """Most likely distribution with t-value ``(mu - 1/2) / sigma = t`` given ``phat``.

    Fixed-point iteration from the uniform distribution (Van den Bergh, section
    4.1); it converges in a handful of steps for realistic Elo bounds.
    """
    p = [1.0 / len(values)] * len(values)
    for _ in range(100):
        mu = sum(q * a for q, a in zip(p, values, strict=True))
        sigma = math.sqrt(sum(q * (a - mu) ** 2 for q, a in zip(p, values, strict=True)))
        phi = [a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in values]
        x = _secular(phat, phi)
        new = [q / (1.0 + x * d) for q, d in zip(phat, phi, strict=True)]
        done = max(abs(a - b) for a, b in zip(new, p, strict=True)) < 1e-12
        p = new
        if done:
            break
    return p


def sprt_llr(
    elo0: float,
    elo1: float,
    *,
    wdl: Sequence[int] | None = None,
    pentanomial: Sequence[int] | None = None,
    model: SprtModel = "normalized",
) -> float:
    """Generalized-SPRT log-likelihood ratio of H1 (elo1) against H0 (elo0).

    Give exactly one of ``wdl=(wins, draws, losses)`` (games treated as
    independent) or ``pentanomial=[LL, LD, DD+WL, WD, WW]`` (game pairs).

    ``model`` says what unit elo0/elo1 are in. The default, ``"normalized"``,
    is fastchess's default (its ``-sprt model=`` option defaults to
    ``normalized``) and fishtest's: the bounds are normalized Elo, a t-value
    scaled by 800/ln 10, which makes the expected test length independent of
    the draw rate. ``"logistic"`` takes ordinary (logistic) Elo bounds, as
    cutechess users usually think of them. In both cases the LLR is computed
    exactly as fishtest's ``LLR_normalized`` / ``LLR_logistic`` and fastchess's
    ``getLLR_normalized`` / ``getLLR_logistic`` do: empty outcome classes are
    replaced by 1e-3, the maximum-likelihood distributions p0 and p1 satisfying
    each hypothesis are found, and ``LLR = N * sum_i phat_i log(p1_i / p0_i)``.
    For pairs, a normalized bound is scaled by sqrt(2) because pair scores
    average two games. The BayesElo model is deliberately not offered: both
    tools consider it legacy, and it is undefined for pentanomial counts.
    """
    e0, e1 = _real("elo0", elo0), _real("elo1", elo1)
    if not e0 < e1:
        raise ValueError(f"elo0 must be less than elo1, got elo0={elo0!r}, elo1={elo1!r}")
    if model not in ("normalized", "logistic"):
        raise ValueError(f"SPRT model must be 'normalized' or 'logistic', got {model!r}")
    if (wdl is None) == (pentanomial is None):
        raise ValueError("give exactly one of wdl=(wins, draws, losses) or pentanomial=[...]")

    if wdl is not None:
        if isinstance(wdl, (str, bytes)) or not isinstance(wdl, Sequence) or len(wdl) != 3:
            raise ValueError(f"wdl must be (wins, draws, losses), got {wdl!r}")
        w, d, lo = _wdl(*wdl)
        counts: list[float] = [lo, d, w]  # ascending score order
        values: tuple[float, ...] = (0.0, 0.5, 1.0)
        t_scale = 1.0
    else:
        counts = list(_penta(pentanomial))  # type: ignore[arg-type]
        values = (0.0, 0.25, 0.5, 0.75, 1.0)
        t_scale = math.sqrt(2.0)

    if sum(counts) == 0:
        return 0.0
    counts = [c if c > 0 else _REGULARIZE for c in counts]
    total = sum(counts)
    phat = [c / total for c in counts]

    if model == "logistic":
        p0 = _mle_expected(values, phat, elo_to_score(e0))
        p1 = _mle_expected(values, phat, elo_to_score(e1))
    else:
        p0 = _mle_t_value(values, phat, t_scale * e0 / NELO_PER_T)
        p1 = _mle_t_value(values, phat, t_scale * e1 / NELO_PER_T)
    return total * sum(
        q * (math.log(b) - math.log(a)) for q, a, b in zip(phat, p0, p1, strict=True)
    )


@dataclass(frozen=True)
class SprtSpec:
    """What an SPRT tests (``-sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 [model=...]``);
    :class:`SprtState` is where it stands after some results."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: SprtModel = "normalized"

    def describe(self) -> str:
        return (
            f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} "
            f"beta={self.beta:g} model={self.model}"
        )

    def evaluate(self, *, wdl: Sequence[int] | None = None,
                 pentanomial: Sequence[int] | None = None) -> SprtState:
        """The state of this test after ``wdl`` or ``pentanomial`` results."""
        return SprtState.evaluate(self.elo0, self.elo1, self.alpha, self.beta, wdl=wdl,
                                  pentanomial=pentanomial, model=self.model)


@dataclass(frozen=True)
class SprtState:
    """Where an SPRT stands after some results: LLR, bounds and decision.

    Immutable: build a fresh one with :meth:`evaluate` after every batch of
    results; the calculation is cheap and stateless by design (the LLR depends
    only on the totals, not on the order games finished in).
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: SprtModel
    llr: float
    lower: float
    upper: float
    decision: Decision | None

    @classmethod
    def evaluate(
        cls,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        wdl: Sequence[int] | None = None,
        pentanomial: Sequence[int] | None = None,
        model: SprtModel = "normalized",
    ) -> SprtState:
        lower, upper = sprt_bounds(alpha, beta)
        llr = sprt_llr(elo0, elo1, wdl=wdl, pentanomial=pentanomial, model=model)
        return cls(
            float(elo0),
            float(elo1),
            float(alpha),
            float(beta),
            model,
            llr,
            lower,
            upper,
            sprt_decision(llr, alpha, beta),
        )


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
