"""Which games a tournament consists of, in which order: pure, deterministic, no I/O.

The scheduler turns a format (round-robin or gauntlet), the number of engines,
``rounds`` and ``games`` per encounter (cutechess meaning: each pairing plays
``games`` games in each of ``rounds`` rounds) and a list of openings into a
stream of :class:`ScheduledGame` with stable ids ``0, 1, 2, ...``. It knows
nothing about processes or clocks, so running the games elsewhere (other
machines) is a new executor, not a new scheduler.

Order, chosen so that stopping at any point leaves a balanced result:

- games come in *pairs*: the same opening twice, colours reversed (with an
  odd ``games`` the last pair of an encounter has one game);
- within a round, pairs are interleaved across pairings: pair 1 of every
  pairing, then pair 2 of every pairing, ... so no pairing runs ahead;
- every pairing uses the same opening in the same (round, pair) slot, so all
  engines face the same positions.

Colours and pairings, with fastchess's options: ``noswap`` keeps colours within a
pair (the encounter's first engine is White in every game), ``reverse`` swaps every
game's colours (so a match's second engine is White first); a gauntlet's first
``seeds`` engines each play every engine listed after them (fastchess: the seeds also
meet each other), at most ``engines - 1`` seeds (more is clamped, as fastchess does).

Opening slot ``k`` (``round * pairs_per_encounter + pair``) takes opening
``k % len(openings)``; the caller provides as many openings as it wants
distinct (:func:`opening_slots`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from guti.referee.game.scheduled import ScheduledGame

if TYPE_CHECKING:
    from guti.referee.game.openings import Opening

#: The formats that pair the engines once, before play (a knockout pairs round by round).
PAIRINGS = ("roundrobin", "gauntlet")


class ScheduleError(ValueError):
    """An impossible schedule (too few engines, unknown format); one line."""


def pairings(fmt: str, engines: int, seeds: int = 1) -> list[tuple[int, int]]:
    """The encounters: every pair ``(i, j)``, ``i < j`` (round-robin), or those with
    ``i`` one of the first ``seeds`` engines (gauntlet)."""
    if fmt not in PAIRINGS:
        raise ScheduleError(f"unknown tournament format {fmt!r} (expected roundrobin or gauntlet)")
    if engines < 2:
        raise ScheduleError(f"a tournament needs at least two engines, got {engines}")
    if fmt == "gauntlet":
        return [(i, j) for i in range(min(max(1, seeds), engines - 1))
                for j in range(i + 1, engines)]
    return [(i, j) for i in range(engines) for j in range(i + 1, engines)]


def pairs_per_encounter(games: int) -> int:
    """Game pairs per pairing per round: ``ceil(games / 2)``."""
    return (games + 1) // 2


def opening_slots(rounds: int, games: int) -> int:
    """How many distinct openings a schedule can use (one per (round, pair) slot)."""
    return rounds * pairs_per_encounter(games)


def total_games(fmt: str, engines: int, rounds: int, games: int, seeds: int = 1) -> int:
    """Games a round-robin or gauntlet schedules: each encounter's ``games``, per round."""
    return len(pairings(fmt, engines, seeds)) * rounds * games


def schedule(
    fmt: str,
    engines: int,
    rounds: int,
    games: int,
    openings: Sequence[Opening] | None = None,
    *,
    seeds: int = 1,
    noswap: bool = False,
    reverse: bool = False,
) -> Iterator[ScheduledGame]:
    """Every game of the tournament, in playing order, with stable ids (a generator:
    nothing is held per game, so 10,000 games cost no memory here)."""
    if rounds < 1 or games < 1:
        raise ScheduleError(f"rounds and games must be at least 1, got {rounds} and {games}")
    encounters = pairings(fmt, engines, seeds)
    per = pairs_per_encounter(games)
    game_id = 0
    pair_id = 0
    for rnd in range(rounds):
        for slot in range(per):
            k = rnd * per + slot
            opening = openings[k % len(openings)] if openings else None
            in_pair = 2 if 2 * slot + 1 < games else 1
            for index, (a, b) in enumerate(encounters):
                # Colours alternate game after game within an encounter, across its pairs
                # and rounds (as cutechess-cli reverses them after every game: an odd
                # -games no longer gives one engine White in every round), and start the
                # other way round from one pairing to the next, so that a stop after the
                # first game of a pair does not favour the engines listed first.
                played = rnd * games + 2 * slot  # the encounter's games before this pair
                first, second = (a, b) if noswap or (played + index) % 2 == 0 else (b, a)
                for g in range(in_pair):
                    white, black = (first, second) if g == 0 or noswap else (second, first)
                    if reverse:
                        white, black = black, white
                    yield ScheduledGame(game_id, pair_id, rnd + 1, white, black, opening)
                    game_id += 1
                pair_id += 1
