"""Standings as rich tables on a terminal or a log: the standings table, the rating list,
the crosstable, the game pairs and the SPRT line of a
:class:`~guti.referee.stats.standings.Standings`.

The statistics keep the numbers; how they look on a console is the command line's, as
fastchess keeps its output apart. Engine names are printed with their control characters
escaped (:func:`~guti.referee.process.text.visible`) and never as rich markup.
"""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table

from guti.referee.process.text import visible
from guti.referee.stats.ratings import RatingError, RatingList
from guti.referee.stats.standings import FAULT_COLUMNS, Standings
from guti.referee.stats.stats import draw_ratio, format_elo, los, pentanomial_elo, score_elo


def standings_table(standings: Standings) -> Table:
    """Per engine: games, points, score, draws, Elo and LOS against the field it met, and
    how its games ended."""
    t = Table(title="Standings", title_justify="left")
    for head in ("#", "engine", "games", "points", "score", "draw", "Elo ± 95%", "LOS"):
        t.add_column(head, justify="left" if head == "engine" else "right")
    for head in ("rules", "adjud", *FAULT_COLUMNS):
        t.add_column(head, justify="right")
    for rank, ln in enumerate(standings.ranking(), 1):
        if ln.games:
            est = score_elo(ln.wins, ln.draws, ln.losses)
            elo = format_elo(est.elo, est.margin)
            score = f"{100 * ln.score:.1f}%"
            draws = f"{100 * draw_ratio(ln.wins, ln.draws, ln.losses):.1f}%"
            los_text = f"{100 * los(ln.wins, ln.draws, ln.losses):.1f}%"
        else:
            elo = score = draws = los_text = "-"
        t.add_row(
            str(rank), visible(ln.name), str(ln.games), f"{ln.points:g}", score, draws, elo,
            los_text, str(ln.rules), str(ln.adjudications),
            *(str(ln.faults[c]) for c in FAULT_COLUMNS),
        )
    t.caption = (
        "Elo and LOS against the field met; rules = games ended by a rule; "
        "adjud = games ended by adjudication; "
        "time/illegal/crash/stall/proto = games this engine lost by that fault"
    )
    t.caption_justify = "left"
    return t


def ratings_table(standings: Standings) -> Table | str | None:
    """The rating list as a table, a one-line reason it cannot be computed, or
    None before two engines have played."""
    try:
        field = standings.ratings()
    except RatingError as exc:
        return f"Ratings not computed: {exc}"
    if not field.ratings:
        return None
    t = Table(title="Ratings (maximum likelihood over all games)", title_justify="left")
    for head in ("#", "engine", "Elo", "± 95%", "games", "points", "score", "opponents"):
        t.add_column(head, justify="left" if head == "engine" else "right")
    for rank, r in enumerate(field.ratings, 1):
        t.add_row(
            str(rank), visible(r.name), f"{round(r.elo, 1) + 0.0:.1f}", f"{r.margin:.1f}", str(r.games),
            f"{r.points:g}", f"{100 * r.points / r.games:.1f}%", f"{round(r.opponents, 1) + 0.0:.1f}",
        )
    t.caption = _ratings_caption(field)
    t.caption_justify = "left"
    return t


def crosstable(standings: Standings) -> Table:
    """Points of each engine against each other one, engines in ranking order."""
    ranked = standings.ranking()
    index = {ln.name: i for i, ln in enumerate(standings.lines)}
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
            w, d, lo = standings.cross.get((min(i, j), max(i, j)), [0, 0, 0])
            if i > j:
                w, lo = lo, w
            games = w + d + lo
            cells.append(f"{w + d / 2:g}/{games}" if games else "")
        t.add_row(f"{n} {visible(row.name)}", *cells)
    return t


def pairs_table(standings: Standings) -> Table | None:
    """Pentanomial counts per encounter (two engines, or a gauntlet's encounters)."""
    s = standings
    if not (len(s.names) == 2 or s.gauntlet):
        return None
    t = Table(title="Game pairs (pentanomial, first engine's view)", title_justify="left")
    for head in ("encounter", "pairs", "LL", "LD", "DD+WL", "WD", "WW", "Elo ± 95% (pairs)"):
        t.add_column(head, justify="left" if head == "encounter" else "right")
    for (i, j), counts in sorted(s.ptnml.items()):
        est = pentanomial_elo(counts)
        t.add_row(
            visible(f"{s.names[i]} vs {s.names[j]}"), str(sum(counts)), *map(str, counts),
            format_elo(est.elo, est.margin),
        )
    return t if s.ptnml else None


def print_standings(standings: Standings, console: Console) -> None:
    """Everything: standings, ratings, crosstable, pairs, SPRT."""
    console.print(standings_table(standings))
    ratings = ratings_table(standings)
    if isinstance(ratings, str):
        console.print(visible(ratings), highlight=False, markup=False)
    elif ratings is not None:
        console.print(ratings)
    if len(standings.names) > 2:
        console.print(crosstable(standings))
    pairs = pairs_table(standings)
    if pairs is not None:
        console.print(pairs)
    line = standings.sprt_line()
    if line is not None:
        console.print(visible(line), highlight=False, markup=False)
    if standings.unfinished:
        console.print(f"{standings.unfinished} unfinished game(s) not counted", highlight=False)


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
        f"per engine over its opponents; ± 95% from the Hessian, relative to {relative}; "
        "opponents = average opponent rating"
    )


class _PipeConsole(Console):
    """A rich console whose closed output is an ordinary :class:`BrokenPipeError`.

    rich's own answer is ``SystemExit(1)``, which asyncio does not treat as an error of the
    task that printed: the run would not abort cleanly. ``guti``'s main turns the error
    into a quiet exit (status 141), after the run has stopped as on a signal."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError("stdout closed by its reader")


def make_console(stream: IO[str] | None = None) -> Console:
    """A console for tables: real width on a terminal, a wide fixed width otherwise
    (so CI logs and tests see whole rows)."""
    probe = _PipeConsole(file=stream, markup=False)  # names such as "[/]" are text, not markup
    if probe.is_terminal:
        return probe
    return _PipeConsole(file=stream, width=160, no_color=True, highlight=False, markup=False)
