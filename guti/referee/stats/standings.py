"""Standings of a tournament, kept incrementally (:mod:`guti.referee.cli.standings_view`
prints them as tables).

:class:`Standings` takes one finished game at a time (:meth:`Standings.add`)
and keeps only counters: per engine W/D/L and how its games ended, a W/D/L
cell per pair of engines (the crosstable), pentanomial counts per encounter,
and the first game of each game pair until its partner arrives. Memory
depends on the number of engines, not of games, so standings of a
10,000-game database are computed by streaming it (see
:meth:`guti.referee.storage.store.TournamentStore.results`).

What the numbers mean (the formulas are in :mod:`guti.referee.stats.stats` and
:mod:`guti.referee.stats.sprt`):

- *Elo* per engine is its performance against the field it met, from its
  W/D/L over all its games (cutechess-cli's tournament table does the same),
  with the 95 % interval of cutechess-cli; *LOS* is the likelihood that it
  is stronger than that field (cutechess-cli's formula).
- Ending columns: *rules* counts this engine's games decided by a rule of
  the game (no legal move, three or fewer, fifty plies, repetition);
  *adjud* counts its games ended by adjudication (``-draw``, ``-resign``,
  ``-maxmoves``: won, drawn or lost, none of them a rule ending); the
  fault columns count the games *this engine lost* by that fault: ``time``
  (time forfeit), ``illegal`` (illegal move), ``crash`` (disconnect or start
  failure), ``stall`` (no reply long after its time) and ``proto``
  (protocol error).
- *Ratings* of the whole field: one maximum-likelihood rating per engine
  fitted to every game (Bradley-Terry, as Ordo and BayesElo), with 95 %
  intervals; see :mod:`guti.referee.stats.ratings`.
- For two engines (and per opponent in a gauntlet): the pentanomial counts
  of completed game pairs ``[LL, LD, DD+WL, WD, WW]``, their Elo with
  fastchess's pair-based interval, and the SPRT log-likelihood ratio (GSPRT,
  the normalized-Elo model of fastchess and fishtest by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from guti.referee.game.reasons import Reason
from guti.referee.stats.ratings import RatingList, RatingOptions, rate
from guti.referee.stats.stats import pair_bin
from guti.rules.result import white_points

if TYPE_CHECKING:
    from guti.referee.stats.sprt import SprtSpec, SprtState

#: Ending column -> the reasons it counts (for the engine at fault).
FAULT_COLUMNS: dict[str, tuple[Reason, ...]] = {
    "time": (Reason.TIME_FORFEIT,),
    "illegal": (Reason.ILLEGAL_MOVE,),
    "crash": (Reason.DISCONNECT, Reason.START_FAILURE, Reason.RESOURCE_LIMIT),
    "stall": (Reason.STALLED,),
    "proto": (Reason.PROTOCOL_ERROR,),
}
_COLUMN_OF = {r: col for col, reasons in FAULT_COLUMNS.items() for r in reasons}


@dataclass
class EngineLine:
    """Counters of one engine."""

    name: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    rules: int = 0
    adjudications: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_COLUMNS, 0))

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else math.nan


class Standings:
    """Incremental standings; ``add`` every finished game (in any order)."""

    def __init__(
        self,
        names: Sequence[str],
        sprt: SprtSpec | None = None,
        gauntlet: bool = False,
        rating_options: RatingOptions | None = None,
    ) -> None:
        self.names = list(names)
        self.rating_options = rating_options or RatingOptions()
        self.lines = [EngineLine(n) for n in self.names]
        self.sprt = sprt
        #: The SPRT's decision as the run took it, when it has (see :meth:`sprt_state`).
        self.sprt_decided: SprtState | None = None
        self.gauntlet = gauntlet
        self.games = 0
        self.unfinished = 0
        # cross[(i, j)] with i < j: [wins of i, draws, losses of i]
        self.cross: dict[tuple[int, int], list[int]] = {}
        # ptnml[(i, j)] with i < j: pair-score counts of i, [LL, LD, DD+WL, WD, WW]
        self.ptnml: dict[tuple[int, int], list[int]] = {}
        self._open_pairs: dict[int, tuple[int, float]] = {}  # pair id -> (engine, its score)

    # -- input ---------------------------------------------------------------
    def add(
        self,
        white: int,
        black: int,
        result: str,
        reason: str | None,
        fault: str | None,
        pair_id: int | None = None,
    ) -> None:
        """One finished game: engine indices, result (``1-0``/``0-1``/``1/2-1/2``;
        ``*`` is counted as unfinished and scores nothing), reason and fault side."""
        white_score = white_points(result)
        if white_score is None:
            self.unfinished += 1
            return
        self.games += 1
        w, b = self.lines[white], self.lines[black]
        for line, score in ((w, white_score), (b, 1.0 - white_score)):
            if score == 1.0:
                line.wins += 1
            elif score == 0.0:
                line.losses += 1
            else:
                line.draws += 1
        why = Reason.parse(reason) if reason else None
        if why is not None and why.is_rule:
            w.rules += 1
            b.rules += 1
        elif why is Reason.ADJUDICATION:
            w.adjudications += 1
            b.adjudications += 1
        elif why is not None and fault in ("w", "b"):
            loser = w if fault == "w" else b
            loser.faults[_COLUMN_OF[why]] += 1
        lo, hi = min(white, black), max(white, black)
        lo_score = white_score if lo == white else 1.0 - white_score
        cell = self.cross.setdefault((lo, hi), [0, 0, 0])
        cell[0 if lo_score == 1.0 else 2 if lo_score == 0.0 else 1] += 1
        if pair_id is not None:  # the SPRT counts game pairs (pentanomial)
            first = self._open_pairs.pop(pair_id, None)
            if first is None:
                self._open_pairs[pair_id] = (lo, lo_score)
            else:
                total = first[1] + lo_score  # both from engine lo's point of view
                self.ptnml.setdefault((lo, hi), [0, 0, 0, 0, 0])[pair_bin(total)] += 1

    # -- queries -------------------------------------------------------------
    def ranking(self) -> list[EngineLine]:
        """By points, then fewer losses, then name; an engine without a game after every
        engine that has played (0 points from 2 games is a result, none is not)."""
        return sorted(self.lines, key=lambda ln: (not ln.games, -ln.points, ln.losses, ln.name))

    def leader(self) -> EngineLine | None:
        ranked = self.ranking()
        return ranked[0] if ranked and ranked[0].games else None

    def sprt_state(self) -> SprtState | None:
        """The SPRT of engine 0 against engine 1 (two-engine tournaments only). Once the
        run has decided it (:attr:`sprt_decided`), the decision stands as it was taken:
        the games that were running then are counted in the table, and may move the LLR
        back inside its bounds, but the test ended, as fishtest's do."""
        if self.sprt is None or len(self.names) != 2:
            return None
        if self.sprt_decided is not None and self.sprt_decided.of(self.sprt):
            return self.sprt_decided
        return self.current_sprt_state()

    def current_sprt_state(self) -> SprtState | None:
        """Where the SPRT stands on every pair counted, decided or not."""
        if self.sprt is None or len(self.names) != 2:
            return None
        return self.sprt.evaluate(pentanomial=self.ptnml.get((0, 1), [0, 0, 0, 0, 0]))

    def ratings(self) -> RatingList:
        """Maximum-likelihood ratings over every game (raises RatingError, e.g. for a
        field in groups that never met)."""
        cells = {pair: tuple(counts) for pair, counts in self.cross.items()}
        return rate(self.names, cells, self.rating_options)

    def sprt_line(self) -> str | None:
        """The SPRT's state in one plain line (engine names as given: a console escapes
        them), None without an SPRT."""
        state = self.sprt_state()
        if state is None or self.sprt is None:
            return None
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "continue"}[state.decision]
        now = self.current_sprt_state()
        later = (f" (LLR {now.llr:.2f} with the pairs finished after the decision)"
                 if now is not None and f"{now.llr:.2f}" != f"{state.llr:.2f}" else "")
        return (
            f"SPRT {self.names[0]} vs {self.names[1]} ({self.sprt.describe()}, pairs): "
            f"LLR {state.llr:.2f} [{state.lower:.2f}, {state.upper:.2f}] {verdict}{later}"
        )
