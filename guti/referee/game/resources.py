"""What each engine used in a game: its CPU on and off its move, and its peak memory.

The referee reads an engine's CPU time (:meth:`UgiEngine.cpu_clock
<guti.referee.ugi.client.UgiEngine.cpu_clock>`, a running count) at a few moments of the
game, keeps them as they were taken (:class:`CpuReadings`: two readings a move is all the
referee does while the game is played) and splits them up at its end (:func:`split_cpu`):

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

The readings are the kernel's own counts, to the microsecond or better
(:mod:`guti.referee.process.cpu_time`), so each figure is what the engine used in that
stretch, give or take the instant a reading is taken.
:class:`EngineUse` is what is stored with the game per engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guti.rules import Side

if TYPE_CHECKING:
    from guti.referee.ugi.client import UgiEngine


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


@dataclass(slots=True)
class CpuReadings:
    """One engine's CPU readings through one game (seconds; None: not known), kept as
    they were taken; :func:`split_cpu` splits them up. Each move is ``(ply, its go,
    its last go, its bestmove)``: a move voided and asked again has a later go, from
    which its CPU counts, while the stretch off its move ended at the first."""

    start: float | None = None
    ready: float | None = None
    moves: list[tuple[int, float | None, float | None, float | None]] = field(
        default_factory=list)
    #: Whether it is asked for a move now, and the readings at that move's first ``go``
    #: and at its last.
    asking: bool = False
    go: float | None = None
    asked: float | None = None


@dataclass
class CpuSplit:
    """What :func:`split_cpu` finds: each move's CPU by ply (ms, only where known), the
    totals on and off its moves, and the last stretch off its move (ms; None: none
    measured) with the ply of the ``bestmove`` that opened it (0: its ``readyok``)."""

    move_ms: dict[int, float] = field(default_factory=dict)
    on_ms: float = 0.0
    moves: int = 0
    off_ms: float = 0.0
    known: bool = False
    last_off_ms: float | None = None
    last_off_from: int = 0


def split_cpu(readings: CpuReadings, end: float | None) -> CpuSplit:
    """Split ``readings`` on and off the engine's moves (see the module's docstring).
    The last stretch off its move ends at the ``go`` it is asked for now, or else at
    ``end``, the reading at the end of the game (None: not known, or not ended yet)."""
    split = CpuSplit()
    since = readings.ready  # the reading that opened the stretch off its move
    last = (0, readings.go if readings.asking else end, None, None)  # closes the last stretch
    for ply, go, asked, bestmove in (*readings.moves, last):
        # the stretch off its move that this go ends
        used = split.last_off_ms = _between(since, go)
        if used is not None:
            split.known = True
            split.off_ms += used
        if not ply:
            break
        # the move itself
        split.last_off_from, since = ply, bestmove
        used = _between(asked, bestmove)
        if used is None:
            continue
        split.move_ms[ply] = used
        split.on_ms += used
        split.moves += 1
        split.known = True
    return split


def _between(start: float | None, end: float | None) -> float | None:
    """The CPU (ms) between two readings (never below 0; None: a reading is not known)."""
    return None if start is None or end is None else max(0.0, end - start) * 1000


def _ms(milliseconds: float | None) -> float | None:
    return None if milliseconds is None else round(milliseconds, 1)


class GameResources:
    """Both engines' CPU through one game, read from the engines at the moments the
    runner calls these for (a :class:`CpuReadings` each: two readings a move, nothing
    worked out), and what they used at the end, when each move's CPU is also written
    into ``cpu_ms``, the game record's per-ply list. An engine judged on what it uses is
    judged at every move: ``limits.cpus`` on that move's two readings,
    ``limits.ponder=off`` on its readings so far, split before each ``go``."""

    def __init__(self, engines: Mapping[Side, UgiEngine], cpu_ms: list[float | None]) -> None:
        self.engines = engines
        self.cpu_ms = cpu_ms
        self.clocks = {side: engines[side].cpu_clock() for side in Side}
        self.readings = {side: CpuReadings() for side in Side}
        self.judged_off_move = {side: _judged_off_move(engines[side]) for side in Side}

    def game_starts(self) -> None:
        """Before ``uginewgame``."""
        for side, readings in self.readings.items():
            readings.start = self.clocks[side]()

    def ready(self, side: Side) -> None:
        """Its ``readyok`` came: from now until its first ``go`` it is off its move."""
        self.readings[side].ready = self.clocks[side]()

    def before_go(self, side: Side, ply: int) -> str | None:
        """Just before ``side`` is asked for ``ply``: the stretch off its move ends; why
        the CPU it used off its moves in this game breaks its ``limits.ponder=off``, or
        None."""
        readings = self.readings[side]
        readings.go = readings.asked = self.clocks[side]()
        readings.asking = True
        if not self.judged_off_move[side]:
            return None
        return self._offmove_excess(side, split_cpu(readings, None), f"its go for ply {ply}")

    def offmove_breach(self, side: Side, ply: int) -> str | None:
        """While ``side``'s opponent is on its move (ply ``ply``): why the CPU ``side`` has
        used off its moves so far breaks its ``limits.ponder=off``, or None. Asked before
        the opponent is charged with a time fault: the CPU that kept it from its move may
        have been ``side``'s, which then loses instead."""
        if not self.judged_off_move[side] or self.readings[side].asking:
            return None
        split = split_cpu(self.readings[side], self.clocks[side]())
        return self._offmove_excess(side, split, f"its opponent's time fault at ply {ply}")

    def _offmove_excess(self, side: Side, split: CpuSplit, until: str) -> str | None:
        engine = self.engines[side]
        assert engine.sandbox is not None
        why = engine.sandbox.offmove_excess(split.off_ms)
        if why is None or split.last_off_ms is None:
            return None
        opened = split.last_off_from
        since = f"its bestmove at ply {opened}" if opened else "its readyok"
        return (f"engine {engine.name}: {why}; {split.last_off_ms / 1000:.2f} s of it "
                f"between {since} and {until}")

    def asked_again(self, side: Side) -> None:
        """A voided move is asked anew: its CPU counts from now."""
        self.readings[side].asked = self.clocks[side]()

    def after_move(self, side: Side, ply: int) -> None:
        """``side``'s ``bestmove`` for ``ply`` was read: a stretch off its move begins."""
        readings = self.readings[side]
        readings.moves.append((ply, readings.go, readings.asked, self.clocks[side]()))
        readings.asking = False

    def last_move_ms(self, side: Side) -> float | None:
        """The CPU (ms) ``side``'s last move showed from its ``go`` to its ``bestmove``
        (None: not known)."""
        _, _, asked, bestmove = self.readings[side].moves[-1]
        return _ms(_between(asked, bestmove))

    def game_ends(self) -> dict[Side, EngineUse]:
        """The game is over (the engines not stopped yet): what each used; each move's CPU
        is written into ``cpu_ms``."""
        used = {}
        for side, readings in self.readings.items():
            engine = self.engines[side]
            end = self.clocks[side]()
            split = split_cpu(readings, end)
            for ply, ms in split.move_ms.items():
                self.cpu_ms[ply - 1] = _ms(ms)
            memory, source = engine.peak_memory()
            used[side] = EngineUse(
                cpu_ms=_ms(_between(readings.start, end)),
                move_cpu_ms=_ms(split.on_ms) if split.known else None,
                moves=split.moves,
                off_move_cpu_ms=_ms(split.off_ms) if split.known else None,
                peak_memory=memory,
                memory_from=source if memory is not None else None,
            )
        return used


def _judged_off_move(engine: UgiEngine) -> bool:
    return engine.sandbox is not None and engine.sandbox.ponder_off


def mib_text(size: int | None) -> str:
    """``1.5 GiB``-style text of a size in bytes, ``-`` when unknown."""
    if size is None:
        return "-"
    if size >= 2**30:
        return f"{size / 2**30:.2f} GiB"
    return f"{size / 2**20:.1f} MiB"
