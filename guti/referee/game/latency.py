"""``-show-latency``: how much longer each move took than the engine says it did.

The referee measures each move from writing ``go`` to reading ``bestmove``; an engine
reports its own ``time`` in its ``info`` lines. The difference (the move's *latency*,
:meth:`~guti.referee.game.record.GameRecord.latency_ms`) is what the engine's clock does not
see: pipe and scheduler delays, the engine's start of the search and its output after
the last ``info`` line. A large or growing latency is why an engine loses on time
although it "stays within its time" by its own count.

After each game one line per engine, from the moves where it reported a ``time``::

    Latency of RefA: mean 1.8 ms, max 4.2 ms (ply 17) over 31 moves

or ``Latency of RefA: no time reported (0 of 31 moves)`` when it never sent one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord


def _sides(record: GameRecord) -> list[str]:
    """The engine that made each ply, from who moved first."""
    first, second = ((record.white, record.black) if record.first_side == "w"
                     else (record.black, record.white))
    return [first if ply % 2 == 0 else second for ply in range(record.plies)]


def latency_lines(record: GameRecord) -> list[str]:
    """One line per engine (White's first) on its moves' latencies in ``record``."""
    movers = _sides(record)
    lines = []
    for name in (record.white, record.black):
        plies = [p for p in range(record.opening_plies, record.plies) if movers[p] == name]
        timed = [(p, lat) for p in plies if (lat := record.latency_ms(p)) is not None]
        if not timed:
            lines.append(f"Latency of {name}: no time reported (0 of {len(plies)} moves)")
            continue
        worst_ply, worst = max(timed, key=lambda item: item[1])
        mean = sum(lat for _, lat in timed) / len(timed)
        lines.append(f"Latency of {name}: mean {mean:.1f} ms, max {worst:.1f} ms "
                     f"(ply {worst_ply + 1}) over {len(timed)} moves")
    return lines
