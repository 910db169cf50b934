"""Opening positions for matches and tournaments: read from a file or generated at random.

An openings file is read as lines (format ``epd``) or as PDN games (format ``pdn``,
``pgn`` being the same): by its name, ``.pdn`` or ``.pgn`` meaning PDN, unless a format
is given.

Lines (one opening per line, UTF-8):

- a FEN (``CELLS SIDE [CLOCK [MOVE]]``), optionally followed by
  ``moves M1 M2 ...`` played from it;
- or a move sequence from the game's start position: ``17-12 9-13 ...``
  (an optional leading ``moves`` word and PDN-style move numbers such as
  ``1.`` are ignored);
- blank lines and ``#`` comments (whole line or the rest of a line) are skipped.

Every line is checked with the rules core: the FEN must be valid, every move
legal, and the position reached must not be finished. A bad line is
reported with its file name and line number (``on_error``, default: stderr)
and skipped; a file without any usable line raises :class:`OpeningsError`.
``plies=N`` cuts move sequences after N plies.

PDN (as fastchess reads PGN books): each game is an opening, its ``FEN`` tag (when it has
one) and its moves, all of them or the first ``plies``. The file is read by
:mod:`guti.referee.game.pdn_reader`, so any mistake in it (a move that is not legal, a
game of another game, a comment never closed) is an :class:`OpeningsError` naming the
file and line; a game whose moves end it is reported and skipped, as a bad line is.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from guti.referee.game.pdn_reader import PdnError, read_pdn_file
from guti.rules import Board, Move, RulesError

_MOVE_NUMBER = re.compile(r"\d+\.+")


class OpeningsError(ValueError):
    """No usable opening (missing file, nothing valid in it, impossible request)."""


@dataclass(frozen=True)
class Opening:
    """A start: ``fen`` (None: the game's start position) then ``moves`` (book plies)."""

    fen: str | None
    moves: tuple[str, ...] = ()
    source: str = ""

    def board(self, game: str) -> Board:
        """The position after the opening (for checks and display)."""
        board = Board(game) if self.fen is None else Board.from_fen(game, self.fen)
        for move in self.moves:
            board.push_str(move)
        return board


def parse_opening(text: str, game: str, plies: int | None = None, source: str = "") -> Opening:
    """Parse one opening line (comments already removed); RulesError/ValueError if bad."""
    words = text.split()
    if not words:
        raise ValueError("empty opening")
    fen: str | None = None
    if "/" in words[0]:
        try:
            cut = words.index("moves")
        except ValueError:
            cut = len(words)
        fen_words, move_words = words[:cut], words[cut + 1 :]
        board = Board.from_fen(game, " ".join(fen_words))
        fen = board.fen()
    else:
        board = Board(game)
        move_words = words[1:] if words[0] == "moves" else words
    moves: list[str] = []
    for word in move_words:
        if _MOVE_NUMBER.fullmatch(word):
            continue
        if plies is not None and len(moves) >= plies:
            break
        if board.is_game_over():
            raise ValueError(f"the game is already over before move {word}")
        try:
            board.push_str(word)
        except RulesError as exc:
            raise ValueError(f"move {len(moves) + 1} ({word}): {exc}") from None
        moves.append(word)
    if board.is_game_over():
        raise ValueError("the opening ends the game")
    return Opening(fen, tuple(moves), source)


def _report(message: str) -> None:
    print(message, file=sys.stderr)


#: The formats of an openings file: lines of FENs or moves, or PDN games.
OPENINGS_FORMATS = ("epd", "pdn")


def openings_format(path: str, fmt: str | None = None) -> str:
    """``epd`` or ``pdn``: ``fmt`` when given (``pgn`` is ``pdn``), else by the file's
    name (``.pdn`` and ``.pgn`` are PDN, anything else lines)."""
    if fmt is None:
        return "pdn" if path.lower().endswith((".pdn", ".pgn")) else "epd"
    chosen = "pdn" if fmt.lower() == "pgn" else fmt.lower()
    if chosen not in OPENINGS_FORMATS:
        raise OpeningsError(f"openings format {fmt}: expected epd or pdn (or pgn, the same "
                            "as pdn)")
    return chosen


def load_openings(
    path: str,
    game: str,
    plies: int | None = None,
    on_error: Callable[[str], None] | None = None,
    fmt: str | None = None,
) -> list[Opening]:
    """All usable openings of ``path`` for ``game``, bad lines reported and skipped;
    ``fmt``: the file's format (see :func:`openings_format`)."""
    report = on_error or _report
    if openings_format(path, fmt) == "pdn":
        return _pdn_openings(path, game, plies, report)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise OpeningsError(f"openings file {path}: {exc.strerror or exc}") from None
    found: list[Opening] = []
    for number, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"{path}:{number}"
        try:
            found.append(parse_opening(text, game, plies, where))
        except ValueError as exc:  # RulesError is a ValueError
            report(f"{where}: skipped opening: {exc}")
    if not found:
        raise OpeningsError(f"openings file {path}: no usable opening for {game}")
    return found


def _pdn_openings(
    path: str, game: str, plies: int | None, report: Callable[[str], None]
) -> list[Opening]:
    """The games of the PDN file ``path`` as openings (see the module's docstring)."""
    try:
        games = read_pdn_file(path, game, what="openings file")
    except PdnError as exc:
        raise OpeningsError(str(exc)) from None
    found: list[Opening] = []
    for number, pdn_game in enumerate(games, 1):
        moves = pdn_game.move_texts if plies is None else pdn_game.move_texts[:plies]
        opening = Opening(pdn_game.start_fen, tuple(moves), f"{path}:{pdn_game.line}")
        if opening.board(game).is_game_over():
            report(f"{path}:{pdn_game.line}: skipped opening: game {number} is over after "
                   f"{len(moves)} plies (plies=N takes only the first N)")
        else:
            found.append(opening)
    if not found:
        raise OpeningsError(f"openings file {path}: no usable opening for {game}")
    return found


#: Most positions :func:`random_openings` keeps while it searches (memory stays bounded).
_KNOWN_LIMIT = 20_000


@dataclass(frozen=True)
class _Node:
    """A position reached by random play: the board, whether the game is over there, and
    its legal moves (the list ``rng.choice`` draws from, in the rules core's order)."""

    board: Board
    over: bool
    legal: list[Move]

    @classmethod
    def of(cls, board: Board) -> _Node:
        return cls(board, board.is_game_over(), board.legal_moves)

    def then(self, move: Move) -> _Node:
        board = self.board.copy()
        board.push(move)
        return _Node.of(board)


def random_openings(game: str, plies: int, count: int, seed: int | None = None) -> list[Opening]:
    """``count`` openings of ``plies`` random legal plies from the start, none finished,
    distinct as long as the game allows (deterministic for a given ``seed``)."""
    if plies < 0 or count < 1:
        raise OpeningsError("random openings need plies >= 0 and count >= 1")
    rng = random.Random(seed)
    seen: set[tuple[str, ...]] = set()
    found: list[Opening] = []
    attempts = 0
    start = Board(game)
    # The positions met so far, by the moves that lead to them: with few plies the same
    # ones come up again and again (and with few distinct openings every attempt is made).
    known: dict[tuple[str, ...], _Node] = {(): _Node.of(start)}
    while len(found) < count and attempts < count * 50:
        attempts += 1
        key: tuple[str, ...] = ()
        node = known[key]
        while len(key) < plies and not node.over:
            move = rng.choice(node.legal)
            key = (*key, str(move))
            child = known.get(key)
            if child is None:
                child = node.then(move)
                if len(known) < _KNOWN_LIMIT:
                    known[key] = child
            node = child
        if node.over or len(key) < plies:
            continue
        if key in seen and attempts < count * 25:
            continue
        seen.add(key)
        found.append(Opening(None, key, f"random {len(found) + 1}"))
    if not found:
        raise OpeningsError(f"cannot make random openings of {plies} plies for {game}")
    return found


def opening_sequence(
    openings: list[Opening], order: str = "sequential", seed: int | None = None
) -> Iterator[Opening]:
    """Endless stream of openings: in file order, or shuffled (``order=random``) with
    ``seed``, cycling when exhausted."""
    if order not in ("sequential", "random"):
        raise OpeningsError(f"order={order}: expected sequential or random")
    rng = random.Random(seed)
    while True:
        batch = list(openings)
        if order == "random":
            rng.shuffle(batch)
        yield from batch
