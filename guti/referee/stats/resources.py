"""What each engine used over a tournament's games (``-show-resources``, the report).

:class:`ResourceTable` takes, game by game, what both engines used
(:class:`~guti.referee.game.resources.EngineUse`, stored with each game) and keeps per
engine: its largest peak memory, its CPU on its moves (an average per move) and off its
moves (in all, and the most in one game). Only counters: memory does not grow with the
number of games. Games stored before guti measured this add nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from guti.referee.game.resources import mib_text
from guti.rules import Side

if TYPE_CHECKING:
    from guti.referee.game.resources import EngineUse


@dataclass
class ResourceLine:
    """One engine's counters (``games``: games with a measurement)."""

    name: str
    games: int = 0
    peak_memory: int | None = None
    memory_from: set[str] = field(default_factory=set)
    move_cpu_ms: float = 0.0
    moves: int = 0
    off_move_cpu_ms: float = 0.0
    off_move_games: int = 0
    most_off_move_ms: float = 0.0

    @property
    def cpu_per_move_ms(self) -> float | None:
        return self.move_cpu_ms / self.moves if self.moves else None

    @property
    def off_move_per_game_ms(self) -> float | None:
        return self.off_move_cpu_ms / self.off_move_games if self.off_move_games else None

    def cells(self) -> list[str]:
        """The line as text, as ``-show-resources`` and the report show it: name, games,
        peak memory (``*``: its largest process's peak resident memory, no cgroup), CPU
        per move, off-move CPU per game and the most in one game."""
        if not self.games:
            return [self.name, "0", "-", "-", "-", "-"]
        memory = mib_text(self.peak_memory)
        if self.peak_memory is not None and self.memory_from == {"VmHWM"}:
            memory += " *"
        return [self.name, str(self.games), memory, ms_text(self.cpu_per_move_ms),
                ms_text(self.off_move_per_game_ms),
                ms_text(self.most_off_move_ms if self.off_move_games else None)]

    def add(self, use: EngineUse) -> None:
        self.games += 1
        if use.peak_memory is not None:
            self.peak_memory = max(self.peak_memory or 0, use.peak_memory)
            if use.memory_from:
                self.memory_from.add(use.memory_from)
        if use.move_cpu_ms is not None:
            self.move_cpu_ms += use.move_cpu_ms
            self.moves += use.moves
        if use.off_move_cpu_ms is not None:
            self.off_move_cpu_ms += use.off_move_cpu_ms
            self.off_move_games += 1
            self.most_off_move_ms = max(self.most_off_move_ms, use.off_move_cpu_ms)


#: The heads of :meth:`ResourceLine.cells`.
HEADS = ("engine", "games", "peak memory", "CPU per move", "off-move CPU per game",
         "most off-move CPU in a game")


class ResourceTable:
    """Per engine what it used, over the games added (engines in the order given)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.lines = [ResourceLine(name) for name in names]
        self._index = {name: i for i, name in enumerate(names)}

    def add(self, white: str, black: str, uses: Mapping[Side, EngineUse]) -> None:
        """One game: what its engines (by name) used; an engine not listed is added."""
        for side, name in ((Side.WHITE, white), (Side.BLACK, black)):
            use = uses.get(side)
            if use is None:
                continue
            if name not in self._index:
                self._index[name] = len(self.lines)
                self.lines.append(ResourceLine(name))
            self.lines[self._index[name]].add(use)

    @property
    def measured(self) -> bool:
        """Whether any game added had a measurement."""
        return any(line.games for line in self.lines)


def ms_text(ms: float | None) -> str:
    """``12.5 ms`` / ``1.23 s``, ``-`` when unknown."""
    if ms is None:
        return "-"
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"
