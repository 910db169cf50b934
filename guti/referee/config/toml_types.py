"""The one TOML type of every key of a tournament file.

A key takes exactly one kind of TOML value: ``games = 10`` (a whole number, not ``"10"``),
``report = "r.html"`` (a string, not ``false``), ``restart = true`` (true or false, not
``"yes"`` or ``1``). Anything else is one line naming the file and the key, before
anything runs.

Why: read as the command line reads its words, ``report = false`` would write a file
named ``false``, ``stderr = 7`` a file named ``7``, and ``restart = 1`` or ``games =
"10"`` would pass unnoticed. On the command line every value is text; in a file its type
is part of what it says, and a wrong one is a mistake to point at, not to guess around.

Keys not listed here keep what :mod:`guti.referee.config.toml_file` does with them
(``args``, ``requires``, ``build``, ``options``, ``option.NAME``: any value an engine
option can take; flags: true or false).
"""

from __future__ import annotations

from typing import Any

from guti.referee.config.args import CliError

WHOLE = "a whole number"
NUMBER = "a number"
TEXT = "a string (in quotes)"
SWITCH = "true or false"
WHOLE_OR_AUTO = 'a whole number or "auto"'

#: Top-level options that take a value (flags are true or false anyway).
OPTION_TYPES: dict[str, str] = {
    **dict.fromkeys(("game", "variant", "fen", "event", "site", "cluster", "tournament",
                     "db", "report", "serve", "use-affinity"), TEXT),
    **dict.fromkeys(("games", "srand", "maxmoves", "wait", "seeds", "tiebreak", "rounds",
                     "concurrency", "ratinginterval", "iterations", "pairs"), WHOLE),
    "referees": WHOLE_OR_AUTO,
    **dict.fromkeys(("handshake-timeout", "move-timeout", "stall-timeout"), NUMBER),
}

#: The keys of ``[[engine]]`` and ``[each]`` tables.
ENGINE_KEY_TYPES: dict[str, str] = {
    **dict.fromkeys(("cmd", "name", "dir", "stderr", "proto", "tc"), TEXT),
    **dict.fromkeys(("depth", "nodes", "timemargin"), WHOLE),
    "st": NUMBER,
    "restart": SWITCH,
    **dict.fromkeys(("limits.memory", "limits.network", "limits.files"), TEXT),
    "limits.processes": WHOLE,
    "limits.cpus": NUMBER,
    "limits.required": SWITCH,
}

_PDNOUT = {"file": TEXT, **dict.fromkeys(("nodes", "seldepth", "nps", "timeleft", "latency"),
                                         SWITCH)}

#: The keys of table options (``pdnout = { file = "g.pdn", nodes = true }``).
TABLE_KEY_TYPES: dict[str, dict[str, str]] = {
    "each": ENGINE_KEY_TYPES,
    "pdnout": _PDNOUT,
    "pgnout": _PDNOUT,
    "epdout": {"file": TEXT},
    "log": {"file": TEXT},
    "openings": {"file": TEXT, "order": TEXT, "format": TEXT, "plies": WHOLE, "start": WHOLE},
    "draw": dict.fromkeys(("movenumber", "movecount", "score"), WHOLE),
    "resign": {"movecount": WHOLE, "score": WHOLE, "twosided": SWITCH},
    "sprt": {**dict.fromkeys(("elo0", "elo1", "alpha", "beta"), NUMBER), "model": TEXT},
}


def _fits(value: Any, expected: str) -> bool:
    if expected == SWITCH:
        return isinstance(value, bool)
    if expected == TEXT:
        return isinstance(value, str)
    if isinstance(value, bool):  # a TOML boolean is no number, though Python's bool is
        return False
    if expected == WHOLE_OR_AUTO and value == "auto":
        return True
    return isinstance(value, int) or (expected == NUMBER and isinstance(value, float))


def described(value: Any) -> str:
    """A TOML value as a message names it: ``the string '10'``, ``the number 1``, ``a list``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value[:60]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # dates and times


def check_type(value: Any, expected: str | None, where: str) -> None:
    """CliError (one line naming ``where``, the file and key) unless ``value`` is of the
    ``expected`` type (None: not typed here)."""
    if expected is not None and not _fits(value, expected):
        raise CliError(f"{where}: expected {expected}, got {described(value)}")
