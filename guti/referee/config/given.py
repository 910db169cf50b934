"""The options of a match or tournament as given: one model that the command line and a
TOML file both fill, and that the readers turn into the settings.

Each option keeps its value with its own type (a TOML ``games = 2`` stays the number 2,
``quiet = true`` the boolean) and where it was given (``-games``, or ``t.toml: games``),
so a wrong value is named where it was given. A mistake in how options go together
(``-referees 3`` with ``-concurrency 2``) names them by their flags, whichever way they
were given: the same words for the same mistake. The command line and a
file are merged option by option (:meth:`GivenOptions.overridden_by`); the checks, and
the conversion to :mod:`guti.referee.game.settings` and
:mod:`guti.referee.tournament.settings`, are the readers' in
:mod:`guti.referee.config.options` and :mod:`guti.referee.config.tournament`, the same
for both sources.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from guti.referee.config.args import CliError, ParsedArgs
from guti.rules.numbers import decimal_number, whole_number

#: A value as a TOML file may give it; the command line gives strings.
Scalar = str | int | float | bool

#: Options that say the same thing: giving one on the command line overrides the other
#: in the file too.
SYNONYMS = {"game": "variant", "variant": "game", "pdnout": "pgnout", "pgnout": "pdnout"}


def as_text(value: Scalar) -> str:
    """A value as the command line would have given it (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class GivenValue:
    """One option's value and where it was given.

    ``value``: a flag's ``True``, an option's value (``""`` for an optional value left
    out); ``pairs``: the ``key=value`` settings of a table option, in order."""

    where: str
    value: Scalar = True
    pairs: tuple[tuple[str, Scalar], ...] = ()


@dataclass(frozen=True)
class EngineEntry:
    """One engine as given: its ``-engine`` settings and, from a TOML file, what must be
    done before it can run: programs it ``requires`` on PATH and a ``build`` command run
    in ``build_dir`` (a step of its own: :mod:`guti.referee.config.engine_build`).

    ``name``: how messages about skipping it name it (its ``name``, else its ``cmd``)."""

    where: str
    settings: tuple[tuple[str, str], ...]
    name: str
    requires: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    build_dir: str = "."
    upload: str = ""  # a folder sent to every cluster worker ("": none)


@dataclass
class GivenOptions:
    """Every option given, by name (as in :mod:`guti.referee.config.option_specs`), and the
    engines in order. Look-ups return what the readers need, with one-line
    :class:`CliError` messages naming where a wrong value was given."""

    values: dict[str, GivenValue] = field(default_factory=dict)
    engines: tuple[EngineEntry, ...] = ()

    @classmethod
    def from_flags(cls, args: ParsedArgs) -> GivenOptions:
        """The options of a parsed command line (the last of a repeated option counts;
        every ``-engine`` is an engine)."""
        values: dict[str, GivenValue] = {}
        for name in args.flags:
            values[name] = GivenValue(f"-{name}")
        for name, texts in args.values.items():
            values[name] = GivenValue(f"-{name}", texts[-1])
        for name, groups in args.tokens.items():
            if name != "engine":
                values[name] = GivenValue(f"-{name}", pairs=tuple(groups[-1]))
        engines = []
        for n, group in enumerate(args.token_groups("engine"), 1):
            settings = dict(group)
            name = settings.get("name") or os.path.basename(settings.get("cmd", "")) or "?"
            engines.append(EngineEntry(f"-engine #{n}", tuple(group), name))
        return cls(values, tuple(engines))

    def overridden_by(self, other: GivenOptions) -> GivenOptions:
        """These options with ``other``'s in their place, option by option (``other``'s
        engines, if it has any, replace the whole list)."""
        values = {name: value for name, value in self.values.items()
                  if name not in other.values and SYNONYMS.get(name) not in other.values}
        values.update(other.values)
        return GivenOptions(values, other.engines or self.engines)

    def with_engines(self, engines: tuple[EngineEntry, ...]) -> GivenOptions:
        """The same options with these engines (those left after building them)."""
        return replace(self, engines=engines)

    # -- look-ups --------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self.values

    def where(self, name: str) -> str:
        """How a message names option ``name``: where it was given, else its flag."""
        given = self.values.get(name)
        return given.where if given is not None else f"-{name}"

    def text(self, name: str, default: str | None = None) -> str | None:
        """The value of ``name`` as text (``default`` when not given)."""
        given = self.values.get(name)
        return default if given is None or given.pairs else as_text(given.value)

    def table(self, name: str) -> dict[str, str]:
        """The ``key=value`` settings of ``name`` as text ({} when not given)."""
        given = self.values.get(name)
        return {key: as_text(value) for key, value in given.pairs} if given else {}

    def table_pairs(self, name: str) -> list[tuple[str, str]]:
        """The ``key=value`` settings of ``name`` in order, as text."""
        given = self.values.get(name)
        return [(key, as_text(value)) for key, value in given.pairs] if given else []

    def whole(self, name: str, default: int, minimum: int | None = None) -> int:
        """``name`` as a whole number (``default`` when not given), at least ``minimum``."""
        given = self.values.get(name)
        if given is None:
            return default
        number = _whole_number(given.value)
        if number is None:
            shown = as_text(given.value)
            digits = shown.strip()
            if whole_number(digits[1:] if digits[:1] in "+-" else digits, 400) is not None:
                raise CliError(f"{given.where}: {shown!r} is too large (at most 18 digits)")
            raise CliError(f"{given.where}: {shown!r} is not a whole number")
        if minimum is not None and number < minimum:
            raise CliError(f"{given.where}: {number} is less than {minimum}")
        return number

    def number(self, name: str, default: float, minimum_exclusive: float | None = 0.0) -> float:
        """``name`` as a finite number (``default`` when not given), more than
        ``minimum_exclusive``."""
        given = self.values.get(name)
        if given is None:
            return default
        value = given.value
        shown = as_text(value)
        try:
            if isinstance(value, bool):
                raise ValueError
            read = decimal_number(value) if isinstance(value, str) else float(value)
            if read is None:
                raise ValueError
            number = read
        except ValueError:
            raise CliError(f"{given.where}: {shown!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise CliError(f"{given.where}: {shown!r} must be finite")
        if minimum_exclusive is not None and number <= minimum_exclusive:
            raise CliError(f"{given.where}: {shown!r} must be more than {minimum_exclusive:g}")
        return number


def _whole_number(value: Scalar) -> int | None:
    """A TOML integer as it is, a text of ASCII digits (a sign allowed, blanks around) as
    the number it writes; None for anything else, non-ASCII digits and numbers past 18
    digits included."""
    if isinstance(value, bool) or isinstance(value, float):
        return None
    if isinstance(value, int):
        return value
    return whole_number(value.strip(), signed=True)
