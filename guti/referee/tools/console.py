"""``guti console``: talk to one engine by hand, with guti's rules watching.

``guti console [--game G] -- ENGINE_CMD [ARGS...]`` starts the engine, shakes
hands, shows its id and options, and opens a prompt. A line that does not start
with ``/`` goes to the engine as it is, so the raw protocol is always at hand;
``/``-commands (``/help`` lists them) keep a board of their own, check moves and
``bestmove`` answers with the rules core, diff ``go perft`` against guti's perft,
play a game against the engine and run the conformance check.

Every line sent and received is printed with a timestamp and its direction
(``>`` to the engine, ``<`` from it, ``!`` its stderr), received lines coloured
by kind. Printing happens as lines arrive (a traffic hook of EngineProcess) and
a reader task consumes them, so engine output shows while the prompt waits.

On a terminal the prompt is prompt_toolkit's (line editing, history kept in
``$GUTI_HISTORY`` or ``~/.guti_history``, tab completion of commands and legal
moves); otherwise lines are read from stdin as they come, which is how scripts
drive it. The terminal side (printing, prompt, input loops) is in
:mod:`guti.referee.tools.console_io`; this module holds the commands and their state.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.judge import Fault, judge_reply
from guti.referee.process.engine_process import EngineProcess
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineError,
    EngineProtocolError,
    EngineTimeout,
)
from guti.referee.tools.console_io import Screen, run_pipe, run_tty
from guti.referee.tools.engine_argv import parse_options, split_engine_argv
from guti.referee.tools.perft_diff import PerftCollector, diff_perft
from guti.referee.ugi.client import Position, UgiEngine, is_readyok
from guti.referee.ugi.go import Go
from guti.referee.ugi.options import Handshake
from guti.rules import GAMES, Board, RulesError, divide

HANDSHAKE_TIMEOUT = 10.0
READY_TIMEOUT = 10.0
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
PROTOCOL_WORDS = ["ugi", "isready", "setoption", "uginewgame", "position", "go", "stop",
                  "query", "d", "quit"]
GO_WORDS = ["movetime", "depth", "nodes", "infinite", "p1time", "p2time", "p1inc", "p2inc"]


def said(exc: Exception) -> str:
    """An EngineProcess message without the engine's internal name."""
    return re.sub(r"\bengine E\b", "the engine", str(exc), count=1)


@dataclass
class Search:
    """A ``go`` the console sent and is waiting to judge."""

    board: Board
    sent: float
    for_play: bool


@dataclass
class Play:
    """A game of the human against the engine."""

    human: str  # 'w' or 'b'
    go: Go


def describe_end(board: Board, human: str | None = None) -> str | None:
    """``game over: 1-0 (no legal move), White wins`` or None while the game goes on."""
    outcome = board.outcome()
    if outcome is None:
        return None
    if outcome.winner is None:
        who = "a draw"
    else:
        colour = "White" if outcome.winner == "w" else "Black"
        who = f"{colour} wins"
        if human is not None:
            who += ": you win" if outcome.winner == human else ": the engine wins"
    return f"game over: {outcome.result} ({outcome.reason}), {who}"


class Console:
    """The state of one console session: the engine, guti's board, and what is pending."""

    def __init__(self, argv: list[str], screen: Screen) -> None:
        self.argv = argv
        self.screen = screen
        config = EngineConfig(name="E", argv=argv)
        self.eng = UgiEngine(EngineProcess(config, traffic=self.on_traffic), config)
        self.hs: Handshake | None = None
        self.game = "egara-guti"
        self.board = Board(self.game)
        self.search: Search | None = None
        self.play: Play | None = None
        self.alive = False
        self.waiter: tuple[Callable[[str], bool], asyncio.Future[str]] | None = None
        self.reader: asyncio.Task[None] | None = None
        self.play_pending = False  # the engine's bestmove was played, its follow-up not yet

    # -- printing ----------------------------------------------------------------------
    def on_traffic(self, when: float, direction: str, name: str, line: str) -> None:
        self.screen.traffic(when, direction, line)

    def say(self, text: str, style: str = "default") -> None:
        self.screen.say(text, style)

    def error(self, text: str) -> None:
        self.screen.say(f"error: {text}", "bold red")

    def show_board(self, board: Board | None = None) -> None:
        b = board or self.board
        self.say(b.board_string())
        legal = " ".join(str(m) for m in b.legal_moves)
        self.say(f"legal: {legal}" if legal else "legal: (none)")
        end = describe_end(b)
        if end and self.play is None:  # in a game, play_on announces it
            self.say(end, "bold")

    # -- start and stop ----------------------------------------------------------------
    async def start(self, game: str | None) -> bool:
        """Start the engine and shake hands; False (with a message) if it cannot."""
        try:
            await self.eng.start()
            self.hs = await self.eng.read_handshake(HANDSHAKE_TIMEOUT)
        except EngineError as exc:
            self.error(said(exc))
            return False
        hs = self.hs
        self.alive = True
        self.say(f"engine: {hs.id_name or '(no id name)'} by {hs.id_author or '(no id author)'};"
                 f" ugiok in {hs.elapsed * 1000:.0f} ms", "bold")
        for opt in hs.options.values():
            extra = f" default {opt.default}" if opt.default is not None else ""
            if opt.min is not None or opt.max is not None:
                extra += f" min {opt.min} max {opt.max}"
            if opt.vars:
                extra += " var " + " var ".join(opt.vars)
            self.say(f"  option {opt.name} ({opt.type}){extra}")
        self.say(f"plays: {', '.join(hs.games())}")
        chosen = game or hs.default_game()
        if chosen is None:
            self.error(f"the engine plays no game guti knows ({', '.join(hs.games())})")
            return False
        if chosen not in hs.games():
            self.error(f"the engine does not play {chosen} (it plays {', '.join(hs.games())})")
            return False
        self.reader = asyncio.create_task(self.read_engine())
        if not await self.select_game(chosen):
            return False
        self.say("type /help for the console's commands; other lines go to the engine as they are")
        return True

    async def stop(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        await self.eng.quit(grace=1.0, term_grace=1.0)

    # -- reading the engine --------------------------------------------------------------
    async def read_engine(self) -> None:
        """Consume engine lines forever (they were printed as they came) and dispatch them."""
        while True:
            try:
                line = await self.eng.read_line(3600.0)
            except EngineTimeout:
                continue
            except (EngineDisconnected, EngineProtocolError) as exc:
                self.alive = False
                self.search = None
                self.play = None
                self.error(f"{said(exc)}; /quit to leave")
                if self.waiter is not None and not self.waiter[1].done():
                    self.waiter[1].set_exception(EngineDisconnected(str(exc)))
                if isinstance(exc, EngineProtocolError):
                    self.eng.kill_now()
                return
            self.dispatch(line)

    def dispatch(self, line: str) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter[1].done() and waiter[0](line):
            waiter[1].set_result(line)
            return
        if line.split()[:1] == ["bestmove"] and self.search is not None:
            self.on_bestmove(line)

    async def wait_for(self, done: Callable[[str], bool], timeout: float, what: str) -> bool:
        """Wait for a line (seen by the reader) for which ``done`` is true; False on timeout."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiter = (done, fut)
        try:
            await asyncio.wait_for(fut, timeout)
            return True
        except TimeoutError:
            self.error(f"no {what} within {timeout:g} s")
            return False
        except EngineError:
            return False
        finally:
            self.waiter = None

    async def idle(self, timeout: float) -> None:
        """Wait until no search (nor a game's engine move) is pending, at most ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while (self.search is not None or self.play_pending) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def ready(self) -> bool:
        self.eng.ask_ready()
        return await self.wait_for(is_readyok, READY_TIMEOUT, "readyok")

    # -- the board -------------------------------------------------------------------------
    def send_position(self) -> None:
        self.eng.send_position(Position.of(self.board))

    async def select_game(self, game: str) -> bool:
        assert self.hs is not None
        if game not in self.hs.games():
            self.error(f"the engine does not play {game} (it plays {', '.join(self.hs.games())})")
            return False
        self.eng.select_game(game)
        self.eng.announce_new_game()
        if not await self.ready():
            return False
        self.game = game
        self.board = Board(game)
        self.send_position()
        self.say(f"game: {game}")
        return True

    def busy(self) -> bool:
        if self.search is not None:
            self.error("a search is running: /stop it first")
            return True
        return False

    def need_engine(self) -> bool:
        if not self.alive:
            self.error("the engine is not running; /quit to leave")
            return False
        return True

    # -- commands --------------------------------------------------------------------------
    async def command(self, line: str) -> bool:
        """Handle one input line; False when the console should end."""
        text = line.strip()
        if not text:
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
        game = args[0] if args else self.game
        if game not in GAMES:
            self.error(f"unknown game {game!r} (guti knows {', '.join(sorted(GAMES))})")
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

    def start_search(self, go: Go, for_play: bool) -> None:
        self.search = Search(self.board.copy(), time.monotonic(), for_play)
        self.eng.start_search(Position.of(self.board), go)
        if not self.board.legal_moves:
            self.say("(the game is over here: the engine should answer bestmove none at once)")

    def on_bestmove(self, line: str) -> None:
        search = self.search
        assert search is not None
        self.search = None
        took = (time.monotonic() - search.sent) * 1000
        words = line.split()
        move = words[1] if len(words) > 1 else None
        legal = [str(m) for m in search.board.legal_moves]
        verdict = judge_reply(search.board, move)
        if verdict.fault is Fault.NO_MOVE:
            self.error(f"bestmove without a move after {took:.0f} ms")
        elif verdict.fault is Fault.NONE_WITH_MOVES:
            self.error(f"bestmove none, but there are legal moves: {' '.join(legal)}")
        elif verdict.fault is not None:
            self.error(f"bestmove {move} is NOT legal here (legal: {' '.join(legal) or 'none'})"
                       f" ({took:.0f} ms)")
        elif verdict.move is None:
            self.say(f"bestmove none is right: the game is over ({took:.0f} ms)", "green")
        else:
            self.say(f"bestmove {move} is legal ({took:.0f} ms)", "green")
        if search.for_play and self.play is not None:
            if verdict.move is None:
                self.say("the engine loses the game by that answer; play ends", "bold red")
                self.play = None
                return
            self.board.push(verdict.move)
            self.send_position()
            self.show_board()
            self.play_pending = True
            asyncio.get_running_loop().create_task(self.play_on())

    async def cmd_stop(self, args: list[str]) -> None:
        if not self.need_engine():
            return
        if self.search is None:
            self.say("(no search running; stop sent anyway)")
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

    async def play_on(self) -> None:
        """Next step of a game against the engine: announce the end, ask, or let it move."""
        self.play_pending = False
        play = self.play
        if play is None:
            return
        end = describe_end(self.board, play.human)
        if end is not None:
            self.say(end, "bold")
            self.play = None
            return
        if self.board.turn == play.human:
            legal = " ".join(str(m) for m in self.board.legal_moves)
            self.say(f"your move; legal: {legal}")
        elif self.need_engine() and self.search is None:
            self.start_search(play.go, for_play=True)

    async def cmd_perft(self, args: list[str]) -> None:
        if self.busy() or not self.need_engine():
            return
        if not args or not args[0].isdigit():
            self.error("usage: /perft N [MOVE...] (N a whole number >= 0)")
            return
        depth = int(args[0])
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
        started = time.monotonic()
        self.eng.start_search(Position.of(board), Go(perft=left))
        ours_future = in_daemon_thread(lambda: divide(board, left) if left > 0 else [])
        ok = await self.wait_for(collector.feed, PERFT_TIMEOUT, "'nodes N' line after go perft")
        took = time.monotonic() - started
        ours = await ours_future
        self.send_position()  # the engine back on the console's board
        if not ok:
            return
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
        try:
            self.screen.log = open(path, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            self.error(f"cannot open {path}: {exc.strerror}")
            return
        self.say(f"logging all traffic to {path}")

    # -- what the input loops of console_io ask ------------------------------------------------
    def prompt(self) -> str:
        if self.play is not None and self.board.turn == self.play.human:
            return "your move> "
        return f"{self.game} {self.board.turn}> "

    def stop_engine(self, search_only: bool = False) -> None:
        if self.alive and (self.search is not None or not search_only):
            self.eng.stop()

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
            return current, PROTOCOL_WORDS
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
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=work, daemon=True).start()
    return fut


async def run_console(argv: list[str], game: str | None, tty: bool) -> int:
    if tty:
        from prompt_toolkit.patch_stdout import patch_stdout

        with patch_stdout(raw=True):
            return await _session(argv, game, Screen(sys.stdout, colour=True), run_tty)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return await _session(argv, game, Screen(sys.stdout, colour=colour), run_pipe)


async def _session(argv, game, screen: Screen, loop_fn) -> int:
    console = Console(argv, screen)
    try:
        if not await console.start(game):
            return 1
        await loop_fn(console)
        return 0
    finally:
        try:
            await console.stop()
        except BaseException:
            console.eng.kill_now()
            raise
        if screen.log is not None:
            screen.log.close()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="guti console",
        description="Talk to an engine by hand: raw UGI lines plus /commands (/help).",
        usage="guti console [--game GAME] -- ENGINE_CMD [ARGS...]",
    )
    ap.add_argument("--game", choices=sorted(GAMES), help="game to start with "
                    "(default: the engine's UGI_Variant default)")
    opts_argv, cmd = split_engine_argv(argv)
    opts = parse_options(ap, opts_argv)
    if not cmd:
        ap.error("no engine command: give it after '--', e.g. guti console -- python -m guti.engine")
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        return asyncio.run(run_console(cmd, opts.game, tty))
    except KeyboardInterrupt:
        return 130
