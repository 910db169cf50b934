"""A knockout (single-elimination) bracket: pure, deterministic, no I/O.

Why a module of its own: a round-robin's games are all known when it starts, a
knockout's are not (who plays round 2 depends on round 1), so its schedule is
*recomputed* from the games scheduled and stored so far. The same inputs always give
the same bracket, which is what lets ``-resume`` continue it after any kill: nothing
about the bracket is stored but the games themselves.

The rules (README, "Knockout"):

- seeds are the engines in the order given (index 0 is seed 1). The bracket has the
  next power of two of places; the missing places are *byes*, and standard seeding
  (1 vs 8, 4 vs 5, 2 vs 7, 3 vs 6 in a bracket of 8; seeds 1 and 2 can meet only in
  the final) pairs each bye with one of the top seeds, who advance without playing;
- an encounter is ``games`` games (even), in pairs: the same opening twice, colours
  reversed; every game is played (no early end once an encounter is clinched);
- a tie on points is followed by one more pair at a time, up to ``tiebreak`` pairs;
  still tied after those, the higher seed (the engine given first) advances;
- an encounter of round r+1 starts as soon as both encounters feeding it are decided.

An encounter is found among the scheduled games by (round, its two engines): an engine
plays at most one encounter per round, so the pair of engines names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from guti.referee.game.scheduled import ScheduledGame
from guti.referee.tournament.feed import FormatError
from guti.rules.result import white_points

if TYPE_CHECKING:
    from guti.referee.game.openings import Opening

KNOCKOUT = "knockout"



class BracketError(FormatError):
    """Stored games that do not fit the bracket (a damaged database); one line."""


def bracket_size(engines: int) -> int:
    """Places in the first round: the smallest power of two >= ``engines``."""
    size = 1
    while size < engines:
        size *= 2
    return size


def seed_order(size: int) -> list[int]:
    """Seeds (0-based) in bracket-place order for a bracket of ``size`` (a power of two):
    places 2k and 2k+1 meet in round 1, and seed s meets seed size-1-s there."""
    order = [0]
    while len(order) < size:
        total = 2 * len(order) - 1
        order = [s for seed in order for s in (seed, total - seed)]
    return order


def rounds_needed(engines: int) -> int:
    """Rounds of the bracket (the final is the last)."""
    return max(1, bracket_size(engines).bit_length() - 1)


def minimum_games(engines: int, games: int) -> int:
    """Games of a knockout without tie-breaks: every encounter but the byes plays ``games``."""
    return (engines - 1) * games


@dataclass
class Encounter:
    """One place of the bracket: its two engines once known (``low`` None for a bye),
    the ids of its scheduled games and its score; ``winner`` once decided."""

    round: int
    slot: int
    high: int | None = None  # the higher seed (smaller index)
    low: int | None = None
    bye: bool = False
    game_ids: list[int] = field(default_factory=list)
    finished: int = 0
    points: tuple[float, float] = (0.0, 0.0)  # (high, low)
    winner: int | None = None
    by_seed: bool = False  # still tied after every tie-break pair

    @property
    def ready(self) -> bool:
        return self.high is not None and self.low is not None


@dataclass
class Bracket:
    """Every round's encounters, as far as the results decide them."""

    engines: int
    games: int
    tiebreak: int
    rounds: list[list[Encounter]]

    @property
    def champion(self) -> int | None:
        return self.rounds[-1][0].winner

    def decided(self) -> list[Encounter]:
        """Encounters with a winner, round by round (byes included)."""
        return [e for rnd in self.rounds for e in rnd if e.winner is not None]

    def wanted(self) -> list[tuple[Encounter, int]]:
        """(encounter, games to add) for every encounter that needs games scheduled now:
        its regular ``games`` when it has none, one more pair when it is tied."""
        out: list[tuple[Encounter, int]] = []
        for rnd in self.rounds:
            for enc in rnd:
                if not enc.ready or enc.winner is not None:
                    continue
                if not enc.game_ids:
                    out.append((enc, self.games))
                elif enc.finished == len(enc.game_ids) and enc.points[0] == enc.points[1]:
                    out.append((enc, 2))
        return out


def build(
    engines: int,
    games: int,
    tiebreak: int,
    scheduled: Iterable[tuple[int, int, int, int]],
    results: Mapping[int, str],
) -> Bracket:
    """The bracket from the scheduled games ``(game_id, round, white, black)`` and the
    stored results ``{game_id: result}``. Raises BracketError for a scheduled game that
    belongs to no encounter of the bracket."""
    if engines < 2 or games < 2 or games % 2 or tiebreak < 0:
        raise ValueError(f"no knockout of {engines} engines, {games} games, {tiebreak} pairs")
    size = bracket_size(engines)
    by_key: dict[tuple[int, frozenset[int]], list[tuple[int, int]]] = {}
    for game_id, number, white, black in scheduled:
        by_key.setdefault((number, frozenset((white, black))), []).append((game_id, white))
    order = seed_order(size)
    first = [Encounter(1, k, order[2 * k], order[2 * k + 1]) for k in range(size // 2)]
    rounds = [first]
    while len(rounds[-1]) > 1:
        prev = rounds[-1]
        rounds.append([Encounter(len(rounds) + 1, k) for k in range(len(prev) // 2)])
    for r, encounters in enumerate(rounds):
        for enc in encounters:
            if r > 0:
                a, b = rounds[r - 1][2 * enc.slot].winner, rounds[r - 1][2 * enc.slot + 1].winner
                if a is not None and b is not None:
                    enc.high, enc.low = min(a, b), max(a, b)
            elif enc.low is not None and enc.low >= engines:
                enc.low, enc.bye, enc.winner = None, True, enc.high
            if enc.high is not None and enc.low is not None:
                _score(enc, by_key.pop((enc.round, frozenset((enc.high, enc.low))), []),
                       results, games, tiebreak)
    if by_key:
        (number, pair), rows = min(by_key.items(), key=lambda item: item[1][0][0])
        raise BracketError(f"game {rows[0][0] + 1} (round {number}, engines {sorted(pair)}) "
                           "belongs to no encounter of the knockout bracket")
    return Bracket(engines, games, tiebreak, rounds)


def _score(enc: Encounter, rows: list[tuple[int, int]], results: Mapping[int, str],
           games: int, tiebreak: int) -> None:
    """Fill in the encounter's games, points and (when decided) winner."""
    high = low = 0.0
    for game_id, white in sorted(rows):
        enc.game_ids.append(game_id)
        result = results.get(game_id)
        if result is None:
            continue
        enc.finished += 1
        points = white_points(result)  # "*" (unfinished) scores nothing
        w, b = (0.0, 0.0) if points is None else (points, 1.0 - points)
        high, low = (high + w, low + b) if white == enc.high else (high + b, low + w)
    enc.points = (high, low)
    if len(rows) < games or enc.finished < len(rows):
        return
    if high != low:
        enc.winner = enc.high if high > low else enc.low
    elif len(rows) >= games + 2 * tiebreak:
        enc.winner, enc.by_seed = enc.high, True


def new_jobs(
    bracket: Bracket,
    next_game_id: int,
    next_pair_id: int,
    openings: Sequence[Opening] | None,
) -> list[ScheduledGame]:
    """The games the bracket needs scheduled now (:meth:`Bracket.wanted`), with ids from
    ``next_game_id``/``next_pair_id`` on. Pair k of an encounter plays opening slot
    ``(round - 1) * (games / 2 + tiebreak) + k``, so all encounters of a round face the
    same positions; the pair's first game gives White to the higher seed when ``k +
    slot`` is even, the second game reverses the colours."""
    jobs: list[ScheduledGame] = []
    game_id, pair_id = next_game_id, next_pair_id
    per_round = bracket.games // 2 + bracket.tiebreak
    for enc, count in bracket.wanted():
        assert enc.high is not None and enc.low is not None
        done_pairs = len(enc.game_ids) // 2
        for k in range(done_pairs, done_pairs + count // 2):
            slot = (enc.round - 1) * per_round + k
            opening = openings[slot % len(openings)] if openings else None
            first, second = (enc.high, enc.low) if (k + enc.slot) % 2 == 0 else (enc.low, enc.high)
            for white, black in ((first, second), (second, first)):
                jobs.append(ScheduledGame(game_id, pair_id, enc.round, white, black, opening))
                game_id += 1
            pair_id += 1
    return jobs


def opening_slots(engines: int, games: int, tiebreak: int) -> int:
    """How many distinct openings a knockout can use (one per round and pair slot)."""
    return rounds_needed(engines) * (games // 2 + tiebreak)


def round_title(enc: Encounter, final: bool) -> str:
    """``final`` for the bracket's last encounter, else ``round N``."""
    return "final" if final else f"round {enc.round}"


def describe(enc: Encounter, names: Sequence[str], final: bool = False) -> str:
    """One line for a decided encounter (what is printed as the bracket advances);
    ``final``: the bracket's last, whose winner wins the knockout."""
    return f"{round_title(enc, final)}: {_outcome(enc, names, final)}"


def _outcome(enc: Encounter, names: Sequence[str], final: bool = False) -> str:
    assert enc.high is not None and enc.winner is not None
    if enc.bye or enc.low is None:
        return f"{names[enc.high]} has a bye and advances"
    high, low = enc.points
    line = (f"{names[enc.high]} {high:g} - {low:g} {names[enc.low]} ({enc.finished} games): "
            f"{names[enc.winner]} {'wins' if final else 'advances'}")
    return line + (" as the higher seed (still tied after them)"
                   if enc.by_seed else "")


def lines(bracket: Bracket, names: Sequence[str]) -> list[str]:
    """The whole bracket, round by round (encounters not decided yet say so)."""
    out = ["Knockout bracket"]
    for rnd in bracket.rounds:
        title = round_title(rnd[0], len(rnd) == 1)
        out.append(f"  {title}:")
        for enc in rnd:
            if enc.winner is not None:
                out.append("    " + _outcome(enc, names, final=len(rnd) == 1))
            elif enc.ready:
                assert enc.high is not None and enc.low is not None
                out.append(f"    {names[enc.high]} {enc.points[0]:g} - {enc.points[1]:g} "
                           f"{names[enc.low]} ({enc.finished}/{len(enc.game_ids)} games played)")
            else:
                out.append("    (waiting for the earlier rounds)")
    champion = bracket.champion
    if champion is not None:
        out.append(f"  winner: {names[champion]}")
    return out
