"""Perft diff: compare an engine's ``go perft`` split with guti's own, move by move.

This is the classic move-generator debugging loop: the engine's count per
first move is set against the rules core's; only the moves that disagree
are interesting, and stepping into one of them (one ply deeper, one depth
less) narrows the bug down to a single position. Pure text in, text out,
so both the console and the conformance check use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from guti.referee.ugi.lines import is_bestmove, is_refusal
from guti.rules.numbers import whole_number

_MOVE_COUNT_RE = re.compile(r"^\s*(\S+):\s*(\S+)\s*$")
_NODES_RE = re.compile(r"^\s*nodes\s+(\S+)\s*$")


@dataclass
class EnginePerft:
    """What an engine answered to ``go perft N``: per-move counts, the total, and oddities."""

    counts: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    total: int | None = None
    problems: list[str] = field(default_factory=list)


class PerftCollector:
    """Feeds on engine lines until the ``nodes TOTAL`` line that ends a perft answer."""

    def __init__(self) -> None:
        self.result = EnginePerft()
        self.done = False
        #: The line with which the engine refused ``go perft`` instead of counting, if it did.
        self.refusal: str | None = None

    def answer_ends(self, line: str) -> bool:
        """Take one line; True once the answer is over: complete (:attr:`done`), or
        refused (a ``bestmove``, an ``info string error`` or unknown-command line instead
        of counts: :attr:`refusal`), so that no one waits for counts that never come."""
        if self.feed(line):
            return True
        if is_bestmove(line) or is_refusal(line):
            self.refusal = line
            return True
        return False

    def feed(self, line: str) -> bool:
        """Take one line; True once the answer is complete (the ``nodes`` line came)."""
        if self.done:
            return True
        m = _NODES_RE.match(line)
        if m:
            self.result.total = _to_int(m.group(1))
            if self.result.total is None:
                self.result.problems.append(f"nodes line {line.strip()!r} has no whole number")
            self.done = True
            return True
        m = _MOVE_COUNT_RE.match(line)
        if m and not line.startswith(("info", "id ", "option")):
            move, count = m.group(1), _to_int(m.group(2))
            if count is None:
                self.result.problems.append(f"line {line.strip()!r}: count is not a whole number")
            elif move in self.result.counts:
                self.result.problems.append(f"move {move} listed twice")
            else:
                self.result.counts[move] = count
                self.result.order.append(move)
        return False


def _to_int(text: str) -> int | None:
    return whole_number(text, 30)


@dataclass
class PerftDiff:
    """The outcome of comparing the engine's split with guti's."""

    depth: int
    ours: dict[str, int]
    theirs: EnginePerft
    differing: list[tuple[str, int, int]]  # (move, engine count, guti count)
    missing: list[tuple[str, int]]  # legal moves the engine did not list (move, guti count)
    extra: list[tuple[str, int]]  # moves the engine listed that are not legal (move, engine count)
    order_ok: bool

    @property
    def our_total(self) -> int:
        return sum(self.ours.values()) if self.depth > 0 else 1

    @property
    def same(self) -> bool:
        return (
            not self.differing
            and not self.missing
            and not self.extra
            and self.theirs.total == self.our_total
        )

    @property
    def first_suspect(self) -> str | None:
        """The move to step into next: the first differing one (missing/extra cannot be entered)."""
        return self.differing[0][0] if self.differing else None

    def lines(self) -> list[str]:
        """A human report: only what disagrees, or ``no difference``."""
        out: list[str] = []
        total = self.theirs.total
        shown = "no nodes line" if total is None else str(total)
        if self.same:
            out.append(
                f"no difference: {len(self.ours)} moves, {self.our_total} nodes at depth {self.depth}"
            )
        else:
            out.append(f"perft {self.depth}: engine {shown} nodes, guti {self.our_total}")
            for move, theirs, ours in self.differing:
                out.append(f"  {move}: engine {theirs}, guti {ours} ({theirs - ours:+d})")
            for move, ours in self.missing:
                out.append(f"  {move}: missing from the engine (guti {ours})")
            for move, theirs in self.extra:
                out.append(f"  {move}: extra in the engine (engine {theirs}), not a legal move")
            if (
                not self.differing
                and not self.missing
                and not self.extra
                and total != self.our_total
            ):
                out.append("  the per-move counts agree but the engine's total does not add up")
        if not self.order_ok:
            out.append("  note: the engine did not list its moves in byte order of the strings")
        for problem in self.theirs.problems:
            out.append(f"  note: {problem}")
        return out


def diff_perft(depth: int, ours: list[tuple[str, int]], theirs: EnginePerft) -> PerftDiff:
    """Compare guti's divide (``[(move, count)]``) with the engine's answer."""
    our_counts = dict(ours)
    differing = [
        (m, theirs.counts[m], c)
        for m, c in sorted(our_counts.items())
        if m in theirs.counts and theirs.counts[m] != c
    ]
    missing = [(m, c) for m, c in sorted(our_counts.items()) if m not in theirs.counts]
    extra = [(m, c) for m, c in sorted(theirs.counts.items()) if m not in our_counts]
    order_ok = theirs.order == sorted(theirs.order)
    return PerftDiff(depth, our_counts, theirs, differing, missing, extra, order_ok)
