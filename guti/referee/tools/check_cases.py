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

from guti.referee.ugi.lines import Position
from guti.rules import GAMES, Board, RulesError
from guti.rules.fen import format_fen


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
    """The verified cases of ``game``, or None when guti has no rules for it.

    Egara-guti and Pretwa have hand-picked cases; every other game of the rules core gets
    cases found on its own board by :func:`generated_cases`, so a new game needs no entry here.
    """
    build = _BUILDERS.get(game)
    if build is not None:
        return _verify(build())
    return _verify(generated_cases(game)) if game in GAMES else None


# --- cases found on the board of any game ------------------------------------------------


def _fen(game: str, white: tuple[int, ...], black: tuple[int, ...], side: str = "w",
         clock: int = 0) -> str:
    """FEN with White on the points ``white``, Black on ``black`` (1-based)."""
    w = sum(1 << (p - 1) for p in white)
    b = sum(1 << (p - 1) for p in black)
    return format_fen(GAMES[game], w, b, 0 if side == "w" else 1, clock, 1)


def _try(game: str, fen: str, moves: tuple[str, ...]) -> Board | None:
    """The board after ``moves`` from ``fen``, or None if one is illegal or a capture."""
    b = Board.from_fen(game, fen)
    for m in moves:
        try:
            if b.push_str(m).is_capture:
                return None
        except RulesError:
            return None
    return b


def _lone_pieces(game: str) -> tuple[int, int, tuple[str, ...]]:
    """A White point, a Black point and 8 quiet plies that repeat their position a third time."""
    size = GAMES[game].geometry.size
    for w in range(size, 0, -1):
        for b in range(1, size + 1):
            if b == w:
                continue
            fen = _fen(game, (w,), (b,))
            for first in Board.from_fen(game, fen).legal_moves:
                if first.is_capture:
                    break
                after = _try(game, fen, (str(first),))
                for second in after.legal_moves if after else []:
                    there, back = str(first), "-".join(reversed(str(first).split("-")))
                    cycle = (there, str(second), back, "-".join(reversed(str(second).split("-"))))
                    if _try(game, fen, cycle * 2) is not None:
                        return w, b, cycle * 2
    raise RulesError(f"check cases {game}: no two lone pieces can shuffle")


def _multi_jump(game: str) -> str:
    """FEN of a position reached by random play where a capture jumps twice or more."""
    for seed in range(500):
        rng = random.Random(seed)
        b = Board(game)
        for _ in range(80):
            legal = b.legal_moves
            if not legal:
                break
            if any(len(m.path) > 2 for m in legal):
                return b.fen()
            b.push(rng.choice(legal))
    raise RulesError(f"check cases {game}: random play found no multi-jump")


def _mid_game(game: str, plies: int, seed: int) -> tuple[str, tuple[str, ...]]:
    """A FEN after ``plies`` random plies with the game on, and two moves that keep it on."""
    for attempt in range(seed, seed + 200):
        moves = playout(game, plies + 2, attempt)
        b = Board(game)
        for m in moves[:plies]:
            b.push_str(m)
        tail = moves[plies:]
        if len(tail) == 2 and _on_after(game, b.fen(), tail):
            return b.fen(), tail
    raise RulesError(f"check cases {game}: no game lasted {plies + 2} plies")


def _on_after(game: str, fen: str, moves: tuple[str, ...]) -> bool:
    b = Board.from_fen(game, fen)
    for m in moves:
        b.push_str(m)
    return b.outcome() is None


def _bad_input(game: str) -> BadInputCase:
    keep = PositionCase("kept position", None, playout(game, 2, 1))
    board = keep.board(game)
    size = GAMES[game].geometry.size
    illegal = next(
        f"{a}-{z}" for a in range(1, size + 1) if board.piece_at(a) == board.turn
        for z in range(1, size + 1) if a != z and f"{a}-{z}" not in map(str, board.legal_moves)
    )
    start_cells = GAMES[game].start_fen.split()[0]
    return BadInputCase(keep=keep, illegal_move=illegal,
                        malformed_move="0" + str(board.legal_moves[0]),
                        bad_fen=start_cells[:-1] + " w")


def generated_cases(game: str) -> GameCases:
    """Cases for any game, found on its board with the rules core (see :func:`cases_for`).

    A full board with White to move is blocked (no empty point to step or jump to); two lone
    pieces give the clock and repetition cases; random play gives the rest.
    """
    rules = GAMES[game]
    size = rules.geometry.size
    half = size // 2
    full = _fen(game, tuple(range(half + 1, size + 1)), tuple(range(1, half + 1)))
    w, b, shuffle = _lone_pieces(game)
    lone = _fen(game, (w,), (b,))
    fen, tail = _mid_game(game, 6, 5)
    first = str(Board(game).legal_moves[0])
    queries = [
        PositionCase("game on", None, (first,)),
        PositionCase("no legal move (blocked)", full, (), "no legal move"),
        PositionCase("no legal move (no pieces)", _fen(game, (), (b,)), (), "no legal move"),
        PositionCase("blocked before fifty plies", full.replace(" 0 1", " 50 1"), (),
                     "no legal move"),
        PositionCase("fifty plies (by a move)", _fen(game, (w,), (b,), clock=49), shuffle[:1],
                     "fifty plies"),
        PositionCase("fifty plies (clock in the FEN)", rules.start_fen.replace(" 0 1", " 50 1"),
                     (), "fifty plies"),
        PositionCase("second occurrence", lone, shuffle[:7]),
        PositionCase("repetition", lone, shuffle, "repetition"),
    ]
    if rules.few_pieces_limit is not None:
        few = _fen(game, tuple(range(size - rules.few_pieces_limit, size + 1)),
                   tuple(range(1, rules.few_pieces_limit + 1)), "b")
        queries.insert(1, PositionCase("three or fewer", few, (), "three or fewer"))
    finished = queries[1]
    return GameCases(
        game=game,
        other_side_fen=_after(game, (first,)),
        startpos_moves=PositionCase("startpos with moves", None, playout(game, 10, 7)),
        fen_moves=PositionCase("fen with moves", fen, tail),
        fen_short=PositionCase("fen without clock and move number", lone.rsplit(" ", 2)[0]),
        black_to_move=PositionCase("Black to move", None, (first,)),
        finished=finished,
        queries=tuple(queries),
        perft=(
            (PositionCase("start", None), 7),
            (PositionCase("multi-jump captures", _multi_jump(game)), 2),
            (PositionCase("mid-game", None, playout(game, 12, 3)), 4),
            (PositionCase("repetition in the tree", lone, shuffle[:4]), 5),
            (finished, 2),
        ),
        bad=_bad_input(game),
    )


def _after(game: str, moves: tuple[str, ...]) -> str:
    b = Board(game)
    for m in moves:
        b.push_str(m)
    return b.fen()
