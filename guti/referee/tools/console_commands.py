"""The console's ``/``-commands (``/help`` lists them) and the completion of what is typed.

A line that does not start with ``/`` goes to the engine as it is, so the raw protocol
is always at hand; the ``/``-commands keep guti's board, check moves with the rules
core, diff ``go perft`` against guti's perft, play a game against the engine and run the
conformance check on a fresh copy of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Callable

from guti.referee.game.output_paths import kind
from guti.referee.tools.console_session import ConsoleSession, Play
from guti.referee.tools.perft_diff import PerftCollector, diff_perft
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import Position
from guti.rules import GAMES, Board, RulesError, divide
from guti.rules.names import canonical_game_name, unknown_game
from guti.rules.numbers import whole_number
from guti.rules.perft_tree import PerftStopped

PERFT_TIMEOUT = 300.0
DEFAULT_GO = "movetime 1000"
DEFAULT_PLAY_GO = "movetime 500"
MOVE_RE = re.compile(r"^\d+(?:[-x]\d+)+$")

COMMANDS: dict[str, str] = {
    "/new": "/new [GAME]          new game (uginewgame), optionally switching game",
    "/fen": "/fen FEN             set the position from a FEN",
    "/move": "/move M...           play moves (checked by the rules first)",
    "/undo": "/undo                take back the last move",
    "/board": "/board               draw the board: pieces, FEN, side, clock, legal moves",
    "/go": f"/go [ARGS]           search (default: go {DEFAULT_GO}); checks the bestmove",
    "/stop": "/stop                stop the running search",
    "/play": f"/play [w|b] [ARGS]   you play side w or b (default: side to move) against "
    f"the engine (go {DEFAULT_PLAY_GO}); '/play end' leaves",
    "/perft": "/perft N [MOVE...]   engine's go perft vs guti's, after MOVEs (depth N counts "
    "them): only differences",
    "/check": "/check               run guti check on a fresh copy of the engine",
    "/log": "/log [FILE]          copy all traffic to FILE (no FILE: stop)",
    "/help": "/help                this list",
    "/quit": "/quit                quit the engine and the console",
}
#: The console commands that take at most so many words after them (the others take a
#: list: moves, a FEN, go arguments, a file name): a word more is a mistake, said.
MOST_WORDS = {"/new": 1, "/undo": 0, "/board": 0, "/stop": 0, "/check": 0, "/help": 0}
#: The commands a person may type to the engine (completion).
COMMANDS_TO_ENGINE = ["ugi", "isready", "setoption", "uginewgame", "position", "go", "stop",
                      "query", "d", "quit"]
#: The words of a ``go`` (completion): :class:`~guti.referee.ugi.go.Go`'s fields, ``perft``
#: aside (``/go`` and ``/play`` are searches).
GO_WORDS = [name for name in Go._fields if name != "perft"]


class ConsoleCommands(ConsoleSession):
    """A console session with its commands: what the input loops of
    :mod:`guti.referee.tools.console_io` call."""

    # -- commands --------------------------------------------------------------------------
    async def command(self, line: str) -> bool:
        """Handle one input line; False when the console should end."""
        text = line.strip()
        if not text:
            return True
        if not text.isascii() and not _is_text(text):
            self.error("the line is not UTF-8 text; nothing was done with it")
            return True
        if not text.startswith("/"):
            if self.play is not None and MOVE_RE.match(text):
                await self.cmd_move([text])
                return True
            if self.need_engine():
                self.eng.send(text)
            return True
        name, *args = text.split()
        handler = {
            "/new": self.cmd_new, "/fen": self.cmd_fen, "/move": self.cmd_move,
            "/undo": self.cmd_undo, "/board": self.cmd_board, "/go": self.cmd_go,
            "/stop": self.cmd_stop, "/play": self.cmd_play, "/perft": self.cmd_perft,
            "/check": self.cmd_check, "/log": self.cmd_log, "/help": self.cmd_help,
        }.get(name)
        if name in ("/quit", "/exit"):
            return False
        if handler is None:
            self.error(f"unknown console command {name} (/help lists them)")
            return True
        most = MOST_WORDS.get(name)
        if most is not None and len(args) > most:
            takes = "no word" if most == 0 else f"at most {most} word"
            self.error(f"{name} takes {takes} after it; {' '.join(args[most:])!r} is "
                       "left over, nothing was done")
            return True
        await handler(args)
        return True

    async def cmd_help(self, args: list[str]) -> None:
        self.say("console commands (anything not starting with / goes to the engine):")
        for text in COMMANDS.values():
            self.say(f"  {text}")

    async def cmd_board(self, args: list[str]) -> None:
        self.show_board()

    async def cmd_new(self, args: list[str]) -> None:
        if self.busy() or not self.need_engine():
            return
        typed = args[0] if args else self.game
        game = canonical_game_name(typed)  # any case, as everywhere: /new Pretwa is pretwa
        if game is None:
            self.error(unknown_game(typed))
            return
        self.play = None
        if await self.select_game(game):
            self.show_board()

    async def cmd_fen(self, args: list[str]) -> None:
        if self.busy():
            return
        fen = " ".join(args)
        try:
            board = Board.from_fen(self.game, fen)
        except RulesError as exc:
            self.error(f"bad FEN for {self.game}: {exc}")
            return
        self.play = None
        self.board = board
        if self.alive:
            self.send_position()
        self.show_board()

    async def cmd_move(self, args: list[str]) -> None:
        if self.busy():
            return
        if not args:
            self.error("/move needs at least one move")
            return
        trial = self.board.copy()
        for i, text in enumerate(args, 1):
            try:
                trial.push_str(text)
            except RulesError as exc:
                self.error(f"move {i} ({text}): {exc}; nothing played")
                return
        self.board = trial
        if self.alive:
            self.send_position()
        self.show_board()
        if self.play is not None:
            await self.play_on()

    async def cmd_undo(self, args: list[str]) -> None:
        if self.busy():
            return
        if not self.board.move_stack:
            self.error("no move to take back")
            return
        self.board.pop()
        if self.play is not None and self.board.move_stack and self.board.turn != self.play.human:
            self.board.pop()  # back to the human's turn
        if self.alive:
            self.send_position()
        self.show_board()

    async def cmd_go(self, args: list[str]) -> None:
        if self.busy() or not self.need_engine():
            return
        if "perft" in args:
            self.error("use /perft N for go perft (it diffs the answer against guti's)")
            return
        go = self.parse_go(args, DEFAULT_GO)
        if go is not None:
            self.start_search(go, for_play=False)

    def parse_go(self, args: list[str], default: str) -> Go | None:
        """The ``go`` a person typed (``default`` when nothing); None (said) if it is wrong."""
        try:
            return Go.parse(" ".join(args) or default)
        except ValueError as exc:
            self.error(str(exc))
            return None

    async def cmd_stop(self, args: list[str]) -> None:
        if not self.need_engine():
            return
        if self.search is None:
            self.say("(no search running; stop sent anyway)")
        elif self.search.stop_sent:  # it did not answer the first: not waited for again
            self.give_up_search("the engine did not answer stop: the search is given up")
            return
        else:
            self.search.stop_sent = True
        self.eng.stop()

    async def cmd_play(self, args: list[str]) -> None:
        if args[:1] == ["end"]:
            self.play = None
            self.say("play ended")
            return
        if self.busy() or not self.need_engine():
            return
        human: str = self.board.turn
        if args and args[0] in ("w", "b", "white", "black"):
            human = args[0][0]
            args = args[1:]
        go = self.parse_go(args, DEFAULT_PLAY_GO)
        if go is None:
            return
        self.play = Play(human, go)
        side = "White" if human == "w" else "Black"
        self.say(f"you play {side}; type moves (or /move M), '/play end' to stop")
        await self.play_on()

    async def cmd_perft(self, args: list[str]) -> None:
        if self.busy() or not self.need_engine():
            return
        depth = whole_number(args[0], 3) if args else None
        if depth is None:
            self.error("usage: /perft N [MOVE...] (N a whole number >= 0)")
            return
        path = args[1:]
        if len(path) > depth or (path and len(path) == depth):
            self.error(f"/perft {depth} with {len(path)} moves leaves no depth to count")
            return
        board = self.board.copy()
        for i, text in enumerate(path, 1):
            try:
                board.push_str(text)
            except RulesError as exc:
                self.error(f"move {i} ({text}): {exc}")
                return
        left = depth - len(path)
        collector = PerftCollector()
        if not await self.ready():  # what earlier commands made it say is read by now
            return
        started = time.monotonic()
        self.eng.start_search(Position.of(board), Go(perft=left))
        # guti's own count runs beside the engine's, and stops with it: when the engine
        # gives no count, refuses, or the command is interrupted (Ctrl-C cancels it)
        stop_ours = threading.Event()
        ours_future = in_daemon_thread(
            lambda: divide(board, left, stop_ours.is_set) if left > 0 else [])
        try:
            ok = await self.wait_for(collector.answer_ends, PERFT_TIMEOUT,
                                     "'nodes N' line after go perft")
            took = time.monotonic() - started
            if not ok:
                self.stop_engine()  # a count still running is not waited for again
            self.send_position()  # the engine back on the console's board
            if not ok:
                return
            if collector.refusal is not None:
                self.error(f"the engine does not count go perft: it answered "
                           f"{collector.refusal[:80]!r}")
                return
            try:
                ours = await asyncio.wait_for(asyncio.shield(ours_future),
                                              max(1.0, PERFT_TIMEOUT - took))
            except TimeoutError:
                self.error(f"guti's own count of perft {left} did not end within "
                           f"{PERFT_TIMEOUT:g} s: nothing to compare")
                return
        except asyncio.CancelledError:  # Ctrl-C: the engine back on the console's board
            self.stop_engine()
            self.send_position()
            raise
        finally:
            stop_ours.set()
        where = f" after {' '.join(path)}" if path else ""
        diff = diff_perft(left, ours, collector.result)
        self.say(f"perft {left}{where}: engine answered in {took:.2f} s", "bold")
        for line in diff.lines():
            self.say(line, "green" if diff.same else "bold red")
        if diff.first_suspect is not None:
            self.say(f"step in: /perft {depth} {' '.join([*path, diff.first_suspect])}")

    async def cmd_check(self, args: list[str]) -> None:
        from guti.referee.tools.check import run_check

        self.say(f"guti check on a fresh copy of the engine, {self.game}:", "bold")

        def emit(line: str) -> None:
            style = {"PASS": "green", "FAIL": "bold red", "SKIP": "yellow"}.get(line[:4], "bold")
            self.say(line, style)

        await run_check(self.argv, [self.game], emit)

    async def cmd_log(self, args: list[str]) -> None:
        if self.screen.log is not None:
            with contextlib.suppress(OSError):
                self.screen.log.close()
            self.screen.log = None
            self.say("log closed")
        if not args:
            return
        path = " ".join(args)
        if kind(path) not in (None, "file", "character device"):  # a FIFO: no reader, no end
            self.error(f"cannot log to {path}: it is a {kind(path)}, not a file")
            return
        try:
            self.screen.log = open(path, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            self.error(f"cannot open {path}: {exc.strerror}")
            return
        self.say(f"logging all traffic to {path}")

    # -- completion -------------------------------------------------------------------------
    def completions(self, text: str) -> tuple[str, list[str]]:
        """(the word being completed, candidates) for the input ``text`` so far."""
        words = text.split()
        current = "" if text.endswith((" ", "\t")) or not text else words[-1]
        done = words if current == "" else words[:-1]
        if not done:
            if current.startswith("/"):
                return current, [*COMMANDS, "/exit"]
            if self.play is not None:
                return current, [str(m) for m in self.board.legal_moves]
            return current, COMMANDS_TO_ENGINE
        head = done[0]
        if head == "/new":
            return current, sorted(GAMES) if len(done) == 1 else []
        if head == "/go":
            return current, GO_WORDS
        if head == "/play":
            return current, ["w", "b", "end", *GO_WORDS]
        if head in ("/move", "/perft"):
            moves = done[1:] if head == "/move" else done[2:]
            if head == "/perft" and len(done) < 2:
                return current, []
            board = self.board.copy()
            try:
                for m in moves:
                    board.push_str(m)
            except RulesError:
                return current, []
            return current, [str(m) for m in board.legal_moves]
        if head == "go":
            return current, GO_WORDS + ["perft"]
        if head == "query":
            return current, ["gameover", "p1turn", "result"]
        if head == "position":
            return current, ["startpos", "fen", "moves"]
        return current, []


def in_daemon_thread(job: Callable[[], list[tuple[str, int]]]) -> asyncio.Future:
    """Run ``job`` on a daemon thread (a deep perft must not keep an interrupted console
    from exiting, as an executor thread would); its result as a future."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future = loop.create_future()

    def settle(result: object, error: BaseException | None) -> None:
        if fut.done():
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(result)

    def work() -> None:
        try:
            result = job()
        except PerftStopped:  # stopped on purpose: nobody waits for it any more
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=work, daemon=True).start()
    return fut


def _is_text(line: str) -> bool:
    """Whether ``line`` is text that can be sent (a script's bytes that are not UTF-8 come
    in as lone surrogates, which cannot)."""
    try:
        line.encode()
    except UnicodeEncodeError:
        return False
    return True
