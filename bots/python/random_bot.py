"""Random bot: plays a uniformly random legal move (UGI, all seven guti games).

Run: ``python3 bots/python/random_bot.py``. Standard library only; the rules
and the protocol loop live in ``ugibot.py`` next to this file.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ugibot import Move, Position, run  # noqa: E402


def choose(pos: Position, moves: list[Move], rng: random.Random) -> Move:
    """Any legal move, each equally likely (moves arrive sorted, so seeds reproduce)."""
    return rng.choice(moves)


if __name__ == "__main__":
    run("guti random bot (python)", choose)
