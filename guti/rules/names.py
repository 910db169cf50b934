"""The names of the games of :data:`guti.rules.GAMES`, in its order, as plain data.

Why apart: a ``--help`` text lists the games, and building the games' tables (their
geometry, lines and patterns) costs more start-up time than printing the help. A test
checks that these names are :data:`~guti.rules.GAMES`'s keys, in order.
"""

from __future__ import annotations

GAME_NAMES: tuple[str, ...] = (
    "egara-guti", "pretwa", "lau-kata-kati", "dash-guti", "gol-skuish", "alquerque", "butterfly",
)
