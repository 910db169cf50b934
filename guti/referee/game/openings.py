"""Opening positions for matches and tournaments: read from a file or generated at random.

An openings file is read as lines (format ``epd``) or as PDN games (format ``pdn``,
``pgn`` being the same): by its name, ``.pdn`` or ``.pgn`` meaning PDN, unless a format
is given.

Lines (one opening per line, UTF-8):

- a FEN (``CELLS SIDE [CLOCK [MOVE]]``), optionally followed by
  ``moves M1 M2 ...`` played from it;
- or a move sequence from the game's start position: ``17-12 9-13 ...``
  (an optional leading ``moves`` word and PDN-style move numbers such as
  ``1.``, also glued to a move as in ``1.17-12``, are ignored);
- blank lines and ``#`` comments (whole line or the rest of a line) are skipped;
- EPD operations after the position (``FEN; variant "pretwa"; ...``, as ``-epdout`` and
  ``guti export -epd`` write them) are ignored, except a ``variant`` naming another game,
  which makes the line one of that game's.

Every line is checked with the rules core: the FEN must be valid, every move
legal, and the position reached must not be finished. A bad line is
reported with its file name and line number (``on_error``, default: stderr)
and skipped; a file without any usable line raises :class:`OpeningsError`.
``plies=N`` cuts move sequences after N plies.

PDN (as fastchess reads PGN books): each game is an opening, its ``FEN`` tag (when it has
one) and its moves, all of them or the first ``plies``, except the second game of a pair
(:func:`_second_of_pair`). The file is read by
:mod:`guti.referee.game.pdn_reader`, one game at a time, so any mistake in it (a move
that is not legal, a game of another game, a comment never closed) is an
:class:`OpeningsError` naming the file and line; a game whose moves end it is reported
and skipped, as a bad line is. With ``plies``, the moves after a game's first ``plies``
are skipped unplayed (a book is read as far as it is played): a book of long games reads
in a fraction of the time.
"""

from __future__ import annotations

import os
import random
import stat
import sys
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from guti.referee.game.pdn_reader import PdnError, PdnGame, iter_pdn_file, move_words
from guti.referee.process.text import visible
from guti.rules import Board, RulesError


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
    text, *operations = text.split(";")
    for operation in operations:  # EPD operations: only a variant matters here
        name, _, value = operation.strip().partition(" ")
        if name == "variant" and value.strip().strip('"') not in ("", game):
            raise ValueError(f"an opening of {value.strip()[:40]}, not of {game}")
    words = text.split()
    if not words:
        raise ValueError("empty opening")
    fen: str | None = None
    if "/" in words[0]:
        try:
            cut = words.index("moves")
        except ValueError:
            cut = len(words)
        fen_words, words_of_moves = words[:cut], words[cut + 1 :]
        board = Board.from_fen(game, " ".join(fen_words))
        fen = board.fen()
    else:
        board = Board(game)
        words_of_moves = words[1:] if words[0] == "moves" else words
    moves: list[str] = []
    for word in move_words(words_of_moves):
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


#: Longest line of an openings file: a FEN and hundreds of plies fit many times over.
#: A longer one (or as many bytes without a line end: ``/dev/zero``) is not an openings
#: file, and reading stops there.
MAX_LINE_BYTES = 64 * 1024
#: Skipped openings reported one by one; the rest are counted in one summary line.
MAX_WARNINGS = 10
#: Unusable lines in a row after which a pipe or a device (which may never end) is given
#: up as not an openings file; a regular file is read to its end.
MAX_UNUSABLE_RUN = 100_000
#: Files up to this size are read whole, every line checked, whatever a run needs of them
#: (a mistake anywhere in a book is reported at once); larger ones, and files that are
#: not regular (a pipe), only as far as the run needs (see :func:`load_openings`).
CHECKED_WHOLE_BYTES = 1 << 20
#: Longest skip warning shown (the text of a line can be 64 KiB of anything).
WARNING_CHARS = 300


class _Skips:
    """The skip warnings of one file: the first :data:`MAX_WARNINGS` kept (control
    characters escaped, as a line of a binary file can hold any byte; cut at
    :data:`WARNING_CHARS`), the rest counted. They are told once the file is read
    (:meth:`tell`): a file that turns out not to be an openings file at all is then its
    one line, not warnings first."""

    def __init__(self, report: Callable[[str], None], unit: str = "lines") -> None:
        self.report = report
        self.unit = unit
        self.count = 0
        self.kept: list[str] = []

    def skip(self, where: str, why: str) -> None:
        self.count += 1
        if self.count <= MAX_WARNINGS:
            text = visible(f"{where}: skipped opening: {why}")
            cut = text[:WARNING_CHARS] + "..." if len(text) > WARNING_CHARS else text
            self.kept.append(cut)

    def tell(self, path: str) -> None:
        for line in self.kept:
            self.report(line)
        if self.count > MAX_WARNINGS:
            self.report(visible(f"{path}: skipped opening: ... and "
                                f"{self.count - MAX_WARNINGS:,} more {self.unit} skipped"))


def _lines(fh: BinaryIO, path: str) -> Iterator[tuple[int, int, str]]:
    """``(line number, byte offset, text)`` of every line, read one at a time, the text
    its opening (empty for a blank or comment line); OpeningsError at a line longer than
    :data:`MAX_LINE_BYTES` or holding a NUL byte (a binary file, ``/dev/zero``,
    ``/dev/urandom``), before anything more is read."""
    number = offset = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise OpeningsError(f"openings file {path}:{number}: a line longer than "
                                f"{MAX_LINE_BYTES:,} bytes: not an openings file")
        if b"\0" in raw:
            raise OpeningsError(f"openings file {path}:{number}: binary data (a NUL byte): "
                                "not an openings file")
        yield number, offset, _opening_text(raw)
        offset += len(raw)


def _opening_text(raw: bytes) -> str:
    """A line's opening: its text without a byte-order mark (an editor's ``\ufeff`` at
    the start of the file), a comment, or blanks around it."""
    return raw.decode("utf-8", "replace").removeprefix("\ufeff").split("#", 1)[0].strip()


def _line_at(fh: BinaryIO, offset: int) -> str:
    """The opening of the line at byte ``offset`` (already read once by :func:`_lines`)."""
    fh.seek(offset)
    return _opening_text(fh.readline(MAX_LINE_BYTES + 1))


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
    *,
    wanted: int | None = None,
    order: str = "sequential",
    seed: int | None = None,
) -> list[Opening]:
    """The usable openings of ``path`` for ``game``, bad ones reported (at most
    :data:`MAX_WARNINGS`, then a summary) and skipped; ``fmt``: the file's format (see
    :func:`openings_format`).

    ``wanted``: how many a run needs. A file of lines larger than
    :data:`CHECKED_WHOLE_BYTES` (or a pipe) is then read only as far as it takes
    (a file of millions of lines starts its first game at once): in file order the first
    ``wanted`` usable ones; with ``order="random"`` the file is read once for the byte
    offset of each line (12 bytes per line held, not the openings), and lines are drawn at
    random from that index (a Fisher-Yates shuffle done lazily, seeded by ``seed``) until
    ``wanted`` are usable. Fewer than ``wanted`` returned means the file has no more; they
    are then every usable opening, in file order (what :func:`opening_sequence` shuffles
    and cycles through)."""
    report = on_error or _report
    if openings_format(path, fmt) == "pdn":  # in file order, only as far as a run needs
        try:
            whole = order == "random" or _checked_whole(os.stat(path))
        except OSError as exc:
            raise OpeningsError(f"openings file {path}: {exc.strerror or exc}") from None
        return _pdn_openings(path, game, plies, report, None if whole else wanted)
    skips = _Skips(report)
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if _checked_whole(info):
                wanted = None
            if order == "random" and wanted is not None:
                if not fh.seekable():  # the index is of offsets to go back to
                    raise OpeningsError(f"openings file {path}: order=random needs a file "
                                        "that can be read again, not a pipe")
                found = _drawn_lines(fh, path, game, plies, skips, wanted, seed)
            else:
                # a pipe or a device may never end: a long run of unusable lines ends it
                bound = None if stat.S_ISREG(info.st_mode) else MAX_UNUSABLE_RUN
                found = [opening for _offset, opening in _usable(
                    path, game, plies, skips, wanted, _lines(fh, path), bound)]
    except OSError as exc:
        raise OpeningsError(f"openings file {path}: {exc.strerror or exc}") from None
    skips.tell(path)
    if not found:
        raise OpeningsError(f"openings file {path}: no usable opening for {game}")
    return found


def _usable(path: str, game: str, plies: int | None, skips: _Skips,
            wanted: int | None, lines: Iterator[tuple[int, int, str]],
            bound: int | None = None) -> list[tuple[int, Opening]]:
    """``(offset, opening)`` of the usable ones of ``lines``, until ``wanted`` are found;
    OpeningsError after ``bound`` lines in a row without a usable one, blank and comment
    lines included (None: no bound)."""
    found: list[tuple[int, Opening]] = []
    last_usable = 0  # the number of the last line that held a usable opening
    for number, offset, text in lines:
        if wanted is not None and len(found) >= wanted:
            break
        where = f"{path}:{number}"
        if text:
            try:
                found.append((offset, parse_opening(text, game, plies, where)))
                last_usable = number
                continue
            except ValueError as exc:  # RulesError is a ValueError
                skips.skip(where, str(exc))
        if bound is not None and number - last_usable >= bound:
            raise OpeningsError(f"openings file {where}: {bound:,} lines in a row without "
                                f"a usable opening for {game}: not an openings file")
    return found


def _drawn_lines(fh: BinaryIO, path: str, game: str, plies: int | None, skips: _Skips,
                 wanted: int, seed: int | None) -> list[Opening]:
    """``order=random`` with ``wanted`` (see :func:`load_openings`): lines drawn at random
    from an index of their offsets until ``wanted`` are usable."""
    numbers, offsets = array("I"), array("q")
    for number, offset, text in _lines(fh, path):
        if text:
            numbers.append(number)
            offsets.append(offset)
    rng = random.Random(seed)

    def drawn() -> Iterator[tuple[int, int, str]]:
        for i in range(len(offsets)):  # Fisher-Yates, one draw at a time
            j = rng.randrange(i, len(offsets))
            offsets[i], offsets[j] = offsets[j], offsets[i]
            numbers[i], numbers[j] = numbers[j], numbers[i]
            yield numbers[i], offsets[i], _line_at(fh, offsets[i])

    found = _usable(path, game, plies, skips, wanted, drawn())
    if len(found) < wanted:  # all of them: in file order, as without an index
        found.sort(key=lambda pair: pair[0])
    return [opening for _offset, opening in found]


def _checked_whole(info: os.stat_result) -> bool:
    """Whether a file of this kind and size is read whole, every opening checked
    (:data:`CHECKED_WHOLE_BYTES`), whatever a run needs of it."""
    return stat.S_ISREG(info.st_mode) and info.st_size <= CHECKED_WHOLE_BYTES


def _pdn_openings(
    path: str, game: str, plies: int | None, report: Callable[[str], None],
    wanted: int | None = None,
) -> list[Opening]:
    """The games of the PDN file ``path`` as openings (see the module's docstring), read
    one game at a time: what is kept of each is its start and the plies the run plays;
    with ``wanted``, no more games are read once that many openings are found."""
    found: list[Opening] = []
    skips = _Skips(report, "games")
    before: PdnGame | None = None
    try:
        for number, pdn_game in enumerate(
                iter_pdn_file(path, game, "openings file", plies), 1):
            if wanted is not None and len(found) >= wanted:
                break
            moves = pdn_game.move_texts
            opening = Opening(pdn_game.start_fen, tuple(moves), f"{path}:{pdn_game.line}")
            if _second_of_pair(before, pdn_game):
                before = None  # the pair is whole: a third game opens another
                continue
            before = pdn_game
            if pdn_game.is_over:
                skips.skip(f"{path}:{pdn_game.line}", f"game {number} is over after "
                           f"{len(moves)} plies (plies=N takes only the first N)")
            else:
                found.append(opening)
    except PdnError as exc:
        raise OpeningsError(str(exc)) from None
    skips.tell(path)
    if not found:
        raise OpeningsError(f"openings file {path}: no usable opening for {game}")
    return found


def _second_of_pair(before: PdnGame | None, game: PdnGame) -> bool:
    """Whether ``game`` is the second game of a pair whose first is ``before``, as guti's
    ``-pdnout`` and cutechess write pairs: the same start and moves (as far as they are
    read), the two players' colours reversed. Such a game is read once, so a tournament's
    PDN read back as openings plays each opening as the pair it was; other books (whose
    players are not two names swapped) keep every game, as fastchess reads them."""
    if before is None:
        return False
    white, black = game.tags.get("White"), game.tags.get("Black")
    return (white is not None and white != black and before.tags.get("White") == black
            and before.tags.get("Black") == white and before.start_fen == game.start_fen
            and before.move_texts == game.move_texts)


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
