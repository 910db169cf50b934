"""What each engine used in a game: its CPU on and off its move, and its peak memory.

The referee reads an engine's CPU time (:meth:`UgiEngine.cpu_time
<guti.referee.ugi.client.UgiEngine.cpu_time>`, a running count) at a few moments of the
game, and :class:`CpuAccount` splits it up:

- **on its move**: from just before ``go`` is written to just after its ``bestmove`` was
  read (each move's figure is the game record's ``cpu_ms``);
- **off its move**: from its ``bestmove`` (or, at the start, its ``readyok`` to
  ``uginewgame``) to its next ``go``, and from its last ``bestmove`` to the end of the
  game: the time its opponent thinks and the referee works. guti's protocol has no
  pondering, so an engine that is sound uses next to nothing there; a thread left
  searching after ``bestmove`` shows up here, and ``limits.ponder=off`` forfeits it
  (:meth:`~guti.referee.process.sandbox.Sandbox.offmove_excess`);
- **in all**: from before ``uginewgame`` to the end of the game (on + off + the new
  game's set-up).

The readings are the kernel's counts in clock ticks (10 ms), so each figure is known to
a tick or so. The referee reads an engine's count afresh at most once per tick
(:class:`~guti.referee.process.cpu_time.TickCachedCpu`), so after a move shorter than a
tick its count may not have been read again: when a move shows no CPU at all, what the
next reading finds is counted as that move's, not as CPU off its move (the engine has
the benefit of the doubt). An engine judged on it (``limits.ponder=off``) is read afresh
every time (``exact``), and its readings are taken as they are.
:class:`EngineUse` is what is stored with the game per engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guti.referee.ugi.client import UgiEngine
from guti.rules import Side


@dataclass
class EngineUse:
    """What one engine used in one game (None: not known, e.g. off Linux, or the engine
    gone before the end). ``peak_memory`` is the most memory it held at once since it
    started, in bytes, from ``memory_from``: ``cgroup`` (all its processes together) or
    ``VmHWM`` (its largest process's peak resident memory)."""

    cpu_ms: float | None = None
    move_cpu_ms: float | None = None
    moves: int = 0
    off_move_cpu_ms: float | None = None
    peak_memory: int | None = None
    memory_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cpu_ms": self.cpu_ms, "move_cpu_ms": self.move_cpu_ms, "moves": self.moves,
                "off_move_cpu_ms": self.off_move_cpu_ms, "peak_memory": self.peak_memory,
                "memory_from": self.memory_from}

    @classmethod
    def from_json(cls, data: object) -> EngineUse:
        """The inverse of :meth:`to_json`; ValueError for anything else (keys it does not
        know are ignored: a newer guti may store more)."""
        if not isinstance(data, dict):
            raise ValueError(f"{data!r} is not an object")
        numbers = {}
        for key in ("cpu_ms", "move_cpu_ms", "off_move_cpu_ms", "peak_memory"):
            value = data.get(key)
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, int | float)):
                raise ValueError(f"{key} {value!r} is not a number")
            numbers[key] = value
        moves, source = data.get("moves", 0), data.get("memory_from")
        if isinstance(moves, bool) or not isinstance(moves, int) or moves < 0:
            raise ValueError(f"moves {moves!r} is not a count")
        if source is not None and not isinstance(source, str):
            raise ValueError(f"memory_from {source!r} is not text")
        peak = numbers["peak_memory"]
        return cls(numbers["cpu_ms"], numbers["move_cpu_ms"], moves,
                   numbers["off_move_cpu_ms"], None if peak is None else int(peak), source)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


class CpuAccount:
    """One engine's CPU readings through one game, split on and off its move (see the
    module's docstring). Each method takes the reading of that moment (seconds; None:
    not known) and the window it ends is left out when a reading is missing."""

    def __init__(self, exact: bool = False) -> None:
        self.exact = exact
        self.start: float | None = None
        self.move_ms = 0.0
        self.moves = 0
        self.off_ms = 0.0
        self.known = False  # whether any window was measured
        #: The reading that opened the current stretch off its move (None: none open),
        #: and the ply of the bestmove that opened it (0: its readyok).
        self.off_since: float | None = None
        self.off_from_ply = 0
        self.go_reading: float | None = None  # at the go of the move being thought
        #: The ply of its last move when that move showed no CPU and its reading may have
        #: been one kept from before its go (not ``exact``): the next reading's CPU is
        #: that move's. :meth:`carried` tells the ply and the CPU once it is known.
        self.carry_ply: int | None = None
        self._carried: tuple[int, float] | None = None

    def game_starts(self, reading: float | None) -> None:
        """Before ``uginewgame``."""
        self.start = reading

    def ready(self, reading: float | None) -> None:
        """Its ``readyok`` came: from now until its first ``go`` it is off its move."""
        self.off_since, self.off_from_ply = reading, 0

    def go(self, reading: float | None) -> float | None:
        """Just before ``go`` is written: the stretch off its move ends; its CPU (ms), or
        None when none was open or a reading is missing."""
        self.go_reading = reading
        since, self.off_since = self.off_since, None
        if since is None or reading is None:
            return None
        used = max(0.0, reading - since) * 1000
        self.known = True
        if self.carry_ply is not None:
            self.carry(used)
            return 0.0
        self.off_ms += used
        return used

    def carry(self, used: float) -> None:
        """``used`` ms found after a move that showed none: that move's."""
        assert self.carry_ply is not None
        self.move_ms += used
        if used:
            self._carried = (self.carry_ply, used)
        self.carry_ply = None

    @property
    def off_from(self) -> str:
        """What opened the last stretch off its move, in words (``go`` ends the stretch
        but leaves this, for the message of a breach found then)."""
        ply = self.off_from_ply
        return f"its bestmove at ply {ply}" if ply else "its readyok"

    def carried(self) -> tuple[int, float] | None:
        """The ply of a move that showed no CPU and the ms found for it since (once)."""
        found, self._carried = self._carried, None
        return found

    def bestmove(self, reading: float | None, ply: int) -> float | None:
        """Its ``bestmove`` for ``ply`` was read: the move's CPU (ms, None: not known); a
        stretch off its move begins."""
        self.off_since, self.off_from_ply = reading, ply
        if self.go_reading is None or reading is None:
            return None
        used = max(0.0, reading - self.go_reading)
        self.move_ms += used * 1000
        self.moves += 1
        self.known = True
        self.carry_ply = ply if used == 0 and not self.exact else None
        return _ms(used)

    def game_ends(self, reading: float | None, peak: tuple[int | None, str]) -> EngineUse:
        """The game is over (the engine not stopped yet): what it used, ``peak`` being its
        peak memory and where that comes from."""
        if self.off_since is not None and reading is not None:
            used = max(0.0, reading - self.off_since) * 1000
            if self.carry_ply is not None:
                self.carry(used)
            else:
                self.off_ms += used
            self.known = True
        self.off_since = None
        total = (None if self.start is None or reading is None
                 else _ms(max(0.0, reading - self.start)))
        memory, source = peak
        return EngineUse(
            cpu_ms=total,
            move_cpu_ms=round(self.move_ms, 1) if self.known else None,
            moves=self.moves,
            off_move_cpu_ms=round(self.off_ms, 1) if self.known else None,
            peak_memory=memory,
            memory_from=source if memory is not None else None,
        )


class GameResources:
    """Both engines' CPU through one game (a :class:`CpuAccount` each), read from the
    engines at the moments the runner calls these for, and what they used at the end.
    ``cpu_ms`` is the game record's per-ply list: CPU found after a move that showed none
    is added to that move's entry."""

    def __init__(self, engines: Mapping[Side, UgiEngine], cpu_ms: list[float | None]) -> None:
        self.engines = engines
        self.cpu_ms = cpu_ms
        self.accounts = {side: CpuAccount(exact=_judged_off_move(engines[side]))
                         for side in Side}

    def game_starts(self) -> None:
        for side, account in self.accounts.items():
            account.game_starts(self.engines[side].cpu_time())

    def ready(self, side: Side) -> None:
        self.accounts[side].ready(self.engines[side].cpu_time())

    def before_go(self, side: Side, ply: int) -> str | None:
        """Just before ``side`` is asked for ``ply``: the stretch off its move ends; why
        the CPU it used off its moves in this game breaks its ``limits.ponder=off``, or
        None."""
        engine, account = self.engines[side], self.accounts[side]
        window = account.go(engine.cpu_time())
        self._add_carried(side)
        if engine.sandbox is None or window is None:
            return None
        why = engine.sandbox.offmove_excess(account.off_ms)
        if why is None:
            return None
        return (f"engine {engine.name}: {why}; {window / 1000:.2f} s of it between "
                f"{account.off_from} and its go for ply {ply}")

    def asked_again(self, side: Side) -> None:
        """A voided move is asked anew: its CPU counts from now."""
        self.accounts[side].go(self.engines[side].cpu_time())

    def after_move(self, side: Side, ply: int) -> float | None:
        """``side``'s ``bestmove`` for ``ply`` was read: the move's CPU (ms; None: not
        known)."""
        return self.accounts[side].bestmove(self.engines[side].cpu_time(), ply)

    def game_ends(self) -> dict[Side, EngineUse]:
        """The game is over (the engines not stopped yet): what each used."""
        used = {}
        for side, account in self.accounts.items():
            engine = self.engines[side]
            used[side] = account.game_ends(engine.cpu_time(), engine.peak_memory())
            self._add_carried(side)
        return used

    def _add_carried(self, side: Side) -> None:
        carried = self.accounts[side].carried()
        if carried is not None:
            ply, ms = carried
            before = self.cpu_ms[ply - 1]
            if before is not None:
                self.cpu_ms[ply - 1] = round(before + ms, 1)


def _judged_off_move(engine: UgiEngine) -> bool:
    return engine.sandbox is not None and engine.sandbox.ponder_off
