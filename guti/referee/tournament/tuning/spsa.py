"""SPSA (simultaneous perturbation stochastic approximation) as fishtest runs it.

Each iteration ``k`` (0-based, of ``N``) draws a random sign ``flip`` per parameter and
plays game pairs between the engine at ``theta + c_k * flip`` and at ``theta - c_k * flip``;
its result ``r`` (the first engine's wins minus its losses) moves every parameter by
``a_k * r * flip / c_k``, clamped to the parameter's range. The gains are the standard
ones::

    c_k = c / (k + 1) ** gamma          a_k = a / (A + k + 1) ** alpha
    gamma = 0.101, alpha = 0.602, A = N / 10

and ``a`` and ``c`` come from what a user can reason about, as fishtest defines them:
``C_END``, the perturbation at the last iteration, and ``R_END``, the learning rate
``a_k / c_k ** 2`` there::

    c = C_END * N ** gamma              a = R_END * C_END ** 2 * (A + N) ** alpha

Everything here is pure arithmetic on its arguments (the flips come from a generator
seeded by the run's seed and the iteration), so the same seed and results give the same
values, whatever order the games ended in or how often the run was resumed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Decimal

from guti.rules.numbers import decimal_number

ALPHA = 0.602
GAMMA = 0.101
#: ``A`` as a share of the number of iterations.
A_RATIO = 0.1


#: The largest magnitude of a parameter spec's numbers: far beyond any engine option's
#: range, and small enough that the gains (``C_END ** 2 * R_END`` and so on) stay finite.
PARAM_LIMIT = 1e15


class ParamSpecError(ValueError):
    """A parameter spec that cannot be tuned; one line naming it."""


@dataclass(frozen=True)
class Param:
    """One option to tune: its start value, range, final perturbation ``c_end`` and final
    learning rate ``r_end``."""

    name: str
    start: float
    minimum: float
    maximum: float
    c_end: float
    r_end: float

    def clamp(self, value: float) -> float:
        return min(self.maximum, max(self.minimum, value))

    def spec(self) -> str:
        """The ``NAME=START,MIN,MAX,C_END,R_END`` text of this parameter, every number
        exact (a run's fingerprint and its report's replay are made from it)."""
        numbers = (self.start, self.minimum, self.maximum, self.c_end, self.r_end)
        return f"{self.name}=" + ",".join(exact_text(n) for n in numbers)


def exact_text(number: float) -> str:
    """``number`` written exactly and plainly: a whole number without a point, any other
    as Python's shortest round-trip digits, never in exponent form (an engine's option
    or a stored spec is read back as a plain decimal: ``1234567``, ``0.00001``)."""
    if number.is_integer():
        return str(int(number))
    return format(Decimal(repr(number)), "f")


def parse_param(text: str) -> Param:
    """``NAME=START,MIN,MAX,C_END,R_END`` checked on its own (against the engine later).
    The numbers hold no ``=``, so a name may (split at the last one)."""
    name, eq, rest = text.rpartition("=")
    name = name.strip()
    words = rest.split(",")
    if not eq or not name or len(words) != 5:
        raise ParamSpecError(f"{text!r} is not of the form NAME=START,MIN,MAX,C_END,R_END")
    numbers: list[float] = []
    for label, word in zip(("START", "MIN", "MAX", "C_END", "R_END"), words, strict=True):
        read = decimal_number(word)
        number = math.nan if read is None else read
        if not math.isfinite(number):
            raise ParamSpecError(f"{name}: {label} {word.strip()!r} is not a number")
        if abs(number) > PARAM_LIMIT:
            raise ParamSpecError(f"{name}: {label} {word.strip()!r} is out of range "
                                 f"(at most {PARAM_LIMIT:g} either side of 0)")
        numbers.append(number)
    start, low, high, c_end, r_end = numbers
    if low > high:
        raise ParamSpecError(f"{name}: MIN {low:g} is above MAX {high:g}")
    if not low <= start <= high:
        raise ParamSpecError(f"{name}: START {start:g} is outside MIN..MAX ({low:g}..{high:g})")
    if c_end <= 0 or r_end <= 0:
        raise ParamSpecError(f"{name}: C_END and R_END must be above 0")
    return Param(name, start, low, high, c_end, r_end)


@dataclass(frozen=True)
class Trial:
    """What iteration ``iteration`` plays: the ``plus`` and ``minus`` values of every
    parameter (clamped), from ``theta`` perturbed by ``c`` in the direction ``flips``."""

    iteration: int
    flips: tuple[int, ...]
    c: tuple[float, ...]
    plus: tuple[float, ...]
    minus: tuple[float, ...]


class Spsa:
    """The gains and steps of one tuning run of ``iterations`` iterations (see the module
    docstring); holds no state besides its settings."""

    def __init__(self, params: tuple[Param, ...], iterations: int, seed: int) -> None:
        self.params = params
        self.iterations = iterations
        self.seed = seed
        self.big_a = A_RATIO * iterations
        self.c = tuple(p.c_end * iterations ** GAMMA for p in params)
        self.a = tuple(p.r_end * p.c_end ** 2 * (self.big_a + iterations) ** ALPHA
                       for p in params)

    def start(self) -> tuple[float, ...]:
        return tuple(p.start for p in self.params)

    def c_k(self, k: int) -> tuple[float, ...]:
        return tuple(c / (k + 1) ** GAMMA for c in self.c)

    def a_k(self, k: int) -> tuple[float, ...]:
        return tuple(a / (self.big_a + k + 1) ** ALPHA for a in self.a)

    def flips(self, k: int) -> tuple[int, ...]:
        """Iteration ``k``'s signs: from the seed and ``k`` alone."""
        rng = random.Random(f"spsa:{self.seed}:{k}")
        return tuple(1 if rng.getrandbits(1) else -1 for _ in self.params)

    def trial(self, k: int, theta: tuple[float, ...]) -> Trial:
        """The values iteration ``k`` plays, around ``theta``."""
        flips, c = self.flips(k), self.c_k(k)
        plus = tuple(p.clamp(t + ck * f) for p, t, ck, f in zip(self.params, theta, c, flips, strict=True))
        minus = tuple(p.clamp(t - ck * f) for p, t, ck, f in zip(self.params, theta, c, flips, strict=True))
        return Trial(k, flips, c, plus, minus)

    def step(self, theta: tuple[float, ...], k: int, result: float) -> tuple[float, ...]:
        """``theta`` moved by iteration ``k``'s ``result`` (the plus engine's wins minus
        losses), clamped to every parameter's range."""
        flips, c, a = self.flips(k), self.c_k(k), self.a_k(k)
        return tuple(p.clamp(t + ak * result * f / ck)
                     for p, t, ak, ck, f in zip(self.params, theta, a, c, flips, strict=True))
