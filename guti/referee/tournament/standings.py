"""Standings of a tournament, kept incrementally and printed as rich tables.

:class:`Standings` takes one finished game at a time (:meth:`Standings.add`)
and keeps only counters: per engine W/D/L and how its games ended, a W/D/L
cell per pair of engines (the crosstable), pentanomial counts per encounter,
and the first game of each game pair until its partner arrives. Memory
depends on the number of engines, not of games, so standings of a
10,000-game database are computed by streaming it (see
:meth:`guti.referee.tournament.store.TournamentStore.results`).

What the numbers mean (the formulas are in :mod:`guti.referee.tournament.stats`):

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
  intervals; see :mod:`guti.referee.tournament.ratings`.
- For two engines (and per opponent in a gauntlet): the pentanomial counts
  of completed game pairs ``[LL, LD, DD+WL, WD, WW]``, their Elo with
  fastchess's pair-based interval, and the SPRT log-likelihood ratio (GSPRT,
  the normalized-Elo model of fastchess and fishtest by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from guti.referee.game.reasons import Reason
from guti.referee.process.text import visible
from guti.referee.tournament.ratings import RatingError, RatingList, RatingOptions, rate
from guti.referee.tournament.stats import (
    SprtSpec,
    SprtState,
    draw_ratio,
    format_elo,
    los,
    pentanomial_elo,
    score_elo,
)

#: Ending column -> the reasons it counts (for the engine at fault).
FAULT_COLUMNS: dict[str, tuple[Reason, ...]] = {
    "time": (Reason.TIME_FORFEIT,),
    "illegal": (Reason.ILLEGAL_MOVE,),
    "crash": (Reason.DISCONNECT, Reason.START_FAILURE),
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
        paired: bool = True,
        sprt: SprtSpec | None = None,
        gauntlet: bool = False,
        rating_options: RatingOptions | None = None,
    ) -> None:
        self.names = list(names)
        self.rating_options = rating_options or RatingOptions()
        self.lines = [EngineLine(n) for n in self.names]
        self.paired = paired
        self.sprt = sprt
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
        if result not in ("1-0", "0-1", "1/2-1/2"):
            self.unfinished += 1
            return
        self.games += 1
        w, b = self.lines[white], self.lines[black]
        white_score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
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
        if self.paired and pair_id is not None:
            first = self._open_pairs.pop(pair_id, None)
            if first is None:
                self._open_pairs[pair_id] = (lo, lo_score)
            else:
                total = first[1] + lo_score  # both from engine lo's point of view
                bins = self.ptnml.setdefault((lo, hi), [0, 0, 0, 0, 0])
                bins[int(round(total * 2))] += 1

    # -- queries -------------------------------------------------------------
    def ranking(self) -> list[EngineLine]:
        return sorted(self.lines, key=lambda ln: (-ln.points, ln.losses, ln.name))

    def leader(self) -> EngineLine | None:
        ranked = self.ranking()
        return ranked[0] if ranked and ranked[0].games else None

    def sprt_state(self) -> SprtState | None:
        """The SPRT of engine 0 against engine 1 (two-engine tournaments only)."""
        if self.sprt is None or len(self.names) != 2:
            return None
        s = self.sprt
        if self.paired:
            counts = self.ptnml.get((0, 1), [0, 0, 0, 0, 0])
            return s.evaluate(pentanomial=counts)
        w, d, lo = self.cross.get((0, 1), [0, 0, 0])
        return s.evaluate(wdl=(w, d, lo))

    def ratings(self) -> RatingList:
        """Maximum-likelihood ratings over every game (raises RatingError, e.g. for a
        field in groups that never met)."""
        cells = {pair: tuple(counts) for pair, counts in self.cross.items()}
        return rate(self.names, cells, self.rating_options)

    def summary(self) -> str:
        """Plain one-line state: games and the leader."""
        lead = self.leader()
        if lead is None:
            return f"{self.games} games"
        return f"{self.games} games, leader {lead.name} {lead.points:g}/{lead.games} ({100 * lead.score:.1f}%)"

    # -- tables --------------------------------------------------------------
    def table(self) -> Table:
        t = Table(title="Standings", title_justify="left")
        for head in ("#", "engine", "games", "points", "score", "draw", "Elo ± 95%", "LOS"):
            t.add_column(head, justify="left" if head == "engine" else "right")
        for head in ("rules", "adjud", *FAULT_COLUMNS):
            t.add_column(head, justify="right")
        for rank, ln in enumerate(self.ranking(), 1):
            if ln.games:
                est = score_elo(ln.wins, ln.draws, ln.losses)
                elo = format_elo(est.elo, est.margin)
                score = f"{100 * ln.score:.1f}%"
                draws = f"{100 * draw_ratio(ln.wins, ln.draws, ln.losses):.1f}%"
                los_text = f"{100 * los(ln.wins, ln.draws, ln.losses):.1f}%"
            else:
                elo = score = draws = los_text = "-"
            t.add_row(
                str(rank), visible(ln.name), str(ln.games), f"{ln.points:g}", score, draws, elo, los_text,
                str(ln.rules), str(ln.adjudications), *(str(ln.faults[c]) for c in FAULT_COLUMNS),
            )
        t.caption = (
            "Elo and LOS against the field met; rules = games ended by a rule; "
            "adjud = games ended by adjudication; "
            "time/illegal/crash/stall/proto = games this engine lost by that fault"
        )
        t.caption_justify = "left"
        return t

    def ratings_table(self) -> Table | str | None:
        """The rating list as a table, a one-line reason it cannot be computed, or
        None before two engines have played."""
        try:
            field = self.ratings()
        except RatingError as exc:
            return f"Ratings not computed: {exc}"
        if not field.ratings:
            return None
        t = Table(title="Ratings (maximum likelihood over all games)", title_justify="left")
        for head in ("#", "engine", "Elo", "± 95%", "games", "points", "score", "opponents"):
            t.add_column(head, justify="left" if head == "engine" else "right")
        for rank, r in enumerate(field.ratings, 1):
            t.add_row(
                str(rank), visible(r.name), f"{r.elo:.1f}", f"{r.margin:.1f}", str(r.games),
                f"{r.points:g}", f"{100 * r.points / r.games:.1f}%", f"{r.opponents:.1f}",
            )
        t.caption = _ratings_caption(field)
        t.caption_justify = "left"
        return t

    def crosstable(self) -> Table:
        ranked = self.ranking()
        index = {ln.name: i for i, ln in enumerate(self.lines)}
        t = Table(title="Crosstable", title_justify="left",
                  caption="points of the row engine / games", caption_justify="left")
        t.add_column("engine", justify="left")
        for n, _ in enumerate(ranked, 1):
            t.add_column(str(n), justify="right")
        for n, row in enumerate(ranked, 1):
            cells = []
            i = index[row.name]
            for col in ranked:
                j = index[col.name]
                if i == j:
                    cells.append("·")
                    continue
                w, d, lo = self.cross.get((min(i, j), max(i, j)), [0, 0, 0])
                if i > j:
                    w, lo = lo, w
                games = w + d + lo
                cells.append(f"{w + d / 2:g}/{games}" if games else "")
            t.add_row(f"{n} {visible(row.name)}", *cells)
        return t

    def pairs_table(self) -> Table | None:
        """Pentanomial counts per encounter (two engines, or a gauntlet's encounters)."""
        if not self.paired or not (len(self.names) == 2 or self.gauntlet):
            return None
        t = Table(title="Game pairs (pentanomial, first engine's view)", title_justify="left")
        for head in ("encounter", "pairs", "LL", "LD", "DD+WL", "WD", "WW", "Elo ± 95% (pairs)"):
            t.add_column(head, justify="left" if head == "encounter" else "right")
        for (i, j), counts in sorted(self.ptnml.items()):
            est = pentanomial_elo(counts)
            t.add_row(
                visible(f"{self.names[i]} vs {self.names[j]}"), str(sum(counts)), *map(str, counts),
                format_elo(est.elo, est.margin),
            )
        return t if self.ptnml else None

    def sprt_line(self) -> str | None:
        state = self.sprt_state()
        if state is None or self.sprt is None:
            return None
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "continue"}[state.decision]
        unit = "pairs" if self.paired else "games"
        return visible(
            f"SPRT {self.names[0]} vs {self.names[1]} ({self.sprt.describe()}, {unit}): "
            f"LLR {state.llr:.2f} [{state.lower:.2f}, {state.upper:.2f}] {verdict}"
        )

    def print(self, console: Console) -> None:
        """Everything: standings, crosstable, pairs, SPRT."""
        console.print(self.table())
        ratings = self.ratings_table()
        if isinstance(ratings, str):
            console.print(visible(ratings), highlight=False, markup=False)
        elif ratings is not None:
            console.print(ratings)
        if len(self.names) > 2:
            console.print(self.crosstable())
        pairs = self.pairs_table()
        if pairs is not None:
            console.print(pairs)
        line = self.sprt_line()
        if line is not None:
            console.print(line, highlight=False, markup=False)
        if self.unfinished:
            console.print(f"{self.unfinished} unfinished game(s) not counted", highlight=False)


def _ratings_caption(field: RatingList) -> str:
    """What the rating table's numbers mean: draw model, anchor, prior, interval."""
    opts = field.options
    if field.draw_nu is not None:
        nu = field.draw_nu
        draws = f"Davidson draws (nu {nu:.3f}: {100 * nu / (2 + nu):.1f}% draws between equals)"
    else:
        draws = "a draw is half a win"
    if opts.anchor is not None:
        anchor, relative = f"{opts.anchor[0]} = {opts.anchor[1]:g}", opts.anchor[0]
    else:
        anchor, relative = "average = 0", "the average"
    return (
        f"Bradley-Terry, logistic Elo; {draws}; {anchor}; {opts.prior:g} virtual draws "
        f"per engine; ± 95% from the Hessian, relative to {relative}; opponents = average "
        "opponent rating"
    )


class _PipeConsole(Console):
    """A rich console whose closed output is an ordinary :class:`BrokenPipeError`.

    rich's own answer is ``SystemExit(1)``, which asyncio does not treat as an error of the
    task that printed: the run would not abort cleanly. ``guti``'s main turns the error
    into a quiet exit (status 141), after the run has stopped as on a signal."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError("stdout closed by its reader")


def make_console(stream=None) -> Console:
    """A console for tables: real width on a terminal, a wide fixed width otherwise
    (so CI logs and tests see whole rows)."""
    probe = _PipeConsole(file=stream, markup=False)  # names such as "[/]" are text, not markup
    if probe.is_terminal:
        return probe
    return _PipeConsole(file=stream, width=160, no_color=True, highlight=False, markup=False)
