"""Command-line parsing in cutechess-cli / fastchess style, shared by match and tournament.

Options are words starting with ``-`` or ``--`` (both spellings are the
same option). Each option has a kind (:class:`Kind`):

- ``FLAG``: no value (``-resume``);
- ``VALUE``: exactly one value (``-games 10``);
- ``OPTIONAL``: zero or one value (``-use-affinity`` or ``-use-affinity 0-3``; absent
  value read as ``""``);
- ``TEXT``: all following words up to the next option, joined by one space
  (``-fen bbbbb/bbb/bbb/1/www/www/wwwww w 0 1`` works quoted or unquoted);
- ``TOKENS``: following ``key=value`` words up to the next option
  (``-engine cmd=./e name=E option.Hash=8``), kept in order as pairs; an
  option may name a ``bare_key`` so ``-pdnout out.pdn`` means ``file=out.pdn``.

A word is an option when it is ``-`` or ``--`` followed by a letter, so
values such as ``-1`` are not mistaken for options. Repeatable options
collect every occurrence; a non-repeatable one given twice is an error, and so is a key
given twice in one TOKENS option (``-each tc=1 tc=5``: which one was meant?). A value
given empty (``-db ''``, ``-pdnout file=``) is an error too, never read as "not given":
only an engine option (``option.NAME=``, a string option may be empty) and ``args=``
may be empty.
Every mistake raises :class:`CliError` with a one-line message; the
callers print it and exit with status 2.

Plain classes, not dataclasses, and ``difflib`` imported only for a mistyped option:
``--help`` passes through here, and importing ``dataclasses`` (with ``inspect``) would
be a good part of its start-up time.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class CliError(ValueError):
    """A command-line mistake: one line, shown as is, exit status 2."""


class Kind(Enum):
    FLAG = "flag"
    VALUE = "value"
    OPTIONAL = "optional value"
    TEXT = "text"
    TOKENS = "tokens"


class OptionSpec:
    """One accepted option: its name (without dashes), kind, repeatability and help text.

    ``keys``: for TOKENS, the allowed keys (None: any key, checked by the consumer).
    ``bare_key``: for TOKENS, a word without ``=`` is taken as the value of this key
    (``-pdnout out.pdn`` == ``-pdnout file=out.pdn``); None: such a word is an error.
    ``key_help``: for TOKENS, (key, help) pairs, each shown on a line of its own under
    the option."""

    __slots__ = ("name", "kind", "repeatable", "help", "keys", "bare_key", "key_help")

    def __init__(self, name: str, kind: Kind, repeatable: bool = False, help: str = "",
                 keys: frozenset[str] | None = None, bare_key: str | None = None,
                 key_help: tuple[tuple[str, str], ...] = ()) -> None:
        self.name = name
        self.kind = kind
        self.repeatable = repeatable
        self.help = help
        self.keys = keys
        self.bare_key = bare_key
        self.key_help = key_help

    def __repr__(self) -> str:
        return f"OptionSpec({self.name!r}, {self.kind})"


class ParsedArgs:
    """The result of :func:`parse_cli`: the words of each option, by its name without
    dashes. What the values mean (numbers, ranges, keys) is checked by the readers, on
    :class:`guti.referee.config.given.GivenOptions` made from this."""

    __slots__ = ("flags", "values", "tokens")

    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.values: dict[str, list[str]] = {}
        self.tokens: dict[str, list[list[tuple[str, str]]]] = {}

    def has(self, name: str) -> bool:
        return name in self.flags or name in self.values or name in self.tokens

    def value(self, name: str, default: str | None = None) -> str | None:
        vals = self.values.get(name)
        return vals[-1] if vals else default

    def token_groups(self, name: str) -> list[list[tuple[str, str]]]:
        return self.tokens.get(name, [])

    def token_dict(self, name: str) -> dict[str, str]:
        """The single ``TOKENS`` group of a non-repeatable option as a dict ({} if absent)."""
        groups = self.tokens.get(name)
        return dict(groups[-1]) if groups else {}


def option_name(word: str) -> str | None:
    """The option name of ``word`` (``-games``/``--games`` -> ``games``), or None for a value."""
    if word.startswith("--"):
        rest = word[2:]
    elif word.startswith("-"):
        rest = word[1:]
    else:
        return None
    return rest if rest[:1].isalpha() else None


def parse_cli(argv: list[str], specs: list[OptionSpec]) -> ParsedArgs:
    """Parse ``argv`` (without the program/sub-command name) against ``specs``."""
    table = {spec.name: spec for spec in specs}
    out = ParsedArgs()
    i = 0
    n = len(argv)
    while i < n:
        word = argv[i]
        name = option_name(word)
        if name is None:
            example = next((s.name for s in specs if s.name != "help"), "help")
            raise CliError(f"unexpected argument {word!r} (expected an option such as "
                           f"-{example})")
        if name == "h" and "help" in table:  # -h: help, as every command takes it
            name = "help"
        spec = table.get(name)
        if spec is None:
            raise CliError(f"unknown option {word!r}{did_you_mean(name, table, '-')}")
        i += 1
        if not spec.repeatable and out.has(name):
            raise CliError(f"option -{name} given more than once")
        if spec.kind is Kind.FLAG:
            out.flags.add(name)
            continue
        start = i
        while i < n and option_name(argv[i]) is None:
            i += 1
        words = argv[start:i]
        if spec.kind is Kind.OPTIONAL and len(words) <= 1:
            out.values.setdefault(name, []).append(words[0] if words else "")
        elif spec.kind is Kind.OPTIONAL:
            raise CliError(f"-{name} takes at most one value, got {len(words)}: {' '.join(words)!r}")
        elif spec.kind is Kind.VALUE:
            if len(words) != 1:
                what = "a value" if not words else f"one value, got {len(words)}: {' '.join(words)!r}"
                raise CliError(f"-{name} needs {what}")
            out.values.setdefault(name, []).append(_not_empty(words[0], f"-{name}"))
        elif spec.kind is Kind.TEXT:
            if not words:
                raise CliError(f"-{name} needs a value")
            out.values.setdefault(name, []).append(_not_empty(" ".join(words), f"-{name}"))
        else:
            pairs: list[tuple[str, str]] = []
            for tok in words:
                key, eq, value = tok.partition("=")
                if not eq and spec.bare_key is not None:
                    key, eq, value = spec.bare_key, "=", tok
                if not eq or not key:
                    raise CliError(f"-{name}: {tok!r} is not of the form key=value")
                if spec.keys is not None and key not in spec.keys:
                    allowed = ", ".join(sorted(spec.keys))
                    raise CliError(f"-{name}: unknown key {key!r} (allowed: {allowed})")
                if any(key == seen for seen, _ in pairs):
                    raise CliError(f"-{name}: {key}= given more than once")
                if not may_be_empty(key):
                    _not_empty(value, f"-{name} {key}=")
                pairs.append((key, value))
            if not pairs:
                raise CliError(f"-{name} needs key=value settings")
            out.tokens.setdefault(name, []).append(pairs)
    return out


def may_be_empty(key: str) -> bool:
    """Whether the key of a ``key=value`` setting may be given an empty value: an engine
    option (a string option may be set to nothing) and ``args`` (no arguments)."""
    return key.startswith("option.") or key == "args"


def _not_empty(value: str, where: str) -> str:
    """``value``, unless it is empty or blank: then a CliError naming ``where``."""
    if not value.strip():
        raise CliError(f"{where}: empty value (give one, or leave the option out)")
    return value


def did_you_mean(word: str, known: Iterable[str], prefix: str = "") -> str:
    """`` (did you mean -games?)`` for the known word closest to a mistyped one (shown
    with ``prefix``, a flag's dash), or nothing when none is close: the one hint of every
    guti command, flag, setting and option."""
    import difflib  # here: only a mistyped word needs it

    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def usage(prog: str, specs: list[OptionSpec]) -> str:
    """The ``--help`` text: one line per option (and per key of a TOKENS option that
    documents its keys), so nothing a command accepts is left to guessing."""
    lines = [f"usage: {prog} [options]", "options (each also with two dashes):"]
    for spec in specs:
        arg = {Kind.FLAG: "", Kind.VALUE: " V", Kind.OPTIONAL: " [V]", Kind.TEXT: " TEXT",
               Kind.TOKENS: " key=value..."}[spec.kind]
        lines.append(f"  -{spec.name}{arg}  {spec.help}")
        lines += [f"      {key:<15} {text}" for key, text in spec.key_help]
    return "\n".join(lines)
