"""The names of the games of :data:`guti.rules.GAMES`, in its order, as plain data.

Why apart: a ``--help`` text lists the games, and building the games' tables (their
geometry, lines and patterns) costs more start-up time than printing the help. A test
checks that these names are :data:`~guti.rules.GAMES`'s keys, in order.
"""

from __future__ import annotations

GAME_NAMES: tuple[str, ...] = (
    "egara-guti", "pretwa", "lau-kata-kati", "dash-guti", "gol-skuish", "alquerque", "butterfly",
)
#: The game when none is named: of a board, of a match, and of an engine that declares no
#: ``UGI_Variant`` (protocol.md 5.2).
DEFAULT_GAME = GAME_NAMES[0]


def canonical_game_name(text: str) -> str | None:
    """The game ``text`` names, in any case and with blanks around it (``Pretwa`` is
    ``pretwa``); None when it names none. Every place a user types a game name reads it
    through this, so one rule for case holds everywhere."""
    name = text.strip().lower()
    return name if name in GAME_NAMES else None


def unknown_game(text: str) -> str:
    """What is said of a game name that names none: the same words wherever it is typed."""
    return f"unknown game {text!r} (known: {', '.join(GAME_NAMES)})"
