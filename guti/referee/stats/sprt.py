"""The sequential probability ratio test (SPRT) of a match: its stopping bounds, its
log-likelihood ratio and where a running test stands.

The LLR is the generalized SPRT (GSPRT) of Michel Van den Bergh used by fishtest
(``LLRcalc.LLR_logistic`` / ``LLR_normalized``) and fastchess: the LLR of the
maximum-likelihood distributions constrained to the two hypotheses, given the empirical
(regularized) distribution of W/D/L counts or pentanomial pairs; the conventions are
:mod:`guti.referee.stats.stats`'s. Pure functions, standard library only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from guti.referee.stats.stats import NELO_PER_T, _penta, _real, _wdl, elo_to_score

__all__ = [
    "MAX_SPRT_ELO",
    "SprtModel",
    "SprtSpec",
    "SprtState",
    "sprt_bounds",
    "sprt_decision",
    "sprt_llr",
]

_REGULARIZE = 1e-3
"""Stand-in for an empty outcome class in the SPRT (fishtest and fastchess use 1e-3):
keeps every log-probability finite so an early, lopsided result cannot crash."""

SprtModel = Literal["normalized", "logistic"]
Decision = Literal["H0", "H1"]

#: The largest ``|elo0|``, ``|elo1|`` a test takes, by model. Past them a bound means
#: nothing an SPRT could measure (normalized 200 is a t-value of 0.58 per game, a score
#: far from even; logistic 1000 an expected score of 99.7 %), and the constrained
#: maximum-likelihood fit of fishtest's method (from the uniform distribution) no longer
#: exists for every count: a t-value near 1 (normalized ~340 per game, ~240 per pair) or a
#: score rounding to 1 (logistic ~6400) leaves it nothing to solve.
MAX_SPRT_ELO: dict[str, float] = {"normalized": 200.0, "logistic": 1000.0}


class _Unfitted(ValueError):
    """No distribution of the observed kind satisfies a hypothesis (see :func:`sprt_llr`)."""


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


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
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
        raise _Unfitted("SPRT hypothesis lies outside the range of possible scores")

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

    Never raises for valid counts: when a hypothesis lies outside what the fit can reach
    from the observed scores (bounds past :data:`MAX_SPRT_ELO`, refused when the
    options are read; fishtest asserts there), the LLR is 0.0, the value of no
    evidence: no decision yet, and the run plays the games it was given.
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

    try:
        if model == "logistic":
            p0 = _mle_expected(values, phat, elo_to_score(e0))
            p1 = _mle_expected(values, phat, elo_to_score(e1))
        else:
            p0 = _mle_t_value(values, phat, t_scale * e0 / NELO_PER_T)
            p1 = _mle_t_value(values, phat, t_scale * e1 / NELO_PER_T)
        llr = total * sum(
            q * (math.log(b) - math.log(a)) for q, a, b in zip(phat, p0, p1, strict=True)
        )
    except (ValueError, ArithmeticError):  # _Unfitted, or a fit beyond the floats
        return 0.0
    return llr if math.isfinite(llr) else 0.0


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

    def problem(self) -> str | None:
        """Why this is not a test an SPRT can run (one line), or None: alpha and beta
        above 0 with alpha + beta below 1, elo0 below elo1, both within
        :data:`MAX_SPRT_ELO` of 0 for the model (where an SPRT means something and its LLR
        can be computed for any results). The one rule for ``-sprt`` and for a stored
        test."""
        if self.model not in MAX_SPRT_ELO:
            return f"model={self.model}: expected normalized or logistic"
        for key in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value):
                return f"{key}={value}: not a number"
        if not (0 < self.alpha and 0 < self.beta and self.alpha + self.beta < 1) \
                or self.elo1 <= self.elo0:
            return "needs alpha, beta > 0 with alpha + beta < 1, and elo0 < elo1"
        most = MAX_SPRT_ELO[self.model]
        for key in ("elo0", "elo1"):
            if abs(getattr(self, key)) > most:
                return (f"{key}={getattr(self, key):g}: out of range for model={self.model} "
                        f"(at most {most:g} either side of 0)")
        try:
            self.evaluate(wdl=(0, 0, 0))
        except ValueError as exc:  # what the test itself refuses (a bound not finite, ...)
            return str(exc)
        return None

    @classmethod
    def of_settings(cls, settings: Mapping[str, Any]) -> SprtSpec | None:
        """The SPRT kept in a tournament's settings (their ``sprt`` entry, this class's
        fields), or None when the tournament ran none; ValueError (one line) when it is
        not a test an SPRT can run (:meth:`problem`: a database changed outside guti)."""
        spec = settings.get("sprt")
        if not isinstance(spec, dict):
            return None
        try:
            sprt = cls(**spec)
        except TypeError:
            raise ValueError(f"sprt {spec!r} is not elo0, elo1, alpha, beta, model") from None
        why = sprt.problem()
        if why is not None:
            raise ValueError(f"sprt {why}")
        return sprt

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

    def of(self, spec: SprtSpec) -> bool:
        """Whether this is where ``spec``'s test stands (the same test)."""
        return (self.elo0, self.elo1, self.alpha, self.beta, self.model) == (
            spec.elo0, spec.elo1, spec.alpha, spec.beta, spec.model)

    def to_json(self) -> dict[str, Any]:
        """The decision as a database keeps it (:data:`DECISION_KEY`)."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "model": self.model, "llr": self.llr, "decision": self.decision}

    @classmethod
    def from_json(cls, data: Any) -> SprtState | None:
        """The inverse of :meth:`to_json`; None for anything else (a damaged row)."""
        try:
            spec = SprtSpec(float(data["elo0"]), float(data["elo1"]), float(data["alpha"]),
                            float(data["beta"]), str(data["model"]))  # type: ignore[arg-type]
            llr, decision = float(data["llr"]), data["decision"]
            if (spec.problem() is not None or not math.isfinite(llr)
                    or decision not in ("H0", "H1")
                    or sprt_decision(llr, spec.alpha, spec.beta) != decision):
                return None
            lower, upper = sprt_bounds(spec.alpha, spec.beta)
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        return cls(spec.elo0, spec.elo1, spec.alpha, spec.beta, spec.model, llr, lower, upper,
                   decision)

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


#: The meta row of a tournament database that keeps the SPRT's decision as the run took it.
DECISION_KEY = "sprt_decided"


def kept_decision(text: str | None) -> SprtState | None:
    """The decision kept in a database (:data:`DECISION_KEY`, JSON), None when there is
    none or it cannot be read (a damaged row: the SPRT is then evaluated on every pair)."""
    if not text:
        return None
    try:
        return SprtState.from_json(json.loads(text))
    except (ValueError, RecursionError):  # not JSON, or nested past what it reads
        return None
