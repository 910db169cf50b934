"""The engine's UGI options: declaration lines and checked parsing of ``setoption`` values.

Kept apart from the command loop so the loop only asks "is this value good, and what is
it?" and the ``ugi`` answer is generated from the same table that checks the values.
"""

from __future__ import annotations

# The games this engine plays: their names only, so the ``ugi`` answer needs no import
# of the rules core's tables at start-up.
from guti.engine.search.evaluate import DEFAULT_WEIGHTS
from guti.rules.names import DEFAULT_GAME, GAME_NAMES
from guti.rules.numbers import whole_number

ECHO_MAX = 200  # how much of an offending line is echoed back


def shown(text: str, limit: int = ECHO_MAX) -> str:
    """``text`` made safe to echo on one line: control characters replaced, length capped."""
    clean = "".join(ch if ch.isprintable() else "?" for ch in text[: limit + 1])
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."

ENGINE_NAME = "guti reference engine 1.0"
ENGINE_AUTHOR = "the guti project"


class OptionError(ValueError):
    """A bad option name or value; the message is one line."""


class Option:
    """One option: ``kind`` is ``spin`` (with ``minimum``/``maximum``) or ``combo`` (``choices``).

    A plain class, not a dataclass. The engine answers its first ``ugi`` from this table
    while another thread imports the rest of it (:mod:`guti.engine.ugi_main`); a dataclass
    here would import ``dataclasses`` on the answering thread, which makes the ``ugiok``
    some 10-30 ms later (about a fifth of the engine's start-up), and races the other
    thread's import of ``typing`` (``dataclasses`` reads that module half-built and fails).
    """

    __slots__ = ("name", "kind", "default", "minimum", "maximum", "choices")

    def __init__(self, name: str, kind: str, default: int | str, minimum: int = 0,
                 maximum: int = 0, choices: tuple[str, ...] = ()):
        self.name, self.kind, self.default = name, kind, default
        self.minimum, self.maximum, self.choices = minimum, maximum, choices

    def declaration(self) -> str:
        """The ``option name ... type ...`` line of the ``ugi`` answer."""
        if self.kind == "spin":
            return (f"option name {self.name} type spin default {self.default} "
                    f"min {self.minimum} max {self.maximum}")
        return (f"option name {self.name} type combo default {self.default} "
                + " ".join(f"var {c}" for c in self.choices))

    def parse(self, text: str) -> int | str:
        """The value ``text`` stands for; OptionError says why it is not acceptable."""
        if self.kind == "spin":
            value = whole_number(text.strip(), 12, signed=True)
            if value is None:
                raise OptionError(f"setoption {self.name}: expected a whole number, got {shown(text, 40)!r}")
            if not self.minimum <= value <= self.maximum:
                raise OptionError(
                    f"setoption {self.name}: {value} is out of range {self.minimum}..{self.maximum}"
                )
            return value
        # Combo values compare without case (protocol.md 5.2); the declared spelling is kept.
        wanted = text.strip().casefold()
        choice = next((c for c in self.choices if c.casefold() == wanted), None)
        if choice is None:
            what = "unknown game" if self.name == "UGI_Variant" else "unknown value"
            raise OptionError(
                f"setoption {self.name}: {what} {shown(text, 40)!r} (expected one of {', '.join(self.choices)})"
            )
        return choice


OPTIONS: tuple[Option, ...] = (
    Option("UGI_Variant", "combo", DEFAULT_GAME, choices=GAME_NAMES),
    Option("Hash", "spin", 16, 1, 1024),
    Option("Seed", "spin", 0, 0, 2**31 - 1),
    Option("Level", "spin", 20, 0, 20),
    Option("Move Overhead", "spin", 30, 0, 5000),
    # The evaluation's weights, in hundredths of a piece, with the defaults of
    # guti.engine.search.evaluate (GAME_WEIGHTS there holds the games whose defaults
    # differ, used until an option is set): options so that they can be tuned.
    *(Option(name, "spin", DEFAULT_WEIGHTS[name], 0, most)
      for name, most in (("EvalMobility", 100), ("EvalBlocked", 100), ("EvalHanging", 200),
                         ("EvalPlacement", 50), ("EvalCentre", 100))),
)
#: The options that are evaluation weights.
EVAL_OPTIONS = frozenset(DEFAULT_WEIGHTS)
_BY_NAME = {option.name.lower(): option for option in OPTIONS}


def ugi_answer() -> list[str]:
    """The lines answering ``ugi``: id name, id author, the options, ugiok."""
    return ([f"id name {ENGINE_NAME}", f"id author {ENGINE_AUTHOR}"]
            + [option.declaration() for option in OPTIONS] + ["ugiok"])


def find_option(name: str) -> Option:
    """The option called ``name`` (case-insensitive, blanks squeezed)."""
    option = _BY_NAME.get(" ".join(name.split()).lower())
    if option is None:
        raise OptionError(
            f"setoption: unknown option {shown(name, 40)!r} (known: {', '.join(o.name for o in OPTIONS)})"
        )
    return option


def parse_setoption(tokens: list[str]) -> tuple[Option, int | str]:
    """``setoption name N... value V...`` (tokens after ``setoption``) -> (option, value)."""
    if not tokens or tokens[0] != "name":
        raise OptionError("setoption: expected 'setoption name <NAME> value <VALUE>'")
    try:
        at = tokens.index("value")
    except ValueError:
        at = len(tokens)
    name = " ".join(tokens[1:at])
    if not name:
        raise OptionError("setoption: missing option name after 'name'")
    option = find_option(name)
    if at == len(tokens):
        raise OptionError(f"setoption {option.name}: missing 'value <VALUE>'")
    value_text = " ".join(tokens[at + 1:])
    if not value_text:
        raise OptionError(f"setoption {option.name}: empty value")
    return option, option.parse(value_text)
