"""What the report shows, as JSON-able data read from a tournament database.

The numbers come from the tournament's own code, never recomputed here differently:
:class:`~guti.referee.stats.standings.Standings` (W/D/L, crosstable, pairs, SPRT),
:mod:`guti.referee.stats.stats` (Elo ± 95 %, LOS, draw ratio) and
:mod:`guti.referee.stats.ratings` (the maximum-likelihood rating list). :class:`Tally` is
fed one finished game at a time, by the report writer streaming the database and by the
live server after each game, so both pages show the same figures.

Games are kept compact (see :func:`compact_game`): moves as one string, clocks and times
as whole milliseconds; the page's JavaScript replays positions from the moves with the
board's jump table, so no per-ply FEN is stored.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from guti.referee.game.defaults import DEFAULT_GAME
from guti.referee.stats.ratings import RatingError
from guti.referee.stats.resources import ResourceTable
from guti.referee.stats.sprt import DECISION_KEY, SprtSpec, kept_decision
from guti.referee.stats.standings import FAULT_COLUMNS, Standings
from guti.referee.stats.stats import draw_ratio, format_elo, los, pentanomial_elo, score_elo
from guti.referee.storage.integrity import settings_damaged
from guti.referee.tournament.tuning.history import tuning_history
from guti.referee.web.geometry import board_geometry

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord, Score
    from guti.referee.storage.store import TournamentStore

#: At most this many points on the SPRT chart (a 10,000-game run is sampled).
SPRT_POINTS = 400


def _number(x: float, digits: int = 1) -> float | str | None:
    """A float for JSON: rounded; infinities as "inf"/"-inf"; NaN as None."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return round(x, digits)


class Tally:
    """Standings, endings per engine and the SPRT's path, one finished game at a time."""

    def __init__(self, names: Sequence[str], fmt: str, sprt: SprtSpec | None,
                 sample_every: int = 1) -> None:
        self.names = list(names)
        self.standings = Standings(self.names, sprt=sprt, gauntlet=fmt == "gauntlet")
        # endings[engine][reason] = [wins, draws, losses]
        self.endings: list[dict[str, list[int]]] = [{} for _ in self.names]
        self.sprt_path: list[list[float]] = []
        self.sample_every = max(1, sample_every)

    def add(self, white: int, black: int, result: str, reason: str | None, fault: str | None,
            pair_id: int | None) -> None:
        self.standings.add(white, black, result, reason, fault, pair_id)
        why = reason or "unfinished"
        white_slot = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}.get(result)
        if white_slot is not None:
            for engine, slot in ((white, white_slot), (black, 2 - white_slot)):
                self.endings[engine].setdefault(why, [0, 0, 0])[slot] += 1
        if self.standings.sprt is not None and self.standings.games % self.sample_every == 0:
            self._sample_sprt()

    def _sample_sprt(self) -> None:
        """The SPRT's state now, as a point of its path; past :data:`SPRT_POINTS` points,
        every other one is let go (the last kept) and games are sampled half as often, so
        that a long run's path (sent with every game to a live page) stays as short."""
        state = self.standings.current_sprt_state()  # the path: every pair as it came
        if state is not None and (not self.sprt_path
                                  or self.sprt_path[-1][0] != self.standings.games):
            self.sprt_path.append([self.standings.games, round(state.llr, 4)])
            if len(self.sprt_path) > SPRT_POINTS:
                self.sprt_path = [*self.sprt_path[:-1:2], self.sprt_path[-1]]
                self.sample_every *= 2

    def snapshot(self) -> dict[str, Any]:
        """Standings, ratings, crosstable, endings and SPRT as data for the page."""
        if self.standings.sprt is not None:
            self._sample_sprt()
        return {
            "rows": self._rows(),
            "ratings": self._ratings(),
            "crosstable": self._crosstable(),
            "endings": [{"name": n, "endings": e} for n, e in zip(self.names, self.endings,
                                                                   strict=True)],
            "sprt": self._sprt(),
            "pairs": self._pairs(),
            "games": self.standings.games,
            "unfinished": self.standings.unfinished,
        }

    def _rows(self) -> list[dict[str, Any]]:
        rows = []
        for ln in self.standings.ranking():
            row: dict[str, Any] = {"name": ln.name, "games": ln.games, "wins": ln.wins,
                                   "draws": ln.draws, "losses": ln.losses, "points": ln.points,
                                   "rules": ln.rules, "adjudications": ln.adjudications,
                                   "faults": dict(ln.faults)}
            if ln.games:
                est = score_elo(ln.wins, ln.draws, ln.losses)
                row |= {"score": _number(100 * ln.score),
                        "draw_ratio": _number(100 * draw_ratio(ln.wins, ln.draws, ln.losses)),
                        "elo": _number(est.elo), "margin": _number(est.margin),
                        "elo_text": format_elo(est.elo, est.margin),
                        "los": _number(100 * los(ln.wins, ln.draws, ln.losses))}
            rows.append(row)
        return rows

    def _pairs(self) -> list[dict[str, Any]]:
        """Pentanomial counts of completed game pairs per encounter, from the first
        engine's view ``[LL, LD, DD+WL, WD, WW]``, as ``guti standings`` prints them (two
        engines, or a gauntlet's encounters)."""
        s = self.standings
        if not (len(s.names) == 2 or s.gauntlet):
            return []
        out = []
        for (i, j), counts in sorted(s.ptnml.items()):
            est = pentanomial_elo(counts)
            out.append({"encounter": f"{s.names[i]} vs {s.names[j]}", "counts": list(counts),
                        "elo_text": format_elo(est.elo, est.margin)})
        return out

    def _ratings(self) -> dict[str, Any]:
        try:
            field = self.standings.ratings()
        except RatingError as exc:
            return {"error": str(exc), "list": []}
        return {"error": None, "list": [
            {"name": r.name, "elo": _number(r.elo), "margin": _number(r.margin), "games": r.games,
             "points": r.points} for r in field.ratings]}

    def _crosstable(self) -> dict[str, Any]:
        ranked = [ln.name for ln in self.standings.ranking()]
        index = {n: i for i, n in enumerate(self.names)}
        cells = []
        for row in ranked:
            line: list[list[int] | None] = []
            for col in ranked:
                i, j = index[row], index[col]
                if i == j:
                    line.append(None)
                    continue
                w, d, lo = self.standings.cross.get((min(i, j), max(i, j)), [0, 0, 0])
                if i > j:
                    w, lo = lo, w
                line.append([w, d, lo])
            cells.append(line)
        return {"order": ranked, "cells": cells}

    def _sprt(self) -> dict[str, Any] | None:
        state = self.standings.sprt_state()
        spec = self.standings.sprt
        if state is None or spec is None:
            return None
        return {"describe": spec.describe(), "llr": round(state.llr, 4),
                "lower": round(state.lower, 4), "upper": round(state.upper, 4),
                "decision": state.decision, "path": self.sprt_path,
                "unit": "pairs"}


def _ms(values: list[float | None]) -> list[int | None]:
    return [None if v is None else int(round(v)) for v in values]


#: The evaluation graph's bound in centipieces: a forced win/loss is drawn at it, and
#: larger scores are cut to it, so one mate score does not flatten the rest of the graph.
EVAL_BOUND = 1000


def white_evals(record: GameRecord) -> list[int | None]:
    """Each ply's reported score in centipieces from White's point of view (the engine
    reports it from the mover's), within :data:`EVAL_BOUND`; None where none was
    reported; ``[]`` when the game has no score at all (older games, silent engines), so
    such games cost the page nothing."""
    white_moves_first = record.first_side == "w"
    evals: list[int | None] = []
    for ply, info in enumerate(record.search):
        score = info.score if info is not None else None
        if score is None:
            evals.append(None)
            continue
        evals.append(white_score(score, (ply % 2 == 0) == white_moves_first))
    return evals if any(v is not None for v in evals) else []


def white_score(score: Score, white_moved: bool) -> int:
    """An engine's score (from the mover's view) in centipieces from White's, within
    :data:`EVAL_BOUND`: a forced win or loss at the bound, so a chart stays readable."""
    value = score.value if score.kind == "cp" else EVAL_BOUND
    value = -value if score.kind == "loss" else value
    value = max(-EVAL_BOUND, min(EVAL_BOUND, value))
    return value if white_moved else -value


def compact_game(number: int, round_: int, white: int, black: int,
                 record: GameRecord) -> list[Any]:
    """One game as a short list (the page's ``G`` fields, in this order): number (1-based),
    round, white and black engine indices, result, reason, detail, start FEN ("" for the
    standard start), moves (one string), book plies, clock left after each ply (ms or
    None), time used per ply (ms or None), final FEN, date and time, scores from White's
    view per ply (:func:`white_evals`)."""
    return [number, round_, white, black, str(record.result),
            str(record.reason) if record.reason is not None else "", record.detail,
            record.start_fen or "", " ".join(record.moves), record.opening_plies,
            _ms(record.clock_ms), _ms(record.elapsed_ms), record.final_fen,
            f"{record.date} {record.start_time}".strip(), white_evals(record)]


def _engine_info(store: TournamentStore) -> list[dict[str, Any]]:
    return [{"name": e.name, "command": " ".join(e.argv),
             "options": {str(k): str(v) for k, v in e.options.items()},
             "limits": e.limits.describe() if e.limits is not None else ""}
            for e in store.engines()]


def report_data(store: TournamentStore, sprt: SprtSpec | None = None) -> dict[str, Any]:
    """Everything the report shows, read from ``store`` in one streaming pass."""
    settings = store.settings()
    names = store.engine_names()
    index = {n: i for i, n in enumerate(names)}
    try:
        sprt = sprt or SprtSpec.of_settings(settings)
    except ValueError as exc:
        raise settings_damaged(store.path, str(exc)) from None
    finished = store.count_finished()
    tally = Tally(names, settings.get("format", "roundrobin"), sprt,
                  sample_every=max(1, finished // SPRT_POINTS))
    tally.standings.sprt_decided = kept_decision(store.meta(DECISION_KEY))
    games = []
    used = ResourceTable(names)
    seq = 0
    for info, record in store.records():
        seq = info["seq"]
        white, black = index.get(record.white, -1), index.get(record.black, -1)
        tally.add(white, black, str(record.result),
                  str(record.reason) if record.reason is not None else None,
                  str(record.fault) if record.fault is not None else None, info["pair_id"])
        games.append(compact_game(info["game_id"] + 1, info["round"], white, black, record))
        used.add(record.white, record.black, record.resources)
    return {
        "title": str(settings.get("event") or "guti tournament"),
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "settings": {str(k): _setting_text(v) for k, v in sorted(settings.items())
                     if k != "engines"},
        "engines": _engine_info(store),
        "scheduled": store.count_scheduled(),
        "finished": finished,
        "seq": seq,  # the last stored game read: a live page asks for the games after it
        "geometry": board_geometry(settings.get("game", DEFAULT_GAME)),
        "tally": tally.snapshot(),
        "games": games,
        "fault_columns": list(FAULT_COLUMNS),
        "tuning": tuning_history(store),
        "resources": resource_rows(used),
    }


def resource_rows(used: ResourceTable) -> list[list[str]]:
    """Per engine that has a measurement, its line as ``-show-resources`` prints it."""
    return [line.cells() for line in used.lines if line.games]


def _setting_text(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if isinstance(value, list):  # pdnfields: the -pdnout switches
        return " ".join(str(v) for v in value) or "-"
    if value is None:
        return "-"
    return str(value)
