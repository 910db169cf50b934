"""The positions the conformance check sends, per game, each checked by guti's rules.

Expected answers are never written here: the check computes them with the
rules core when it runs. What is written here is only *which* situations to
try (an end rule, a position command form, a bad input); each case states
the end rule it is meant to exercise and :func:`cases_for` verifies with the
rules core that it really does, so a typo in this table is caught at once
(tests call it) instead of silently testing nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.rules import Board, RulesError
from referee.ugi.client import Position


@dataclass(frozen=True)
class PositionCase:
    """A position to send (start FEN and moves) and a label for reports."""

    label: str
    fen: str | None  # None: startpos
    moves: tuple[str, ...] = ()
    reason: str | None = None  # the end rule that must decide it (None: game goes on)

    def position(self) -> Position:
        """What the check sends for this case: its FEN as written (None: startpos), so
        the engine's reading of short FENs is tested too, and its moves."""
        return Position(self.fen, self.moves)

    def board(self, game: str) -> Board:
        b = Board(game) if self.fen is None else Board.from_fen(game, self.fen)
        for m in self.moves:
            b.push_str(m)
        return b


@dataclass(frozen=True)
class BadInputCase:
    """A position to keep, and the bad lines sent after it."""

    keep: PositionCase
    illegal_move: str  # appended to keep.moves: legal syntax, illegal there
    malformed_move: str
    bad_fen: str


@dataclass(frozen=True)
class GameCases:
    game: str
    other_side_fen: str  # a FEN of this game with Black to move (tells the games apart)
    startpos_moves: PositionCase
    fen_moves: PositionCase
    fen_short: PositionCase
    black_to_move: PositionCase
    finished: PositionCase
    queries: tuple[PositionCase, ...]
    perft: tuple[tuple[PositionCase, int], ...]  # (position, depth)
    bad: BadInputCase


def playout(game: str, plies: int, seed: int, fen: str | None = None) -> tuple[str, ...]:
    """A reproducible sequence of legal moves (captures taken when they exist, as the rules force)."""
    rng = random.Random(seed)
    b = Board(game) if fen is None else Board.from_fen(game, fen)
    moves: list[str] = []
    for _ in range(plies):
        legal = b.legal_moves
        if not legal:
            break
        m = rng.choice(legal)
        b.push(m)
        moves.append(str(m))
    return tuple(moves)


def _egara() -> GameCases:
    g = "egara-guti"
    mid = Board(g)
    for m in ("13-12", "11x13", "16x12"):
        mid.push_str(m)
    shuffle = ("19-20", "5-4", "20-19", "4-5") * 2
    return GameCases(
        game=g,
        other_side_fen="bbbbb/bbb/bb1/w/1ww/1ww/wwwww b 0 2",
        startpos_moves=PositionCase("startpos with moves", None, playout(g, 10, 7)),
        fen_moves=PositionCase("fen with moves", mid.fen(), ("10-11", "19-16")),
        fen_short=PositionCase("fen without clock and move number", "4b/3/3/1/3/3/ww3 w"),
        black_to_move=PositionCase("Black to move", None, ("13-12", "11x13", "16x12")),
        finished=PositionCase(
            "blocked side to move", "1b1b1/b1b/bbb/b/www/www/wwwww w 0 1", (), "no legal move"
        ),
        queries=(
            PositionCase("game on", None, ("14-12",)),
            PositionCase("no legal move (blocked)", "1b1b1/b1b/bbb/b/www/www/wwwww w 0 1", (),
                         "no legal move"),
            PositionCase("no legal move (no pieces)", "5/3/3/1/3/3/w4 b", (), "no legal move"),
            PositionCase("blocked before fifty plies", "1b1b1/b1b/bbb/b/www/www/wwwww w 50 1", (),
                         "no legal move"),
            PositionCase("fifty plies (by a move)", "4b/3/3/1/3/3/ww3 w 49 30", ("19-16",),
                         "fifty plies"),
            PositionCase("fifty plies (clock in the FEN)", "bbbbb/bbb/bbb/1/www/www/wwwww w 50 1",
                         (), "fifty plies"),
            PositionCase("second occurrence", "4b/3/3/1/3/3/w4 w 0 1", shuffle[:7]),
            PositionCase("repetition", "4b/3/3/1/3/3/w4 w 0 1", shuffle, "repetition"),
        ),
        perft=(
            (PositionCase("start", None), 7),
            (PositionCase("multi-jump captures", "5/3/1b1/w/b1b/1b1/5 w 0 1"), 3),
            (PositionCase("mid-game", None, playout(g, 12, 3)), 4),
            (PositionCase("repetition in the tree", "4b/3/3/1/3/3/w4 w 0 1", shuffle[:4]), 5),
            (PositionCase("finished", "1b1b1/b1b/bbb/b/www/www/wwwww w 0 1", (),
                          "no legal move"), 2),
        ),
        bad=BadInputCase(
            keep=PositionCase("kept position", None, ("13-12", "11x13")),
            illegal_move="16-12",
            malformed_move="011x13",
            bad_fen="bbbbb/bbb/bbb/1/www/www/wwww w",
        ),
    )


def _pretwa() -> GameCases:
    g = "pretwa"
    shuffle = ("14-8", "17-11", "8-14", "11-17") * 2
    return GameCases(
        game=g,
        other_side_fen="w/1bw1wb/bbw1wb/bbwwwb b 0 2",
        startpos_moves=PositionCase("startpos with moves", None, playout(g, 10, 4)),
        fen_moves=PositionCase("fen with moves", "1/1bwbwb/bbwwwb/bbwwwb w 0 2", ("11x1", "3x5x2")),
        fen_short=PositionCase("fen without clock and move number", "1/wb1b1b/6/6 w"),
        black_to_move=PositionCase("Black to move", None, ("5-1",)),
        finished=PositionCase("three or fewer", "1/www1w1/6/bbb3 b 0 1", (), "three or fewer"),
        queries=(
            PositionCase("game on", None, ("5-1", "2x5")),
            PositionCase("three or fewer", "1/www1w1/6/bbb3 b 0 1", (), "three or fewer"),
            PositionCase("no legal move (no pieces)", "1/wb1b1b/6/6 w", ("2x4x6x2",),
                         "no legal move"),
            PositionCase("fifty plies (by a move)", "1/6/6/w2b2 w 49 1", ("14-15",), "fifty plies"),
            PositionCase("fifty plies (clock in the FEN)", "1/bbwwwb/bbwwwb/bbwwwb w 50 1", (),
                         "fifty plies"),
            PositionCase("second occurrence", "1/6/6/w2b2 w 0 1", shuffle[:7]),
            PositionCase("repetition", "1/6/6/w2b2 w 0 1", shuffle, "repetition"),
        ),
        perft=(
            (PositionCase("start", None), 7),
            (PositionCase("two capture paths", "1/wb1b1b/6/6 w"), 1),
            (PositionCase("multi-jump captures", "b/wb1b2/1b4/3www w 0 1"), 1),
            (PositionCase("captures in the tree", "1/b1bwwb/bbw1wb/bwwwbb w 0 1"), 4),
            (PositionCase("mid-game", None, playout(g, 12, 3)), 4),
            (PositionCase("finished", "1/www1w1/6/bbb3 b 0 1", (), "three or fewer"), 2),
        ),
        bad=BadInputCase(
            keep=PositionCase("kept position", None, ("5-1", "2x5")),
            illegal_move="4-1",
            malformed_move="11-01",
            bad_fen="1/bbwwwb/bbwwwb/bbwww w",
        ),
    )


def _verify(cases: GameCases) -> GameCases:
    """Raise RulesError if a case does not show what its label promises."""
    g = cases.game
    every = [
        cases.startpos_moves, cases.fen_moves, cases.fen_short, cases.black_to_move,
        cases.finished, *cases.queries, *(p for p, _ in cases.perft), cases.bad.keep,
    ]
    for case in every:
        b = case.board(g)  # raises on an illegal move or a bad FEN
        outcome = b.outcome()
        got = outcome.reason if outcome else None
        if got != case.reason:
            raise RulesError(f"check case {g} {case.label!r}: expected end {case.reason}, got {got}")
    if cases.black_to_move.board(g).turn != "b":
        raise RulesError(f"check case {g}: 'Black to move' has White to move")
    Board.from_fen(g, cases.other_side_fen)
    keep = cases.bad.keep.board(g)
    try:
        keep.parse_move(cases.bad.illegal_move)
    except RulesError:
        pass
    else:
        raise RulesError(f"check case {g}: {cases.bad.illegal_move} is legal after the kept position")
    return cases


_BUILDERS = {"egara-guti": _egara, "pretwa": _pretwa}


def cases_for(game: str) -> GameCases | None:
    """The verified cases of ``game``, or None when the check has none for it."""
    build = _BUILDERS.get(game)
    return _verify(build()) if build else None
