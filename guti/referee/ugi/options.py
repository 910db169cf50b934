"""What an engine says about itself in the handshake: its id, its options, its games.

:func:`parse_option_line` reads one UCI-style ``option`` line and :class:`Handshake`
collects everything between ``ugi`` and ``ugiok``; the one handshake loop
(:meth:`guti.referee.ugi.client.UgiEngine.read_handshake`) fills it. Pure text in,
values out, so the reading is tested without any process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guti.rules import GAMES
from guti.rules.names import DEFAULT_GAME
from guti.rules.numbers import whole_number

#: The game of an engine that declares no ``UGI_Variant`` (protocol.md 5.2).
UNDECLARED_GAME = DEFAULT_GAME

_OPTION_KEYWORDS = {"name", "type", "default", "min", "max", "var"}


@dataclass
class EngineOption:
    """An ``option name N type T ...`` line as declared by the engine."""

    name: str
    type: str
    default: str | None = None
    min: str | None = None
    max: str | None = None
    vars: list[str] = field(default_factory=list)


def parse_option_line(line: str) -> EngineOption | None:
    """Parse a UCI-style ``option`` line; None when it has no name or type."""
    tokens = line.split()
    if not tokens or tokens[0] != "option":
        return None
    fields: dict[str, str] = {}
    vars_: list[str] = []
    key: str | None = None
    words: list[str] = []

    def flush() -> None:
        if key is None:
            return
        text = " ".join(words)
        if key == "var":
            vars_.append(text)
        elif key not in fields:
            fields[key] = text

    for tok in tokens[1:]:
        # Only "name" may contain keywords-looking words before "type".
        if tok in _OPTION_KEYWORDS and not (key == "name" and tok != "type"):
            flush()
            key, words = tok, []
        else:
            words.append(tok)
    flush()
    name = fields.get("name")
    if not name or "type" not in fields:
        return None
    return EngineOption(
        name=name,
        type=fields["type"],
        default=fields.get("default"),
        min=fields.get("min"),
        max=fields.get("max"),
        vars=vars_,
    )


#: The most options an engine may declare (real engines declare a few dozen): past it the
#: handshake fails, so that what is kept of a handshake stays bounded.
MAX_OPTIONS = 10_000
#: Lines of a handshake that are neither ``id`` nor a well-formed ``option``: the last
#: ones are kept (for ``guti check``), the rest only counted.
MAX_OTHER_LINES = 32


class TooManyOptions(ValueError):
    """The engine declared more than :data:`MAX_OPTIONS` options."""


@dataclass
class Handshake:
    """What the engine said between ``ugi`` and ``ugiok`` and how long it took; bounded
    in size whatever the engine sends (:data:`MAX_OPTIONS`, :data:`MAX_OTHER_LINES`)."""

    id_name: str | None = None
    id_author: str | None = None
    options: dict[str, EngineOption] = field(default_factory=dict)  # by lower-case name
    #: Names declared again (the last declaration is the one kept), the first few.
    declared_twice: list[str] = field(default_factory=list)
    other_lines: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    def note(self, line: str) -> None:
        """Record one handshake line (``ugiok`` excluded): an ``id name``/``id author``,
        a well-formed ``option``, or anything else (the last ones kept in ``other_lines``).
        :class:`TooManyOptions` past :data:`MAX_OPTIONS` options."""
        tokens = line.split()
        if len(tokens) >= 2 and tokens[0] == "id" and tokens[1] in ("name", "author"):
            value = line.split(None, 2)[2].strip() if len(tokens) >= 3 else ""
            if tokens[1] == "name":
                self.id_name = value
            else:
                self.id_author = value
            return
        opt = parse_option_line(line) if tokens[:1] == ["option"] else None
        if opt is not None:
            if opt.name.lower() in self.options and len(self.declared_twice) < MAX_OTHER_LINES:
                self.declared_twice.append(opt.name)
            self.options[opt.name.lower()] = opt
            if len(self.options) > MAX_OPTIONS:
                raise TooManyOptions(f"declares more than {MAX_OPTIONS:,} options")
        elif line.strip():
            self.other_lines.append(line)
            del self.other_lines[:-MAX_OTHER_LINES]

    @property
    def variant(self) -> EngineOption | None:
        return self.options.get("ugi_variant")

    def games(self) -> list[str]:
        """The games the engine says it plays, in its order: its ``UGI_Variant`` list;
        without one, egara-guti (protocol.md: an engine that plays one game may leave the
        option out); an option without a ``var`` list (not a combo) plays its default.
        The one rule of what an engine plays: a match, ``guti check`` and the console all
        read it here."""
        variant = self.variant
        if variant is None:
            return [UNDECLARED_GAME]
        if variant.vars:
            return list(variant.vars)
        return [variant.default] if variant.default else [UNDECLARED_GAME]

    def why_not(self, game: str) -> str | None:
        """Why the engine does not play ``game`` (None: it does), in a few words."""
        games = self.games()
        if game in games:
            return None
        variant = self.variant
        if variant is None:
            return f"it declares no UGI_Variant option, so it plays {UNDECLARED_GAME} only"
        if variant.vars:
            return f"its UGI_Variant offers: {', '.join(games)}"
        return f"its UGI_Variant has no var list, so it plays {games[0]} only"

    def known_games(self) -> list[str]:
        """Declared games guti has rules for."""
        return [g for g in self.games() if g in GAMES]

    def default_game(self) -> str | None:
        """The game to play when none is asked for: the option's default if guti knows it."""
        variant = self.variant
        if variant is not None and variant.default in GAMES:
            return variant.default
        known = self.known_games()
        return known[0] if known else None


class OptionValueError(ValueError):
    """A configured option the engine did not declare, or a value its declaration rules out."""


_CHECK_VALUES = {"true": "true", "false": "false", "on": "true", "off": "false"}


def checked_option_value(declared: dict[str, EngineOption], name: str, value: str) -> str | None:
    """The value to send for option ``name`` (``option.NAME=value``, which the caller names
    in its message), checked against the engine's own declaration (``declared``: by lower-case name, as :attr:`Handshake.options`).

    Why here and before any game: an engine answers a bad ``setoption`` with an
    ``info string error`` that nobody reads during a match, which then runs with the
    option silently not applied. OptionValueError says what is wrong in one line.
    A check option takes ``true|false`` (protocol.md 5.2; ``on``/``off`` are read as
    those), so that is what is sent. A button takes no value (``option.NAME=``): None,
    for a press (``setoption name NAME``).
    """
    opt = declared.get(name.lower())
    if opt is None:
        names = listed([o.name for o in declared.values() if o.name != "UGI_Variant"])
        raise OptionValueError(f"no option {name!r} (it declares: {names})")
    kind = opt.type.lower()
    if kind == "check":
        sent = _CHECK_VALUES.get(value.strip().lower())
        if sent is None:
            raise OptionValueError("a check option takes true or false")
        return sent
    if kind == "spin":
        return _spin_value(opt, value)
    if kind == "combo" and opt.vars:
        match = [v for v in opt.vars if v.lower() == value.strip().lower()]
        if not match:
            raise OptionValueError(f"not one of its values ({listed(opt.vars)})")
        return match[0]
    if kind == "button":
        if value.strip():
            raise OptionValueError(f"a button takes no value (option.{opt.name}= presses it)")
        return None
    return value


def listed(names: list[str], most: int = 20) -> str:
    """Names an engine declared, for a message: the first ``most`` of them and how many
    more (an engine may declare thousands); ``none`` for none."""
    if not names:
        return "none"
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most:,} more"


#: Digits a spin's numbers may have: enough for the 64-bit bounds engines declare
#: (``max 9223372036854775807``).
SPIN_DIGITS = 19


def _spin_value(opt: EngineOption, value: str) -> str:
    number = whole_number(value.strip(), SPIN_DIGITS, signed=True)
    if number is None:
        raise OptionValueError("a spin option takes a whole number")
    low, high = _bound(opt.min), _bound(opt.max)
    if (low is not None and number < low) or (high is not None and number > high):
        raise OptionValueError(f"out of its range {opt.min}..{opt.max}")
    return str(number)


def _bound(text: str | None) -> int | None:
    return None if text is None else whole_number(text, SPIN_DIGITS, signed=True)


#: The option types of protocol.md (UCI's).
OPTION_TYPES = ("check", "spin", "combo", "string", "button")


def declaration_problem(opt: EngineOption) -> str | None:
    """What is wrong with an option's declaration (a line that parsed) by protocol.md, or
    None: one of its five types; a check's default true or false; a spin's default, min
    and max whole numbers with min <= default <= max; a combo's values each given once,
    its default one of them. A setoption by those rules would otherwise be refused."""
    kind = opt.type.lower()
    if kind not in OPTION_TYPES:
        return f"{opt.name}: type {opt.type!r} is not one of {', '.join(OPTION_TYPES)}"
    if kind == "check" and (opt.default or "").lower() not in ("true", "false"):
        return f"{opt.name}: a check's default {opt.default!r} is not true or false"
    if kind == "spin":
        default, low, high = (_bound(v) for v in (opt.default, opt.min, opt.max))
        if default is None or low is None or high is None:
            return (f"{opt.name}: a spin's default {opt.default!r}, min {opt.min!r} and max "
                    f"{opt.max!r} must be whole numbers")
        if not low <= default <= high:
            return f"{opt.name}: a spin's default {default} is not within {low}..{high}"
    if kind == "combo":
        values = [v.lower() for v in opt.vars]
        if not values or len(set(values)) < len(values):
            return f"{opt.name}: a combo needs var values, each given once (got {opt.vars})"
        if (opt.default or "").lower() not in values:
            return f"{opt.name}: a combo's default {opt.default!r} is not one of its values"
    return None
