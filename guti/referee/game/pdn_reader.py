"""Reading PDN files: the games guti writes (:mod:`guti.referee.game.pdn`), and PDN like
them, each replayed move by move with the rules core.

What is read, in any layout of spaces and line breaks:

- tag pairs ``[Name "value"]`` (``\\"`` and ``\\\\`` escapes), before a game's moves;
- movetext: move numbers (``1.``, ``1...``, also glued to the move: ``1.17-12``), moves
  in the rules core's notation (a trailing ``!`` or ``?`` is dropped), comments
  ``{...}`` (over several lines too), numeric annotations ``$N`` (dropped), variations
  ``(...)`` (skipped: the main line is the game), comments from ``;`` to the end of the
  line and escape lines starting with ``%`` (both skipped, as the PGN standard has them),
  and the result that ends the game: ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``;
- any number of games, one after the other.

Which game is played comes from the caller (the game of a run) or else from the
``GameType`` tag (``Variant`` when it is missing), as guti writes them; the start
position is the ``FEN`` tag when there is one, else the game's start. Every move must be
legal where it is played and the game must not be over before it.

Comments: guti writes one comment after each move (``{book}`` or what the engine
reported); the first comment after a move is that move's, and any further comment (the
referee's note on a fault or an adjudication, just before the result) or a comment
before the first move is a note of the game (:attr:`PdnGame.notes`).

Mistakes are strict: anything else (an unclosed comment or tag, a move that is not
legal, tags in the middle of moves, a game without a result at the end) raises
:class:`PdnError`, one line that names the file and the line: ``book.pdn:12: game 3,
ply 5: illegal move '17-1' in ...``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

from guti.rules import Board, RulesError

#: The results a game can end with, as the ``Result`` tag and the movetext write them.
PDN_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")

_TAG = re.compile(r'\[[ \t]*(\w+)[ \t]+"((?:[^"\\\n]|\\.)*)"[ \t]*\]')
_UNESCAPE = re.compile(r"\\(.)")
_WORD = re.compile(r"[^\s\[\]{}();]+")
_SPACE = re.compile(r"\s+")
_MOVE_NUMBER = re.compile(r"\d+\.+")
_NAG = re.compile(r"\$\d+")
_LINE_BREAK = re.compile(r"[ \t]*\r?\n\s*")


def move_words(words: Iterable[str]) -> list[str]:
    """The moves of a move list written as PDN writes it (an openings line, ``guti board
    -moves``): move numbers (``1.``, ``1...``, also glued to the move: ``1.17-12``) left
    out."""
    moves = []
    for word in words:
        number = _MOVE_NUMBER.match(word)
        if number is None:
            moves.append(word)
        elif number.end() < len(word):
            moves.append(word[number.end():])
    return moves


class PdnError(ValueError):
    """A mistake in a PDN text: the message is one line naming the file and the line."""


@dataclass
class PdnMove:
    """One move as written, with the text of its comment (guti writes at most one)."""

    text: str
    comments: list[str] = field(default_factory=list)
    #: The line of the file the move is on (not compared: the same move is the same move).
    line: int = field(default=0, compare=False)


@dataclass
class PdnGame:
    """One game of a PDN file: its tags, moves, result and notes, and where it starts
    and ends on the board (from replaying its moves)."""

    tags: dict[str, str]
    moves: list[PdnMove]
    result: str
    #: Comments of no move: before the first move, or after a move's own comment.
    notes: list[str] = field(default_factory=list)
    #: The movetext as written (numbers, comments, result), for checks on its layout.
    movetext: str = ""
    #: The game played (a name of the rules core).
    game: str = ""
    #: The ``FEN`` tag's position as the rules core writes it; None: the game's start.
    start_fen: str | None = None
    #: The board after the last move (its FEN and whether the game is over there are
    #: worked out when asked for: a book's reader asks only the one).
    board: Board | None = field(default=None, compare=False, repr=False)
    #: The line of the file the game starts on.
    line: int = field(default=0, compare=False)

    @property
    def final_fen(self) -> str:
        """The position after the last move."""
        return "" if self.board is None else self.board.fen()

    @property
    def is_over(self) -> bool:
        """Whether the rules have ended the game after its last move."""
        return self.board is not None and self.board.is_game_over()

    @property
    def move_texts(self) -> list[str]:
        """The moves, without their comments."""
        return [m.text for m in self.moves]


@dataclass(frozen=True)
class _Token:
    kind: str  # "tag", "comment", "word"
    text: str  # the tag's value, the comment's text, the word
    line: int
    start: int
    end: int
    name: str = ""  # the tag's name


def _tokens(text: str, source: str) -> Iterator[_Token]:
    """The tags, comments and words of ``text`` in order (variations and NAGs skipped)."""
    pos = 0
    line, counted = 1, 0  # the line of offset ``counted``
    while pos < len(text):
        if space := _SPACE.match(text, pos):
            pos = space.end()
            continue
        line += text.count("\n", counted, pos)
        counted = pos
        char = text[pos]
        if char == ";" or (char == "%" and (pos == 0 or text[pos - 1] in "\r\n")):
            pos = _end_of_line(text, pos)  # a rest-of-line comment, an escape line
            continue
        if char == "[":
            tag = _TAG.match(text, pos)
            if tag is None:
                raise PdnError(f'{source}:{line}: bad tag: expected [Name "value"] on one line')
            value = _UNESCAPE.sub(r"\1", tag.group(2))
            yield _Token("tag", value, line, pos, tag.end(), tag.group(1))
            pos = tag.end()
        elif char == "{":
            close = text.find("}", pos + 1)
            if close < 0:
                raise PdnError(f"{source}:{line}: comment {{ is never closed by }}")
            body = _LINE_BREAK.sub(" ", text[pos + 1 : close]).strip()
            yield _Token("comment", body, line, pos, close + 1)
            pos = close + 1
        elif char == "(":
            pos = _skip_variation(text, pos, source, line)
        elif char in ")]}":
            raise PdnError(f"{source}:{line}: {char} without its opening bracket")
        else:
            word = _WORD.match(text, pos)
            assert word is not None  # not a space, not a bracket: a word starts here
            pos = word.end()
            if not _NAG.fullmatch(word.group()):
                yield _Token("word", word.group(), line, word.start(), pos)


def _end_of_line(text: str, pos: int) -> int:
    """The offset of the line break that ends the line holding ``pos`` (or of the end)."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _skip_variation(text: str, pos: int, source: str, line: int) -> int:
    """The offset after the variation that opens at ``pos`` (nested ones and comments
    inside it included)."""
    depth = 0
    while pos < len(text):
        char = text[pos]
        if char == "{":
            close = text.find("}", pos + 1)
            if close < 0:
                break
            pos = close
        elif char == ";":
            pos = _end_of_line(text, pos) - 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    raise PdnError(f"{source}:{line}: variation ( is never closed by )")


class _GameBuilder:
    """One game being read: its tags first, then its moves replayed on a board."""

    def __init__(self, number: int, line: int, source: str, game: str | None,
                 plies: int | None = None) -> None:
        self.number, self.line, self.source, self.wanted = number, line, source, game
        self.plies = plies  # moves kept (None: all); those after them are skipped unplayed
        self.skipped = 0
        self.tags: dict[str, str] = {}
        self.moves: list[PdnMove] = []
        self.notes: list[str] = []
        self.board: Board | None = None
        self.movetext_start: int | None = None
        self._commented = True  # whether the last move has its comment (none yet: notes)

    def fail(self, line: int, what: str) -> PdnError:
        return PdnError(f"{self.source}:{line}: game {self.number}: {what}")

    def tag(self, token: _Token) -> None:
        if self.movetext_start is not None:
            raise self.fail(token.line, f"tag [{token.name}] after the moves: the game "
                                        "before it has no result (1-0, 0-1, 1/2-1/2 or *)")
        self.tags[token.name] = token.text

    def comment(self, token: _Token) -> None:
        self._start_movetext(token)
        if self.skipped:
            return  # the comment of a move past the plies kept
        if self._commented:
            self.notes.append(token.text)
        else:
            self.moves[-1].comments.append(token.text)
            self._commented = True

    def word(self, token: _Token) -> None:
        """A move, a move number, or both glued together (``1.17-12``)."""
        number = _MOVE_NUMBER.match(token.text)
        if number is None:
            self._move(token, token.text)
        elif number.end() < len(token.text):
            self._move(token, token.text[number.end() :])
        else:
            self._start_movetext(token)

    def _move(self, token: _Token, text: str) -> None:
        board = self._start_movetext(token)
        if self.plies is not None and len(self.moves) >= self.plies:
            self.skipped += 1
            return
        text = text.rstrip("!?")
        if board.is_game_over():
            raise self.fail(token.line, f"ply {len(self.moves) + 1} ({text}): the game is "
                                        "already over")
        try:
            board.push_str(text)
        except RulesError as exc:
            raise self.fail(token.line, f"ply {len(self.moves) + 1}: {exc}") from None
        self.moves.append(PdnMove(text, [], token.line))
        self._commented = False

    def _start_movetext(self, token: _Token) -> Board:
        if self.movetext_start is None:
            self.movetext_start = token.start
        if self.board is None:
            self.board = self._start_board(token.line)
        return self.board

    def _start_board(self, line: int) -> Board:
        named = self.tags.get("GameType") or self.tags.get("Variant")
        game = self.wanted or named
        if game is None:
            raise self.fail(line, "no GameType tag says which game it is")
        if self.wanted and named and named.strip().lower() != self.wanted.strip().lower():
            raise self.fail(line, f"a game of {named}, not of {self.wanted}")
        try:
            board = Board(game)
        except RulesError as exc:
            raise self.fail(line, str(exc)) from None
        fen = self.tags.get("FEN")
        if fen is not None:
            try:
                board = Board.from_fen(board.game.name, fen)
            except RulesError as exc:
                raise self.fail(line, f"FEN tag: {exc}") from None
        return board

    def end(self, token: _Token, text: str) -> PdnGame:
        board = self._start_movetext(token)
        tagged = self.tags.get("Result")
        if tagged is not None and tagged != token.text:
            raise self.fail(token.line, f"the result {token.text} is not the Result tag's "
                                        f"{tagged}")
        start = self.movetext_start if self.movetext_start is not None else token.start
        return PdnGame(
            tags=self.tags,
            moves=self.moves,
            result=token.text,
            notes=self.notes,
            movetext=text[start : token.end],
            game=board.game.name,
            start_fen=board.root_fen if "FEN" in self.tags else None,
            board=board,
            line=self.line,
        )


def iter_pdn(text: str, source: str = "<pdn>", game: str | None = None,
             plies: int | None = None) -> Iterator[PdnGame]:
    """Every game of the PDN ``text``, in order, one at a time: a reader that keeps little
    of each game (an openings book) holds one game's moves at once, not the whole
    file's. ``source`` names the text in errors (a file name); ``game``: the game every
    game must be of (None: each game's GameType tag). A mistake is a :class:`PdnError`,
    raised when the reading reaches it. ``plies``: each game's first ``plies`` moves
    only, as far as an openings book is played; the words after them up to the result
    are skipped, neither played nor checked (the layout around them still is)."""
    number = 0
    current: _GameBuilder | None = None
    for token in _tokens(text, source):
        if current is None:
            current = _GameBuilder(number + 1, token.line, source, game, plies)
        if token.kind == "tag":
            current.tag(token)
        elif token.kind == "comment":
            current.comment(token)
        elif token.text in PDN_RESULTS:
            number += 1
            yield current.end(token, text)
            current = None
        else:
            current.word(token)
    if current is not None:
        raise current.fail(current.line, "no result (1-0, 0-1, 1/2-1/2 or *) at its end")


#: The largest PDN file read: it is parsed whole, so a device that never ends
#: (``/dev/zero``) or a huge file is one line, not all of memory.
MAX_PDN_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


def _bounded_text(fh: TextIO, path: str) -> str:
    """The text of ``fh``, read in chunks: PdnError at a NUL character (binary data, not
    PDN) or past :data:`MAX_PDN_BYTES` characters."""
    chunks: list[str] = []
    size = 0
    while chunk := fh.read(_CHUNK):
        if "\0" in chunk:
            line = "".join(chunks).count("\n") + chunk[: chunk.index("\0")].count("\n") + 1
            raise PdnError(f"{path}:{line}: binary data (a NUL byte): not a PDN file")
        size += len(chunk)
        if size > MAX_PDN_BYTES:
            raise PdnError(f"{path}: larger than {MAX_PDN_BYTES >> 20} MiB: too large a PDN file")
        chunks.append(chunk)
    return "".join(chunks)


def iter_pdn_file(path: str, game: str | None = None, what: str = "PDN file",
                  plies: int | None = None) -> Iterator[PdnGame]:
    """Every game of the PDN file ``path``, one at a time (see :func:`iter_pdn`): the text
    is read whole (at most :data:`MAX_PDN_BYTES`), the games are made as they are asked
    for. A file that cannot be read (``what`` names it then: ``openings file x.pdn: No
    such file or directory``) or is not UTF-8 is a :class:`PdnError` too."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = _bounded_text(fh, path)
    except OSError as exc:
        raise PdnError(f"{what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise PdnError(f"{path}:{line}: not UTF-8 text") from None
    yield from iter_pdn(text, path, game, plies)
