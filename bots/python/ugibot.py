"""A from-scratch UGI bot core for the seven guti games (standard library only).

Egara-guti, Pretwa, Lau kata kati, Dash-guti, Gol-skuish, Alquerque and Butterfly.

Why this exists: the bots are a demonstration that an engine can be written
against ``protocol.md`` alone. They deliberately do not import
the project's ``engine`` package, so they double as an independent check of
the rules core (perft figures must agree) and of the referee (which must be
able to run any executable that speaks UGI).

The module has two halves that know nothing of each other's internals:

- rules: ``Game`` (geometry from the lines of the board), ``Position`` (cells,
  side, clock, repetition history; move generation with compulsory capture and
  maximal multi-jumps; the four end rules in order; strict FEN parsing), and
  ``perft``/``divide``;
- protocol: ``UgiBot``, a line loop over stdin/stdout parameterised by a
  *strategy*, a function ``(position, legal_moves, rng) -> Move``.

A strategy file (``random_bot.py``, ``greedy_bot.py``) is a few lines that
call ``run(name, strategy)``.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple, TextIO

EMPTY, WHITE, BLACK = ".", "w", "b"
OTHER = {WHITE: BLACK, BLACK: WHITE}
ECHO_MAX = 200  # how much of a bad line is echoed back in an error message


class FenError(ValueError):
    """A FEN or move that does not follow protocol.md; the message is one line."""


class GoError(ValueError):
    """A bad argument to ``go``: the whole command is rejected (protocol.md 5.4)."""


# --------------------------------------------------------------------------
# Geometry


@dataclass(frozen=True)
class Game:
    """One game's board: point count, FEN rows, and the straight lines.

    Adjacency and jumps are derived from the lines, so the geometry is stated
    once, in the same form as protocol.md states it.
    """

    name: str
    rows: tuple[int, ...]
    lines: tuple[tuple[int, ...], ...]
    circles: tuple[tuple[int, ...], ...]
    start_fen: str
    three_or_fewer: bool

    @property
    def size(self) -> int:
        return sum(self.rows)

    def neighbours_and_jumps(self) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
        """Per point: adjacent points, and (over, to) pairs for jumps along a line."""
        nbrs: list[list[int]] = [[] for _ in range(self.size + 1)]
        jumps: list[list[tuple[int, int]]] = [[] for _ in range(self.size + 1)]
        triples: list[tuple[int, int, int]] = []
        for line in self.lines:
            for a, b in zip(line, line[1:], strict=False):
                nbrs[a].append(b)
                nbrs[b].append(a)
            triples += list(zip(line, line[1:], line[2:], strict=False))
        for circle in self.circles:
            n = len(circle)
            for i in range(n):
                a, b = circle[i], circle[(i + 1) % n]
                nbrs[a].append(b)
                nbrs[b].append(a)
                triples.append((a, b, circle[(i + 2) % n]))
        for a, b, c in triples:
            jumps[a].append((b, c))
            jumps[c].append((b, a))
        return nbrs, jumps


def _circle_board(name: str, rings: int) -> Game:
    """Pretwa's board (3 rings) or Gol-skuish's (7): a centre, rings of six, three diameters.

    Ring k (1 = innermost) holds points 2+6(k-1) .. 7+6(k-1), clockwise from 12 o'clock;
    White starts on the lower half of every ring (rays 2, 3, 4), Black on the upper.
    """
    ring = [tuple(range(2 + 6 * k, 8 + 6 * k)) for k in range(rings)]
    diameters = tuple(
        tuple(r[ray + 3] for r in reversed(ring)) + (1,) + tuple(r[ray] for r in ring)
        for ray in range(3)
    )
    return Game(
        name=name,
        rows=(1,) + (6,) * rings,
        lines=diameters,
        circles=tuple(ring),
        start_fen="/".join(["1"] + ["bbwwwb"] * rings) + " w 0 1",
        three_or_fewer=True,
    )


#: The two-triangle board of Lau kata kati and Butterfly (19 points, rows 3/3/3/1/3/3/3).
_WINGS_LINES = (
    (1, 2, 3), (4, 5, 6), (7, 8, 9), (11, 12, 13), (14, 15, 16), (17, 18, 19),
    (1, 4, 7, 10, 13, 16, 19), (3, 6, 9, 10, 11, 14, 17), (2, 5, 8, 10, 12, 15, 18),
)


def _wings(name: str) -> Game:
    return Game(name=name, rows=(3, 3, 3, 1, 3, 3, 3), lines=_WINGS_LINES, circles=(),
                start_fen="bbb/bbb/bbb/1/www/www/www w 0 1", three_or_fewer=False)


def _alquerque() -> Game:
    """5 x 5 points; the long diagonals and the four short ones that cut the corners."""
    grid = [[5 * r + c + 1 for c in range(5)] for r in range(5)]
    rows = tuple(tuple(row) for row in grid)
    columns = tuple(tuple(grid[r][c] for r in range(5)) for c in range(5))
    diagonals = (
        tuple(grid[i][i] for i in range(5)),
        tuple(grid[i][4 - i] for i in range(5)),
        (grid[0][2], grid[1][1], grid[2][0]),
        (grid[0][2], grid[1][3], grid[2][4]),
        (grid[2][0], grid[3][1], grid[4][2]),
        (grid[2][4], grid[3][3], grid[4][2]),
    )
    return Game(name="alquerque", rows=(5,) * 5, lines=rows + columns + diagonals, circles=(),
                start_fen="bbbbb/bbbbb/bb1ww/wwwww/wwwww w 0 1", three_or_fewer=False)


GAMES: dict[str, Game] = {
    "egara-guti": Game(
        name="egara-guti",
        rows=(5, 3, 3, 1, 3, 3, 5),
        lines=(
            (1, 2, 3, 4, 5),
            (6, 7, 8),
            (9, 10, 11),
            (13, 14, 15),
            (16, 17, 18),
            (19, 20, 21, 22, 23),
            (1, 6, 9, 12, 15, 18, 23),
            (5, 8, 11, 12, 13, 16, 19),
            (3, 7, 10, 12, 14, 17, 21),
            (2, 6, 16, 20),
            (4, 8, 18, 22),
        ),
        circles=(),
        start_fen="bbbbb/bbb/bbb/1/www/www/wwwww w 0 1",
        three_or_fewer=False,
    ),
    "pretwa": _circle_board("pretwa", 3),
    "lau-kata-kati": _wings("lau-kata-kati"),
    "dash-guti": Game(
        name="dash-guti",
        rows=(3,) * 7,
        # the wings with the apex widened into the middle row 10-11-12, whose ends join
        # the corners of both bases
        lines=(
            (1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15), (16, 17, 18),
            (19, 20, 21), (1, 4, 7, 11, 15, 18, 21), (3, 6, 9, 11, 13, 16, 19),
            (2, 5, 8, 11, 14, 17, 20), (1, 10, 19), (3, 12, 21),
        ),
        circles=(),
        start_fen="bbb/bbb/bbb/w1b/www/www/www w 0 1",
        three_or_fewer=False,
    ),
    "gol-skuish": _circle_board("gol-skuish", 7),
    "alquerque": _alquerque(),
    "butterfly": _wings("butterfly"),
}

_GEOMETRY = {name: game.neighbours_and_jumps() for name, game in GAMES.items()}


# --------------------------------------------------------------------------
# Moves and positions


class Move(NamedTuple):
    """A step (path of two points, nothing captured) or a capture sequence."""

    path: tuple[int, ...]
    captured: tuple[int, ...]

    def __str__(self) -> str:
        return ("x" if self.captured else "-").join(map(str, self.path))


_MOVE_SYNTAX = re.compile(r"[1-9][0-9]*(-[1-9][0-9]*|(x[1-9][0-9]*)+)")
_COUNT = re.compile(r"[1-9][0-9]*")
_NUMBER = re.compile(r"[0-9]+")
#: FEN CLOCK and MOVE: no leading zero, at most 999,999,999 (protocol.md 5.6).
_FEN_NUMBER = re.compile(r"0|[1-9][0-9]{0,8}")


class Position:
    """Cells, side to move, clock, move number and the repetition history.

    The history (``counts``) starts at the position the game was set up from,
    which counts as the first occurrence; ``push``/``pop`` keep it in step.
    """

    def __init__(self, game: Game, cells: list[str], side: str, clock: int, fullmove: int):
        self.game = game
        self.cells = cells  # index 0 unused, 1..size hold EMPTY/WHITE/BLACK
        self.side = side
        self.clock = clock
        self.fullmove = fullmove
        self.nbrs, self.jumps = _GEOMETRY[game.name]
        self.counts: dict[str, int] = {self.key(): 1}
        self.undo: list[tuple[Move, int, int]] = []

    # -- construction / notation ------------------------------------------

    @classmethod
    def start(cls, game: Game) -> Position:
        return cls.from_fen(game, game.start_fen)

    @classmethod
    def from_fen(cls, game: Game, text: str) -> Position:
        """Parse ``CELLS SIDE [CLOCK [MOVE]]`` strictly; raise FenError naming the fault."""
        fields = text.split()
        if not 2 <= len(fields) <= 4:
            raise FenError(f"FEN {text!r}: expected 2 to 4 fields, got {len(fields)}")
        rows = fields[0].split("/")
        if len(rows) != len(game.rows):
            raise FenError(
                f"FEN {text!r}: {game.name} needs {len(game.rows)} rows, got {len(rows)}"
            )
        cells = [" "]
        for number, (row, want) in enumerate(zip(rows, game.rows, strict=True), start=1):
            cells += _parse_row(row, want, number, text)
        side = fields[1]
        if side not in (WHITE, BLACK):
            raise FenError(f"FEN {text!r}: side to move must be 'w' or 'b', got {side!r}")
        clock, fullmove = 0, 1
        if len(fields) >= 3:
            if not _FEN_NUMBER.fullmatch(fields[2]):
                raise FenError(
                    f"FEN {text!r}: clock must be 0 to 999999999 without leading zeros, "
                    f"got {fields[2]!r}"
                )
            clock = int(fields[2])
        if len(fields) == 4:
            if not _FEN_NUMBER.fullmatch(fields[3]) or int(fields[3]) < 1:
                raise FenError(
                    f"FEN {text!r}: move number must be 1 to 999999999 without leading zeros, "
                    f"got {fields[3]!r}"
                )
            fullmove = int(fields[3])
        return cls(game, cells, side, clock, fullmove)

    def fen(self) -> str:
        out: list[str] = []
        i = 1
        for width in self.game.rows:
            row, empty = "", 0
            for cell in self.cells[i : i + width]:
                if cell == EMPTY:
                    empty += 1
                else:
                    row += (str(empty) if empty else "") + cell
                    empty = 0
            out.append(row + (str(empty) if empty else ""))
            i += width
        return f"{'/'.join(out)} {self.side} {self.clock} {self.fullmove}"

    def key(self) -> str:
        """What repetition compares: the cells and the side to move."""
        return "".join(self.cells) + self.side

    def picture(self) -> list[str]:
        """The board row by row as ``point:cell`` pairs (for the ``d`` command)."""
        lines, i = [], 1
        for width in self.game.rows:
            lines.append("  ".join(f"{p:>2}:{self.cells[p]}" for p in range(i, i + width)))
            i += width
        return lines

    # -- move generation ------------------------------------------------------

    def pseudo_moves(self) -> list[Move]:
        """Legal moves ignoring the end rules: all maximal captures, else all steps."""
        cells, me = self.cells, self.side
        mine = [p for p in range(1, len(cells)) if cells[p] == me]
        captures: list[Move] = []
        for p in mine:
            self._captures_from(p, captures)
        if captures:
            return captures
        return [Move((p, q), ()) for p in mine for q in self.nbrs[p] if cells[q] == EMPTY]

    def _captures_from(self, start: int, out: list[Move]) -> None:
        cells, jumps = self.cells, self.jumps
        me, opp = self.side, OTHER[self.side]
        path, taken = [start], []
        cells[start] = EMPTY  # the moving piece has left; it may land here again

        def extend(at: int) -> None:
            went_on = False
            for over, to in jumps[at]:
                if cells[over] == opp and cells[to] == EMPTY:
                    went_on = True
                    cells[over] = EMPTY  # jumped pieces leave at once
                    path.append(to)
                    taken.append(over)
                    extend(to)
                    path.pop()
                    taken.pop()
                    cells[over] = opp
            if not went_on and taken:
                out.append(Move(tuple(path), tuple(taken)))

        extend(start)
        cells[start] = me

    def legal_moves(self) -> list[Move]:
        """Legal moves sorted by move string; empty when the game is over."""
        moves = self.pseudo_moves()
        if self.outcome(moves) is not None:
            return []
        return sorted(moves, key=str)

    # -- end rules ---------------------------------------------------------

    def outcome(self, moves: list[Move] | None = None) -> tuple[str, str] | None:
        """(``p1win``|``p2win``|``draw``, reason) by the four end rules in order, or None."""
        white = self.cells.count(WHITE)
        black = self.cells.count(BLACK)
        if self.game.three_or_fewer:
            if white <= 3 < black:
                return "p2win", "three or fewer"
            if black <= 3 < white:
                return "p1win", "three or fewer"
        if moves is None:
            moves = self.pseudo_moves()
        if not moves:
            return ("p2win" if self.side == WHITE else "p1win"), "no legal move"
        if self.clock >= 50:
            return _by_count(white, black), "fifty plies"
        if self.counts.get(self.key(), 0) >= 3:
            return _by_count(white, black), "repetition"
        return None

    # -- making moves --------------------------------------------------------

    def parse_move(self, text: str) -> Move:
        """The legal move written ``text``; FenError if malformed or illegal here."""
        if not _MOVE_SYNTAX.fullmatch(text):
            raise FenError(f"malformed move {text!r}")
        for move in self.legal_moves():
            if str(move) == text:
                return move
        raise FenError(f"illegal move {text!r} in position {self.fen()}")

    def push(self, move: Move) -> None:
        cells, me = self.cells, self.side
        self.undo.append((move, self.clock, self.fullmove))
        cells[move.path[0]] = EMPTY
        for point in move.captured:
            cells[point] = EMPTY
        cells[move.path[-1]] = me
        self.clock = 0 if move.captured else self.clock + 1
        if me == BLACK:
            self.fullmove += 1
        self.side = OTHER[me]
        key = self.key()
        self.counts[key] = self.counts.get(key, 0) + 1

    def pop(self) -> Move:
        key = self.key()
        self.counts[key] -= 1
        if not self.counts[key]:
            del self.counts[key]
        move, self.clock, self.fullmove = self.undo.pop()
        me = self.side = OTHER[self.side]
        self.cells[move.path[-1]] = EMPTY
        self.cells[move.path[0]] = me
        for point in move.captured:
            self.cells[point] = OTHER[me]
        return move


def _parse_row(row: str, want: int, number: int, fen: str) -> list[str]:
    cells: list[str] = []
    for token in re.findall(r"[0-9]+|.", row):
        if token in (WHITE, BLACK):
            cells.append(token)
        elif _COUNT.fullmatch(token) and len(cells) + int(token) <= want:
            cells += [EMPTY] * int(token)
        elif token[0].isdigit():
            raise FenError(f"FEN {fen!r}: row {number}: bad empty count {token!r}")
        else:
            raise FenError(f"FEN {fen!r}: row {number}: unexpected character {token!r}")
        if len(cells) > want:
            raise FenError(f"FEN {fen!r}: row {number} holds more than {want} points")
    if len(cells) != want:
        raise FenError(f"FEN {fen!r}: row {number} holds {len(cells)} points, needs {want}")
    return cells


def _by_count(white: int, black: int) -> str:
    return "p1win" if white > black else "p2win" if black > white else "draw"


def perft(pos: Position, depth: int) -> int:
    """Number of move sequences of length ``depth`` (finished positions have none)."""
    if depth == 0:
        return 1
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        pos.push(move)
        total += perft(pos, depth - 1)
        pos.pop()
    return total


def divide(pos: Position, depth: int) -> list[tuple[str, int]]:
    """Per legal move (byte order of the strings): perft of the rest, ``depth`` >= 1."""
    result = []
    for move in pos.legal_moves():
        pos.push(move)
        result.append((str(move), perft(pos, depth - 1)))
        pos.pop()
    return sorted(result)


# --------------------------------------------------------------------------
# Protocol

Strategy = Callable[[Position, list[Move], random.Random], Move]

_GO_TIMES = ("p1time", "p2time", "p1inc", "p2inc")  # below 0 reads as 0 (protocol.md 5.6)
_GO_VALUES = (*_GO_TIMES, "movetime", "depth", "nodes", "movestogo")
_GO_DIGITS = 15  # the longest number a `go` argument may have (protocol.md 5.6)
PERFT_MAX = 1000
SEED_MAX = 2**31 - 1


def _echo(text: str) -> str:
    return text if len(text) <= ECHO_MAX else f"{text[:ECHO_MAX]}... ({len(text)} chars)"


def _parse_go(args: list[str]) -> tuple[bool, int | None]:
    """(``infinite`` given, the ``perft`` depth or None) of ``go``'s arguments; GoError naming
    the first bad one (an unknown word, a missing, non-numeric or too long value)."""
    infinite, perft_depth = False, None
    i = 0
    while i < len(args):
        word = args[i]
        if word == "infinite":
            infinite = True
            i += 1
            continue
        if word not in _GO_VALUES and word != "perft":
            raise GoError(f"unknown argument {_echo(word)!r}")
        if i + 1 >= len(args):
            raise GoError(f"{word}: missing value")
        text = args[i + 1]
        digits = text[1:] if word in _GO_TIMES and text.startswith("-") else text
        if not _NUMBER.fullmatch(digits) or len(digits) > _GO_DIGITS:
            raise GoError(f"{word}: expected a whole number of at most {_GO_DIGITS} digits, "
                          f"got {_echo(text)!r}")
        if word == "perft":
            if int(digits) > PERFT_MAX:
                raise GoError(f"perft: depth must be 0 to {PERFT_MAX}, got {_echo(text)!r}")
            perft_depth = int(digits)
        i += 2
    return infinite, perft_depth


class UgiBot:
    """The UGI command loop; ``strategy`` picks a move, everything else is here.

    ``go infinite`` (and a bare ``go``, which means the same) picks its move at
    once but holds the ``bestmove`` until ``stop`` (or an implicit stop: a
    command that changes the position). Holding costs nothing, so ``isready``
    is answered at once while a ``go infinite`` waits.
    """

    def __init__(self, name: str, author: str, strategy: Strategy, out: TextIO = sys.stdout):
        self.name = name
        self.author = author
        self.strategy = strategy
        self.out = out
        self.game = GAMES["egara-guti"]
        self.pos = Position.start(self.game)
        self.seed = 0
        self.rng = self._new_rng()
        self.pending: str | None = None  # bestmove held back by `go infinite`

    def _new_rng(self) -> random.Random:
        """Seed 0 means 'not seeded' (OS entropy); any other seed is reproducible."""
        return random.Random(self.seed) if self.seed else random.Random()

    def send(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def error(self, what: str) -> None:
        self.send(f"info string error {what}")

    # -- loop ----------------------------------------------------------------

    def run(self, lines: Iterable[bytes]) -> None:
        for raw in lines:
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if not self.handle(text):
                return

    def handle(self, line: str) -> bool:
        """Act on one line; False means quit."""
        tokens = line.split()
        if not tokens:
            return True
        command, args = tokens[0], tokens[1:]
        if command == "quit":
            return False
        handler = getattr(self, "cmd_" + command, None) if command.isidentifier() else None
        if handler is None:
            self.send(f"info string unknown command {_echo(line.strip())}")
        else:
            handler(args)
        return True

    def _implicit_stop(self) -> None:
        if self.pending is not None:
            self.send(f"bestmove {self.pending}")
            self.pending = None

    # -- commands --------------------------------------------------------------

    def cmd_ugi(self, args: list[str]) -> None:
        self.send(f"id name {self.name}")
        self.send(f"id author {self.author}")
        default = "egara-guti"
        names = " ".join(f"var {g}" for g in GAMES)
        self.send(f"option name UGI_Variant type combo default {default} {names}")
        self.send(f"option name Seed type spin default 0 min 0 max {SEED_MAX}")
        self.send("ugiok")

    def cmd_isready(self, args: list[str]) -> None:
        self.send("readyok")

    def cmd_setoption(self, args: list[str]) -> None:
        if not args or args[0] != "name" or "value" not in args[1:]:
            self.error(
                f"setoption: expected 'name <NAME> value <VALUE>', got {_echo(' '.join(args))!r}"
            )
            return
        at = args.index("value", 1)
        name = " ".join(args[1:at]).lower()
        value = " ".join(args[at + 1 :])
        if name == "ugi_variant":
            if value.lower() not in GAMES:
                self.error(f"setoption UGI_Variant: unknown game {_echo(value)!r}")
                return
            self._implicit_stop()
            self.game = GAMES[value.lower()]
            self.pos = Position.start(self.game)
        elif name == "seed":
            if not _NUMBER.fullmatch(value) or int(value) > SEED_MAX:
                self.error(
                    f"setoption Seed: expected an integer 0..{SEED_MAX}, got {_echo(value)!r}"
                )
                return
            self.seed = int(value)
            self.rng = self._new_rng()
        else:
            self.error(f"setoption: unknown option {_echo(name)!r}")

    def cmd_uginewgame(self, args: list[str]) -> None:
        self._implicit_stop()
        self.pos = Position.start(self.game)
        self.rng = self._new_rng()

    def cmd_position(self, args: list[str]) -> None:
        """All or nothing (protocol.md 5.2): a rejected line leaves the bot as it was, a held
        ``go infinite`` included."""
        try:
            pos = self._parse_position(args)
        except FenError as exc:
            self.error(f"position: {exc}")
            return
        self._implicit_stop()
        self.pos = pos

    def _parse_position(self, args: list[str]) -> Position:
        moves_at = args.index("moves") if "moves" in args else len(args)
        base, moves = args[:moves_at], args[moves_at + 1 :]
        if base == ["startpos"]:
            pos = Position.start(self.game)
        elif base and base[0] == "fen":
            pos = Position.from_fen(self.game, " ".join(base[1:]))
        else:
            raise FenError(f"expected 'startpos' or 'fen <FEN>', got {_echo(' '.join(base))!r}")
        for number, text in enumerate(moves, start=1):
            try:
                move = pos.parse_move(text)
            except FenError as exc:
                raise FenError(f"move {number}: {_echo(str(exc))}") from None
            pos.push(move)
        return pos

    def cmd_go(self, args: list[str]) -> None:
        """protocol.md 5.2 ``go`` and 5.6: a bare ``go`` is ``go infinite``, ``infinite``
        wins over every limit, and one bad argument rejects the whole line (one error, no
        ``bestmove``, a held ``go infinite`` still held). The bot does not search, so the
        limits are checked and otherwise unused."""
        try:
            infinite, perft_depth = _parse_go(args)
        except GoError as exc:
            self.error(f"go: {exc}")
            return
        self._implicit_stop()
        if perft_depth is not None:
            self._perft(perft_depth)
            return
        moves = self.pos.legal_moves()
        best = str(self.strategy(self.pos, moves, self.rng)) if moves else "none"
        if (infinite or not args) and moves:
            self.pending = best
        else:
            self.send(f"bestmove {best}")

    def _perft(self, depth: int) -> None:
        if depth == 0:
            self.send("nodes 1")
            return
        total = 0
        for move, count in divide(self.pos, depth):
            self.send(f"{move}: {count}")
            total += count
        self.send(f"nodes {total}")

    def cmd_stop(self, args: list[str]) -> None:
        self._implicit_stop()

    def cmd_query(self, args: list[str]) -> None:
        what = args[0] if len(args) == 1 else None
        outcome = self.pos.outcome()
        if what == "gameover":
            self.send(f"response {'true' if outcome else 'false'}")
        elif what == "p1turn":
            self.send(f"response {'true' if self.pos.side == WHITE else 'false'}")
        elif what == "result":
            self.send(f"response {outcome[0] if outcome else 'none'}")
        else:
            self.error(f"query: expected gameover, p1turn or result, got {_echo(' '.join(args))!r}")

    def cmd_d(self, args: list[str]) -> None:
        self.send(
            f"info string {self.game.name}, {'White' if self.pos.side == WHITE else 'Black'} to move"
        )
        for row in self.pos.picture():
            self.send(f"info string {row}")
        outcome = self.pos.outcome()
        if outcome:
            self.send(f"info string game over: {outcome[0]} ({outcome[1]})")
        self.send(f"fen {self.pos.fen()}")
        self.send("legal " + " ".join(str(m) for m in self.pos.legal_moves()))


def run(name: str, strategy: Strategy, author: str = "guti project") -> None:
    """Speak UGI on stdin/stdout until ``quit`` or end of input."""
    bot = UgiBot(name, author, strategy)
    try:
        bot.run(sys.stdin.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
