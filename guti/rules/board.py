"""The position with its history: the rules API in the spirit of python-chess.

``Board`` adds to the raw move generator (movegen.py) everything that
depends on the game's past: whose turn it is, the 50-ply clock, the
repetition history (which starts at the position the board was set up
from), undo, and the four end rules of protocol.md in their order.
"""

from __future__ import annotations

from . import movegen
from .errors import RulesError
from .fen import Position, format_fen, parse_fen
from .games import Game, get_game
from .move import Move
from .names import DEFAULT_GAME
from .numbers import whole_number
from .picture import draw_board
from .result import Outcome, Side, Termination

#: The side of each turn index (0 White, 1 Black).
_SIDES = (Side.WHITE, Side.BLACK)


def _notation(move: Move) -> str:
    """The sort key of legal move lists: the notation, in byte order."""
    return move.text


def _win(side: int | None, reason: Termination) -> Outcome:
    """``side`` (0 White, 1 Black, None: nobody) wins by ``reason``."""
    return Outcome.win(None if side is None else Side.from_index(side), reason)


class Board:
    """A position of one game plus the moves that led to it (for undo and repetition).

    Pieces are int masks, bit ``p - 1`` for point ``p``; ``turn`` is a :class:`Side`.
    """

    __slots__ = ("game", "_white", "_black", "_turn", "clock", "fullmove", "_stack", "_reps",
                 "_legal", "_root_fen", "_poskey", "_shift", "_scan", "_checked", "_over")
    _white: int
    _black: int
    _turn: int
    clock: int
    fullmove: int
    _poskey: int
    _shift: int

    def __init__(self, game: Game | str = DEFAULT_GAME, fen: str | None = None):
        self.game = get_game(game) if isinstance(game, str) else game
        self._set(parse_fen(self.game, self.game.start_fen if fen is None else fen))

    @classmethod
    def from_fen(cls, game: Game | str, fen: str) -> Board:
        return cls(game, fen)

    def _set(self, pos: Position) -> None:
        """Set up ``pos`` with no history."""
        self._white, self._black, self._turn = pos.white, pos.black, pos.turn
        self.clock, self.fullmove = pos.clock, pos.fullmove
        self._shift = self.game.geometry.size
        self._poskey = self._white | (self._black << self._shift) | (self._turn << (2 * self._shift))
        # one entry per move played, the state before it: (move, white, black, turn, clock,
        # fullmove, key, legal moves or None); pop restores the legal moves with the rest, so
        # walking a tree (divide, the console's undo) generates each position's moves once
        self._stack: list[tuple[Move, int, int, int, int, int, int, dict[str, Move] | None]] = []
        self._reps: dict[int, int] = {self._poskey: 1}
        self._legal: dict[str, Move] | None = None
        self._scan: tuple[int, int] | None = None
        self._checked: Move | None = None
        self._over: bool | None = None  # is_game_over's answer, once asked
        self._root_fen = self.fen()

    # --- state -----------------------------------------------------------------------------

    @property
    def turn(self) -> Side:
        return _SIDES[self._turn]

    @property
    def white(self) -> int:
        return self._white

    @property
    def black(self) -> int:
        return self._black

    @property
    def root_fen(self) -> str:
        """FEN of the position the board was set up from (where the history starts)."""
        return self._root_fen

    @property
    def move_stack(self) -> list[Move]:
        return [entry[0] for entry in self._stack]

    def piece_at(self, point: int) -> Side | None:
        """'w', 'b' or None for the piece on ``point`` (1-based)."""
        if not 1 <= point <= self.game.geometry.size:
            raise RulesError(f"no point {point} on the {self.game.name} board (1..{self.game.geometry.size})")
        mask = 1 << (point - 1)
        return Side.WHITE if self._white & mask else Side.BLACK if self._black & mask else None

    def count(self, side: Side | str) -> int:
        return (self._white if side == "w" else self._black).bit_count()

    def repetition_count(self) -> int:
        """How often the current position has occurred since the root position (1 = first time)."""
        return self._reps.get(self._poskey, 0)

    def position_key(self) -> int:
        """The position as one number: ``white | black << n | turn << 2n`` (n points, turn 1
        when Black moves), the key repetitions are counted by."""
        return self._poskey

    def repetition_counts(self) -> dict[int, int]:
        """Occurrences of each :meth:`position_key` since the root position (a copy): what
        a search or perft carries on to count repetitions along its lines."""
        return dict(self._reps)

    def fen(self) -> str:
        return format_fen(self.game, self._white, self._black, self._turn, self.clock, self.fullmove)

    def copy(self) -> Board:
        other = Board.__new__(Board)
        other.game = self.game
        other._white, other._black, other._turn = self._white, self._black, self._turn
        other.clock, other.fullmove = self.clock, self.fullmove
        other._stack = list(self._stack)
        other._reps = dict(self._reps)
        other._legal = self._legal  # never mutated, only replaced: safe to share
        other._root_fen = self._root_fen
        other._poskey, other._shift = self._poskey, self._shift
        other._scan, other._checked, other._over = self._scan, None, self._over
        return other

    def __repr__(self) -> str:
        return f"Board({self.game.name!r}, {self.fen()!r})"

    # --- moves -----------------------------------------------------------------------------

    def _sides(self) -> tuple[int, int]:
        return (self._white, self._black) if self._turn == 0 else (self._black, self._white)

    def _generate(self) -> list[Move]:
        """Moves by the movement rules alone (end rules 1, 3 and 4 not applied)."""
        geo = self.game.geometry
        own, enemy = self._sides()
        sources = movegen.capture_sources(geo, own, enemy)
        if sources:
            moves = [Move.capture(tuple([p + 1 for p in path]), captured)
                     for path, captured in movegen.captures(geo, own, enemy, sources)]
        else:
            step = Move.step
            moves = [step(a + 1, b + 1) for a, b in movegen.steps(geo, own, enemy)]
        moves.sort(key=_notation)
        return moves

    def _legal_index(self) -> dict[str, Move]:
        """Legal moves by move string (sorted), generated once per position.

        A dict so that push and parse_move check a move with one lookup instead of a scan.
        """
        legal = self._legal
        if legal is None:
            moves = [] if self._ended_by_rule() else self._generate()
            legal = self._legal = {move.text: move for move in moves}
        return legal

    def _scanned(self) -> tuple[int, int]:
        """``(capture sources, number of steps)`` of the side to move (movegen.scan), once
        per position: enough to tell whether the game goes on and to check a step."""
        found = self._scan
        if found is None:
            own, enemy = self._sides()
            found = self._scan = movegen.scan(self.game.geometry, own, enemy)
        return found

    def legal_move(self, text: str) -> Move | None:
        """The legal move whose canonical string is ``text``, or None (the referee's judge
        asks this once per ply; :meth:`parse_move` says why when it is not).

        Once the legal moves are listed, one dict lookup. Before that, a well-formed move
        is checked on its own (:meth:`_verified`), so a game that only ever asks about the
        move an engine played never builds the other moves; anything the direct check does
        not confirm is looked up in the full list, so the answer is always the list's.
        What that buys: checking the one move takes under half the time of listing them
        all, about 6 microseconds of the referee's 45-50 per ply with instant engines
        (over 10 % of its CPU)."""
        legal = self._legal
        if legal is None:
            move = self._verified(text)
            if move is not None:
                self._checked = move
                return move
            legal = self._legal_index()
        return legal.get(text)

    def _verified(self, text: str) -> Move | None:
        """``text`` as a legal move, confirmed without listing the others; None when it is
        not confirmed (illegal, not canonical, or simply not a shape checked here)."""
        if len(text) > 200 or self.is_game_over():
            return None
        sources = self._scanned()[0]
        if sources:
            return self._verified_capture(text, sources)
        a, dash, b = text.partition("-")
        first, last = whole_number(a, 3), whole_number(b, 3)
        if not dash or first is None or last is None:
            return None
        src, dst = first - 1, last - 1
        own, enemy = self._sides()
        geo = self.game.geometry
        if not (0 <= src < geo.size and 0 <= dst < geo.size) or not (own >> src) & 1:
            return None
        if not (geo.adjacent[src] >> dst) & 1 or ((own | enemy) >> dst) & 1:
            return None
        move = Move.step(src + 1, dst + 1)
        return move if move.text == text else None  # canonical: no leading zeros

    def _verified_capture(self, text: str, sources: int) -> Move | None:
        """A capture ``text`` found among the sequences of its own piece only."""
        first = text.partition("x")[0]
        point = whole_number(first, 3)
        if point is None:
            return None
        src = point - 1
        if not 0 <= src < self.game.geometry.size or not (sources >> src) & 1:
            return None
        own, enemy = self._sides()
        for path, captured in movegen.captures(self.game.geometry, own, enemy, 1 << src):
            move = Move.capture(tuple([p + 1 for p in path]), captured)
            if move.text == text:
                return move
        return None

    @property
    def legal_moves(self) -> list[Move]:
        """Legal moves sorted by move string; empty when the game is over."""
        return list(self._legal_index().values())

    def parse_move(self, text: str) -> Move:
        """The legal move written ``text``; RulesError says why it is malformed or illegal.

        A point the board lacks (``99-1``) is well formed but illegal (protocol.md 5.6)."""
        path, is_capture = Move.parse_syntax(text)
        size = self.game.geometry.size
        for point in path:
            if point > size:
                raise RulesError(f"illegal move {text!r} in {self.fen()}: no point {point} on "
                                 f"the {self.game.name} board (1..{size})")
        # move strings are canonical (no leading zeros, no spaces): ``text`` is the key
        move = self._legal_index().get(text)
        if move is not None:
            return move
        raise RulesError(f"illegal move {text!r} in {self.fen()}: {self._why_illegal(path, is_capture)}")

    def _why_illegal(self, path: tuple[int, ...], is_capture: bool) -> str:
        """A short, specific reason for a rejected move, to help engine authors."""
        outcome = self.outcome()
        if outcome is not None:
            return f"the game is over ({outcome.reason})"
        if self.piece_at(path[0]) != self.turn:
            return f"no {self.turn.label} piece on {path[0]}"
        legal = self.legal_moves
        if legal[0].is_capture and not is_capture:
            written = "x".join(map(str, path))
            if any(m.text == written for m in legal):
                return f"a capture is compulsory (a capture is written with x: {written})"
            return "a capture is compulsory"
        if is_capture and not legal[0].is_capture:
            return "there is no capture"
        if is_capture:
            return self._why_not_a_capture(path, [m.path for m in legal])
        return f"{path[1]} is not an empty point next to {path[0]}"

    @staticmethod
    def _why_not_a_capture(path: tuple[int, ...], legal: list[tuple[int, ...]]) -> str:
        """Why the capture ``path`` is none of the ``legal`` ones: where it leaves them."""
        if any(p[:len(path)] == path for p in legal):
            return "not a complete capture sequence (a capture must go on while the piece can jump)"
        ended = [p for p in legal if path[:len(p)] == p]
        if ended:
            return f"the capture ends at {ended[0][-1]}: no jump goes on from there"
        if not any(p[0] == path[0] for p in legal):
            return f"the piece on {path[0]} has no capture"
        same = max(k for k in range(1, len(path)) if any(p[:k] == path[:k] for p in legal))
        return (f"{path[same - 1]}x{path[same]} is no jump over an opposing piece "
                "to an empty point")

    def push(self, move: Move | str) -> Move:
        """Play ``move`` (a Move or a move string), after checking it is legal."""
        if isinstance(move, str):
            return self.push_str(move)
        legal = move if move is self._checked else self.legal_move(str(move))
        if legal is None:
            raise RulesError(f"illegal move {str(move)!r} in {self.fen()}")
        self._apply(legal)  # the generated move: its capture mask is right for this position
        return legal

    def push_str(self, text: str) -> Move:
        """Parse, check and play a move string; the board is unchanged if it is rejected."""
        move = self.parse_move(text)
        self._apply(move)
        return move

    def _apply(self, move: Move) -> None:
        """Play a legal move: save the state for pop, move, and count the new position."""
        white, black, turn = self._white, self._black, self._turn
        self._stack.append((move, white, black, turn, self.clock, self.fullmove, self._poskey,
                            self._legal))
        path = move.path
        src, dst = 1 << (path[0] - 1), 1 << (path[-1] - 1)  # equal when a capture comes home
        if turn == 0:
            white = (white & ~src) | dst
            black &= ~move.capture_mask
        else:
            black = (black & ~src) | dst
            white &= ~move.capture_mask
            self.fullmove += 1
        self._white, self._black, self._turn = white, black, turn ^ 1
        self.clock = 0 if move.is_capture else self.clock + 1
        shift = self._shift
        key = self._poskey = white | (black << shift) | ((turn ^ 1) << (2 * shift))
        reps = self._reps
        reps[key] = reps.get(key, 0) + 1
        self._legal = self._scan = self._checked = self._over = None

    def pop(self) -> Move:
        """Undo the last move and return it."""
        if not self._stack:
            raise RulesError("no move to undo")
        key = self._poskey
        left = self._reps[key] - 1
        if left:
            self._reps[key] = left
        else:
            del self._reps[key]
        (move, self._white, self._black, self._turn, self.clock, self.fullmove,
         self._poskey, self._legal) = self._stack.pop()
        self._scan = self._checked = self._over = None
        return move

    # --- end of the game -------------------------------------------------------------------

    def _ended_by_rule(self) -> bool:
        """End rules 1, 3 and 4 (rule 2, no move, is the generator's own business)."""
        limit = self.game.few_pieces_limit
        if limit is not None and (self._white.bit_count() <= limit) != (self._black.bit_count() <= limit):
            return True
        return self.clock >= self.game.no_capture_plies or self.repetition_count() >= self.game.repetitions

    def _by_material(self, reason: Termination) -> Outcome:
        white, black = self._white.bit_count(), self._black.bit_count()
        return _win(None if white == black else (0 if white > black else 1), reason)

    def outcome(self) -> Outcome | None:
        """How the game ended in this position, by the end rules in protocol.md's order; None if on."""
        limit = self.game.few_pieces_limit
        if limit is not None:
            white, black = self._white.bit_count(), self._black.bit_count()
            if (white <= limit) != (black <= limit):
                return _win(0 if white > black else 1, Termination.THREE_OR_FEWER)
        sources, steps = self._scanned()
        if not (sources or steps):  # a piece that can jump has at least one capture
            return _win(self._turn ^ 1, Termination.NO_LEGAL_MOVE)
        if self.clock >= self.game.no_capture_plies:
            return self._by_material(Termination.FIFTY_PLIES)
        if self.repetition_count() >= self.game.repetitions:
            return self._by_material(Termination.REPETITION)
        return None

    def is_game_over(self) -> bool:
        """Whether :meth:`outcome` is not None (and :attr:`legal_moves` empty), without
        counting or listing the moves: the referee asks it before every ply (and the
        judge once more: the answer is kept for the position)."""
        if self._legal is not None:
            return not self._legal
        over = self._over
        if over is None:
            if self._ended_by_rule():
                over = True
            else:
                sources, steps = self._scanned()
                over = not (sources or steps)  # a piece that can jump has a capture
            self._over = over
        return over

    def board_string(self) -> str:
        return draw_board(self.game, self.fen())
