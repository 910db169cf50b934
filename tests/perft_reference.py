"""Reference perft figures, read from ``tests/data/perft_reference.toml``.

Why: tests must take their expected numbers from independently computed
reference figures, never from our own output. The figures are facts about the
rules, so the repository carries them as test data in one file, and this
module is the one place that reads it: every suite (rules core, engine, bots,
referee) sees the same figures the same way. A missing file or a malformed
entry raises ``ReferenceFormatError`` with a one-line message, so a broken
reference fails tests loudly instead of making them vacuous.

Public API (``games`` defaults to the games guti plays today; pass
``ALL_GAMES`` or a tuple of names for others):

- ``load_perft_tables(games) -> dict[str, dict[int, int]]``: game -> depth -> nodes
- ``load_start_fens(games) -> dict[str, str]``: game -> start FEN
- ``load_divides(games) -> dict[str, tuple[int, dict[str, int], int]]``:
  game -> (depth, move -> count, total nodes)
- ``load_capture_positions() -> list[tuple[str, str, set[str], dict[str, str]]]``:
  (game, fen, set of legal moves, move -> FEN after it)
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "ALL_GAMES",
    "GAMES",
    "REFERENCE_FILE",
    "ReferenceFormatError",
    "load_capture_positions",
    "load_divides",
    "load_perft_tables",
    "load_start_fens",
]

REFERENCE_FILE = Path(__file__).resolve().parent / "data" / "perft_reference.toml"

#: The games guti plays today; the file may hold figures for more.
GAMES: tuple[str, ...] = ("egara-guti", "pretwa")


class ReferenceFormatError(RuntimeError):
    """The reference file is missing or not laid out as this reader expects."""


@cache
def _document() -> dict[str, Any]:
    try:
        with REFERENCE_FILE.open("rb") as handle:
            doc = tomllib.load(handle)
    except FileNotFoundError:
        raise ReferenceFormatError(f"{REFERENCE_FILE}: reference figures missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise ReferenceFormatError(f"{REFERENCE_FILE}: {exc}") from None
    games = doc.get("games")
    if not isinstance(games, dict) or not games:
        raise ReferenceFormatError(f"{REFERENCE_FILE}: no [games.NAME] tables")
    for name, entry in games.items():
        perft = entry.get("perft")
        divide = entry.get("divide", {})
        if not isinstance(entry.get("start"), str) or not perft:
            raise ReferenceFormatError(f"{REFERENCE_FILE}: games.{name} needs start and perft")
        moves = divide.get("moves", {})
        if not moves or sum(moves.values()) != divide.get("nodes"):
            raise ReferenceFormatError(
                f"{REFERENCE_FILE}: games.{name}.divide entries do not add up to its nodes"
            )
        if perft[divide["depth"] - 1] != divide["nodes"]:
            raise ReferenceFormatError(
                f"{REFERENCE_FILE}: games.{name}.divide disagrees with its perft table"
            )
    return doc


#: Every game the reference file has figures for.
ALL_GAMES: tuple[str, ...] = tuple(_document()["games"])


def _entries(games: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    table = _document()["games"]
    missing = [g for g in games if g not in table]
    if missing:
        raise ReferenceFormatError(f"{REFERENCE_FILE}: no figures for {', '.join(missing)}")
    return {g: table[g] for g in games}


def load_perft_tables(games: tuple[str, ...] = GAMES) -> dict[str, dict[int, int]]:
    """game -> {depth: nodes} for the start position of each game."""
    return {
        g: {depth: nodes for depth, nodes in enumerate(e["perft"], start=1)}
        for g, e in _entries(games).items()
    }


def load_start_fens(games: tuple[str, ...] = GAMES) -> dict[str, str]:
    """game -> start FEN."""
    return {g: e["start"] for g, e in _entries(games).items()}


def load_divides(games: tuple[str, ...] = GAMES) -> dict[str, tuple[int, dict[str, int], int]]:
    """game -> (depth, {move: count}, total) of the divide from the start."""
    return {
        g: (e["divide"]["depth"], dict(e["divide"]["moves"]), e["divide"]["nodes"])
        for g, e in _entries(games).items()
    }


def load_capture_positions() -> list[tuple[str, str, set[str], dict[str, str]]]:
    """[(game, fen, set of legal moves, {move: FEN after the move})] of the hand-checked list."""
    cases = _document().get("capture", [])
    if not cases:
        raise ReferenceFormatError(f"{REFERENCE_FILE}: no [[capture]] positions")
    return [(c["game"], c["fen"], set(c["after"]), dict(c["after"])) for c in cases]
