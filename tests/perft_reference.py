"""Reference perft figures parsed from the shared ``perft.md`` at test time.

Why: tests must take their expected numbers from the independently computed
reference file, never from our own output. This module is the single place
that knows the layout of that file, so every test suite (rules core, engine,
bots, referee) reads the same figures the same way.

The file is found at ``<repo parent>/shared/perft.md`` (``/work/shared`` next
to ``/work/main``); if it is not there, the directory named by the environment
variable ``GUTI_SHARED`` is used. A missing file or a layout this parser does
not understand raises ``ReferenceFormatError`` with a one-line message, so a
broken reference fails tests loudly instead of making them vacuous.

Public API:

- ``perft_md_path() -> Path``
- ``load_perft_tables() -> dict[str, dict[int, int]]``: game -> depth -> nodes
- ``load_start_fens() -> dict[str, str]``: game -> start FEN named in the headings
- ``load_divides() -> dict[str, tuple[int, dict[str, int], int]]``:
  game -> (depth, move -> count, total nodes) from the "Divide at depth N" lines
- ``load_capture_positions() -> list[tuple[str, str, set[str], dict[str, str]]]``:
  (game, fen, set of legal moves, move -> FEN after it)
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

__all__ = [
    "ReferenceFormatError",
    "perft_md_path",
    "load_perft_tables",
    "load_start_fens",
    "load_divides",
    "load_capture_positions",
]

GAMES = ("egara-guti", "pretwa")

_HEADING = re.compile(r"^##\s+(?P<game>[a-z-]+):\s+start position\s+`(?P<fen>[^`]+)`\s*$")
_ROW = re.compile(r"^\|\s*(?P<depth>\d+)\s*\|\s*(?P<nodes>[\d,]+)\s*\|\s*$")
_DIVIDE = re.compile(r"^Divide at depth (?P<depth>\d+):\s*(?P<body>.*)\(nodes (?P<nodes>[\d,]+)\)")
_DIVIDE_ITEM = re.compile(r"`(?P<move>[0-9x-]+):\s*(?P<count>[\d,]+)`")
_CAPTURE_POS = re.compile(r"^- (?P<game>[a-z-]+) `(?P<fen>[^`]+)`:\s*(?P<moves>.*?)\.?\s*$")
_CAPTURE_AFTER = re.compile(r"^\s+- after `(?P<move>[^`]+)`:\s*`(?P<fen>[^`]+)`\s*$")
_BACKTICKED = re.compile(r"`([^`]+)`")


class ReferenceFormatError(RuntimeError):
    """perft.md is missing or not laid out as this parser expects."""


def perft_md_path() -> Path:
    """Locate perft.md: next to the repository first, then under $GUTI_SHARED."""
    candidate = Path(__file__).resolve().parents[2] / "shared" / "perft.md"
    if candidate.is_file():
        return candidate
    env = os.environ.get("GUTI_SHARED")
    if env:
        alt = Path(env) / "perft.md"
        if alt.is_file():
            return alt
    raise ReferenceFormatError(
        f"perft.md not found at {candidate} nor under $GUTI_SHARED ({env or 'unset'})"
    )


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@cache
def _lines() -> tuple[str, ...]:
    return tuple(perft_md_path().read_text(encoding="utf-8").splitlines())


@cache
def _parse_sections() -> tuple[
    dict[str, dict[int, int]], dict[str, str], dict[str, tuple[int, dict[str, int], int]]
]:
    tables: dict[str, dict[int, int]] = {}
    fens: dict[str, str] = {}
    divides: dict[str, tuple[int, dict[str, int], int]] = {}
    game: str | None = None
    for lineno, line in enumerate(_lines(), start=1):
        if line.startswith("## "):
            m = _HEADING.match(line)
            game = m.group("game") if m else None
            if m:
                fens[game] = m.group("fen")
                tables[game] = {}
            continue
        if game is None:
            continue
        row = _ROW.match(line)
        if row:
            tables[game][int(row.group("depth"))] = _number(row.group("nodes"))
            continue
        div = _DIVIDE.match(line)
        if div:
            items = {
                it.group("move"): _number(it.group("count"))
                for it in _DIVIDE_ITEM.finditer(div.group("body"))
            }
            total = _number(div.group("nodes"))
            if not items or sum(items.values()) != total:
                raise ReferenceFormatError(
                    f"perft.md line {lineno}: divide entries do not add up to {total}"
                )
            divides[game] = (int(div.group("depth")), items, total)
    for name in GAMES:
        if not tables.get(name):
            raise ReferenceFormatError(f"perft.md: no perft table found for {name}")
    return tables, fens, divides


def load_perft_tables() -> dict[str, dict[int, int]]:
    """game -> {depth: nodes} for the start position of each game."""
    tables = _parse_sections()[0]
    return {game: dict(rows) for game, rows in tables.items()}


def load_start_fens() -> dict[str, str]:
    """game -> start FEN as written in the section heading of perft.md."""
    return dict(_parse_sections()[1])


def load_divides() -> dict[str, tuple[int, dict[str, int], int]]:
    """game -> (depth, {move: count}, total) from the "Divide at depth N" lines."""
    return {g: (d, dict(items), n) for g, (d, items, n) in _parse_sections()[2].items()}


@cache
def _parse_captures() -> tuple[tuple[str, str, frozenset[str], tuple[tuple[str, str], ...]], ...]:
    out: list[tuple[str, str, frozenset[str], list[tuple[str, str]]]] = []
    in_section = False
    for lineno, line in enumerate(_lines(), start=1):
        if line.startswith("## "):
            in_section = line.startswith("## Capture sequences")
            continue
        if not in_section:
            continue
        pos = _CAPTURE_POS.match(line)
        if pos:
            moves = frozenset(_BACKTICKED.findall(pos.group("moves")))
            if not moves:
                raise ReferenceFormatError(f"perft.md line {lineno}: position lists no moves")
            out.append((pos.group("game"), pos.group("fen"), moves, []))
            continue
        after = _CAPTURE_AFTER.match(line)
        if after:
            if not out:
                raise ReferenceFormatError(
                    f"perft.md line {lineno}: 'after' line before a position"
                )
            out[-1][3].append((after.group("move"), after.group("fen")))
    if not out:
        raise ReferenceFormatError("perft.md: no capture-sequence positions found")
    for game, fen, moves, afters in out:
        if {m for m, _ in afters} != set(moves):
            raise ReferenceFormatError(
                f"perft.md: position {game} {fen!r}: 'after' lines do not match the move list"
            )
    return tuple((g, f, m, tuple(a)) for g, f, m, a in out)


def load_capture_positions() -> list[tuple[str, str, set[str], dict[str, str]]]:
    """[(game, fen, set of legal moves, {move: FEN after the move})] of the hand-checked list."""
    return [(g, f, set(m), dict(a)) for g, f, m, a in _parse_captures()]


if __name__ == "__main__":  # quick look at what was parsed
    import pprint

    pprint.pprint(load_perft_tables())
    pprint.pprint(load_start_fens())
    pprint.pprint(load_divides())
    pprint.pprint(load_capture_positions())
