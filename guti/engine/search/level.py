"""Playing strength levels (the ``Level`` option, 0..20) for graded opponents.

Level 20 is full strength. Below it the engine is weakened in three ways at once, each
growing as the level drops: a depth cap, uniform noise added to the root move scores, and
a chance of playing a uniformly random legal move. Level 0 searches one ply with heavy
noise and plays a random move more often than not: close to random, always legal.
Forced wins and losses are never blurred by noise (a weak engine still sees a mate in 1
unless it blunders at random).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LEVEL = 20


@dataclass(frozen=True)
class LevelSettings:
    depth_cap: int | None  # None = no cap
    noise_cp: int  # root scores get uniform noise in [-noise, +noise]
    blunder: float  # probability of a uniformly random legal move

    @property
    def full_strength(self) -> bool:
        return self.depth_cap is None and self.noise_cp == 0 and self.blunder == 0.0


def level_settings(level: int) -> LevelSettings:
    """Settings of ``level`` (clamped to 0..20)."""
    level = max(0, min(MAX_LEVEL, level))
    if level == MAX_LEVEL:
        return LevelSettings(None, 0, 0.0)
    weakness = (MAX_LEVEL - level) / MAX_LEVEL
    return LevelSettings(
        depth_cap=1 + level // 3,
        noise_cp=(MAX_LEVEL - level) * 12,
        blunder=0.6 * weakness * weakness,
    )
