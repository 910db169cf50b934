"""Greedy bot: takes the most pieces it can, else a random step (UGI, all seven guti games).

Run: ``python3 bots/python/greedy_bot.py``. Standard library only; the rules
and the protocol loop live in ``ugibot.py`` next to this file.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ugibot import Move, Position, run  # noqa: E402


def choose(pos: Position, moves: list[Move], rng: random.Random) -> Move:
    """A capture taking the most pieces (ties at random); a random step if none.

    Capture is compulsory, so either every move captures or none does; the
    maximum over captured counts covers both cases.
    """
    most = max(len(m.captured) for m in moves)
    return rng.choice([m for m in moves if len(m.captured) == most])


if __name__ == "__main__":
    run("guti greedy bot (python)", choose)
