"""Adjudication: ending a game early on the engines' own scores, as cutechess-cli does.

Why: most of a tester's machine time goes into games whose result is already clear (both
engines see a dead draw, or one sees itself lost). cutechess-cli's ``-draw``, ``-resign``
and ``-maxmoves`` end them; guti keeps their spellings and their meaning
(cutechess's ``GameAdjudicator``), so a tester's command lines carry over:

- ``-draw movenumber=N movecount=C score=S``: after each ply, when at least N full moves
  have been played (plies // 2 >= N) and the last 2*C plies all carried a ``score cp``
  within S of zero (C moves of each engine in a row), the game is a draw. A capture (the
  ply that restarts the rules' fifty-plies count, as a capture or pawn move does in chess)
  restarts the count before the capturing ply's own score is counted.
- ``-resign movecount=C score=S [twosided=true]``: after a ply, when its engine's last C
  scores were all at or below -S, that engine loses; with ``twosided``, only when the
  opponent's last C scores were also all at or above +S (checked, as in cutechess, on the
  move of the engine that would resign).
- ``-maxmoves N``: after a ply, when 2*N plies have been played, the game is a draw.

Plies are counted from the game's start position, opening plies included (cutechess's
``plyCount``). A score is the last ``info ... score`` before ``bestmove``
(:class:`~guti.referee.ugi.search_info.SearchInfo`); ``score win``/``score loss`` are beyond any
threshold (never within S of zero, always at or above / at or below any S). A ply whose
engine reported no score breaks the draw count and that engine's resign counts: an engine
is never adjudicated against on a score it did not give. ``-maxmoves`` needs no scores.
The order of the checks is cutechess's: draw, resign, maxmoves; the rules of the game come
before all of them (the game loop asks only while the rules have not ended the game).

The :class:`Adjudicator` is pure (no I/O, no clock): the game loop feeds it every ply and
ends the game when it returns a :class:`Ruling`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.rules.result import Result, Side

if TYPE_CHECKING:
    from guti.referee.game.settings import Adjudication
    from guti.referee.ugi.search_info import Score, SearchInfo


@dataclass(frozen=True)
class Ruling:
    """An adjudicated end: the result, the rule (``draw``/``resign``/``maxmoves``) and a
    one-line detail naming the rule and the scores that triggered it."""

    result: Result
    rule: str
    detail: str


class _Streak:
    """How many plies in a row passed a test, with the last ``keep`` scores kept (the
    detail shows them; keeping only those bounds the memory of a long game)."""

    def __init__(self, keep: int) -> None:
        self.count = 0
        self.scores: deque[Score] = deque(maxlen=keep)

    def push(self, score: Score | None, passed: bool) -> None:
        if score is not None and passed:
            self.count += 1
            self.scores.append(score)
        else:
            self.reset()

    def reset(self) -> None:
        self.count = 0
        self.scores.clear()

    def shown(self) -> str:
        return " ".join(_score_text(s) for s in self.scores)


def _score_text(score: Score) -> str:
    """``+12``, ``-530`` (centipieces) or ``win 7`` / ``loss 7``."""
    return f"{score.value:+d}" if score.kind == "cp" else f"{score.kind} {score.value}"


class Adjudicator:
    """The running counts of one game; :meth:`after_ply` after every ply an engine played."""

    def __init__(self, rules: Adjudication) -> None:
        self.rules = rules
        draw_keep = 2 * rules.draw.movecount if rules.draw else 0
        resign_keep = rules.resign.movecount if rules.resign else 0
        self.draw = _Streak(draw_keep)
        self.losing = {side: _Streak(resign_keep) for side in Side}
        self.winning = {side: _Streak(resign_keep) for side in Side}

    def after_ply(self, side: Side, search: SearchInfo | None, capture: bool,
                  plies: int) -> Ruling | None:
        """``side`` just played a ply (a capture or not), reporting ``search``; ``plies`` is
        the number of plies played since the start position, this one included. The
        ruling when the game is now adjudicated, else None."""
        score = search.score if search is not None else None
        return (self._draw(score, capture, plies) or self._resign(side, score)
                or self._maxmoves(plies))

    def _draw(self, score: Score | None, capture: bool, plies: int) -> Ruling | None:
        rule = self.rules.draw
        if rule is None:
            return None
        if capture:
            self.draw.reset()
        self.draw.push(score, score is not None and score.within(rule.score))
        if plies // 2 < rule.movenumber or self.draw.count < 2 * max(1, rule.movecount):
            return None
        values = [s.value for s in self.draw.scores]  # all cp: nothing decisive is within
        detail = (f"draw adjudication: scores within {rule.score} cp for {rule.movecount} moves"
                  f" each after move {rule.movenumber} (at ply {plies}, the last {len(values)}"
                  f" scores from {min(values):+d} to {max(values):+d} cp)")
        return Ruling(Result.DRAW, "draw", detail)

    def _resign(self, side: Side, score: Score | None) -> Ruling | None:
        rule = self.rules.resign
        if rule is None:
            return None
        losing, winning = self.losing[side], self.winning[side]
        losing.push(score, score is not None and score.at_most(-rule.score))
        winning.push(score, score is not None and score.at_least(rule.score))
        opponent, need = self.winning[side.other], max(1, rule.movecount)
        if losing.count < need or (rule.twosided and opponent.count < need):
            return None
        detail = (f"resign adjudication: {side.label}'s score at or below {-rule.score} cp for"
                  f" {rule.movecount} moves ({losing.shown()})")
        if rule.twosided:
            detail += (f"; {side.other.label}'s at or above {rule.score:+d} cp for"
                       f" {rule.movecount} moves ({opponent.shown()})")
        return Ruling(Result.loss_for(side), "resign", detail)

    def _maxmoves(self, plies: int) -> Ruling | None:
        limit = self.rules.maxmoves
        if limit <= 0 or plies < 2 * limit:
            return None
        detail = f"maxmoves adjudication: {plies} plies played, the limit is {limit} moves"
        return Ruling(Result.DRAW, "maxmoves", detail)
